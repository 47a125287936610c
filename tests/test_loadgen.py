"""loadgen (guest-driver/tools/loadgen.c), built and run on the host: how
it stops its workers and what it says about the ones that failed."""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from irqrig import paths

SOURCE = os.path.join(paths.ROOT, "guest-driver", "tools", "loadgen.c")


class LoadgenTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        cls.exe = os.path.join(cls.dir, "loadgen")
        subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-pthread", "-o", cls.exe, SOURCE],
                       check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def start(self, *args):
        proc = subprocess.Popen([self.exe, *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        return proc

    def result(self, proc):
        out, err = proc.communicate(timeout=60)
        return proc.returncode, json.loads(out), err

    def workers(self, proc):
        with open("/proc/%d/task/%d/children" % (proc.pid, proc.pid)) as f:
            return [int(p) for p in f.read().split()]

    def test_a_clean_run(self):
        rc, res, _ = self.result(self.start("--kind", "timer,pipe", "--duration", "0.5"))
        self.assertEqual(rc, 0)
        self.assertEqual((res["errors"], res["failures"], res["interrupted"]), (0, [], False))
        self.assertGreater(res["ops"]["timer"], 0)

    def test_sigterm_stops_it_early_without_errors(self):
        proc = self.start("--kind", "timer", "--duration", "60")
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        rc, res, _ = self.result(proc)
        self.assertEqual(rc, 1)                 # interrupted
        self.assertEqual((res["errors"], res["failures"], res["interrupted"]), (0, [], True))
        self.assertLess(res["duration_s"], 30)

    def test_a_worker_stuck_past_the_grace_is_killed_and_named(self):
        proc = self.start("--kind", "timer", "--duration", "1")
        time.sleep(0.3)
        (worker,) = self.workers(proc)
        os.kill(worker, signal.SIGSTOP)
        rc, res, err = self.result(proc)
        self.assertEqual(rc, 1)
        self.assertEqual(res["errors"], 1)
        (failure,) = res["failures"]
        self.assertTrue(failure.startswith("timer.0: killed "), failure)
        self.assertIn("killed at the end of the stop grace (3.0 s)", failure)
        self.assertIn(failure, err)
        self.assertEqual(res["stop_grace_s"], 3.0)

    def test_a_worker_that_fails_is_named(self):
        proc = self.start("--kind", "timer", "--duration", "1")
        time.sleep(0.3)
        (worker,) = self.workers(proc)
        os.kill(worker, signal.SIGKILL)         # not by loadgen: a failure
        rc, res, _ = self.result(proc)
        self.assertEqual((rc, res["errors"]), (1, 1))
        self.assertEqual(res["failures"], ["timer.0: killed by signal 9"])


if __name__ == "__main__":
    unittest.main()
