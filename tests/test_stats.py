"""Percentiles and the device event log summary."""

import json
import os
import tempfile
import unittest

from irqrig import sensorlog, stats


class StatsTest(unittest.TestCase):
    def test_nearest_rank(self):
        v = list(range(1, 101))
        self.assertEqual(stats.percentile(v, 50), 50)
        self.assertEqual(stats.percentile(v, 99), 99)
        self.assertEqual(stats.percentile(v, 99.9), 100)
        self.assertEqual(stats.percentile(v, 0), 1)
        self.assertIsNone(stats.percentile([], 50))

    def test_describe(self):
        d = stats.describe([5, 1, 3])
        self.assertEqual((d["count"], d["min"], d["p50"], d["max"], d["mean"]),
                         (3, 1, 3, 5, 3.0))
        self.assertEqual(stats.describe([]), {"count": 0})


class SensorLogTest(unittest.TestCase):
    def write(self, events, tail=""):
        f = tempfile.NamedTemporaryFile("w", suffix=".log", delete=False)
        for e in events:
            f.write(json.dumps(e) + "\n")
        f.write(tail)
        f.close()
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_summary(self):
        ev = [
            {"ev": "raise", "t": 1000, "seq": 1, "value": 0, "irq": True},
            {"ev": "ack", "t": 3000, "stage": "hard", "seq": 1, "lat": 2000},
            {"ev": "ack", "t": 9000, "stage": "thread", "seq": 1, "lat": 8000},
            {"ev": "ack", "t": 20000, "stage": "user", "seq": 1, "lat": 19000},
            {"ev": "raise", "t": 5000, "seq": 2, "value": 0, "irq": False},
            {"ev": "lost", "t": 7000, "seq": 2, "why": "deadline"},
            {"ev": "spurious", "t": 8000},
            {"ev": "raise", "t": 9000, "seq": 3, "value": 0, "irq": True},
            {"ev": "lost", "t": 9500, "seq": 3, "why": "overflow"},
            {"ev": "bad_ack", "t": 9600, "stage": "user", "seq": 3},
        ]
        s = sensorlog.summarize(self.write(ev, tail='{"ev": "ra'))
        c = s["counts"]
        self.assertEqual((c["raised"], c["irq"], c["dropped"], c["lost"], c["spurious"],
                          c["bad_acks"], c["corrupt"]), (3, 2, 1, 2, 1, 1, 1))
        self.assertEqual(s["latency_ns"]["hard"]["max"], 2000)
        self.assertEqual(s["latency_ns"]["user"]["p50"], 19000)
        self.assertEqual(s["stage_order_errors"], 0)

    def test_samples_raised_without_an_interrupt_are_not_latencies(self):
        ev = [
            {"ev": "raise", "t": 1000, "seq": 1, "value": 0, "irq": True},
            {"ev": "ack", "t": 3000, "stage": "hard", "seq": 1, "lat": 2000},
            {"ev": "raise", "t": 5000, "seq": 2, "value": 0, "irq": False},
            {"ev": "raise", "t": 900000, "seq": 3, "value": 0, "irq": True},
            {"ev": "ack", "t": 901000, "stage": "hard", "seq": 2, "lat": 896000},
            {"ev": "ack", "t": 902000, "stage": "hard", "seq": 3, "lat": 2000},
        ]
        s = sensorlog.summarize(self.write(ev))
        self.assertEqual((s["counts"]["dropped"], s["latency_ns"]["hard"]["count"],
                          s["latency_ns"]["hard"]["max"]), (1, 2, 2000))
        self.assertEqual(s["stage_order_errors"], 0)

    def test_host_late_events_are_counted_apart_from_losses(self):
        ev = [
            {"ev": "raise", "t": 1000, "seq": 1, "value": 0, "irq": True},
            {"ev": "late", "t": 9000000, "due": 2000000},
            {"ev": "late", "t": 9000010, "due": 3000000},
            {"ev": "raise", "t": 9000020, "seq": 2, "value": 0, "irq": True},
        ]
        c = sensorlog.summarize(self.write(ev))["counts"]
        self.assertEqual((c["raised"], c["lost"], c["host_late"]), (2, 0, 2))

    def test_stale_acks_are_not_bad_acks_and_bad_ones_keep_their_reason(self):
        ev = [
            {"ev": "raise", "t": 1000, "seq": 1, "value": 0, "irq": True},
            {"ev": "stale_ack", "t": 2000, "stage": "user", "seq": 1},
            {"ev": "bad_ack", "t": 3000, "stage": "hard", "seq": 7,
             "why": "unknown sequence"},
            {"ev": "bad_ack", "t": 4000, "stage": "hard", "seq": 8,
             "why": "unknown sequence"},
        ]
        s = sensorlog.summarize(self.write(ev))
        self.assertEqual((s["counts"]["stale_acks"], s["counts"]["bad_acks"]), (1, 2))
        self.assertEqual(s["bad_ack_reasons"], {"hard: unknown sequence": 2})

    def test_stage_order_error(self):
        ev = [
            {"ev": "raise", "t": 1000, "seq": 1, "value": 0, "irq": True},
            {"ev": "ack", "t": 5000, "stage": "hard", "seq": 1, "lat": 4000},
            {"ev": "ack", "t": 4000, "stage": "thread", "seq": 1, "lat": 3000},
        ]
        self.assertEqual(sensorlog.summarize(self.write(ev))["stage_order_errors"], 1)


if __name__ == "__main__":
    unittest.main()
