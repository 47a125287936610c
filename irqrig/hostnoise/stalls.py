"""How long the host kept QEMU's vCPU threads waiting for a CPU.

Under TCG without icount the guest's clocks follow host time, so while the
host scheduler leaves a vCPU thread runnable but not running, the guest
CPU stands still and its interrupts wait: that shows up as guest latency
(and, past the sensor's latch depth, as lost samples) although no guest
code caused it.  The kernel accounts that wait per thread (the second
field of /proc/PID/task/TID/schedstat, in ns, added when the thread gets
the CPU again); sampling it every few milliseconds gives each stall.

QEMU names its vCPU threads ("CPU 0/TCG") only with
-name ...,debug-threads=on, which irqrig's command line sets.
"""

import bisect
import os
import re
import threading
import time

VCPU_RE = re.compile(r"^CPU \d+/")
STALL_MS = 10.0         # a wait this long is recorded as a stall


def _read(path):
    try:
        with open(path, encoding="ascii") as f:
            return f.read()
    except OSError:
        return None


def vcpu_threads(pid):
    """{tid: name} of a QEMU process's vCPU threads."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        name = (_read("/proc/%d/task/%s/comm" % (pid, tid)) or "").strip()
        if VCPU_RE.match(name):
            out[int(tid)] = name
    return out


def run_delay_ns(pid, tid):
    text = _read("/proc/%d/task/%d/schedstat" % (pid, tid))
    return int(text.split()[1]) if text else None


class VcpuWatch:
    """Samples the vCPU threads' run-queue wait in a background thread."""

    def __init__(self, pid, interval_s=0.004, stall_ms=STALL_MS):
        self.pid = pid
        self.interval = interval_s
        self.stall_ns = int(stall_ms * 1e6)
        self.stalls = []            # (seconds since start, thread, wait ms)
        self.threads = {}
        self.total = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self.t0 = time.monotonic()

    def start(self):
        self._thread.start()
        return self

    def _loop(self):
        last = {}
        # vCPU threads appear once QEMU has created the machine.
        while not self._stop.is_set() and not self.threads:
            try:
                self.threads = vcpu_threads(self.pid)
            except OSError:
                return
            self._stop.wait(0.05)
        for tid in self.threads:
            last[tid] = run_delay_ns(self.pid, tid)
        while not self._stop.wait(self.interval):
            for tid, name in self.threads.items():
                now = run_delay_ns(self.pid, tid)
                if now is None or last[tid] is None:
                    continue
                delta = now - last[tid]
                last[tid] = now
                self.total[name] = self.total.get(name, 0) + delta
                if delta >= self.stall_ns:
                    self.stalls.append((round(time.monotonic() - self.t0, 3), name,
                                        round(delta / 1e6, 2)))

    def stop(self):
        """Stop sampling; a summary for results.json."""
        self._stop.set()
        self._thread.join(timeout=2)
        waits = [s[2] for s in self.stalls]
        return {
            "vcpu_threads": sorted(self.threads.values()),
            # stall times are seconds since this CLOCK_MONOTONIC time
            "stall_clock_t0": self.t0,
            "stall_sample_interval_s": self.interval,
            "stall_threshold_ms": self.stall_ns / 1e6,
            "vcpu_stalls": len(waits),
            "vcpu_stall_max_ms": max(waits, default=0),
            "vcpu_wait_total_s": {k: round(v / 1e9, 2) for k, v in sorted(self.total.items())},
            "stalls": self.stalls[:5000],
        }


def at_a_stall(bursts_ns, stalls, window_s=0.1):
    """For each loss burst (device times, ns since the VM started): is a
    vCPU stall within window_s of it?  Without icount the virtual clock
    runs with host time from QEMU's start, where the stall clock starts."""
    times = sorted(s[0] for s in stalls)
    out = []
    for first, last in bursts_ns:
        lo, hi = first / 1e9 - window_s, last / 1e9 + window_s
        i = bisect.bisect_left(times, lo)
        out.append(i < len(times) and times[i] <= hi)
    return out


def stall_spans(summary):
    """The vCPU stalls as [(thread, from_s, to_s)] on the host's monotonic
    clock: a wait is accounted when it ends, and it ended at most one
    sampling interval before it was seen."""
    t0, dt = summary["stall_clock_t0"], summary["stall_sample_interval_s"]
    return [(name, t0 + t - wait_ms / 1e3 - dt, t0 + t) for t, name, wait_ms in
            summary["stalls"]]
