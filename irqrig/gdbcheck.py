"""The gdb dynamic check as part of a boot (gdb-scripts/irqrig_gdb/check.py).

QEMU starts paused with a gdbstub on a unix socket; gdb in batch mode loads
vmlinux, the kernel's gdb scripts and ours, sets the breakpoints and lets
the guest run.  When the guest powers off, gdb writes the verdict JSON.
"""

import json
import os
import subprocess
import time

from irqrig import build_driver, paths
from irqrig.errors import GuestError


def dump_dmesg(variant, sock, dest, timeout=90):
    """After a hang: the kernel log through the gdbstub (lx-dmesg).

    A CPU stuck in hard interrupt context cannot get its messages printed
    on PREEMPT_RT (the console is printed by a thread); they are in the log
    buffer.  Returns True if something was saved to dest."""
    kdir = paths.kernel_dir(variant)
    try:
        proc = subprocess.run(
            ["gdb", "-batch", "-nx", "-ex", "set pagination off",
             "-ex", "set remotetimeout 30", "-ex", "set auto-load safe-path /",
             "-ex", "file %s" % os.path.join(kdir, "vmlinux"),
             "-ex", "source %s" % os.path.join(kdir, "vmlinux-gdb.py"),
             "-ex", "target remote %s" % sock, "-ex", "lx-dmesg", "-ex", "detach"],
            capture_output=True, text=True, errors="replace", timeout=timeout,
            stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    lines = [l for l in proc.stdout.splitlines() if l.startswith("[")]
    if not lines:
        return False
    with open(dest, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return True


class GdbCheck:
    def __init__(self, variant, sock, out_json, log_path, census):
        self.variant = variant
        self.sock = sock
        self.out_json = out_json
        self.log_path = log_path
        self.mode = "census" if census else "violations"
        self.proc = None

    def argv(self):
        kdir = paths.kernel_dir(self.variant)
        return ["gdb", "-batch", "-nx",
                "-ex", "set pagination off", "-ex", "set remotetimeout 60", "-ex", "set confirm off",
                "-ex", "set auto-load safe-path /",
                "-ex", "file %s" % os.path.join(kdir, "vmlinux"),
                "-ex", "source %s" % os.path.join(kdir, "vmlinux-gdb.py"),
                "-ex", "source %s" % os.path.join(paths.GDB_SCRIPTS, "irqrig.py"),
                "-ex", "target remote %s" % self.sock,
                "-ex", "irqrig check %s %s %s" % (self.mode, self.out_json,
                                                   build_driver.out_dir(self.variant))]

    def start(self):
        if os.path.exists(self.out_json):
            os.unlink(self.out_json)
        deadline = time.monotonic() + 20
        while not os.path.exists(self.sock):         # QEMU creates it at start-up
            if time.monotonic() > deadline:
                raise GuestError("QEMU's gdbstub socket %s did not appear" % self.sock)
            time.sleep(0.05)
        self.log = open(self.log_path, "w", encoding="utf-8")
        self.proc = subprocess.Popen(self.argv(), stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)

    def finish(self, timeout=120):
        """Wait for gdb (QEMU is gone); returns the verdict dict or None."""
        if self.proc is None:
            return None
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        try:
            with open(self.out_json, encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            return None
