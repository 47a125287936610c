"""Freezes of the host's own CPUs, measured from inside the host.

The host irqrig runs on may itself be a virtual machine, and its hypervisor
can stop one of its CPUs for a while (measured on the project's 2-core
machine while it was busy: stops of ~100 ms, dozens a minute, each CPU on
its own).  While a host CPU is stopped, a vCPU thread on it stands still
although the host kernel counts it as running, so schedstat
(stalls.py) cannot see it; under TCG without icount the guest's clocks
go on, and its interrupts wait.

The probe: one process per host CPU, pinned, SCHED_FIFO at the lowest RT
priority (above every normal task, so the host's own scheduling does not
delay it), sleeping PERIOD_MS in a loop.  An oversleep of THRESHOLD_MS or
more is a freeze of that CPU.  Without the privilege for SCHED_FIFO it
runs as a normal task and its oversleeps include host scheduling; the
summary says which.

Run as a script, this file is the probe: python3 freezes.py OUT.
"""

import ctypes
import json
import os
import signal
import subprocess
import sys
import time

PERIOD_MS = 2.0
THRESHOLD_MS = 10.0
TOLERANCE_NS = 10_000_000      # clock alignment and probe granularity
RECOVERY_NS = 100_000_000      # a thawed CPU catching up
_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    # A probe must never outlive the runner that started it.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _probe_cpu(cpu, fd, period_s, threshold_s):
    _die_with_parent()
    os.sched_setaffinity(0, {cpu})
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        policy = "fifo"
    except OSError:
        policy = "other"
    os.write(fd, (json.dumps({"cpu": cpu, "policy": policy}) + "\n").encode())
    while True:
        before = time.monotonic()
        time.sleep(period_s)
        after = time.monotonic()
        if after - before - period_s >= threshold_s:
            line = {"cpu": cpu, "from": round(before + period_s, 6), "to": round(after, 6)}
            os.write(fd, (json.dumps(line) + "\n").encode())


def _probe_main(out):
    """One child per CPU; they write JSON lines to OUT until SIGTERM."""
    _die_with_parent()
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    kids = []
    for cpu in sorted(os.sched_getaffinity(0)):
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            try:
                _probe_cpu(cpu, fd, PERIOD_MS / 1e3, THRESHOLD_MS / 1e3)
            finally:
                os._exit(0)
        kids.append(pid)

    def stop(signum, frame):
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in kids:
            os.waitpid(pid, 0)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    while True:
        signal.pause()


def read_log(path):
    """(policies {cpu: policy}, freezes [(cpu, from_s, to_s)]) from a probe log."""
    policies, freezes = {}, []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue            # a line cut by the kill
                if "policy" in e:
                    policies[e["cpu"]] = e["policy"]
                elif "from" in e:
                    freezes.append((e["cpu"], e["from"], e["to"]))
    except FileNotFoundError:
        pass
    return policies, freezes


class FreezeProbe:
    """The probe in a child process, logging to @path."""

    def __init__(self, path):
        self.path = path
        self.proc = None

    def start(self):
        if os.path.exists(self.path):
            os.unlink(self.path)
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), self.path],
                                     stdin=subprocess.DEVNULL)
        return self

    def stop(self):
        """Stop the probe; a summary for results.json."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        policies, freezes = read_log(self.path)
        lengths = [(b - a) * 1e3 for _, a, b in freezes]
        return {
            "log": self.path,
            "probe": "one process per host CPU sleeping %g ms, SCHED_%s" % (
                PERIOD_MS, "FIFO" if policies and set(policies.values()) == {"fifo"}
                else "OTHER (no RT privilege: oversleeps include host scheduling)"),
            "freeze_threshold_ms": THRESHOLD_MS,
            "host_cpus_probed": len(policies),
            "host_cpu_freezes": len(freezes),
            "host_cpu_freeze_max_ms": round(max(lengths, default=0), 1),
            "host_cpu_frozen_s": round(sum(lengths) / 1e3, 2),
            "freezes": [[cpu, a, b] for cpu, a, b in freezes[:5000]],
        }


def merged(freezes):
    """The union of the freeze intervals of all CPUs: [[from, to]] seconds."""
    out = []
    for _, a, b in sorted(freezes, key=lambda f: f[1]):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def explained(bursts_ns, freezes, offset_ns, tolerance_ns=TOLERANCE_NS,
              recovery_ns=RECOVERY_NS):
    """Which loss bursts a host CPU freeze explains: [bool] per burst.

    A burst [first, last] (device times, virtual ns; host monotonic ns =
    virtual + offset_ns) is explained by a stretch of frozen host CPUs
    [a, b] when it began during the stretch and ended at most recovery_ns
    after the thaw.  It need not begin a latch's span after the freeze
    did: a vCPU that keeps running stops draining once it waits for what a
    frozen one holds (QEMU's BQL, a guest lock, an IPI's answer), and such
    bursts end at the thaw.  A thawed CPU first runs what queued up while
    it stood still, so the last loss may come a little after the thaw.  A
    burst that began before the freeze or after it, or went on long after
    it, is the guest's.  Any CPU's freeze counts.
    """
    spans = [(a * 1e9, b * 1e9) for a, b in merged(freezes)]
    out = []
    for first, last in bursts_ns:
        s, e = first + offset_ns, last + offset_ns
        out.append(any(a - tolerance_ns <= s <= b + tolerance_ns and e <= b + recovery_ns
                       for a, b in spans))
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: freezes.py OUT.jsonl")
    _probe_main(sys.argv[1])
