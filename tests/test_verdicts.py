"""Verdicts judged from recorded runs only: checks that once passed when
they should have failed, and rejudge reproducing a result set."""

import json
import os
import shutil
import tempfile
import unittest
from unittest import mock

from irqrig import hardoff, rejudge, results, verdicts
from irqrig.errors import ScenarioError
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

    def judge_background(self, final_output, rc=0):
        text = ('variants = ["6.12-rt"]\n[[steps]]\ntype = "load"\ngenerators = ["exec"]\n'
                'background = true\nduration_s = 10\n')
        step = {"type": "load", "command": "loadgen", "background": True, "rc": rc,
                "output": "", "out_file": "/tmp/loadgen.0.out", "final_output": final_output}
        res = verdicts.judge(records.record(records.point(text), self.dir, [step]))
        return res, {v["name"]: v for v in res["verdicts"]}

    def test_background_load_judged_by_what_it_said_at_its_stop(self):
        line = {"tool": "loadgen", "kinds": ["exec"], "errors": 0, "failures": [],
                "unavailable": {}, "interrupted": True}
        res, v = self.judge_background(json.dumps(line))
        self.assertEqual(res["status"], "pass", res["verdicts"])
        self.assertTrue(v["loadgen exec ran without errors"]["ok"])
        late = "exec.0: killed at the end of the stop grace (300.0 s), 310.2 s into an operation"
        res, v = self.judge_background(json.dumps(dict(line, errors=1, failures=[late])))
        self.assertEqual(res["status"], "fail")
        self.assertIn(late, v["loadgen exec ran without errors"]["detail"])

    def test_background_load_that_never_reported_is_not_a_pass(self):
        res, v = self.judge_background("loadgen: exec.0: exit status 1\n")
        self.assertEqual(res["status"], "fail")
        self.assertFalse(v["loadgen exec reported at its stop"]["ok"])
        self.assertNotIn("loadgen exec ran without errors", v)
        res, v = self.judge_background(None, rc=1)
        self.assertFalse(v["loadgen exec started"]["ok"])
        self.assertNotIn("loadgen exec reported at its stop", v)


DATA = os.path.join(os.path.dirname(__file__), "data")
TRACED = ('variants = ["6.12-rt-irqsoft"]\n[trace]\nhardoff = true\n'
          '[[steps]]\ntype = "shell"\ncommand = "insmod /lib/modules/irqrig_rogue_cli.ko"\n')
ALLOWED = "hard-off windows only from allow-listed sites (<= %d violations)"


