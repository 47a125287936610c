"""The lost-samples verdict, and host stalls excusing losses (run.Boot.finish)."""

import json
import os
import shutil
import tempfile
import tomllib
import unittest

from irqrig import run, scenario

MS = 1_000_000


def sensor_log(path, lost_at_ms):
    with open(path, "w", encoding="utf-8") as f:
        for n in range(1, 101):
            f.write(json.dumps({"ev": "raise", "t": n * MS, "seq": n, "irq": True}) + "\n")
        for t in lost_at_ms:
            f.write(json.dumps({"ev": "lost", "t": t * MS, "seq": 0, "why": "overflow"}) + "\n")


class LossVerdictTest(unittest.TestCase):
    def boot(self, excuse, lost_at_ms, stalls, missing, freezes=None, stall_t0=None):
        text = 'variants = ["6.12-rt"]\n[sensor]\nenabled = true\n[expect]\nlost_max = 0\n'
        if excuse:
            text += "host_stalls_excuse_losses = true\n"
        (point,) = scenario.parse(tomllib.loads(text), "t.toml")
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        b = run.Boot(point, "6.12-rt", tmp, "tcg")
        b.host = {"stalls": stalls, "stall_threshold_ms": 10.0,
                  "vcpu_stalls": len(stalls), "vcpu_stall_max_ms": 50.0}
        if freezes is not None:
            # host monotonic = device time + 100 s
            b.host.update({"clock_offset_ns": 100_000 * MS, "freezes": freezes,
                           "freeze_threshold_ms": 10.0, "host_cpu_freezes": len(freezes),
                           "host_cpu_freeze_max_ms": 100.0, "probe": "test"})
        if stall_t0 is not None:
            b.host.update({"stall_clock_t0": stall_t0, "stall_sample_interval_s": 0.004})
        b.figures["sensor_read"] = [{"missing": missing}]
        b.verdicts.add("sensor-read: contiguous sequence (periodic)", missing == 0, "x")
        log = os.path.join(tmp, "sensor.log")
        sensor_log(log, lost_at_ms)
        open(os.path.join(tmp, "console.log"), "w").close()
        result = {"logs": {"sensor": log, "console": os.path.join(tmp, "console.log")}}
        b.finish(result)
        return {v["name"]: v["ok"] for v in result["verdicts"]}

    def test_losses_fail_without_excuse(self):
        v = self.boot(False, [40, 41], [(0.05, "CPU 0/TCG", 30.0)], 2)
        self.assertFalse(v["samples lost <= 0"])
        self.assertFalse(v["sensor-read: contiguous sequence (periodic)"])

    def test_losses_at_host_stalls_are_excused(self):
        v = self.boot(True, [40, 41], [(0.05, "CPU 0/TCG", 30.0)], 2)
        self.assertTrue(v["samples lost <= 0"])
        self.assertTrue(v["sensor-read: contiguous sequence (periodic)"])

    def test_a_loss_away_from_any_stall_is_not_excused(self):
        v = self.boot(True, [40, 41, 900], [(0.05, "CPU 0/TCG", 30.0)], 3)
        self.assertFalse(v["samples lost <= 0"])
        self.assertFalse(v["sensor-read: contiguous sequence (periodic)"])

    def test_a_loss_inside_a_host_cpu_freeze_is_excused(self):
        v = self.boot(True, [40, 41, 900], [(0.05, "CPU 0/TCG", 30.0)], 3,
                      freezes=[[1, 100.85, 100.95]])
        self.assertTrue(v["samples lost <= 0"])
        self.assertTrue(v["sensor-read: contiguous sequence (periodic)"])

    def test_a_loss_inside_a_vcpu_stall_on_the_host_clock_is_excused(self):
        # the watch started at host 100 s; a 60 ms wait seen at 1.0 s
        # covered host 100.935-101.0 s = device 935-1000 ms
        stalls = [(1.0, "CPU 0/TCG", 60.0)]
        v = self.boot(True, [960, 990], stalls, 2, freezes=[], stall_t0=100.0)
        self.assertTrue(v["samples lost <= 0"])
        v = self.boot(True, [700], stalls, 1, freezes=[], stall_t0=100.0)
        self.assertFalse(v["samples lost <= 0"])

    def test_a_freeze_elsewhere_does_not_excuse(self):
        v = self.boot(True, [40, 41, 900], [(0.05, "CPU 0/TCG", 30.0)], 3,
                      freezes=[[1, 100.5, 100.6]])
        self.assertFalse(v["samples lost <= 0"])

    def test_more_missing_than_lost_is_not_excused(self):
        v = self.boot(True, [40], [(0.05, "CPU 0/TCG", 30.0)], 5)
        self.assertTrue(v["samples lost <= 0"])
        self.assertFalse(v["sensor-read: contiguous sequence (periodic)"])


if __name__ == "__main__":
    unittest.main()
