"""Campaign judging from recorded files: QEMU's interrupt log, coverage,
findings and their attribution, reproducers, gdb's CPU places."""

import json
import os
import tempfile
import unittest

from irqrig import campaign, gdbrun, landings
from irqrig.errors import UsageError

# Two sections: A (own insns 0x100..0x108, callee "asm_x" 0x900/0x904) and B.
SECTIONS = [
    {"id": 0, "function": "start_thread", "file": "arch/x86/kernel/process_64.c",
     "line": 584, "subsystem": "arch/x86/kernel", "start": 0x100, "end": 0x10c,
     "insns": [0x100, 0x104, 0x108], "bounded": True, "callees": {"asm_x": [0x900, 0x904]},
     "inlined": ["native_load_gs_index"]},
    {"id": 1, "function": "other", "file": "kernel/sched/core.c", "line": 1,
     "subsystem": "kernel/sched", "start": 0x200, "end": 0x208,
     "insns": [0x200, 0x204], "bounded": True, "callees": {}},
]


def int_line(vec, ip, soft=0, cpl=0):
    return ("%4d: v=%02x e=0000 i=%d cpl=%d IP=0010:%016x pc=%016x SP=0018:0\n"
            % (1, vec, soft, cpl, ip, ip))


class LandingsTest(unittest.TestCase):
    def reader(self, lines):
        log = landings.Log()
        for line in lines:
            log.feed(line)
        return log.summary()

    def test_counts_hardware_interrupts_in_the_kernel_only(self):
        k = 0xffffffff81600d49
        s = self.reader([int_line(0xec, k), "RAX=0 RBX=0\n", int_line(0xec, k),
                         int_line(0x0e, k),                  # exception: not a landing
                         int_line(0x80, k, soft=1),          # int $0x80: software
                         int_line(0xec, 0x401000, cpl=3)])   # user mode
        self.assertEqual(s["kernel_landings"], 2)
        self.assertEqual(s["by_ip"], {"0x%x" % k: 2})
        self.assertEqual(s["hw_interrupts"], 3)
        self.assertIsNone(s["fault"])

    def test_double_then_triple_fault_keeps_the_events_before(self):
        s = self.reader([int_line(0xec, 0xffffffff81000100),
                         "check_exception old: 0xffffffff new 0xe\n",
                         "check_exception old: 0x8 new 0xe\n",
                         "Triple fault\n"])
        self.assertEqual(s["fault"]["kind"], "triple fault")
        self.assertEqual(s["fault"]["before"][0]["ip"], "0xffffffff81000100")


class CoverageTest(unittest.TestCase):
    def test_callee_landings_count_for_the_section(self):
        cov = campaign.coverage(SECTIONS, {0x904: 2, 0x100: 1, 0x300: 5})
        self.assertEqual(cov[0]["insns"], 5)
        self.assertEqual(cov[0]["landed"], 2)
        self.assertEqual(cov[0]["landings"], 3)
        self.assertEqual(cov[1]["landed"], 0)

    def test_targets_sample_and_only(self):
        t = campaign.targets(SECTIONS, 2, seed=7)
        self.assertEqual(len(t), 4)                 # 2 of A's 5, both of B's
        self.assertEqual(t, campaign.targets(SECTIONS, 2, seed=7), "seeded")
        only = campaign.targets(SECTIONS, 2, seed=7, only=0x904)
        self.assertEqual(only, [{"addr": 0x904, "section": 0}])


class AnalyzeTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def file(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def rec(self, outcome=None, error=None, steps=("campaign",)):
        return {"variant": "v", "scenario": "s", "scenario_file": "scenarios/s.toml",
                "outcome": outcome, "error": error,
                "config": {"campaign": {"select": ["x"], "seed": 3},
                           "steps": [{"type": t} for t in steps]}}

    def files(self, console, progress):
        return {"sections": self.file("sections.json", json.dumps(SECTIONS)),
                "progress": self.file("progress.jsonl", "".join(
                    json.dumps(p) + "\n" for p in progress) + '{"fire": 9, "ad'),
                "console": self.file("console.log", console)}

    def test_clean_run_has_coverage_and_no_finding(self):
        res = campaign.analyze(self.rec(), self.files("booted\n", [
            {"fire": 1, "addr": 0x100, "landed": True},
            {"fire": 2, "addr": 0x200, "landed": False}]))
        self.assertEqual(res["findings"], [])
        self.assertEqual((res["sections_landed"], res["insns_landed"]), (1, 1))
        self.assertEqual((res["fires"], res["fires_landed"]), (2, 1))
        self.assertEqual(res["mode"], "exact")

    def test_oops_is_attributed_to_the_last_fire(self):
        console = ("Oops: double fault: 0000 [#1] PREEMPT_RT SMP\n"
                   "RIP: 0010:exc_page_fault+0x10/0x80\n"
                   "Kernel panic - not syncing: Fatal exception in interrupt\n")
        res = campaign.analyze(self.rec("guest-error", "kernel panic"), self.files(console, [
            {"fire": 1, "addr": 0x100, "landed": True},
            {"fire": 2, "addr": 0x904, "landed": True}]))
        (f,) = res["findings"]
        self.assertEqual(f["attributed"]["function"], "start_thread")
        self.assertEqual(f["attributed"]["landed_in"], "asm_x")
        self.assertEqual(f["attributed"]["address"], "0x904")
        self.assertEqual(f["attributed"]["inlined"], ["native_load_gs_index"])
        self.assertIn("the last interrupt fired that landed (fire 2 of 2)", f["how"])
        self.assertEqual(f["reproducer"]["address"], "0x904")
        self.assertEqual(f["reproducer"]["seed"], 3)
        self.assertIn("rip_function", f["reports"][0])

    def test_a_fire_that_did_not_land_is_not_the_cause(self):
        res = campaign.analyze(self.rec("timeout", "timed out"), self.files("", [
            {"fire": 1, "addr": 0x904, "landed": True},
            {"fire": 2, "addr": 0x100, "landed": False}]))
        f = res["findings"][0]
        self.assertEqual(f["attributed"]["address"], "0x904")
        self.assertIn("the 1 after it did not land", f["how"])

    def test_a_user_gs_landing_outranks_later_landings(self):
        res = campaign.analyze(self.rec("timeout", "timed out"), self.files("", [
            {"fire": 1, "addr": 0x904, "landed": True, "gs_base": 0, "user_gs": True},
            {"fire": 2, "addr": 0x100, "landed": True, "gs_base": 0xffff888007a00000,
             "user_gs": False}]))
        f = res["findings"][0]
        self.assertEqual(f["attributed"]["address"], "0x904")
        self.assertIn("user GS base 0x0 (fire 1 of 2)", f["how"])
        self.assertEqual([r["kind"] for r in f["reports"]], ["hang", "user-gs"])

    def test_a_user_gs_landing_is_a_finding_without_a_crash(self):
        res = campaign.analyze(self.rec(), self.files("booted\n", [
            {"fire": 1, "addr": 0x904, "landed": True, "gs_base": 0x7f00, "user_gs": True}]))
        (f,) = res["findings"]
        self.assertEqual(f["reports"][0]["kind"], "user-gs")
        self.assertIn("landed at 0x904 with the user GS base 0x7f00", f["reports"][0]["line"])

    def test_finding_in_matches_an_inlined_function(self):
        from types import SimpleNamespace
        from irqrig import verdicts
        a = {"function": "do_arch_prctl_64", "landed_in": "asm_load_gs_index",
             "inlined": ["native_load_gs_index", "loadseg"]}
        res = {"findings": [{"attributed": a, "candidates": []}]}

        def finds(pat):
            return verdicts.Judge.finding_in(SimpleNamespace(exp={"finding_in": pat}), res)
        self.assertTrue(finds("native_load_gs_index"))
        self.assertTrue(finds("do_arch_*"))
        self.assertTrue(finds("asm_load_gs_index"))
        self.assertFalse(finds("begin_new_exec"))
        del a["inlined"]                    # a record from before the inline chains
        self.assertFalse(finds("native_load_gs_index"))

    def test_hang_names_where_the_cpus_were(self):
        files = self.files("", [{"fire": 1, "addr": 0x200, "landed": True}])
        files["cpus_after_hang"] = self.file("cpus.json", json.dumps(
            [{"cpu": 0, "function": "error_entry"}, {"cpu": 1, "function": "pv_native_safe_halt"}]))
        res = campaign.analyze(self.rec("timeout", "timed out after 90 s\nmore"), files)
        (f,) = res["findings"]
        self.assertEqual(f["reports"][0]["kind"], "hang")
        self.assertIn("CPU0 in error_entry, CPU1 in pv_native_safe_halt",
                      f["reports"][0]["line"])
        self.assertEqual(f["attributed"]["function"], "other")

    def hang_line(self, tasks_text):
        """The hang finding's line, given an `irqrig tasks` output."""
        files = self.files("", [{"fire": 1, "addr": 0x200, "landed": True}])
        files["tasks_after_hang"] = self.file("tasks.txt", tasks_text)
        res = campaign.analyze(self.rec("timeout", "timed out after 90 s"), files)
        return res["findings"][0]["reports"][0]["line"]

    def test_hang_names_the_waiting_tasks(self):
        line = self.hang_line(
            "tasks: PID COMM STATE CPU\n"
            "    70 sh               D            cpu0\n"
            "waiting: 1 tasks (uninterruptible, not idle, or rtlock)\n"
            "waiting: 70/sh in rwbase_write_lock+0x1a lock tasklist_lock+0x8 owned by 9/x\n"
            "cpu0: current 0/swapper/0; irqsoft_wake_q empty\n")
        self.assertIn("[waiting: 70/sh in rwbase_write_lock+0x1a lock tasklist_lock+0x8 "
                      "owned by 9/x]", line)
        self.assertNotIn("1 tasks", line)
        self.assertNotIn("runnable", line, "no runnable line: none said")

    def test_hang_names_the_tasks_longest_off_the_cpu(self):
        line = self.hang_line(
            "tasks: PID COMM STATE POLICY CPU\n"
            "waiting: 0 tasks (uninterruptible, not idle, or rtlock)\n"
            "runnable: 4 tasks not on a CPU (seconds since each last ran)\n"
            "runnable: 70/sh other cpu0, ran 131.0 s ago\n"
            "runnable: 80/loadgen other cpu1, ran 40.2 s ago\n"
            "runnable: 81/loadgen other cpu1, ran 3.0 s ago\n"
            "runnable: 82/loadgen other cpu0, ran 0.1 s ago\n"
            "cpu0: current 12/ktimers/0 fifo 1; irqsoft_wake_q empty\n")
        self.assertIn("[runnable, not running: 70/sh other cpu0, ran 131.0 s ago; "
                      "80/loadgen other cpu1, ran 40.2 s ago; 81/loadgen other cpu1, "
                      "ran 3.0 s ago]", line)
        self.assertNotIn("4 tasks", line)
        self.assertNotIn("82/loadgen", line, "the three longest off the CPU only")
        self.assertNotIn("[waiting", line)

    def test_qemu_exit_without_panic_is_a_reset(self):
        res = campaign.analyze(self.rec("guest-error", "QEMU exited unexpectedly (rc 0)"),
                               self.files("", []))
        self.assertEqual(res["findings"][0]["reports"][0]["kind"], "reset")
        self.assertIsNone(res["findings"][0]["attributed"])

    def test_random_mode_attributes_the_last_landing_before_the_fault(self):
        land = {"by_ip": {"0x104": 1}, "kernel_landings": 1, "fault": {
            "kind": "double fault", "before": [
                {"v": 0xec, "ip": "0x104", "soft": False, "cpl": 0, "e": 0},
                {"v": 0xec, "ip": "0x204", "soft": False, "cpl": 0, "e": 0},
                {"v": 0x0e, "ip": "0x208", "soft": False, "cpl": 0, "e": 0}]}}
        files = self.files("", [])
        files["landings"] = self.file("landings.json", json.dumps(land))
        res = campaign.analyze(self.rec(steps=("sensor",)), files)
        self.assertEqual(res["mode"], "random")
        (f,) = res["findings"]
        self.assertEqual(f["attributed"]["address"], "0x204")
        self.assertEqual([c["address"] for c in f["candidates"]], ["0x204", "0x104"])


class EndOnceTest(unittest.TestCase):
    def test_writes_the_end_file_then_interrupts_once(self):
        with tempfile.TemporaryDirectory() as d:
            end_path = os.path.join(d, "progress.jsonl.end")
            seen = []
            end = campaign.EndOnce(lambda: seen.append(os.path.exists(end_path)), end_path)
            end()
            end()                       # the step after the timer: no second SIGINT
            self.assertEqual(seen, [True])


class ReproducerTest(unittest.TestCase):
    def test_bad_reference_is_a_usage_error(self):
        d = tempfile.mkdtemp()
        with self.assertRaises(UsageError):
            campaign.load_reproducer(d + "#0")
        with open(os.path.join(d, "findings.json"), "w") as f:
            json.dump({"findings": [{"reproducer": {"address": "0x10", "seed": 1,
                                                    "variant": "6.12-rt"}}, {},
                                    {"reproducer": {"address": 16, "seed": "1",
                                                    "variant": "6.12-rt"}}]}, f)
        self.assertEqual(campaign.load_reproducer(d + "#0")["address"], "0x10")
        self.assertEqual(campaign.load_reproducer(d)["address"], "0x10")
        for n in ("1", "-1", "x", "3"):
            with self.subTest(n), self.assertRaises(UsageError):
                campaign.load_reproducer(d + "#" + n)
        with self.assertRaises(UsageError) as cm:
            campaign.load_reproducer(d + "#2")
        self.assertIn("address, seed", str(cm.exception))
        for body in ("[]", '{"findings": {}}', '{"findings": [1]}', "{"):
            with open(os.path.join(d, "findings.json"), "w") as f:
                f.write(body)
            with self.subTest(body), self.assertRaises(UsageError):
                campaign.load_reproducer(d + "#0")


class ThreadsTest(unittest.TestCase):
    def test_info_threads_lines(self):
        lines = ["  Id   Target Id                    Frame ",
                 "* 1    Thread 1.1 (CPU#0 [running]) 0xffffffff81a0 in error_entry ()",
                 "  2    Thread 1.2 (CPU#1 [halted ]) pv_native_safe_halt () at x.c:1"]
        got = [(m.group(1), m.group(2)) for m in map(gdbrun.THREAD_RE.match, lines) if m]
        self.assertEqual(got, [("0", "error_entry"), ("1", "pv_native_safe_halt")])


if __name__ == "__main__":
    unittest.main()
