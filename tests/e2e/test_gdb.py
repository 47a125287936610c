"""The gdb dynamic check: census on stock 6.12-rt, zero violations on the
patched kernel, and a rogue cli in a test module caught and named."""

import unittest

from common import run_file, run_text, verdict


class GdbCheckTest(unittest.TestCase):
    def test_census_stock_and_clean_patched(self):
        rs = run_file("gdb-check", "gdb-check", ["6.12-rt", "6.12-rt-irqsoft"])
        runs = {r["variant"]: r for r in rs.data["runs"]}
        stock, patched = runs["6.12-rt"], runs["6.12-rt-irqsoft"]
        self.assertEqual(stock["status"], "pass", stock["verdicts"])
        self.assertEqual(stock["figures"]["gdb"]["mode"], "census")
        self.assertGreater(stock["figures"]["gdb"]["distinct_sites"], 20)
        self.assertEqual(patched["status"], "pass", patched["verdicts"])
        self.assertEqual(patched["figures"]["gdb"]["mode"], "violations")
        self.assertEqual(patched["figures"]["gdb"]["violations"], 0)

    def test_rogue_cli_is_a_violation(self):
        rs = run_text('variants = ["6.12-rt-irqsoft"]\nboot_timeout_s = 300\n'
                      '[gdb]\ncheck = true\n[expect]\nexpect_failure = "violation"\n'
                      '[[steps]]\ntype = "shell"\n'
                      'command = "insmod /lib/modules/irqrig_rogue_cli.ko"\n', "rogue-cli")
        (r,) = rs.data["runs"]
        self.assertEqual(r["status"], "pass", r["verdicts"])
        self.assertTrue(verdict(r, "expected failure")["ok"])
        import json
        with open(r["logs"]["gdb"].replace("gdb.log", "gdb-check.json")) as f:
            g = json.load(f)
        self.assertGreaterEqual(g["violations"], 1)
        self.assertEqual(g["violation_records"][0]["function"], "rogue_cli_section")
        self.assertIn("rogue_cli_init", " ".join(g["violation_records"][0]["backtrace"]))


if __name__ == "__main__":
    unittest.main()
