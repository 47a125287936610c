"""The processes the runner starts (QEMU, gdb, probes), and signals.

Only processes registered here are ever killed, by the PID we started.
An atexit hook kills any still running.  SIGTERM and SIGHUP kill them too
and then raise errors.Interrupted in the main thread, so that a run set
in progress is written as incomplete (with the reason) before the runner
exits; Ctrl-C arrives as KeyboardInterrupt and is handled the same way.
"""

import atexit
import os
import signal

from irqrig.errors import Interrupted

_started = {}       # pid -> what it is; only these are ever signalled


def register(pid, what="qemu"):
    _started[pid] = what


def unregister(pid):
    _started.pop(pid, None)


def running():
    """{pid: what} of the registered processes (tests: none left behind)."""
    return dict(_started)


def kill_started():
    """Kill every process this runner started that is still running."""
    for pid in list(_started):
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        unregister(pid)


def _on_signal(signum, frame):
    kill_started()
    raise Interrupted("signal %s" % signal.Signals(signum).name)


atexit.register(kill_started)
for _sig in (signal.SIGTERM, signal.SIGHUP):
    signal.signal(_sig, _on_signal)
