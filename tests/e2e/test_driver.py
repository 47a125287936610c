"""irq_sensor.ko in the guest on 6.12-rt and 6.12-preempt (scenarios/driver.toml)."""

import unittest

from common import run_file

from irqrig import selftest


class DriverTest(unittest.TestCase):
    def test_driver_scenario(self):
        rs = run_file("driver", "driver", selftest.E2E_VARIANTS)
        for r in rs.data["runs"]:
            failed = [v for v in r["verdicts"] if not v["ok"]]
            self.assertEqual(r["status"], "pass", "%s: %s" % (r["variant"], failed))
            sensor = r["figures"]["sensor"]
            # Every stage was acknowledged, measured by the device.
            for stage in ("hard", "thread", "user"):
                self.assertGreater(sensor["latency_ns"][stage]["count"], 300, stage)
            # Lost samples only where the host stalled a vCPU (the verdict
            # excuses nothing else).
            if sensor["counts"]["lost"]:
                self.assertEqual(r["figures"]["host"]["loss_bursts_at_a_stall"],
                                 sensor["loss_bursts"])
            # A late ack whose ring slot was reused counts as bad: after a
            # host stall of a vCPU (hundreds of ms under contention) the
            # storm step wraps the ring, so only a stall-free run must have none.
            if not r["figures"].get("host", {}).get("vcpu_stalls"):
                self.assertEqual(sensor["counts"]["bad_acks"], 0)
            self.assertGreater(sensor["counts"]["spurious"], 0, "spurious mode ran")
            self.assertGreater(sensor["counts"]["dropped"], 0, "dropped mode ran")
            reads = r["figures"]["sensor_read"]
            self.assertGreater(reads[1]["samples"], reads[0]["samples"], "storm ran faster")


if __name__ == "__main__":
    unittest.main()
