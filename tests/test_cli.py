"""Bad input, as a new user types it: one line, exit 2, nothing written.

Each case is a command line (and files) that once gave a traceback, wrote
outside results/ or planned an absurd run."""

import contextlib
import io
import json
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
        before = self.tree()
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
        self.assertEqual(self.tree(), before, "something was written beside the input")
        return msg

    def tree(self):
        return sorted(os.path.join(d, n) for d, dirs, files in os.walk(self.files.name)
                      for n in dirs + files)

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

    def test_scenario_files_of_every_kind(self):
        cases = [
            ('name = "x\n[[steps]\n', "not valid TOML"),
            (SMOKE + "bogus = 1\n", "steps[0].bogus"),
            ("[qemu]\ncpus_ = 2\n", "qemu.cpus_", "unknown key"),
            ("nosuchtable = 1\n", "nosuchtable", "unknown key"),
            ("[qemu]\ncpus = [1]\n", "qemu.cpus", "must be int"),
            ('[qemu]\ncpus = "2"\n', "qemu.cpus", "must be int"),
            (SMOKE + 'duration_s = "5"\n', "steps[0].duration_s", "must be float"),
            ('[sensor]\nperiod_ns = "1000"\n', "sensor.period_ns", "must be int"),
            ("qemu = 3\n", "qemu", "must be a table"),
            ("steps = 3\n", "steps", "array of tables"),
            ("steps = [1]\n", "steps[0]", "must be a table"),
            ('[[steps]]\ntype = "nope"\n', "steps[0].type"),
            ('variants = "6.12-rt"\n', "variants", "list of strings"),
            ("variants = []\n", "variants"),
            ("repeat = 0\n", "repeat", "minimum"),
            ("timeout_s = %d\n" % 10**22, "timeout_s", "maximum"),
            ("[sensor]\nperiod_ns = %d\n" % (2**63 - 1), "sensor.period_ns", "maximum"),
            ('name = "/tmp/x"\n' + SMOKE, "name"),
            ('name = ".."\n' + SMOKE, "name"),
            (SMOKE + '[sweep]\n"qemu" = [1]\n', "sweep.qemu"),
            (SMOKE + '[sweep]\n"qemu.cpus" = 2\n', "sweep.qemu.cpus", "non-empty list"),
            (SMOKE + '[sweep]\n"name" = ["a"]\n', "sweep.name"),
            ('timeout_s = 60\n' + SMOKE + "duration_s = 3600\n", "steps[0].duration_s",
             "longer than the scenario's timeout_s"),
            ('[sensor]\nenabled = true\n[driver]\nload = true\n[[steps]]\ntype = "sensor"\n'
             '[sweep]\n"driver.load" = [true, false]\n', "driver.load",
             "sweep point driver.load = False"),
        ]
        for case in cases:
            with self.subTest(case[0]):
                self.refused(["run", self.file("bad.toml", case[0]), "--no-build"], *case[1:])

    def test_campaign_and_trace_keys(self):
        sens = 'variants = ["6.12-rt"]\n[sensor]\nenabled = true\n[driver]\nload = true\n'
        camp = sens + '[[steps]]\ntype = "campaign"\n'
        cases = [
            (camp + "[campaign]\nseed = -1\n", "campaign.seed", "minimum"),
            (camp + '[campaign]\nselect = "entry"\n', "campaign.select", "list of strings"),
            (camp + "[campaign]\nselect = [1]\n", "campaign.select"),
            (camp + "[campaign]\ninsns_per_section = 0\n", "campaign.insns_per_section"),
            (camp + "[campaign]\ntries = 1000\n", "campaign.tries", "maximum"),
            (camp + '[campaign]\ntarget = "zzz"\n', "campaign.target", "hex"),
            (camp + "[campaign]\ntarget = 123\n", "campaign.target", "must be str"),
            (camp + '[campaign]\nlandings = "yes"\n', "campaign.landings", "must be bool"),
            (camp + "[campaign]\nbogus = 1\n", "campaign.bogus", "unknown key"),
            (camp + "[campaign]\nsections_max = -5\n", "campaign.sections_max"),
            (camp + "fires = 3\n", "steps[0].fires", "campaign step"),
            ('[sensor]\nenabled = true\n[[steps]]\ntype = "campaign"\n', "driver.load"),
            (camp + "[gdb]\ncheck = true\n", "gdb.check"),
            (camp + "batch = true\n", "steps[0].batch"),   # a key of [[steps]], not top
            ("batch = true\n" + camp, "batch"),
            # expectations and settings that need a campaign
            (SMOKE + '[expect]\nfinding_in = "do_*"\n', "expect.finding_in",
             "nothing to measure", "campaign"),
            (SMOKE + "[expect]\nfindings_max = 0\n", "expect.findings_max", "campaign"),
            (SMOKE + '[expect]\nexpect_failure = "finding"\n', "expect.expect_failure"),
            (SMOKE + '[campaign]\ntarget = "ffffffff81000000"\n', "campaign.target",
             "no effect", "campaign step"),
            (SMOKE + "[campaign]\nseed = 5\n", "campaign.seed", "no effect"),
            (SMOKE + '[sweep]\n"campaign.seed" = [1, 2]\n', "campaign.seed", "no effect"),
            (sens + "[campaign]\nlandings = true\ntries = 5\n", "campaign.tries",
             "campaign step"),
            # [trace]
            ("[trace]\nlandings = true\n", "trace.landings", "trace.hardoff"),
            ("[trace]\nwindows_log = true\n", "trace.windows_log", "trace.hardoff"),
            ("[trace]\ntop = 5\n", "trace.top", "trace.hardoff"),
            ("[trace]\nhardoff = true\ntop = 0\n", "trace.top", "minimum"),
            ('[trace]\nhardoff = "true"\n', "trace.hardoff", "must be bool"),
            ('[trace]\nhardoff = true\n[qemu]\naccel = "kvm"\n', "trace.hardoff", "TCG"),
            ("[trace]\nnope = 1\n", "trace.nope", "unknown key"),
            (SMOKE + "[expect]\nhardoff_violations_max = 0\n",
             "expect.hardoff_violations_max", "trace.hardoff"),
            (SMOKE + "[expect]\nhardoff_max_us = 10.0\n", "expect.hardoff_max_us"),
            (SMOKE + '[expect]\nexpect_failure = "violation"\n', "expect.expect_failure"),
        ]
        for case in cases:
            with self.subTest(case[0]):
                self.refused(["run", self.file("bad.toml", case[0]), "--no-build"], *case[1:])

    def test_bad_suites(self):
        for text, frag in (("scenarios = []\n", "scenarios"),
                           ('scenarios = "smoke"\n', "scenarios"),
                           ('scenarios = [""]\n', "scenarios"),
                           ('scenarios = ["no-such-xyz"]\n', "no-such-xyz"),
                           ('scenarios = ["smoke"]\nfoo = 1\n', "foo"),
                           ('scenarios = ["smoke"]\nvariants = ["5.4"]\n', "5.4"),
                           ('scenarios = ["smoke"]\ninventory = "6.12-rt"\n', "inventory")):
            with self.subTest(text):
                self.refused(["suite", self.file("s.toml", text), "--no-build"], frag)
        self.refused(["suite", self.file("s.toml", 'scenarios = ["stress"]\n'), "--tier",
                      "ci", "--no-build"], "tier")
        self.refused(["suite", "no-such-suite", "--no-build"], "no such suite")

    def test_bad_results_files_for_every_command(self):
        good = self.file("good.json", '{"schema": 2, "runs": [], "complete": true}')
        empty = os.path.join(self.files.name, "emptydir")
        os.makedirs(empty)
        bad = {"missing": os.path.join(self.files.name, "missing.json"),
               "emptydir": empty,
               "empty": self.file("empty.json", ""),
               "truncated": self.file("trunc.json", '{"schema": 2, "runs": ['),
               "non-object": self.file("list.json", "[1, 2]"),
               "old-schema": self.file("old.json", '{"runs": []}'),
               "bad runs": self.file("runs.json", '{"schema": 2, "runs": [1]}'),
               "binary": self.file("bin.json", b"\xff\xfe")}
        with mock.patch.object(install, "missing_python_modules", return_value=[]):
            for what, path in bad.items():
                for argv in (["compare", path, good], ["compare", good, path],
                             ["report", path], ["rejudge", path], ["hardoff", path],
                             ["overhead", path]):
                    with self.subTest(what=what, argv=argv[0]):
                        self.refused(argv)
        for pair in ("6.12-rt", "6.12-rt:", ":6.12-rt", "6.12-rt:nope"):
            with self.subTest(pair):
                self.refused(["compare", good, good, "--variants", pair], "--variants"
                             if "nope" not in pair else "nope")

    def test_bad_reproduce_references(self):
        def findings(name, body):
            return self.file(name, json.dumps(body) if not isinstance(body, str) else body)
        good = {"address": "ffffffff81000000", "seed": 1, "variant": "6.12-rt-irqsoft-debug"}
        cases = [
            (os.path.join(self.files.name, "none.json") + "#0", "not a findings file"),
            (findings("trunc.json", '{"findings": [') + "#0", "not a findings file"),
            (findings("list.json", []) + "#0", "not a findings file"),
            (findings("f0.json", {"findings": []}) + "#0", "no finding #0"),
            (findings("f1.json", {"findings": [{"reproducer": good}]}) + "#abc",
             "no finding #abc"),
            (findings("f2.json", {"findings": [{"reproducer": good}]}) + "#-1",
             "no finding #-1"),
            (findings("f3.json", {"findings": [{"nope": 1}]}) + "#0", "no finding #0"),
            (findings("f4.json", {"findings": [{"reproducer": {"address": 5}}]}) + "#0",
             "no valid address, seed, variant"),
            (findings("f5.json", {"findings": [{"reproducer": dict(good, variant="9.9")}]}),
             "variant"),
        ]
        for ref, frag in cases:
            with self.subTest(ref):
                self.refused(["run", "campaign-random", "--reproduce", ref, "--no-build"],
                             "--reproduce", frag)
        ok = findings("ok.json", {"findings": [{"reproducer": good}]})
        self.refused(["run", "smoke", "--reproduce", ok, "--no-build"],
                     "no sensor or campaign step")
        # a good reference gets as far as the build check
        self.refused(["run", "campaign-random", "--reproduce", ok + "#0", "--no-build"],
                     "not built", "6.12-rt-irqsoft-debug")

    def test_run_without_a_build(self):
        self.refused(["run", "smoke", "--variant", "6.12-rt", "--no-build"], "not built")
        self.refused(["suite", "--variant", "6.12-rt", "--no-build"], "not built")
        self.refused(["inventory", "6.1-rt", "--no-build", "--soft", "*"], "not built")
        self.refused(["gdb", "6.1-rt", "--no-build"], "not built", "6.1-rt")
        self.refused(["gdb", "6.12-rt", self.file("s.toml", "x = \n"), "--no-build"],
                     "not valid TOML")

    def test_usage_errors_exit_2(self):
        self.refused(["compare", "only-one"])
        self.refused(["no-such-command"])
        self.refused([])
        self.refused(["run"])
        self.refused(["hardoff", "x", "--top", "x"])


class FreshMachineTest(TmpResultsTest):
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
