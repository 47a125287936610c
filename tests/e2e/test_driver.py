"""irq_sensor.ko in the guest on the end-to-end variants (selftest.E2E_VARIANTS,
scenarios/driver.toml)."""

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
            self.assertEqual(sensor["counts"]["lost"], 0)
            # Protocol errors only: acks of samples the device no longer
            # remembers (a storm outran the thread stage) are stale_acks.
            self.assertEqual(sensor["counts"]["bad_acks"], 0,
                             "%s: %s" % (r["variant"], sensor["bad_ack_reasons"]))
            self.assertGreater(sensor["counts"]["spurious"], 0, "spurious mode ran")
            self.assertGreater(sensor["counts"]["dropped"], 0, "dropped mode ran")
            reads = r["figures"]["sensor_read"]
            self.assertGreater(reads[1]["samples"], reads[0]["samples"], "storm ran faster")


if __name__ == "__main__":
    unittest.main()
