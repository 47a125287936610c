"""The IF-tracker plugin on real boots of the patched kernel: no window opened
outside the allow-list, the gdb check agreeing on the same boot, and the
rogue-cli test module caught at its cli instruction; and a batch run under
icount is the same, byte for byte, with the tracker on and off."""

import os
import re
import subprocess
import unittest

from common import run_text, verdict

from irqrig import build_driver, hardoff, paths

VARIANT = "6.12-rt-irqsoft"
BASE = ('variants = ["%s"]\nboot_timeout_s = 300\n[qemu]\nicount_shift = 3\n'
        '[trace]\nhardoff = true\nlandings = true\n' % VARIANT)


def cli_offset(ko, function):
    """Offset in .text of the first cli in function (objdump of the .ko)."""
    out = subprocess.run(["objdump", "-d", "--section=.text", ko], capture_output=True,
                         text=True, check=True).stdout
    inside = False
    for line in out.splitlines():
        if re.match(r"^[0-9a-f]+ <%s>:$" % function, line):
            inside = True
        elif inside and re.match(r"^[0-9a-f]+ <", line):
            break
        elif inside:
            m = re.match(r"^\s*([0-9a-f]+):\s+fa\s+cli", line)
            if m:
                return int(m.group(1), 16)
    raise AssertionError("no cli in %s of %s" % (function, ko))


class HardoffTest(unittest.TestCase):
    def test_patched_kernel_clean_and_gdb_agrees(self):
        rs = run_text(BASE + '[gdb]\ncheck = true\n[sensor]\nenabled = true\n'
                      'period_ns = 1000000\nlatch_depth = 16\n[driver]\nload = true\n'
                      '[[steps]]\ntype = "sensor"\nduration_s = 2\n', "hardoff-clean")
        (r,) = rs.data["runs"]
        self.assertEqual(r["status"], "pass", r["verdicts"])
        h = r["figures"]["hardoff"]
        self.assertEqual(h["violations"], 0)
        self.assertEqual(h["if_mismatch"], 0)
        self.assertEqual(r["figures"]["gdb"]["violations"], 0)     # same boot
        self.assertGreater(h["windows"], 1000)
        self.assertGreater(h["max_ns"], 0)
        self.assertEqual(h["clock"], "icount")
        # the sensor's interrupts (MSI-X: an irq_entries_start vector) landed
        self.assertGreater(h["landings"]["by_class"].get("irq", 0), 100)
        data = hardoff.load(r["logs"]["iftrack"])
        self.assertTrue(data["allow_list"])
        # every kernel window is accounted for in the per-site table
        self.assertEqual(sum(s["count"] for s in data["sites"]), data["kernel"]["count"])

    def test_rogue_cli_is_a_violation(self):
        rs = run_text(BASE + '[gdb]\ncheck = true\n'
                      '[expect]\nexpect_failure = "violation"\n'
                      '[[steps]]\ntype = "shell"\n'
                      'command = "insmod /lib/modules/irqrig_rogue_cli.ko"\n'
                      '[[steps]]\ntype = "shell"\n'
                      'command = "cat /sys/module/irqrig_rogue_cli/sections/.text"\n',
                      "hardoff-rogue")
        (r,) = rs.data["runs"]
        self.assertEqual(r["status"], "pass", r["verdicts"])
        self.assertTrue(verdict(r, "expected failure")["ok"])
        self.assertGreaterEqual(r["figures"]["gdb"]["violations"], 1)   # gdb agrees
        data = hardoff.load(r["logs"]["iftrack"])
        self.assertEqual(data["if_mismatch"], 0)
        bad = [s for s in data["sites"] if s["violations"]]
        self.assertEqual(len(bad), 1, bad)
        self.assertEqual(bad[0]["insn"], "cli")
        text = int(r["steps"][1]["output"].split()[-1], 16)
        ko = os.path.join(build_driver.out_dir(VARIANT), "testmods", "irqrig_rogue_cli.ko")
        self.assertEqual(hardoff.addr(bad[0]["site"]),
                         text + cli_offset(ko, "rogue_cli_section"))

    def test_tracker_does_not_perturb_the_guest(self):
        with open(os.path.join(paths.SCENARIOS, "tracker-slowdown.toml")) as f:
            text = f.read()
        text, n = re.subn(r"(?m)^duration_s = 8$", "duration_s = 2", text)
        self.assertEqual(n, 1, "tracker-slowdown.toml's sensor step changed")
        rs = run_text(text, "tracker-perturbation")
        off, on = sorted(rs.data["runs"], key=lambda r: r["params"]["trace.hardoff"])
        for r in (off, on):
            self.assertEqual(r["status"], "pass", [v for v in r["verdicts"] if not v["ok"]])
        self.assertIn("hardoff", on["figures"])
        self.assertNotIn("hardoff", off["figures"])
        with open(off["logs"]["sensor"], "rb") as a, open(on["logs"]["sensor"], "rb") as b:
            logs = a.read(), b.read()
        self.assertGreater(logs[0].count(b"\n"), 1000)
        self.assertTrue(logs[0] == logs[1], "the device logs differ with the tracker on")


if __name__ == "__main__":
    unittest.main()
