"""A panicking guest, a hanging guest: verdicts, logs, no QEMU left behind."""

import unittest

from common import run_text, verdict

from irqrig import procs


class FailureTest(unittest.TestCase):
    def tearDown(self):
        self.assertEqual(procs.running(), {}, "a QEMU process was left running")

    def test_kernel_panic(self):
        rs = run_text('variants = ["6.12-rt"]\n[[steps]]\ntype = "shell"\n'
                      'command = "echo c > /proc/sysrq-trigger"\ntimeout_s = 60\n', "panic")
        (r,) = rs.data["runs"]
        self.assertEqual(r["status"], "error")
        self.assertIn("kernel panic", r["error"])
        self.assertIn(r["logs"]["console"], r["error"])
        with open(r["logs"]["console"]) as f:
            self.assertIn("Kernel panic", f.read())
        self.assertFalse(verdict(r, "guest ran to the end")["ok"])

    def test_hang_then_next_scenario_runs(self):
        rs = run_text('variants = ["6.12-rt"]\n'
                      '[[steps]]\ntype = "shell"\ncommand = "sleep $HANG"\ntimeout_s = 5\n'
                      '[sweep]\n"qemu.append" = ["HANG=600", "HANG=0"]\n', "hang")
        hung, ok = rs.data["runs"]
        self.assertEqual(hung["status"], "error")
        self.assertIn("timed out after 5 s", hung["error"])
        self.assertEqual(ok["status"], "pass", ok["verdicts"])
        self.assertLess(hung["wall_s"], 120)


if __name__ == "__main__":
    unittest.main()
