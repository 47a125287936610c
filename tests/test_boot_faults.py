"""The runner against a stand-in QEMU that hangs, dies, ignores SIGTERM or
panics (tests/fake_guest.py): every path ends with a verdict, the logs,
the right exit status and no process left behind."""

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import unittest
from unittest import mock

from irqrig import boot, cli, errors, install, paths, procs, scenario, suite
from tests.tmpresults import TmpResultsTest

FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_guest.py")
VARIANT = "6.12-rt"


def fake_build(root):
    """A build tree with the files a boot of VARIANT needs (not real ones)."""
    kdir = os.path.join(root, "kernels", VARIANT)
    os.makedirs(os.path.join(kdir, "arch", "x86", "boot"))
    open(os.path.join(kdir, "arch", "x86", "boot", "bzImage"), "w").close()
    with open(os.path.join(kdir, "irqrig-info.json"), "w") as f:
        json.dump({"release": "6.12.0"}, f)
    os.makedirs(os.path.join(root, "initramfs"))
    open(os.path.join(root, "initramfs", VARIANT + ".cpio.gz"), "w").close()


class FakeQemuTest(TmpResultsTest):
    def setUp(self):
        super().setUp()
        self.build = tempfile.TemporaryDirectory()
        self.addCleanup(self.build.cleanup)
        fake_build(self.build.name)
        for name, value in (("BUILD", self.build.name),
                            ("KERNELS", os.path.join(self.build.name, "kernels")),
                            ("QEMU_BINARY", FAKE)):
            self.addCleanup(setattr, paths, name, getattr(paths, name))
            setattr(paths, name, value)
        self.addCleanup(os.environ.pop, "IRQRIG_FAKE", None)

    def tearDown(self):
        self.assertEqual(procs.running(), {}, "a process was left running")
        super().tearDown()

    def run_text(self, text, fake="", **limits):
        """limits: timeouts set below the scenario minimum after parsing
        (the waits they bound are what is tested, and the test stays fast)."""
        os.environ["IRQRIG_FAKE"] = fake
        points = scenario.parse(tomllib.loads('variants = ["%s"]\n' % VARIANT + text),
                                "t.toml")
        for p in points:
            p.data.update(limits)
        with contextlib.redirect_stdout(io.StringIO()):
            return suite.execute(points, "t", ["test"], do_build=False)

    def test_a_good_run_passes_and_is_complete(self):
        rs = self.run_text('[[steps]]\ntype = "shell"\ncommand = "echo hi"\n')
        (r,) = rs.data["runs"]
        self.assertEqual(r["status"], "pass", r["verdicts"])
        self.assertTrue(rs.complete)
        self.assertEqual(r["steps"][0]["output"], "hi")
        with open(os.path.join(os.path.dirname(r["logs"]["console"]), "run.json")) as f:
            self.assertEqual(json.load(f)["outcome"], "completed")

    def test_the_scenario_timeout_bounds_the_whole_run(self):
        t0 = time.monotonic()
        rs = self.run_text('timeout_s = 10\n[[steps]]\ntype = "shell"\n'
                           'command = "sleep 60"\ntimeout_s = 100\n', timeout_s=3)
        (r,) = rs.data["runs"]
        self.assertEqual(r["status"], "error")
        self.assertEqual(r["outcome"], "timeout")
        self.assertIn("scenario timeout (3 s)", r["error"])
        self.assertLess(time.monotonic() - t0, 15)

    def test_a_guest_that_never_boots(self):
        rs = self.run_text("boot_timeout_s = 5\n", "--no-boot", boot_timeout_s=2)
        (r,) = rs.data["runs"]
        self.assertEqual((r["status"], r["outcome"]), ("error", "guest-error"))
        self.assertIn("did not boot within 2 s", r["error"])
        self.assertIn(r["logs"]["console"], r["error"])

    def test_qemu_dies(self):
        rs = self.run_text('[[steps]]\ntype = "shell"\ncommand = "true"\n', "--die-after-boot")
        (r,) = rs.data["runs"]
        self.assertEqual(r["status"], "error")
        self.assertIn("QEMU exited unexpectedly", r["error"])

    def test_a_qemu_that_ignores_sigterm_is_still_stopped(self):
        rs = self.run_text('timeout_s = 10\n[[steps]]\ntype = "shell"\ncommand = "sleep 60"\n',
                           "--ignore-sigterm", timeout_s=3)
        self.assertEqual(rs.data["runs"][0]["outcome"], "timeout")

    def test_a_panic_is_an_error_with_the_log(self):
        rs = self.run_text('[[steps]]\ntype = "shell"\ncommand = "crash-now"\n',
                           "--panic-on crash-now")
        (r,) = rs.data["runs"]
        self.assertEqual(r["status"], "error")
        self.assertIn("kernel panic", r["error"])
        self.assertEqual(r["figures"]["console"]["panic"], 1)

    def test_an_exception_is_one_runs_error_and_the_suite_goes_on(self):
        calls = []

        def broken(self, st):
            calls.append(st["command"])
            if len(calls) == 1:
                raise ZeroDivisionError("a bug in a step")
            return {"command": st["command"], "rc": 0, "output": ""}
        with mock.patch.object(boot.Boot, "step_shell", broken):
            rs = self.run_text('[[steps]]\ntype = "shell"\ncommand = "true"\n'
                               '[sweep]\n"qemu.append" = ["A=1", "A=2"]\n')
        first, second = rs.data["runs"]
        self.assertEqual((first["status"], first["outcome"]), ("error", "rig-error"))
        self.assertIn("ZeroDivisionError", first["error"])
        with open(first["logs"]["runner_error"]) as f:
            self.assertIn("Traceback", f.read())
        self.assertEqual(second["status"], "pass", second["verdicts"])
        self.assertTrue(rs.complete)
        self.assertEqual(cli._status(rs), errors.EXIT_RIG)


