"""Starting gdb against a guest's gdbstub: one argv prelude, one lifecycle.

QEMU's gdbstub takes one client at a time, so a boot has at most one Gdb
running (irqrig/boot.py stops it before another, e.g. lx-dmesg after a
hang, attaches).  gdb loads vmlinux, the kernel's scripts/gdb and irqrig's
commands (gdb-scripts/irqrig.py); what it then does is a gdb command.
"""

import os
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


def dump_dmesg(variant, sock, dest, timeout=90):
    """After a hang: the kernel log through the gdbstub (lx-dmesg).

    A CPU stuck in hard interrupt context cannot get its messages printed
    on PREEMPT_RT (the console is printed by a thread); they are in the log
    buffer.  The caller makes sure no other gdb is attached.  Returns True
    if something was saved to dest."""
    g = Gdb(variant, sock, ["lx-dmesg", "detach"], dest + ".gdb.log")
    try:
        g.start(socket_timeout=2)       # QEMU has been up for a while
    except GuestError:
        return False
    g.wait(timeout)
    lines = [line for line in g.output().splitlines() if line.startswith("[")]
    if not lines:
        return False
    with open(dest, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return True
