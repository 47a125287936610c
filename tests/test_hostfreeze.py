"""Host CPU freeze probe (hostnoise.freezes) and loss-burst matching."""

import os
import signal
import tempfile
import time
import unittest

from irqrig.hostnoise import freezes as hostfreeze


def children(pid):
    with open("/proc/%d/task/%d/children" % (pid, pid), encoding="ascii") as f:
        return [int(x) for x in f.read().split()]


class FreezeProbeTest(unittest.TestCase):
    def test_a_stopped_probe_records_a_freeze_and_nothing_is_left_behind(self):
        with tempfile.TemporaryDirectory() as d:
            probe = hostfreeze.FreezeProbe(os.path.join(d, "freezes.jsonl")).start()
            deadline = time.monotonic() + 10
            while len(children(probe.proc.pid)) < len(os.sched_getaffinity(0)):
                self.assertLess(time.monotonic(), deadline, "probe processes did not start")
                time.sleep(0.05)
            kids = children(probe.proc.pid)
            time.sleep(0.2)
            # A stopped process is what a frozen CPU looks like to its probe.
            os.kill(kids[0], signal.SIGSTOP)
            t0 = time.monotonic()
            time.sleep(0.08)
            os.kill(kids[0], signal.SIGCONT)
            time.sleep(0.2)
            s = probe.stop()
        self.assertEqual(s["host_cpus_probed"], len(kids))
        mine = [f for f in s["freezes"] if f[1] <= t0 + 0.01 and f[2] >= t0 + 0.07]
        self.assertTrue(mine, s["freezes"])
        self.assertGreaterEqual(s["host_cpu_freeze_max_ms"], 70)
        for pid in [probe.proc.pid] + kids:
            self.assertFalse(os.path.exists("/proc/%d/stat" % pid)
                             and open("/proc/%d/stat" % pid).read().split()[2] != "Z",
                             "probe process %d still running" % pid)

    def test_read_log_skips_a_cut_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.write('{"cpu": 0, "policy": "fifo"}\n{"cpu": 0, "from": 1.5, "to": 1.6}\n'
                    '{"cpu": 1, "fr')
        try:
            self.assertEqual(hostfreeze.read_log(f.name),
                             ({0: "fifo"}, [(0, 1.5, 1.6)]))
        finally:
            os.unlink(f.name)


class MatchTest(unittest.TestCase):
    def test_freezes_of_both_cpus_merge(self):
        fr = [(1, 2.0, 2.1), (0, 1.0, 1.1), (0, 2.05, 2.2)]
        self.assertEqual(hostfreeze.merged(fr), [[1.0, 1.1], [2.0, 2.2]])

    def test_a_burst_during_a_freeze_is_explained(self):
        offset = 5_000_000_000              # host monotonic = virtual + 5 s
        fr = [(0, 6.000, 6.100)]            # host seconds
        bursts = [
            [1_016_000_000, 1_099_000_000],     # latch filled 16 ms in
            [1_016_000_000, 1_150_000_000],     # drained 50 ms after the thaw
            [1_060_000_000, 1_100_000_000],     # drain blocked 44 ms in, ended at the thaw
            [1_016_000_000, 1_250_000_000],     # went on long after it
            [980_000_000, 1_050_000_000],       # began before the freeze
            [1_130_000_000, 1_140_000_000],     # began after the thaw
            [3_016_000_000, 3_050_000_000],     # no freeze then
        ]
        self.assertEqual(hostfreeze.explained(bursts, fr, offset),
                         [True, True, True, False, False, False, False])
        self.assertEqual(hostfreeze.explained(bursts, [], offset), [False] * 7)


if __name__ == "__main__":
    unittest.main()
