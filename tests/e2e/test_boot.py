"""Real boots of the end-to-end variants (selftest.E2E_VARIANTS): the smoke
scenario."""

import os
import unittest

from common import run_file

from irqrig import selftest, variants


class SmokeTest(unittest.TestCase):
    def test_smoke(self):
        rs = run_file("smoke", "smoke", selftest.E2E_VARIANTS)
        runs = rs.data["runs"]
        self.assertEqual(sorted(r["variant"] for r in runs), sorted(selftest.E2E_VARIANTS))
        for r in runs:
            failed = [v for v in r["verdicts"] if not v["ok"]]
            self.assertEqual(r["status"], "pass", "%s: %s" % (r["variant"], failed))
            v = variants.get(r["variant"])
            self.assertEqual(r["guest"]["model"], "rt" if v.preempt_rt else "preempt")
            self.assertEqual(r["guest"]["irqsoft"], "1" if v.irqsoft else "0")
            self.assertGreater(r["figures"]["cyclictest_max_us"], 0)
            self.assertEqual(r["qemu"]["accel"], "tcg")
            self.assertTrue(os.path.exists(r["logs"]["console"]))
        for name in ("results.json", "summary.md", "junit.xml"):
            self.assertTrue(os.path.exists(os.path.join(rs.dir, name)))


if __name__ == "__main__":
    unittest.main()
