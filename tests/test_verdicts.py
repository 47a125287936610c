"""Verdicts judged from recorded runs only: checks that once passed when
they should have failed, and rejudge reproducing a result set."""

import json
import os
import shutil
import tempfile
import unittest

from irqrig import rejudge, results, verdicts
from tests import records
from tests.tmpresults import TmpResultsTest

SENSOR = ('variants = ["6.12-rt"]\n[sensor]\nenabled = true\n[driver]\nload = true\n'
          '[expect]\nlost_max = 0\n[[steps]]\ntype = "sensor"\nsamples = 100\n')
GOOD_LOG = "".join(json.dumps(e) + "\n" for n in range(1, 4) for e in (
    {"ev": "raise", "t": n * 1000000, "seq": n, "value": 0, "irq": True},
    {"ev": "ack", "t": n * 1000000 + 5000, "stage": "hard", "seq": n, "lat": 5000}))


class VerdictTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    def judge(self, text=SENSOR, output=None, rc=0, log=GOOD_LOG, outcome="completed"):
        p = records.point(text)
        path = None
        if log is not None:
            path = os.path.join(self.dir, "sensor.log")
            with open(path, "w") as f:
                f.write(log)
        step = {"type": "sensor", "command": "sensor-read", "rc": rc,
                "output": records.sensor_read_output() if output is None else output}
        rec = records.record(p, self.dir, [step], sensor_log=path, outcome=outcome)
        res = verdicts.judge(rec)
        return res, {v["name"]: v for v in res["verdicts"]}

    def test_a_good_run_passes(self):
        res, _ = self.judge()
        self.assertEqual(res["status"], "pass", res["verdicts"])

    def test_sensor_read_that_failed(self):
        res, v = self.judge(rc=1)
        self.assertFalse(v["sensor (periodic): sensor-read completed"]["ok"])
        self.assertEqual(res["status"], "fail")
        res, v = self.judge(output=records.sensor_read_output(rc_timed_out=True))
        self.assertFalse(v["sensor (periodic): sensor-read completed"]["ok"])
        res, v = self.judge(output="sensor-read: cannot open /dev/irq-sensor0", rc=1)
        self.assertFalse(v["sensor (periodic): sensor-read reported"]["ok"])

    def test_fewer_samples_than_asked(self):
        res, v = self.judge(output=records.sensor_read_output(samples=40))
        self.assertFalse(v["sensor (periodic): read 100 samples"]["ok"])
        self.assertIn("read 40", v["sensor (periodic): read 100 samples"]["detail"])

    def test_a_missing_device_log_fails_what_needs_it(self):
        res, v = self.judge(log=None)
        self.assertFalse(v["device event log recorded"]["ok"])
        self.assertIn("lost_max", v["device event log recorded"]["detail"])
        self.assertEqual(res["status"], "fail")

    def test_corrupt_or_capped_device_log(self):
        res, v = self.judge(log=GOOD_LOG + "{\"ev\": \"ra\n")
        self.assertFalse(v["device event log intact"]["ok"])
        res, v = self.judge(log=GOOD_LOG + '{"ev":"log_full","t":9,"bytes":1}\n')
        self.assertFalse(v["device event log intact"]["ok"])
        self.assertIn("cap", v["device event log intact"]["detail"])

    def test_an_unfinished_run_is_an_error_whatever_its_checks(self):
        res, v = self.judge(outcome="timeout")
        self.assertEqual(res["status"], "error")
        self.assertFalse(v["guest ran to the end"]["ok"])

    def test_a_step_that_did_not_run_fails(self):
        p = records.point(SENSOR + '[[steps]]\ntype = "shell"\ncommand = "true"\n')
        rec = records.record(p, self.dir, [], outcome="completed")
        names = {v["name"]: v["ok"] for v in verdicts.judge(rec)["verdicts"]}
        self.assertFalse(names["every step ran"])


class RejudgeTest(TmpResultsTest):
    def test_rejudge_reproduces_the_verdicts(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        rs = results.RunSet("t", ["test"], planned=[
            {"scenario": "t", "variant": "6.12-rt", "repeat": r} for r in (0, 1)])
        for rep, rc in ((0, 0), (1, 1)):
            p = records.point(SENSOR)
            sub = os.path.join(d, str(rep))
            os.makedirs(sub)
            log = os.path.join(sub, "sensor.log")
            with open(log, "w") as f:
                f.write(GOOD_LOG)
            rec = records.record(p, sub, [{"type": "sensor", "command": "x", "rc": rc,
                                           "output": records.sensor_read_output()}],
                                 sensor_log=log)
            rec["repeat"] = rep
            rs.add(dict(rec, **verdicts.judge(rec)))
        rs.finish()
        data = results.load(rs.dir)
        again = rejudge.rejudge(data)
        self.assertEqual([(r["status"], r["verdicts"]) for r in again["runs"]],
                         [(r["status"], r["verdicts"]) for r in data["runs"]])
        self.assertEqual(rejudge.changes(data, again), [])
        self.assertEqual(rejudge.main(rs.dir), 1)       # run #1 failed
        self.assertTrue(os.path.exists(os.path.join(rs.dir, "rejudged.json")))


if __name__ == "__main__":
    unittest.main()
