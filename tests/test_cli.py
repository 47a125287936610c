"""Bad input, as a new user types it: one line, exit 2, nothing written.

Each case is a command line (and files) that once gave a traceback, wrote
outside results/ or planned an absurd run."""

import contextlib
import io
import os
import tempfile
import unittest
from unittest import mock

from irqrig import cli, errors, install, paths
from tests.tmpresults import TmpResultsTest

SMOKE = 'variants = ["6.12-rt"]\n[[steps]]\ntype = "cyclictest"\n'


class BadInputTest(TmpResultsTest):
    def setUp(self):
        super().setUp()
        self.files = tempfile.TemporaryDirectory()
        self.addCleanup(self.files.cleanup)
        # Nothing is built here: the --no-build checks must say so.
        self.old_kernels = paths.KERNELS
        paths.KERNELS = os.path.join(self.files.name, "no-kernels")
        self.addCleanup(setattr, paths, "KERNELS", self.old_kernels)

    def file(self, name, body):
        path = os.path.join(self.files.name, name)
        with open(path, "wb") as f:
            f.write(body if isinstance(body, bytes) else body.encode())
        return path

    def refused(self, argv, *fragments):
        """argv exits 2 with one line on stderr and writes nothing."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                mock.patch.object(install, "is_complete", return_value=True), \
                mock.patch("sys.stdin", io.StringIO("")):
            try:
                rc = cli.main(argv)
            except SystemExit as e:          # argparse's own usage errors
                rc = e.code
        msg = err.getvalue()
        self.assertEqual(rc, errors.EXIT_USAGE, (argv, msg, out.getvalue()))
        self.assertNotIn("Traceback", msg + out.getvalue())
        self.assertEqual(len(msg.strip().splitlines()), 1, msg)
        for f in fragments:
            self.assertIn(f, msg)
        self.assertEqual(os.listdir(self.tmp.name), [], "something was written")
        return msg

    def test_unknown_variant(self):
        self.refused(["run", "smoke", "--variant", "6.12-nope", "--no-build"], "6.12-nope")
        self.refused(["suite", "--variant", "6.12-nope", "--no-build"], "6.12-nope")
        self.refused(["build", "6.12-nope"], "6.12-nope")

    def test_non_utf8_scenario(self):
        self.refused(["run", self.file("bad.toml", b"name = \"\xff\xfe\"\n"), "--no-build"],
                     "not UTF-8")

    def test_nan_and_inf(self):
        for text, key in (("[[steps]]\ntype = \"cyclictest\"\nduration_s = nan\n",
                           "duration_s"),
                          ("[compare]\nthreshold_pct = nan\n", "threshold_pct"),
                          ("[compare]\nthreshold_pct = inf\n", "threshold_pct"),
                          ("[sensor]\nenabled = true\n[driver]\nload = true\n"
                           "[expect]\nhard_p99_us = nan\n"
                           "[[steps]]\ntype = \"sensor\"\n", "hard_p99_us")):
            with self.subTest(key):
                self.refused(["run", self.file("n.toml", text), "--no-build"], key, "finite")

    def test_suite_of_integers_reads_no_file_descriptor(self):
        self.refused(["suite", self.file("s.toml", "scenarios = [0]\n"), "--no-build"],
                     "scenarios")

    def test_empty_name(self):
        self.refused(["run", self.file("e.toml", 'name = ""\n' + SMOKE), "--no-build"],
                     "name")
        self.refused(["run", self.file("e.toml", 'name = "../x"\n' + SMOKE), "--no-build"],
                     "name")

    def test_unbounded_input(self):
        big = "[sweep]\n\"sensor.seed\" = [%s]\n\"sensor.latch_depth\" = [1]\n" \
            "\"driver.hog_length_us\" = [%s]\n" % (
                ", ".join(str(i) for i in range(400)), ", ".join(str(i) for i in range(400)))
        self.refused(["run", self.file("big.toml", SMOKE + big), "--no-build"], "sweep")
        self.refused(["run", self.file("t.toml", SMOKE + "timeout_s = 99999999999\n"),
                      "--no-build"], "timeout_s")
        self.refused(["run", self.file("p.toml", "[sensor]\nperiod_ns = %d\n" % 2**63),
                      "--no-build"], "period_ns")

    def test_expectations_with_nothing_to_measure(self):
        self.refused(["run", self.file("c.toml", "[expect]\ncyclictest_max_us = 10\n"),
                      "--no-build"], "cyclictest_max_us", "nothing to measure")
        self.refused(["run", self.file("v.toml", SMOKE + "[expect]\nviolations_max = 0\n"),
                      "--no-build"], "violations_max")
        self.refused(["run", self.file("l.toml", SMOKE + "[expect]\nlost_max = 0\n"),
                      "--no-build"], "lost_max")

    def test_a_step_key_of_another_step_type(self):
        self.refused(["run", self.file("f.toml", "[sensor]\nenabled = true\n[driver]\n"
                                       "load = true\n[[steps]]\ntype = \"sensor\"\n"
                                       "fires = 3\n"), "--no-build"],
                     "steps[0].fires", "sensor step")

    def test_report_on_an_empty_directory(self):
        empty = os.path.join(self.files.name, "empty")
        os.makedirs(empty)
        with mock.patch.object(install, "missing_python_modules", return_value=[]):
            self.refused(["report", empty], "results")

    def test_inventory_and_gdb_without_a_build(self):
        self.refused(["inventory", "6.12-rt", "--no-build"], "not built", "6.12-rt")
        self.refused(["gdb", "6.12-rt", "--no-build"], "not built")

    def test_usage_errors_exit_2(self):
        self.refused(["compare", "only-one"])
        self.refused(["no-such-command"])


class FreshMachineTest(unittest.TestCase):
    """Before the install step a fresh machine lacks python3-pexpect."""

    def test_no_build_without_pexpect_says_what_to_run(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), \
                mock.patch.object(install, "missing_python_modules", return_value=["pexpect"]):
            rc = cli.main(["run", "smoke", "--no-build"])
        self.assertEqual(rc, errors.EXIT_RIG)
        self.assertEqual(len(err.getvalue().strip().splitlines()), 1)
        self.assertIn("./runner.py install", err.getvalue())
        self.assertIn("python3-pexpect", err.getvalue())

    def test_install_runs_before_anything_imports_pexpect(self):
        calls = []
        with mock.patch("irqrig.build.ensure_installed", lambda: calls.append("install")), \
                mock.patch.object(install, "missing_python_modules",
                                  side_effect=lambda m: calls.append("import") or []), \
                mock.patch("irqrig.suite.execute", side_effect=RuntimeError("stop here")), \
                contextlib.redirect_stderr(io.StringIO()):
            cli.main(["run", "smoke"])
        self.assertEqual(calls[:2], ["install", "import"])


if __name__ == "__main__":
    unittest.main()
