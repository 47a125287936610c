"""The lost-samples verdict, and host stalls excusing losses (verdicts.judge)."""

import json
import os
import shutil
import tempfile
import unittest

from irqrig import verdicts
from tests import records

MS = 1_000_000


def sensor_log(path, lost_at_ms):
    with open(path, "w", encoding="utf-8") as f:
        for n in range(1, 101):
            f.write(json.dumps({"ev": "raise", "t": n * MS, "seq": n, "irq": True}) + "\n")
        for t in lost_at_ms:
            f.write(json.dumps({"ev": "lost", "t": t * MS, "seq": 0, "why": "overflow"}) + "\n")


class LossVerdictTest(unittest.TestCase):
    def judge(self, excuse, lost_at_ms, stalls, missing, freezes=None, stall_t0=None):
        text = ('variants = ["6.12-rt"]\n[sensor]\nenabled = true\n[driver]\nload = true\n'
                '[expect]\nlost_max = 0\n')
        if excuse:
            text += "host_stalls_excuse_losses = true\n"
        text += '[[steps]]\ntype = "sensor"\ncontiguous = true\n'
        p = records.point(text)
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        host = {"stalls": stalls, "stall_threshold_ms": 10.0,
                "vcpu_stalls": len(stalls), "vcpu_stall_max_ms": 50.0}
        if freezes is not None:
            # host monotonic = device time + 100 s
            host.update({"clock_offset_ns": 100_000 * MS, "freezes": freezes,
                         "freeze_threshold_ms": 10.0, "host_cpu_freezes": len(freezes),
                         "host_cpu_freeze_max_ms": 100.0, "probe": "test"})
        if stall_t0 is not None:
            host.update({"stall_clock_t0": stall_t0, "stall_sample_interval_s": 0.004})
        log = os.path.join(tmp, "sensor.log")
        sensor_log(log, lost_at_ms)
        step = {"type": "sensor", "rc": 0, "command": "sensor-read",
                "output": records.sensor_read_output(100 - missing, int(missing > 0), missing)}
        rec = records.record(p, tmp, [step], sensor_log=log, host=host)
        before = json.dumps(rec, sort_keys=True)
        result = verdicts.judge(rec)
        self.assertEqual(json.dumps(rec, sort_keys=True), before, "judge changed the record")
        return {v["name"]: v["ok"] for v in result["verdicts"]}

    CONTIGUOUS = "sensor (periodic): contiguous sequence"

    def test_losses_fail_without_excuse(self):
        v = self.judge(False, [40, 41], [(0.05, "CPU 0/TCG", 30.0)], 2)
        self.assertFalse(v["samples lost <= 0"])
        self.assertFalse(v[self.CONTIGUOUS])

    def test_losses_at_host_stalls_are_excused(self):
        v = self.judge(True, [40, 41], [(0.05, "CPU 0/TCG", 30.0)], 2)
        self.assertTrue(v["samples lost <= 0"])
        self.assertTrue(v[self.CONTIGUOUS])

    def test_a_loss_away_from_any_stall_is_not_excused(self):
        v = self.judge(True, [40, 41, 900], [(0.05, "CPU 0/TCG", 30.0)], 3)
        self.assertFalse(v["samples lost <= 0"])
        self.assertFalse(v[self.CONTIGUOUS])

    def test_a_loss_inside_a_host_cpu_freeze_is_excused(self):
        v = self.judge(True, [40, 41, 900], [(0.05, "CPU 0/TCG", 30.0)], 3,
                       freezes=[[1, 100.85, 100.95]])
        self.assertTrue(v["samples lost <= 0"])
        self.assertTrue(v[self.CONTIGUOUS])

    def test_a_loss_inside_a_vcpu_stall_on_the_host_clock_is_excused(self):
        # the watch started at host 100 s; a 60 ms wait seen at 1.0 s
        # covered host 100.935-101.0 s = device 935-1000 ms
        stalls = [(1.0, "CPU 0/TCG", 60.0)]
        v = self.judge(True, [960, 990], stalls, 2, freezes=[], stall_t0=100.0)
        self.assertTrue(v["samples lost <= 0"])
        v = self.judge(True, [700], stalls, 1, freezes=[], stall_t0=100.0)
        self.assertFalse(v["samples lost <= 0"])

    def test_a_freeze_elsewhere_does_not_excuse(self):
        v = self.judge(True, [40, 41, 900], [(0.05, "CPU 0/TCG", 30.0)], 3,
                       freezes=[[1, 100.5, 100.6]])
        self.assertFalse(v["samples lost <= 0"])

    def test_more_missing_than_lost_is_not_excused(self):
        v = self.judge(True, [40], [(0.05, "CPU 0/TCG", 30.0)], 5)
        self.assertTrue(v["samples lost <= 0"])
        self.assertFalse(v[self.CONTIGUOUS])


if __name__ == "__main__":
    unittest.main()
