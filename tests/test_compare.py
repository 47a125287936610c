"""compare flags an injected regression; report draws plots."""

import contextlib
import io
import os
import unittest

from irqrig import compare, results
from tests.tmpresults import TmpResultsTest


def run(variant, scenario, hard_p99, status="pass", exact=False, params=None):
    return {"scenario": scenario, "scenario_name": scenario, "variant": variant,
            "status": status, "repeat": 0, "params": params or {},
            "config": {"compare": {"threshold_pct": 10.0, "exact": exact}},
            "figures": {"sensor": {"counts": {"lost": 0},
                                   "latency_ns": {"hard": {"count": 10, "p50": hard_p99 // 2,
                                                           "p99": hard_p99, "max": hard_p99}}}},
            "verdicts": [], "logs": {}}


class CompareTest(TmpResultsTest):

    def write(self, runs):
        rs = results.RunSet("t", ["test"], planned=[
            {"scenario": r["scenario"], "variant": r["variant"], "repeat": 0} for r in runs])
        for r in runs:
            rs.add(r)
        rs.finish()
        return rs.dir

    def test_injected_regression_is_flagged(self):
        base = self.write([run("6.12-rt", "s", 100000), run("6.12-rt", "t", 50000)])
        new = self.write([run("6.12-rt", "s", 300000), run("6.12-rt", "t", 50500)])
        res = compare.compare(base, new)
        verdicts = {(r["run"], r["figure"]): r["verdict"] for r in res["rows"]}
        self.assertEqual(verdicts[("s / 6.12-rt", "hard p99 (ns)")], "regression")
        self.assertEqual(verdicts[("t / 6.12-rt", "hard p99 (ns)")], "unchanged",
                         "within threshold and noise")
        self.assertGreaterEqual(res["regressions"], 1)

    def test_exact_and_status(self):
        base = self.write([run("a", "s", 100000, exact=True)])
        new = self.write([run("a", "s", 100001, status="fail", exact=True)])
        res = compare.compare(base, new)
        verdicts = {r["figure"]: r["verdict"] for r in res["rows"]}
        self.assertEqual(verdicts["hard p99 (ns)"], "regression")
        self.assertEqual(verdicts["status"], "regression")

    def test_across_variants(self):
        both = self.write([run("6.12-rt", "s", 1000000), run("6.12-rt-irqsoft", "s", 1000)])
        res = compare.compare(both, both, "6.12-rt:6.12-rt-irqsoft")
        verdicts = {r["figure"]: r["verdict"] for r in res["rows"]}
        self.assertEqual(verdicts["hard p99 (ns)"], "improvement")
        self.assertEqual(res["regressions"], 0)

    def test_cli_exit_code(self):
        from irqrig import cli
        base = self.write([run("a", "s", 100000)])
        new = self.write([run("a", "s", 900000)])
        self.assertEqual(cli.main(["compare", base, new]), 1)
        self.assertEqual(cli.main(["compare", base, base]), 0)

    def test_a_run_missing_from_new_is_a_regression(self):
        base = self.write([run("a", "s", 1000), run("a", "t", 1000)])
        new = self.write([run("a", "s", 1000)])
        res = compare.compare(base, new)
        rows = [r for r in res["rows"] if r["verdict"] == "regression"]
        self.assertEqual([(r["run"], r["new"]) for r in rows], [("t / a", "missing")])

    def test_an_incomplete_new_is_a_regression(self):
        base = self.write([run("a", "s", 1000)])
        rs = results.RunSet("t", ["test"], planned=[
            {"scenario": "s", "variant": "a", "repeat": 0},
            {"scenario": "u", "variant": "a", "repeat": 0}])
        rs.add(run("a", "s", 1000))
        rs.finish("interrupted (signal SIGTERM)")
        res = compare.compare(base, rs.dir)
        self.assertGreaterEqual(res["regressions"], 1)
        self.assertIn("SIGTERM", str(res["rows"]))

    def test_bad_results_files_are_one_line_errors(self):
        from irqrig import cli
        from irqrig.errors import EXIT_USAGE
        good = self.write([run("a", "s", 1000)])
        d = self.tmp.name
        cases = {"missing.json": None, "empty.json": "", "truncated.json": '{"schema": 2, "ru',
                 "list.json": "[1, 2]", "old.json": '{"schema": 1, "runs": []}',
                 "binary.json": b"\xff\xfe\x00"}
        for name, body in cases.items():
            path = os.path.join(d, name)
            if body is not None:
                with open(path, "wb") as f:
                    f.write(body if isinstance(body, bytes) else body.encode())
            with self.subTest(name):
                with contextlib.redirect_stderr(io.StringIO()) as err:
                    self.assertEqual(cli.main(["compare", good, path]), EXIT_USAGE)
                msg = err.getvalue()
                self.assertEqual(msg.count("\n"), 1, msg)
                self.assertIn(path, msg)
                self.assertNotIn("Traceback", msg)
        for bad in ("6.12-rt", "6.12-rt:", "6.12-rt:nope"):
            with self.subTest(bad):
                with contextlib.redirect_stderr(io.StringIO()) as err:
                    self.assertEqual(cli.main(["compare", good, good, "--variants", bad]),
                                     EXIT_USAGE)
                self.assertEqual(err.getvalue().count("\n"), 1)

    def test_report_sweep_plot(self):
        from irqrig import report
        runs = [run(v, "h[x]", lat, params={"driver.hog_length_us": hog})
                for v, k in (("6.12-rt", 1000), ("6.12-rt-irqsoft", 1))
                for hog, lat in ((0, 1000), (500, 500 * k + 1000), (1000, 1000 * k + 1000))]
        for r in runs:
            r["scenario_name"] = "h"
        d = self.write(runs)
        made = report.make(d)
        self.assertEqual(len(made), 2)
        for p in made:
            self.assertGreater(os.path.getsize(p), 1000)


if __name__ == "__main__":
    unittest.main()