class HardoffVerdictTest(unittest.TestCase):
    """[trace] hardoff expectations judged from a recorded iftrack.json:
    the rogue-cli boot of the patched kernel (one cli outside the
    allow-list) and a stock 6.12-rt boot (no allow-list, 441.542 us max)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        # sites are named with the variant's vmlinux: not the recording's here
        patch = mock.patch.object(verdicts.artifacts, "vmlinux",
                                  return_value=os.path.join(self.dir, "no-vmlinux"))
        patch.start()
        self.addCleanup(patch.stop)

    def judge(self, text, recording="iftrack-6.12-rt-irqsoft-rogue.json",
              module_allow=None, variant="6.12-rt-irqsoft"):
        p = records.point(text)
        rec = records.record(p, self.dir, [{"type": "shell", "command": "insmod",
                                            "rc": 0, "output": ""}], variant=variant)
        if recording:
            rec["logs"]["iftrack"] = os.path.join(self.dir, hardoff.JSON_NAME)
            shutil.copy(os.path.join(DATA, recording), rec["logs"]["iftrack"])
        if module_allow is not None:
            rec["logs"]["iftrack_module_allow"] = os.path.join(self.dir, "allow.txt")
            with open(rec["logs"]["iftrack_module_allow"], "w") as f:
                f.write("# allowed\n" + "".join("0x%x\n" % a for a in module_allow))
        res = verdicts.judge(rec)
        return res, {v["name"]: v for v in res["verdicts"]}

    def test_a_window_opened_outside_the_allow_list_fails(self):
        res, v = self.judge(TRACED)
        self.assertEqual(res["status"], "fail")
        self.assertFalse(v[ALLOWED % 0]["ok"])
        self.assertIn("0xffffffffa0000002 x1", v[ALLOWED % 0]["detail"])
        self.assertTrue(v["hard-off tracker exact (no IF state it could not explain)"]["ok"])
        self.assertEqual(res["figures"]["hardoff"]["violations"], 1)
        self.assertEqual(res["figures"]["hardoff"]["max_ns"], 471200)

    def test_violations_max(self):
        res, v = self.judge(TRACED + "[expect]\nhardoff_violations_max = 1\n")
        self.assertTrue(v[ALLOWED % 1]["ok"])
        self.assertEqual(res["status"], "pass", res["verdicts"])

    def test_the_tracker_alone_detects_an_expected_violation(self):
        res, v = self.judge(TRACED + '[expect]\nexpect_failure = "violation"\n')
        self.assertEqual(res["status"], "pass", res["verdicts"])
        self.assertTrue(res["expected_failure"]["detected"]["violation"])
        self.assertIsNone(res["figures"].get("gdb"))        # no gdb check ran
        res, v = self.judge(TRACED + '[expect]\nexpect_failure = "violation"\n',
                            module_allow=[0xffffffffa0000002])
        self.assertEqual(res["status"], "fail")             # nothing detected

    def test_a_module_site_the_boot_allowed_is_no_violation(self):
        res, v = self.judge(TRACED, module_allow=[0xffffffffa0000002])
        self.assertTrue(v[ALLOWED % 0]["ok"])
        self.assertEqual(res["figures"]["hardoff"]["violations"], 0)
        self.assertEqual(res["figures"]["hardoff"]["module_sites_allowed"], 1)
        self.assertEqual(res["status"], "pass", res["verdicts"])
        res, v = self.judge(TRACED, module_allow=[0xffffffffa0100000])   # another site
        self.assertFalse(v[ALLOWED % 0]["ok"])

    def test_longest_window_bound(self):
        stock = ('variants = ["6.12-rt"]\n[trace]\nhardoff = true\n'
                 '[[steps]]\ntype = "shell"\ncommand = "true"\n[expect]\n')
        res, v = self.judge(stock + "hardoff_max_us = 400\n",
                            recording="iftrack-6.12-rt-stock.json", variant="6.12-rt")
        self.assertFalse(v["longest kernel hard-off window <= 400 us"]["ok"])
        self.assertIn("441.542 us", v["longest kernel hard-off window <= 400 us"]["detail"])
        self.assertEqual(res["status"], "fail")
        self.assertNotIn(ALLOWED % 0, v)         # a stock kernel has no allow-list
        res, v = self.judge(stock + "hardoff_max_us = 450\n",
                            recording="iftrack-6.12-rt-stock.json", variant="6.12-rt")
        self.assertTrue(v["longest kernel hard-off window <= 450 us"]["ok"])
        self.assertEqual(res["status"], "pass", res["verdicts"])

    def test_a_missing_tracker_result_fails(self):
        res, v = self.judge(TRACED, recording=None)
        self.assertFalse(v["hard-off tracker produced a result"]["ok"])
        self.assertEqual(res["status"], "fail")
        res, v = self.judge(TRACED, recording="softsections-6.12.extra.json")
        self.assertIn("not an iftrack result", v["hard-off tracker produced a result"]["detail"])

    def test_untraced_runs_have_no_tracker_verdicts(self):
        res, v = self.judge(TRACED.replace("hardoff = true", "hardoff = false"))
        self.assertNotIn("hardoff", res["figures"])
        self.assertFalse([n for n in v if "hard-off" in n])

    def test_expectations_without_the_tracker_are_refused(self):
        for key in ("hardoff_max_us = 10", "hardoff_violations_max = 0"):
            with self.assertRaises(ScenarioError) as cm:
                records.point('[[steps]]\ntype = "shell"\ncommand = "true"\n'
                              '[expect]\n%s\n' % key)
            self.assertIn("trace.hardoff", str(cm.exception))


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
