"""`runner.py gdb VARIANT [SCENARIO]`: a guest paused under gdb, for people.

QEMU starts paused with its gdbstub, the serial console and the HMP monitor
on unix sockets in a run directory; gdb opens with vmlinux, the kernel's
scripts/gdb and irqrig's commands (`help irqrig`).  Quitting gdb stops QEMU.
Ctrl-C belongs to gdb (it stops the guest); the runner ignores it meanwhile.
"""

import os
import signal
import subprocess

from irqrig import artifacts, gdbrun, procs, qemu, results, scenario
from irqrig.util import log


def run(variant, scenario_path=None):
    points = scenario.load(scenario_path) if scenario_path else None
    scn = points[0] if points else None
    run_dir = results.new_run_dir("gdb-" + variant)
    sock = lambda name: os.path.join(run_dir, name)  # noqa: E731
    q = scn["qemu"] if scn else {"cpus": 2, "memory_mb": 512, "icount_shift": None,
                                 "machine": "q35", "append": ""}
    cfg = qemu.QemuConfig(
        kernel=artifacts.bzimage(variant), initrd=artifacts.initramfs(variant),
        cpus=q["cpus"], memory=q["memory_mb"],
        icount=q["icount_shift"], machine=q["machine"], append=q["append"],
        sensor={"irq-mode": scn["sensor"]["irq_mode"] if scn else "msix"},
        sensor_log=sock("sensor.log"), gdb=sock("gdb.sock"), paused=True)
    argv = cfg.argv()
    i = argv.index("-serial")
    argv[i + 1] = "unix:%s,server=on,wait=off" % sock("console.sock")
    i = argv.index("-monitor")
    argv[i + 1] = "unix:%s,server=on,wait=off" % sock("monitor.sock")
    with open(sock("qemu.log"), "w") as qlog:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=qlog,
                                stderr=subprocess.STDOUT, start_new_session=True)
    procs.register(proc.pid)
    old = signal.getsignal(signal.SIGINT)
    try:
        gdbrun.wait_for_socket(sock("gdb.sock"), proc=proc)
        log("gdb: guest paused; console:  socat -,raw,echo=0 UNIX-CONNECT:%s"
            % sock("console.sock"))
        log("gdb: monitor:  socat - UNIX-CONNECT:%s   (device events: %s)"
            % (sock("monitor.sock"), sock("sensor.log")))
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        subprocess.run(gdbrun.argv(variant, sock("gdb.sock"), [
            "echo irqrig: 'help irqrig' lists the commands; 'continue' boots.\\n"],
            batch=False), check=False)
    finally:
        signal.signal(signal.SIGINT, old)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        procs.unregister(proc.pid)
    return 0
