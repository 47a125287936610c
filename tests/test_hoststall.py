"""vCPU stall sampling (hoststall) and lost-sample bursts (sensorlog)."""

import subprocess
import sys
import time
import unittest

from irqrig import hoststall, sensorlog

# A stand-in for QEMU: a process whose thread is named like a vCPU thread.
FAKE_VCPU = ("import time\n"
             "open('/proc/self/comm', 'w').write('CPU 0/TCG')\n"
             "end = time.monotonic() + 5\n"
             "while time.monotonic() < end: pass\n")


class HostStallTest(unittest.TestCase):
    def test_finds_vcpu_threads_and_accounts_their_wait(self):
        p = subprocess.Popen([sys.executable, "-c", FAKE_VCPU])
        try:
            time.sleep(0.3)
            self.assertEqual(list(hoststall.vcpu_threads(p.pid).values()), ["CPU 0/TCG"])
            w = hoststall.VcpuWatch(p.pid, stall_ms=0.001).start()
            time.sleep(0.5)
            s = w.stop()
        finally:
            p.kill()
            p.wait()
        self.assertEqual(s["vcpu_threads"], ["CPU 0/TCG"])
        self.assertIn("CPU 0/TCG", s["vcpu_wait_total_s"])
        self.assertEqual(s["vcpu_stalls"], len(s["stalls"]))
        self.assertGreaterEqual(s["vcpu_stall_max_ms"], 0)

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
