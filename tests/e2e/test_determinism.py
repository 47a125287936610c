"""Two icount runs of one batch scenario give byte-identical device logs;
a guest halted for good under icount leaves QEMU's main loop working."""

import re
import unittest

from common import run_file, run_text, verdict

# `halt -f` stops every CPU with interrupts masked for good, while some
# QEMU_CLOCK_VIRTUAL timer of the machine keeps re-arming itself.  QEMU's
# vCPU thread then warps the clock from timer to timer
# (qemu-patches/0001); it must let the main loop in between, or the
# gdbstub and QMP go unanswered and the hang's kernel log is lost (seen
# before the patch let the BQL go between warps: this test failed).
HALTED = """
description = "halted for good under icount: QEMU still answers"
variants = ["6.12-rt"]
timeout_s = 120

[qemu]
icount_shift = 0

[sensor]
enabled = true
mode = "periodic"
period_ns = 1000000

[[steps]]
type = "shell"
command = "(sleep 5; halt -f) & sleep 1"

[[steps]]
type = "shell"
command = "sleep 60"
timeout_s = 20
"""


class DeterminismTest(unittest.TestCase):
    def test_icount_repeat_is_identical(self):
        rs = run_file("icount-determinism", "determinism", ["6.12-rt"])
        runs = rs.data["runs"]
        self.assertEqual(len(runs), 2)
        for r in runs:
            self.assertEqual(r["status"], "pass", [v for v in r["verdicts"] if not v["ok"]])
        self.assertTrue(verdict(runs[1], "identical")["ok"])
        self.assertGreater(runs[0]["figures"]["sensor"]["latency_ns"]["hard"]["count"], 1000)

    def test_halted_guest_leaves_the_main_loop_working(self):
        rs = run_text(HALTED, "icount-halted", ["6.12-rt"])
        (r,) = rs.data["runs"]
        self.assertEqual(r["outcome"], "guest-error", r.get("error"))
        self.assertIn("timed out", r["error"])
        # A halted guest prints nothing: the timeout says for how long.
        self.assertRegex(r["error"], r"the console printed nothing in the last \d+ s")
        # The kernel log came out through the gdbstub after the hang.
        self.assertIn("dmesg_after_hang", r["logs"], r["logs"])
        # So did who sleeps on what: the step's `sleep 60`, asleep in its
        # nanosleep (its stack unwound from the saved frame).
        with open(r["logs"]["tasks_after_hang"], encoding="utf-8") as f:
            text = f.read()
        # and which tasks are ready but off the CPU, and what each CPU runs
        self.assertRegex(text, r"\nrunnable: \d+ tasks not on a CPU")
        self.assertRegex(text, r"\ncpu0: current \d+/\S+ (other|fifo \d+|rr \d+|idle|batch)")
        blocks = re.split(r"\n(?=\s*\d+ )", text)
        sleeps = [b for b in blocks if re.match(r"\s*\d+ sleep\s+S\s", b)]
        self.assertEqual(len(sleeps), 1, blocks[:3])
        self.assertRegex(sleeps[0], r"\n\s+hrtimer_nanosleep\+0x[0-9a-f]+\n", sleeps[0])


if __name__ == "__main__":
    unittest.main()
