#!/usr/bin/python3
"""Stands in for QEMU + guest: prints a boot line, then behaves like the
guest's console shell (echo off), executing commands with /bin/sh.

Takes (and ignores) QEMU's command line, so the runner can start it as
its QEMU (paths.QEMU_BINARY); the behaviour comes from flags, or from the
environment variable IRQRIG_FAKE (the same flags, space-separated):
  --panic-at-boot, --panic-on CMD, --no-boot, --kernel-noise,
  --die-after-boot (QEMU exits once booted), --ignore-sigterm."""

import argparse
import os
import signal
import subprocess
import sys
import time

if "--version" in sys.argv[1:2]:
    print("QEMU emulator version 0.0.0 (irqrig fake guest)")
    sys.exit(0)

ap = argparse.ArgumentParser()
ap.add_argument("--panic-at-boot", action="store_true")
ap.add_argument("--panic-on", default=None, help="panic when a command contains this")
ap.add_argument("--no-boot", action="store_true", help="print noise, never boot")
ap.add_argument("--kernel-noise", action="store_true",
                help="interleave a kernel warning with command output")
ap.add_argument("--die-after-boot", action="store_true")
ap.add_argument("--ignore-sigterm", action="store_true")
args, _qemu_args = ap.parse_known_args(sys.argv[1:] + os.environ.get("IRQRIG_FAKE", "").split())

if args.ignore_sigterm:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
out = sys.stdout
out.write("Linux version 6.12.0 (fake)\n")
if args.no_boot:
    out.flush()
    time.sleep(3600)
if args.panic_at_boot:
    out.write("Kernel panic - not syncing: VFS: Unable to mount root fs\n")
    out.flush()
    sys.exit(0)
out.write("IRQRIG-BOOTED release=6.12.0 cpus=2 model=rt irqsoft=0\n")
if args.die_after_boot:
    out.flush()
    os._exit(1)
out.write("irqrig# ")
out.flush()
for line in sys.stdin:
    line = line.rstrip("\n")
    if line.strip() == "exit":
        out.write("IRQRIG-POWEROFF\nreboot: Power down\n")
        out.flush()
        break
    if args.panic_on and args.panic_on in line:
        out.write("sysrq: Trigger a crash\nKernel panic - not syncing: sysrq triggered crash\n")
        out.flush()
        sys.exit(0)
    if args.kernel_noise:
        out.write("WARNING: CPU: 0 PID: 1 at kernel/fake.c:1 fake+0x0/0x10\n")
        out.flush()
    subprocess.run(["/bin/sh", "-c", line])     # output streams, like a shell
    out.write("irqrig# ")
    out.flush()
