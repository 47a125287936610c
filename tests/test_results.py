"""results/<run-id>/ files: JSON, summary, JUnit."""

import json
import os
import unittest
import xml.etree.ElementTree as ET

from irqrig import results
from irqrig.errors import ResultsError
from tests.tmpresults import TmpResultsTest


def fake_run(status, scenario="smoke", variant="6.12-rt"):
    return {"scenario": scenario, "variant": variant, "status": status, "repeat": 0,
            "boot_s": 2.5, "wall_s": 9.0,
            "qemu": {"accel": "tcg", "icount_shift": None},
            "figures": {"cyclictest_max_us": 120,
                        "sensor": {"counts": {"lost": 0},
                                   "latency_ns": {"hard": {"count": 3, "p50": 1000,
                                                           "p99": 2000, "max": 3000}}}},
            "verdicts": [{"name": "cpu count", "ok": status == "pass", "detail": "x"}],
            "logs": {"console": "/x/console.log"}}


class ResultsTest(TmpResultsTest):

    def test_lost_column_names_host_late_events(self):
        run = fake_run("pass")
        self.assertEqual(results.row_figures(run)["lost"], "0")
        run["figures"]["sensor"]["counts"]["host_late"] = 7
        self.assertEqual(results.row_figures(run)["lost"], "0 (+7 host-late)")
        run["figures"]["sensor"]["counts"]["lost"] = 30
        run["figures"]["sensor"]["loss_bursts"] = 3
        run["figures"]["host"] = {"loss_bursts_explained": 2}
        self.assertEqual(results.row_figures(run)["lost"], "30 (2/3 bursts host, +7 host-late)")
        run["figures"]["sensor"] = None
        self.assertEqual(results.row_figures(run)["lost"], "-")

    def test_summary_shows_the_physical_limit(self):
        run = fake_run("pass")
        data = {"run_id": "x", "complete": True, "command": ["runner.py"], "started": "s",
                "finished": "f", "runs": [run, fake_run("pass", variant="6.12-preempt")]}
        self.assertNotIn("sensor's CPU", results.summary_markdown(data))
        run["figures"]["physical_limit"] = {
            "sensor_cpus": {"0": 1200}, "hard_max_ns": 3000, "window_max_ns": 2500,
            "unexplained_ns": 500, "clock": "icount"}
        md = results.summary_markdown(data)
        self.assertIn("| smoke | 6.12-rt | icount | 0 (1200) | 3.0 | 2.5 | 0.5 |", md)
        self.assertNotIn("| smoke | 6.12-preempt | icount", md)

    def test_write_all_files(self):
        rs = results.RunSet("smoke", ["runner.py", "run", "smoke"], planned=[
            {"scenario": "smoke", "variant": v, "repeat": 0}
            for v in ("6.12-rt", "6.12-preempt")])
        rs.add(fake_run("pass"))
        rs.add(fake_run("fail", variant="6.12-preempt"))
        rs.finish()
        for name in ("results.json", "summary.md", "junit.xml"):
            self.assertTrue(os.path.exists(os.path.join(rs.dir, name)), name)
        data = results.load(rs.dir)
        self.assertEqual(data["schema"], results.SCHEMA_VERSION)
        self.assertEqual(data["summary"], {"pass": 1, "fail": 1, "error": 0, "not_run": 0})
        self.assertTrue(data["complete"])
        self.assertFalse(rs.ok)
        with open(os.path.join(rs.dir, "summary.md")) as f:
            md = f.read()
        self.assertIn("| smoke | 6.12-rt | pass |", md)
        self.assertIn("1.0/2.0/3.0", md)
        root = ET.parse(os.path.join(rs.dir, "junit.xml")).getroot()
        cases = root.findall(".//testcase")
        self.assertEqual(len(cases), 2)
        self.assertIsNotNone(cases[1].find("failure"))

    def test_schema_mismatch_refused(self):
        rs = results.RunSet("x", ["runner.py"])
        rs.add(fake_run("pass"))
        p = os.path.join(rs.dir, "results.json")
        with open(p) as f:
            d = json.load(f)
        d["schema"] = 999
        with open(p, "w") as f:
            json.dump(d, f)
        with self.assertRaises(ResultsError) as cm:
            results.load(rs.dir)
        self.assertIn("schema 999", str(cm.exception))

    def test_an_interrupted_run_set_is_incomplete_everywhere(self):
        planned = [{"scenario": "smoke", "variant": v, "repeat": 0}
                   for v in ("6.12-rt", "6.12-preempt", "6.12-rt-irqsoft")]
        rs = results.RunSet("smoke", ["runner.py"], planned=planned)
        rs.add(fake_run("pass"))
        data = results.load(rs.dir)      # as written after the first boot
        self.assertFalse(data["complete"])
        rs.finish("interrupted (signal SIGTERM)")
        self.assertFalse(rs.ok)
        data = results.load(rs.dir)
        self.assertFalse(data["complete"])
        self.assertIn("SIGTERM", data["incomplete_reason"])
        self.assertEqual(data["summary"]["not_run"], 2)
        with open(os.path.join(rs.dir, "summary.md")) as f:
            md = f.read()
        self.assertIn("INCOMPLETE", md)
        self.assertIn("smoke on 6.12-rt-irqsoft", md)
        root = ET.parse(os.path.join(rs.dir, "junit.xml")).getroot()
        errors = [tc for tc in root.findall(".//testcase") if tc.find("error") is not None]
        self.assertEqual(sorted(tc.get("name") for tc in errors),
                         ["6.12-preempt", "6.12-rt-irqsoft"])
        self.assertEqual(root.find("testsuite").get("errors"), "2")

    def test_finish_without_all_planned_runs_is_incomplete(self):
        rs = results.RunSet("x", ["runner.py"], planned=[
            {"scenario": "smoke", "variant": "6.12-rt", "repeat": r} for r in (0, 1)])
        rs.add(fake_run("pass"))
        rs.finish()
        self.assertFalse(rs.complete)
        self.assertIn("1 of 2", rs.data["incomplete_reason"])

    def test_log_dirs_stay_inside_results(self):
        rs = results.RunSet("", ["runner.py"])
        self.assertTrue(rs.dir.startswith(self.tmp.name))
        for label in ("", "..", "/", "../../etc", "a/b"):
            d = rs.log_dir(label, "6.12-rt", 0)
            self.assertTrue(os.path.realpath(d).startswith(os.path.realpath(rs.dir) + "/"),
                            (label, d))


if __name__ == "__main__":
    unittest.main()
