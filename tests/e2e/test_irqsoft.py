"""CONFIG_RT_IRQ_DISABLE end to end: the seed patch's case measured by the
device, and the article's self-deadlock caught on the debug kernel."""

import unittest

from common import run_file


class IrqsoftTest(unittest.TestCase):
    def test_fire_inside_hog(self):
        """gdb fires the sensor inside the driver's 1 ms local_irq_disable()
        section (icount: deterministic virtual time)."""
        rs = run_file("gdb-fire", "gdb-fire", ["6.12-rt", "6.12-rt-irqsoft"])
        runs = {r["variant"]: r for r in rs.data["runs"]}
        for r in runs.values():
            self.assertEqual(r["status"], "pass", r["verdicts"])
            self.assertGreater(r["figures"]["gdb_fire"]["fired"], 5)
        stock = runs["6.12-rt"]["figures"]["sensor"]["latency_ns"]["hard"]
        soft = runs["6.12-rt-irqsoft"]["figures"]["sensor"]["latency_ns"]["hard"]
        self.assertGreater(stock["p50"], 500000, "stock RT waits out the hog")
        self.assertLess(soft["max"], 100000, "IRQF_NODELAY answers inside the hog")

    def test_unsafe_driver_is_caught(self):
        rs = run_file("unsafe-driver", "unsafe-driver", ["6.12-rt-irqsoft-debug"])
        (r,) = rs.data["runs"]
        self.assertEqual(r["status"], "pass", r["verdicts"])
        self.assertTrue(any(r["expected_failure"]["detected"].values()))

    def test_nodelay_contract_is_named(self):
        """An IRQF_NODELAY handler calling complete(), queue_work() and
        hrtimer_start() (soft raw locks) is reported by name, each, on both
        series."""
        variants = ["6.12-rt-irqsoft-debug", "6.1-rt-irqsoft-debug"]
        rs = run_file("nodelay-contract", "nodelay-contract", variants)
        runs = {r["variant"]: r for r in rs.data["runs"]}
        self.assertEqual(sorted(runs), sorted(variants))
        for variant, r in runs.items():
            self.assertEqual(r["status"], "pass", (variant, r["verdicts"]))
            with open(r["logs"]["console"], encoding="utf-8", errors="replace") as f:
                console = f.readlines()
            named = [line for line in console if "IRQF_NODELAY contract violated" in line]
            for n, api in enumerate(("complete", "queue_work", "hrtimer_start"), 1):
                made = "nodelay_violation %d: the handler makes the call" % n
                self.assertTrue(any(made in line for line in console),
                                "%s: the handler never called %s (console: %s)"
                                % (variant, api, r["logs"]["console"]))
                self.assertTrue(any(api in line and "sensor_irq" in line for line in named),
                                "%s: no report names sensor_irq and %s: %s"
                                % (variant, api, named))

    def test_request_free_against_flood(self):
        """free_irq() of a second action, 4000 times, against a 20 kHz flood:
        all cycles done, clean console, no hang."""
        rs = run_file("reqfree-stress", "reqfree-stress", ["6.12-rt-irqsoft-debug"])
        (r,) = rs.data["runs"]
        self.assertEqual(r["status"], "pass", r["verdicts"])


if __name__ == "__main__":
    unittest.main()
