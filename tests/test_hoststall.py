"""vCPU stall sampling (hostnoise.stalls) and lost-sample bursts (sensorlog)."""

import subprocess
import sys
import time
import unittest

from irqrig import sensorlog
from irqrig.hostnoise import stalls as hoststall

# A stand-in for QEMU: a process whose thread is named like a vCPU thread,
# busy on CPU 0.
FAKE_VCPU = ("import os, time\n"
             "os.sched_setaffinity(0, {0})\n"
             "open('/proc/self/comm', 'w').write('CPU 0/TCG')\n"
             "end = time.monotonic() + 5\n"
             "while time.monotonic() < end: pass\n")
# Another busy process on the same CPU: the fake vCPU must wait for it.
HOG = ("import os, time\n"
       "os.sched_setaffinity(0, {0})\n"
       "end = time.monotonic() + 5\n"
       "while time.monotonic() < end: pass\n")


class HostStallTest(unittest.TestCase):
    def test_a_vcpu_sharing_its_cpu_is_seen_waiting(self):
        p = subprocess.Popen([sys.executable, "-c", FAKE_VCPU])
        hog = subprocess.Popen([sys.executable, "-c", HOG])
        try:
            deadline = time.monotonic() + 10
            while not hoststall.vcpu_threads(p.pid) and time.monotonic() < deadline:
                time.sleep(0.05)        # the interpreter is starting
            self.assertEqual(list(hoststall.vcpu_threads(p.pid).values()), ["CPU 0/TCG"])
            w = hoststall.VcpuWatch(p.pid, stall_ms=1).start()
            time.sleep(1.0)
            s = w.stop()
        finally:
            for q in (p, hog):
                q.kill()
                q.wait()
        self.assertEqual(s["vcpu_threads"], ["CPU 0/TCG"])
        # Two busy processes on one CPU: each waits about half the time.
        self.assertGreater(s["vcpu_wait_total_s"]["CPU 0/TCG"], 0.1, s)
        self.assertGreater(s["vcpu_stalls"], 0, "a wait of >= 1 ms was never seen")
        self.assertEqual(s["vcpu_stalls"], len(s["stalls"]))
        self.assertGreaterEqual(s["vcpu_stall_max_ms"], 1)

    def test_no_vcpu_threads(self):
        p = subprocess.Popen(["sleep", "2"])
        try:
            s = hoststall.VcpuWatch(p.pid).start()
            time.sleep(0.2)
            s = s.stop()
        finally:
            p.kill()
            p.wait()
        self.assertEqual(s["vcpu_threads"], [])
        self.assertEqual(s["vcpu_stalls"], 0)


class LossBurstTest(unittest.TestCase):
    def test_bursts(self):
        ms = 1_000_000
        self.assertEqual(sensorlog.loss_bursts([]), [])
        self.assertEqual(sensorlog.loss_bursts([0, 1 * ms, 2 * ms, 100 * ms, 101 * ms]),
                         [[0, 2 * ms], [100 * ms, 101 * ms]])
        self.assertEqual(len(sensorlog.loss_bursts([0, 50 * ms, 100 * ms])), 3)

    def test_bursts_at_stalls(self):
        ms = 1_000_000
        bursts = [[1000 * ms, 1010 * ms], [5000 * ms, 5000 * ms], [9000 * ms, 9001 * ms]]
        stalls = [(0.95, "CPU 0/TCG", 30.0), (9.2, "CPU 1/TCG", 12.0)]
        self.assertEqual(hoststall.at_a_stall(bursts, stalls), [True, False, False])
        self.assertEqual(hoststall.at_a_stall(bursts, stalls, window_s=0.3), [True, False, True])
        self.assertEqual(hoststall.at_a_stall(bursts, []), [False] * 3)

if __name__ == "__main__":
    unittest.main()
