"""Starting gdb against a guest's gdbstub: one argv prelude, one lifecycle.

QEMU's gdbstub takes one client at a time, so a boot has at most one Gdb
running (irqrig/boot.py stops it before another, e.g. lx-dmesg after a
hang, attaches).  gdb loads vmlinux, the kernel's scripts/gdb and irqrig's
commands (gdb-scripts/irqrig.py); what it then does is a gdb command.
"""

import json
import os
import re
import signal
import subprocess
import time

from irqrig import artifacts, paths, procs
from irqrig.errors import GuestError


def argv(variant, sock, commands=(), batch=True, remotetimeout=60):
    """gdb's command line: the prelude, then ``commands`` (each one -ex)."""
    a = ["gdb", "-nx"] + (["-batch"] if batch else ["-q"])
    pre = ["set pagination off", "set confirm off",
           "set remotetimeout %d" % remotetimeout, "set auto-load safe-path /",
           "file %s" % artifacts.vmlinux(variant),
           "source %s" % artifacts.gdb_scripts(variant),
           "source %s" % os.path.join(paths.GDB_SCRIPTS, "irqrig.py"),
           "target remote %s" % sock]
    for c in pre + list(commands):
        a += ["-ex", c]
    return a


def wait_for_socket(sock, timeout=20, proc=None):
    """QEMU creates its gdbstub socket at start-up."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(sock):
        if proc is not None and proc.poll() is not None:
            raise GuestError("QEMU exited before its gdbstub socket %s appeared" % sock)
        if time.monotonic() > deadline:
            raise GuestError("QEMU's gdbstub socket %s did not appear" % sock)
        time.sleep(0.05)


class Gdb:
    """A batch gdb in the background, its output in a log file."""

    def __init__(self, variant, sock, commands, log_path):
        self.argv = argv(variant, sock, commands)
        self.sock = sock
        self.log_path = log_path
        self.proc = None
        self._log = None

    def start(self, socket_timeout=20):
        wait_for_socket(self.sock, socket_timeout)
        self._log = open(self.log_path, "w", encoding="utf-8")
        self.proc = subprocess.Popen(self.argv, stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        procs.register(self.proc.pid, "gdb")
        return self

    @property
    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def wait(self, timeout):
        """Wait for gdb to end by itself; kill it after timeout.  Returns
        True if it ended by itself."""
        if self.proc is None:
            return False
        ended = True
        try:
            self.proc.wait(timeout=max(0.0, timeout))
        except subprocess.TimeoutExpired:
            ended = False
        self.stop()
        return ended

    def interrupt(self):
        """SIGINT: gdb stops the guest and its command sees the stop."""
        if self.running:
            self.proc.send_signal(signal.SIGINT)

    def stop(self):
        """Kill gdb if it still runs (idempotent); the stub is free after."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        procs.unregister(self.proc.pid)
        if self._log is not None:
            self._log.close()
            self._log = None

    def output(self):
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""


THREAD_RE = re.compile(r"^\*?\s*\d+\s+Thread \S+ \(CPU#(\d+)[^)]*\)\s+(?:0x[0-9a-f]+ in )?(\S+)")


TASKS_BEGIN, TASKS_END = "irqrig-tasks-begin", "irqrig-tasks-end"


def dump_after_hang(variant, sock, dest, timeout=90):
    """After a hang: where each CPU is (gdb's `info threads`), the kernel
    log through the gdbstub (lx-dmesg) and who sleeps on what (irqrig
    state, irqrig tasks: each CPU's soft and hard state, waiting tasks,
    their stacks and locks, each CPU's deferred work).

    A CPU stuck in hard interrupt context cannot get its messages printed
    on PREEMPT_RT (the console is printed by a thread); they are in the log
    buffer.  The caller makes sure no other gdb is attached.  Returns
    {"dmesg": dest, "cpus": dest_cpus, "tasks": dest_tasks} for what was
    saved (the CPUs' places as JSON: [{"cpu": N, "function": NAME}]);
    empty if nothing."""
    g = Gdb(variant, sock, ["info threads", "lx-dmesg", "echo %s\\n" % TASKS_BEGIN,
                            "irqrig state", "irqrig tasks", "echo %s\\n" % TASKS_END, "detach"],
            dest + ".gdb.log")
    try:
        g.start(socket_timeout=2)       # QEMU has been up for a while
    except GuestError:
        return {}
    g.wait(timeout)
    saved = {}
    out = g.output().splitlines()
    stem = os.path.splitext(dest)[0]
    lines = [line for line in out if line.startswith("[")]
    if lines:
        with open(dest, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        saved["dmesg"] = dest
    cpus = [{"cpu": int(m.group(1)), "function": m.group(2)}
            for m in map(THREAD_RE.match, out) if m]
    if cpus:
        path = stem + "-cpus.json"
        with open(path, "w", encoding="utf-8") as f:
            json.dump(cpus, f)
        saved["cpus"] = path
    if TASKS_BEGIN in out:
        tasks = out[out.index(TASKS_BEGIN) + 1:]
        tasks = tasks[:tasks.index(TASKS_END)] if TASKS_END in tasks else \
            tasks + ["(cut short: gdb ended or timed out; its log: %s)" % g.log_path]
        path = stem.replace("dmesg", "tasks") + ".txt"
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(tasks) + "\n")
        saved["tasks"] = path
    return saved
