"""`runner.py gdb VARIANT [SCENARIO]`: a guest paused under gdb, for people.

QEMU starts paused with its gdbstub, the serial console and the HMP monitor
on unix sockets in a run directory; gdb opens with vmlinux, the kernel's
scripts/gdb and irqrig's commands (`help irqrig`).  Quitting gdb stops QEMU.
"""

import os
import subprocess
import time

from irqrig import paths, qemu, results, scenario
from irqrig.errors import GuestError
from irqrig.util import log


def run(variant, scenario_path=None):
    points = scenario.load(scenario_path) if scenario_path else None
    scn = points[0] if points else None
    run_dir = results.new_run_dir("gdb-" + variant)
    sock = lambda name: os.path.join(run_dir, name)  # noqa: E731
    kdir = paths.kernel_dir(variant)
    q = scn["qemu"] if scn else {"cpus": 2, "memory_mb": 512, "icount_shift": None,
                                 "machine": "q35", "append": ""}
    cfg = qemu.QemuConfig(
        kernel=os.path.join(kdir, "arch", "x86", "boot", "bzImage"),
        initrd=paths.initramfs(variant), cpus=q["cpus"], memory=q["memory_mb"],
        icount=q["icount_shift"], machine=q["machine"], append=q["append"],
        sensor={"irq-mode": scn["sensor"]["irq_mode"] if scn else "msix"},
        sensor_log=sock("sensor.log"), gdb=sock("gdb.sock"), paused=True)
    argv = cfg.argv()
    i = argv.index("-serial")
    argv[i + 1] = "unix:%s,server=on,wait=off" % sock("console.sock")
    i = argv.index("-monitor")
    argv[i + 1] = "unix:%s,server=on,wait=off" % sock("monitor.sock")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                            stdout=open(sock("qemu.log"), "w"), stderr=subprocess.STDOUT)
    qemu.register(proc.pid)
    try:
        deadline = time.monotonic() + 20
        while not os.path.exists(sock("gdb.sock")):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise GuestError("QEMU did not start (log: %s)" % sock("qemu.log"))
            time.sleep(0.05)
        log("gdb: guest paused; console:  socat -,raw,echo=0 UNIX-CONNECT:%s"
            % sock("console.sock"))
        log("gdb: monitor:  socat - UNIX-CONNECT:%s   (device events: %s)"
            % (sock("monitor.sock"), sock("sensor.log")))
        subprocess.run(["gdb", "-nx", "-q",
                        "-ex", "set pagination off",
                        "-ex", "set remotetimeout 60",
                        "-ex", "set auto-load safe-path /",
                        "-ex", "file %s" % os.path.join(kdir, "vmlinux"),
                        "-ex", "source %s" % os.path.join(kdir, "vmlinux-gdb.py"),
                        "-ex", "source %s" % os.path.join(paths.GDB_SCRIPTS, "irqrig.py"),
                        "-ex", "target remote %s" % sock("gdb.sock"),
                        "-ex", "echo irqrig: 'help irqrig' lists the commands; 'continue' boots.\\n"],
                       check=False)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        qemu.unregister(proc.pid)
    return 0
