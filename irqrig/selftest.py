"""`runner.py test`: the project's test command.

  1. install what is missing, build QEMU and the test variants
  2. unit tests of the runner (tests/test_*.py, no guest)
  3. the irq-sensor qtest (QEMU's libqtest, no guest)
  4. end-to-end tests (tests/e2e/test_*.py): real boots under TCG

The last line says PASS or FAIL with counts and the time taken.
"""

import os
import subprocess
import sys
import time
import unittest

from irqrig import build, paths
from irqrig.util import log

# Variants the smoke and driver end-to-end tests boot (both series' -debug
# variants: the 6.1 port is tested by the test command too); the gdb and
# irqsoft tests also boot the patched variants.
E2E_VARIANTS = ["6.12-rt", "6.12-preempt", "6.12-rt-irqsoft-debug", "6.1-rt-irqsoft-debug"]
BUILD_VARIANTS = E2E_VARIANTS + ["6.12-rt-irqsoft", "6.12-rt-irqsoft-debug-swapgs-soft",
                                  "6.12-rt-irqsoft-debug-exit-noreplay"]


def _unittests(start, pattern, label, top=None):
    loader = unittest.TestLoader()
    suite = loader.discover(start, pattern=pattern, top_level_dir=top or start)
    log("test: %s (%d tests)" % (label, suite.countTestCases()))
    res = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    return res.testsRun, len(res.failures) + len(res.errors), len(res.skipped)


def _qtest():
    if not os.access(paths.QEMU_QTEST, os.X_OK):
        log("test: qtest binary missing: %s" % paths.QEMU_QTEST)
        return 0, 1
    log("test: irq-sensor qtest")
    env = dict(os.environ, QTEST_QEMU_BINARY=paths.QEMU_BINARY)
    proc = subprocess.run([paths.QEMU_QTEST, "--tap", "-k"], env=env, text=True,
                          capture_output=True, cwd=os.path.dirname(paths.QEMU_BINARY))
    sys.stdout.write(proc.stdout)
    sys.stdout.write(proc.stderr[-3000:])
    ok = sum(1 for line in proc.stdout.splitlines() if line.startswith("ok "))
    bad = sum(1 for line in proc.stdout.splitlines() if line.startswith("not ok "))
    if proc.returncode and not bad:
        bad = 1
    return ok + bad, bad


def main(unit_only=False, skip_e2e=False):
    t0 = time.monotonic()
    totals = []
    if not unit_only:
        build.build(BUILD_VARIANTS)
    totals.append(("unit",) + _unittests(os.path.join(paths.ROOT, "tests"), "test_*.py",
                                         "runner unit tests", paths.ROOT))
    if not unit_only:
        n, bad = _qtest()
        totals.append(("qtest", n, bad, 0))
        if not skip_e2e:
            totals.append(("e2e",) + _unittests(os.path.join(paths.ROOT, "tests", "e2e"),
                                                "test_*.py", "end-to-end tests (boots)"))
    failed = sum(t[2] for t in totals)
    parts = ", ".join("%s %d run/%d failed" % (t[0], t[1], t[2]) for t in totals)
    minutes = (time.monotonic() - t0) / 60
    print("irqrig test: %s -- %s in %.1f min" % ("PASS" if not failed else "FAIL", parts,
                                               minutes), flush=True)
    return 0 if not failed else 1
