"""Two icount runs of one batch scenario give byte-identical device logs."""

import unittest

from common import run_file, verdict


class DeterminismTest(unittest.TestCase):
    def test_icount_repeat_is_identical(self):
        rs = run_file("icount-determinism", "determinism", ["6.12-rt"])
        runs = rs.data["runs"]
        self.assertEqual(len(runs), 2)
        for r in runs:
            self.assertEqual(r["status"], "pass", [v for v in r["verdicts"] if not v["ok"]])
        self.assertTrue(verdict(runs[1], "identical")["ok"])
        self.assertGreater(runs[0]["figures"]["sensor"]["latency_ns"]["hard"]["count"], 1000)


if __name__ == "__main__":
    unittest.main()
