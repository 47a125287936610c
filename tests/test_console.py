"""The console protocol against a stand-in guest (no QEMU, no kernel)."""

import os
import re
import tempfile
import unittest

from irqrig import console
from irqrig.errors import GuestError

FAKE = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_guest.py")]


class ConsoleTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.tmp.name, "console.log")
        self.child = None

    def tearDown(self):
        if self.child is not None:
            console.stop(self.child)
        self.tmp.cleanup()

    def start(self, *extra):
        self.child = console.spawn(FAKE + list(extra), self.log)
        return console.Console(self.child, self.log)

    def test_boot_commands_and_poweroff(self):
        con = self.start()
        info = con.wait_boot(10)
        self.assertEqual(info, {"release": "6.12.0", "cpus": "2", "model": "rt",
                                "irqsoft": "0"})
        rc, out = con.run("echo hello; echo world")
        self.assertEqual((rc, out), (0, "hello\nworld"))
        # The next command is number 2: its own end marker, but with another
        # boot's token, must not end it (the token is what makes it unique).
        fake = "@@E2.%s@@ rc=7" % ("0" * 8 if con.token != "0" * 8 else "1" * 8)
        rc, out = con.run("echo '%s'; (exit 3)" % fake)
        self.assertEqual(rc, 3, "a marker with a wrong token must not end the command")
        self.assertEqual(out, fake)
        con.poweroff(10)
        with open(self.log) as f:
            self.assertIn("IRQRIG-POWEROFF", f.read())

    def test_panic_at_boot_is_reported_with_log(self):
        con = self.start("--panic-at-boot")
        with self.assertRaises(GuestError) as cm:
            con.wait_boot(10)
        self.assertIn("kernel panic", str(cm.exception))
        self.assertIn(self.log, str(cm.exception))

    def test_panic_during_command(self):
        con = self.start("--panic-on", "sysrq")
        con.wait_boot(10)
        with self.assertRaises(GuestError) as cm:
            con.run("echo c > /proc/sysrq-trigger", timeout=10)
        self.assertIn("kernel panic", str(cm.exception))

    def test_boot_timeout(self):
        con = self.start("--no-boot")
        with self.assertRaises(GuestError) as cm:
            con.wait_boot(1)
        self.assertIn("did not boot within 1 s", str(cm.exception))

    def test_command_timeout(self):
        con = self.start()
        con.wait_boot(10)
        with self.assertRaises(GuestError) as cm:
            con.run("sleep 30", timeout=1)
        self.assertIn("timed out", str(cm.exception))

    def test_command_timeout_says_how_long_the_console_was_silent(self):
        con = self.start()
        con.wait_boot(10)
        with self.assertRaises(GuestError) as cm:
            con.run("echo working; sleep 30", timeout=3)
        m = re.search(r"printed nothing in the last (\d+) s", str(cm.exception))
        self.assertIsNotNone(m, str(cm.exception))
        # "working" came at once: about 3 s of silence, not the whole wait
        # before the command started, nor none.
        self.assertTrue(2 <= int(m.group(1)) <= 3, m.group(0))

    def test_scan_counts_bad_lines(self):
        found = console.scan("ok\nWARNING: CPU: 0 PID: 1 at x\nBUG: sleeping function\n"
                             "inconsistent lock state\nKernel panic - not syncing: x\n")
        counts = {k: len(v) for k, v in found.items()}
        self.assertEqual(counts, {"bug": 1, "warning": 1, "oops": 0, "lockdep": 1,
                                  "panic": 1})

    def test_scan_counts_every_rcu_stall_form(self):
        """Both ways RCU reports a stall, and a starved grace-period
        kthread, count; an RCU boot message does not."""
        text = ("rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n"
                "rcu: INFO: rcu_preempt self-detected stall on CPU\n"
                "rcu: rcu_preempt kthread timer wakeup didn't happen for 17898 jiffies!\n"
                "rcu: rcu_preempt kthread starved for 17901 jiffies! g2661\n"
                "rcu: RCU calculated value of scheduler-enlistment delay is 100 jiffies.\n")
        self.assertEqual(len(console.scan(text)["lockdep"]), 4)

    def test_stop_kills_only_its_child(self):
        import subprocess
        other = subprocess.Popen(["sleep", "30"])
        try:
            con = self.start()
            con.wait_boot(10)
            pid = self.child.pid
            console.stop(self.child)
            self.child = None
            with self.assertRaises(ProcessLookupError):
                os.kill(pid, 0)
            self.assertIsNone(other.poll(), "an unrelated process was killed")
        finally:
            other.kill()
            other.wait()


class BatchTest(unittest.TestCase):
    def test_script_and_parse_round_trip(self):
        import subprocess
        script = console.batch_script(["echo one", "echo two; (exit 4)", "true"], "abcd")
        out = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True).stdout
        noisy = out.replace("two\n", "two\nsome kernel line\n")
        got = console.parse_batch(noisy, 3, "abcd")
        self.assertEqual(got, [(0, "one"), (4, "two\nsome kernel line"), (0, "")])

    def test_parse_stops_at_missing_command(self):
        script = console.batch_script(["echo a", "echo b"], "t")
        import subprocess
        out = subprocess.run(["/bin/sh", "-c", script.splitlines()[0]], capture_output=True,
                             text=True).stdout
        self.assertEqual(console.parse_batch(out, 2, "t"), [(0, "a")])

    def test_replay_console(self):
        rc = console.ReplayConsole([(0, "x")])
        self.assertEqual(rc.run("anything"), (0, "x"))
        with self.assertRaises(GuestError):
            rc.run("more")


if __name__ == "__main__":
    unittest.main()