class SigtermTest(unittest.TestCase):
    """SIGTERM to a real runner process in the middle of a suite."""

    def test_sigterm_leaves_an_incomplete_result_set_and_no_qemu(self):
        with tempfile.TemporaryDirectory() as d:
            build, res = os.path.join(d, "build"), os.path.join(d, "results")
            fake_build(build)
            scn = os.path.join(d, "t.toml")
            with open(scn, "w") as f:
                f.write('variants = ["%s"]\n[[steps]]\ntype = "shell"\ncommand = "sleep 60"\n'
                        '[sweep]\n"qemu.append" = ["A=1", "A=2"]\n' % VARIANT)
            env = dict(os.environ, IRQRIG_BUILD=build, IRQRIG_RESULTS=res, IRQRIG_QEMU=FAKE,
                       IRQRIG_FAKE="--ignore-sigterm")
            p = subprocess.Popen([sys.executable, os.path.join(paths.ROOT, "runner.py"), "run",
                                  scn, "--no-build"], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 30
            fakes = []
            while not fakes and time.monotonic() < deadline:
                time.sleep(0.2)
                fakes = subprocess.run(["pgrep", "-f", "-P", str(p.pid), "fake_guest"],
                                       capture_output=True, text=True).stdout.split()
            self.assertTrue(fakes, "the fake QEMU never started")
            time.sleep(1)
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate(timeout=30)
            self.assertEqual(p.returncode, errors.EXIT_RIG, err)
            self.assertIn("interrupted (signal SIGTERM)", err)
            for pid in fakes:
                self.assertFalse(os.path.exists("/proc/%s" % pid), "fake QEMU left running")
            (run_dir,) = os.listdir(res)
            with open(os.path.join(res, run_dir, "results.json")) as f:
                data = json.load(f)
            self.assertFalse(data["complete"])
            self.assertIn("SIGTERM", data["incomplete_reason"])
            self.assertEqual(len(data["planned"]), 2)
            with open(os.path.join(res, run_dir, "junit.xml")) as f:
                self.assertIn("not run", f.read())


if __name__ == "__main__":
    unittest.main()
