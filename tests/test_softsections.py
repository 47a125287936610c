"""The soft-section inventory on recorded listings and small ELF files built here.

tests/data/softsections-sample.c holds the patterns (simple, early return,
nested, enable in a callee, loop, trap, mixed restore, tail calls, a .cold
part); its listings were recorded as a linked image (like vmlinux) and as a
relocatable object (like a module).  tests/data/softsections-6.12.objdump is
an excerpt of the 6.12-rt-irqsoft vmlinux: the swapgs windows.
"""

import json
import os
import subprocess
import tempfile
import unittest
from unittest import mock

from irqrig import gdbscripts

disasm = gdbscripts.module("disasm")
ss = gdbscripts.module("softsections")

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def listing(name, relocatable=False):
    with open(os.path.join(DATA, name), "rb") as f:
        return disasm.Disasm(f.read(), relocatable=relocatable)


def by_function(secs):
    out = {}
    for s in secs:
        out.setdefault(s["function"], []).append(s)
    return out


class RecordedSample(unittest.TestCase):
    """The walk on the linked listing: exact instruction sets."""

    @classmethod
    def setUpClass(cls):
        cls.dis = listing("softsections-sample.objdump")
        secs, cls.names = ss.analyze_listing(cls.dis, lines=False)
        cls.secs = by_function(secs)

    def one(self, func):
        got = self.secs[func]
        self.assertEqual(len(got), 1, func)
        return got[0]

    def test_every_call_found(self):
        self.assertEqual(sorted(self.secs), sorted([
            "simple", "early_return", "nested", "enable_in_callee", "loop", "dead_end",
            "mixed", "save_wrapper", "tail_enable", "cold_path", "disable_inside_save"]))
        self.assertEqual(len(self.secs["nested"]), 2)

    def test_simple(self):
        s = self.one("simple")
        self.assertEqual(s["entry_call"], "soft_local_irq_save")
        self.assertEqual(s["call"], 0x401034)
        self.assertEqual(s["start"], 0x401039)
        self.assertEqual(s["insns"], [0x401039, 0x40103E, 0x401041, 0x401045])
        self.assertEqual(s["end"], 0x401045)
        self.assertEqual(s["ends"], [0x401045], "the tail jump to the restore ends it")
        self.assertTrue(s["bounded"])
        self.assertEqual(s["callees"], ["leaf_swap"])

    def test_early_return_is_unbounded(self):
        s = self.one("early_return")
        self.assertFalse(s["bounded"])
        self.assertEqual(s["ends"], [0x40106E])
        self.assertEqual(s["escapes"], [[0x401076, "return"]])
        self.assertEqual(s["insns"], [0x401058, 0x40105E, 0x401063, 0x401065, 0x401067,
                                      0x401069, 0x40106E, 0x401075, 0x401076])

    def test_nested(self):
        outer, inner = sorted(self.secs["nested"], key=lambda s: s["call"])
        self.assertEqual(inner["insns"], [0x40109D, 0x4010A2, 0x4010A5, 0x4010AA, 0x4010AD])
        self.assertEqual(inner["ends"], [0x4010AD])
        # The inner restore ends one level: the outer goes on to its own.
        self.assertEqual(outer["ends"], [0x4010C5])
        self.assertEqual(outer["insns"][0], 0x40108B)
        self.assertEqual(outer["insns"][-1], 0x4010C5)
        self.assertEqual(len(outer["insns"]), 16)
        self.assertTrue(outer["bounded"] and inner["bounded"])

    def test_enable_in_callee(self):
        s = self.one("enable_in_callee")
        self.assertFalse(s["bounded"])
        self.assertEqual(s["ends"], [])
        self.assertEqual(s["escapes"], [[0x4010E2, "tail call work"]])

    def test_loop_stops_at_restore(self):
        s = self.one("loop")
        self.assertTrue(s["bounded"])
        self.assertEqual(s["insns"], [0x401105, 0x401108, 0x40110E, 0x401110, 0x401113,
                                      0x401119])

    def test_noreturn_is_dead_not_escape(self):
        s = self.one("dead_end")
        self.assertTrue(s["bounded"])
        self.assertEqual(s["dead"], [0x40116F])
        self.assertIn(0x40116A, s["insns"])
        self.assertNotIn(0x401174, s["insns"], "nothing after the call of panic")

    def test_mixed_restore(self):
        s = self.one("mixed")
        self.assertTrue(s["bounded"])
        self.assertEqual(s["ends"], [0x4011A6])
        self.assertEqual(s["callees"], ["_raw_spin_lock"])

    def test_tail_call_of_entry(self):
        s = self.one("save_wrapper")
        self.assertFalse(s["bounded"])
        self.assertEqual(s["insns"], [])
        self.assertEqual(s["start"], None)

    def test_cold_part_followed(self):
        s = self.one("cold_path")
        self.assertTrue(s["bounded"])
        for a in (0x401000, 0x401005, 0x40100A, 0x40100F):
            self.assertIn(a, s["insns"])
        self.assertEqual(s["callees"], ["slow"])
        self.assertEqual(len(s["insns"]), 11)

    def test_nested_disable_opens_no_level(self):
        """The outer restore turns soft irqs on after a nested disable too."""
        got = self.secs["disable_inside_save"]
        self.assertEqual(len(got), 2)
        outer = [s for s in got if s["entry_call"] == "soft_local_irq_save"][0]
        self.assertTrue(outer["bounded"], outer["escapes"])
        self.assertEqual(outer["ends"], [0x401234])
        self.assertIn(0x401240, outer["insns"])
        self.assertIn(0x401245, outer["insns"])

    def test_extra_edges_followed(self):
        """A static-key edge to a return makes the loop's section unbounded."""
        w = ss.walk(self.dis, 0x401105, {0x401108: [0x401128]})
        self.assertIn((0x401128, "return"), w["escapes"])
        self.assertIn(0x401128, w["insns"])

    def test_callees_expanded(self):
        secs = [s for v in self.secs.values() for s in v]
        c = ss.expand_callees(self.dis, secs, self.names)
        self.assertEqual(c["leaf_swap"]["insns"], [0x401020, 0x401023, 0x401024, 0x401027])
        self.assertTrue(c["leaf_swap"]["leaf"])
        self.assertEqual((c["leaf_swap"]["calls"], c["leaf_swap"]["calls_in_soft"]), (1, 1))
        # work: 7 direct calls, all inside sections (one is the tail call out).
        self.assertEqual((c["work"]["calls"], c["work"]["calls_in_soft"]), (7, 7))

    def test_summary(self):
        secs = [s for v in self.secs.values() for s in v]
        s = ss.summarize(secs)
        self.assertEqual(s["sections"], 13)
        self.assertEqual(s["bounded"], 10)
        self.assertEqual(s["by_entry"], {"soft_local_irq_save": 9,
                                         "soft_local_irq_disable": 4})


class RecordedRelocatable(unittest.TestCase):
    """A module: targets from relocations, (section, offset) locations."""

    def test_same_shape_as_linked(self):
        linked = by_function(ss.analyze_listing(listing("softsections-sample.objdump"),
                                                lines=False)[0])
        rel = by_function(ss.analyze_listing(listing("softsections-sample-reloc.objdump",
                                                     True), image="t.ko", lines=False)[0])
        self.assertEqual(sorted(linked), sorted(rel))
        for f in linked:
            for a, b in zip(sorted(linked[f], key=lambda s: s["call"]),
                            sorted(rel[f], key=lambda s: s["call"])):
                self.assertEqual((len(a["insns"]), a["bounded"], a["callees"]),
                                 (len(b["insns"]), b["bounded"], b["callees"]), f)
        cold = rel["cold_path"][0]
        self.assertIn(".text.unlikely+0x0", cold["insns"], "je to .text.unlikely-0x4")
        self.assertIn(".text+0x1da", cold["insns"], "jmp back via .text+0x1d6")
        self.assertTrue(cold["id"].startswith("t.ko:cold_path+"))
        self.assertEqual(cold["subsystem"], "module/t")


class Vmlinux612Excerpt(unittest.TestCase):
    """The swapgs windows in the recorded 6.12-rt-irqsoft excerpt."""

    @classmethod
    def setUpClass(cls):
        path = os.path.join(DATA, "softsections-6.12.objdump")
        if not os.path.exists(path):
            raise unittest.SkipTest("no recorded 6.12 excerpt")
        cls.dis = listing("softsections-6.12.objdump")
        with open(os.path.join(DATA, "softsections-6.12.extra.json"), encoding="utf-8") as f:
            cls.extra = {int(k): v for k, v in json.load(f).items()}
        secs, names = ss.analyze_listing(cls.dis, cls.extra, lines=False)
        cls.secs = by_function(secs)
        cls.callees = ss.expand_callees(cls.dis, secs, names, cls.extra)

    def test_swapgs_sections_bounded(self):
        # start_thread_common() and native_load_gs_index() are inlined.
        for func, callee, n in (("current_save_fsgs", "__rdgsbase_inactive", 1),
                                ("x86_gsbase_read_cpu_inactive", "__rdgsbase_inactive", 1),
                                ("x86_gsbase_write_cpu_inactive", "__wrgsbase_inactive", 1),
                                ("start_thread", "asm_load_gs_index", 2)):
            got = [x for x in self.secs.get(func, ()) if callee in x["callees"]]
            self.assertEqual(len(got), n, func)
            for s in got:
                self.assertTrue(s["bounded"], func)
                self.assertEqual(s["entry_call"], "soft_local_irq_save")

    def test_start_thread_ranges(self):
        a, b = sorted(self.secs["start_thread"], key=lambda s: s["call"])
        self.assertEqual(a["insns"], [0xFFFFFFFF810217AB, 0xFFFFFFFF810217AD,
                                      0xFFFFFFFF810217B0, 0xFFFFFFFF810217B5,
                                      0xFFFFFFFF810217B8])
        self.assertEqual(b["start"], 0xFFFFFFFF810217C4)
        self.assertEqual(b["end"], 0xFFFFFFFF810217D4)

    def test_static_cpu_has_stub_followed(self):
        """current_save_fsgs: the FSGSBASE test in .altinstr_aux, both ways."""
        s = self.secs["current_save_fsgs"][0]
        for a in (0xFFFFFFFF8193C5E5, 0xFFFFFFFF8193C5EC, 0xFFFFFFFF8193C5F2,
                  0xFFFFFFFF81021AAD, 0xFFFFFFFF81021ACC):
            self.assertIn(a, s["insns"])
        self.assertEqual(len(s["insns"]), 23)
        self.assertEqual(s["ends"], [0xFFFFFFFF81021AC5])

    def test_swapgs_callees_expanded(self):
        for name in ("asm_load_gs_index", "__rdgsbase_inactive", "__wrgsbase_inactive"):
            c = self.callees.get(name)
            self.assertTrue(c, name)
            kinds = [self.dis.insn_at(a).mnem for a in c["insns"]]
            self.assertEqual(kinds.count("swapgs"), 2, (name, kinds))


class ElfTables(unittest.TestCase):
    """__jump_table and .altinstructions of a linked image built here."""

    SOURCE = r'''
void f(void)
{
	asm volatile(
	"1: jmp 2f\n"
	".pushsection __jump_table,\"aw\"\n.balign 8\n.long 1b - .\n.long 3f - .\n.quad 0\n.popsection\n"
	"2: nop\n"
	"5: jmp 3f\n"
	".pushsection .altinstructions,\"a\"\n.long 5b - .\n.long 6f - .\n.long 0\n.byte 2\n.byte 2\n.popsection\n"
	".pushsection .altinstr_replacement,\"ax\"\n6: jmp 2b\n.popsection\n"
	"3: nop\n");
}
void _start(void) { for (;;) ; }
'''

    def test_tables(self):
        from irqrig_gdb.elf import Elf
        with tempfile.TemporaryDirectory() as tmp:
            src, exe = os.path.join(tmp, "t.c"), os.path.join(tmp, "t.elf")
            with open(src, "w") as f:
                f.write(self.SOURCE)
            subprocess.run(["gcc", "-O1", "-nostdlib", "-static", "-no-pie", "-fno-pic",
                            "-o", exe, src], check=True)
            elf = Elf(exe)
            with tempfile.TemporaryFile() as out:
                disasm.run_objdump(exe, out, False)
                dis = disasm.Disasm(out)
                f_ins = dis.insns(dis.chunks_named("f")[0])
                jmp1, nop2, jmp5, nop3 = [i.addr for i in f_ins[:4]]
                self.assertEqual(ss.jump_table(elf), {jmp1: [nop3]})
                alts = ss.alternatives(elf)
                self.assertEqual(len(alts), 1)
                self.assertEqual(alts[0][:2], (jmp5, 2))
                extra = ss.extra_successors(dis, elf)
                self.assertEqual(sorted(extra[jmp1]), sorted([nop3, nop2]))
                # Patched out: falls through to 3; replaced: jumps to 2.
                self.assertEqual(sorted(extra[jmp5]), sorted([jmp5 + 2, nop2]))


class Analyze(unittest.TestCase):
    """analyze() end to end: objdump + addr2line on a linked sample."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        flags = ["-O2", "-fno-pic", "-mno-red-zone", "-fno-asynchronous-unwind-tables",
                 "-fcf-protection=none", "-g"]
        objs = []
        for name in ("softsections-sample.c", "softsections-stubs.c"):
            o = os.path.join(cls.tmp.name, name + ".o")
            subprocess.run(["gcc", "-c"] + flags + ["-o", o, os.path.join(DATA, name)],
                           check=True)
            objs.append(o)
        cls.exe = os.path.join(cls.tmp.name, "sample.elf")
        subprocess.run(["gcc", "-nostdlib", "-static", "-no-pie", "-o", cls.exe] + objs,
                       check=True)
        cls.stock = os.path.join(cls.tmp.name, "stock.elf")
        subprocess.run(["gcc", "-nostdlib", "-static", "-no-pie", "-O2", "-x", "c", "-o",
                        cls.stock, "-"], input=b"void _start(void) { for (;;) ; }\n",
                       check=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_lines(self):
        r = ss.analyze(self.exe)
        self.assertTrue(r["soft_api"])
        with open(os.path.join(DATA, "softsections-sample.c")) as f:
            src = f.read().splitlines()
        for s in r["sections"]:
            self.assertTrue(s["file"].endswith("softsections-sample.c"), s["file"])
            self.assertIn(s["entry_call"].replace("soft_", ""), src[s["line"] - 1]
                          .replace("soft_", ""), s["id"])
        self.assertEqual(r["summary"]["sections"], 13)

    def test_stock_image(self):
        r = ss.analyze(self.stock)
        self.assertFalse(r["soft_api"])
        self.assertEqual(r["sections"], [])
        self.assertIn("not a CONFIG_RT_IRQ_DISABLE image", r["note"])

    def test_cache(self):
        from irqrig import softsections as api
        with tempfile.TemporaryDirectory() as cache, \
                mock.patch.object(api, "CACHE", cache), mock.patch.dict(api._MEMO, clear=True):
            calls = []
            real = api.analysis.analyze

            def counting(*a, **k):
                calls.append(a)
                return real(*a, **k)
            with mock.patch.object(api.analysis, "analyze", counting):
                a = api.image(self.exe)
                api._MEMO.clear()
                b = api.image(self.exe)
                self.assertEqual(len(calls), 1, "second call from the cache file")
                self.assertEqual(a, b)
                st = os.stat(self.exe)
                os.utime(self.exe, ns=(st.st_atime_ns, st.st_mtime_ns + 10 ** 9))
                api.image(self.exe)
                self.assertEqual(len(calls), 2, "a rebuilt image is analysed again")
                self.assertEqual(len(os.listdir(cache)), 1, "the stale entry is gone")


class Selection(unittest.TestCase):
    def sec(self, **kw):
        s = {"id": "f+0x4", "function": "f", "file": "kernel/sched/core.c", "line": 1,
             "subsystem": "kernel/sched", "inlined": [], "bounded": True}
        s.update(kw)
        return s

    def test_subsystems(self):
        self.assertEqual(ss.subsystem("arch/x86/kernel/process_64.c"), "arch/x86/kernel")
        self.assertEqual(ss.subsystem("arch/x86/kernel/apic/io_apic.c"), "arch/x86/kernel")
        self.assertEqual(ss.subsystem("arch/x86/entry/common.c"), "entry")
        self.assertEqual(ss.subsystem("kernel/entry/common.c"), "entry")
        self.assertEqual(ss.subsystem("kernel/sched/core.c"), "kernel/sched")
        self.assertEqual(ss.subsystem("kernel/fork.c"), "kernel")
        self.assertEqual(ss.subsystem("mm/slub.c"), "mm")
        self.assertEqual(ss.subsystem("arch/x86/mm/tlb.c"), "arch/x86/mm")
        self.assertEqual(ss.subsystem("drivers/tty/serial/8250/8250_core.c"), "drivers/tty")
        self.assertEqual(ss.subsystem("include/linux/spinlock.h"), "include")
        self.assertEqual(ss.subsystem("??"), "?")

    def test_pick(self):
        from irqrig.softsections import pick
        secs = [self.sec(),
                self.sec(id="g", function="start_thread_common",
                         file="arch/x86/kernel/process_64.c", subsystem="arch/x86/kernel",
                         inlined=["native_load_gs_index arch/x86/include/asm/gsseg.h:35"]),
                self.sec(id="h", function="kmem_cache_free", file="mm/slub.c",
                         subsystem="mm"),
                self.sec(id="i", function="tty_port_tty_get", file="drivers/tty/tty_port.c",
                         subsystem="drivers/tty")]
        ids = lambda got: [s["id"] for s in got]  # noqa: E731
        self.assertEqual(ids(pick(secs)), ["f+0x4", "g", "h"], "default selection")
        self.assertEqual(ids(pick(secs, ["native_load_gs_index"])), ["g"])
        self.assertEqual(ids(pick(secs, ["kmem_*"])), ["h"])
        self.assertEqual(ids(pick(secs, ["drivers"])), ["i"], "a directory prefix")
        self.assertEqual(ids(pick(secs, ["arch/x86/kernel/process_64.c"])), ["g"])
        self.assertEqual(ids(pick(secs, None)), ["f+0x4", "g", "h", "i"])
        self.assertEqual(pick(secs, ["nothing"]), [])


if __name__ == "__main__":
    unittest.main()


class InventoryTables(unittest.TestCase):
    """runner.py inventory's soft tables, on a stock and a patched inventory."""

    def test_tables(self):
        from irqrig import softsections as api, softsections_cmd
        secs = [{"id": "f+0x4", "function": "f", "file": "kernel/sched/core.c", "line": 7,
                 "subsystem": "kernel/sched", "inlined": [], "entry_call": "soft_local_irq_save",
                 "start": 0x10, "end": 0x20, "insns": [0x10, 0x20], "bounded": True,
                 "ends": [0x20], "callees": []},
                {"id": "g+0x4", "function": "g", "file": "fs/x.c", "line": 9,
                 "subsystem": "fs", "inlined": [], "entry_call": "soft_local_irq_disable",
                 "start": 0x30, "end": 0x30, "insns": [0x30], "bounded": False,
                 "ends": [0x30], "callees": []}]
        invs = {"patched": {"variant": "patched", "soft_api": True, "sections": secs,
                            "images": {}, "callees": {}, "summary": ss.summarize(secs)},
                "stock": {"variant": "stock", "soft_api": False, "sections": [], "images": {},
                          "callees": {}, "summary": ss.summarize([]),
                          "note": "stock has no soft sections: ..."}}
        with tempfile.TemporaryDirectory() as out, \
                mock.patch.object(api, "inventory", lambda name: invs[name]):
            text, data = softsections_cmd.run(["stock", "patched"], out, show=["f"])
            self.assertIn("stock has no soft sections", text)
            rows = softsections_cmd.subsystem_rows(invs["patched"])
            got = {r["subsystem"]: r for r in rows}
            self.assertEqual(got["kernel/sched *"]["sections"], 1)
            self.assertEqual(got["entry *"]["sections"], 0, "selected, none there")
            self.assertEqual(got["fs"]["partial"], 1)
            self.assertIn("kernel/sched/core.c:7", text)
            self.assertFalse(data["stock"]["soft_api"])
            self.assertEqual(data["patched"]["summary"]["bounded"], 1)
            with open(os.path.join(out, "softsections-patched.json")) as f:
                self.assertEqual(json.load(f)["sections"][0]["insns"], [0x10, 0x20])
            self.assertTrue(os.path.exists(os.path.join(out, "softsections.md")))


class CalleeInsns(unittest.TestCase):
    def test_filters(self):
        from irqrig import softsections as api
        inv = {"callees": {"asm_load_gs_index": {"insns": [1, 2], "leaf": True, "calls": 2,
                                                 "calls_in_soft": 2},
                           "__rdgsbase_inactive": {"insns": [3], "leaf": True, "calls": 3,
                                                   "calls_in_soft": 2},
                           "work": {"insns": [4], "leaf": False, "calls": 1,
                                    "calls_in_soft": 1},
                           "t.ko:helper": {"insns": [5], "leaf": True, "calls": 1,
                                           "calls_in_soft": 1}}}
        secs = [{"image": "vmlinux", "callees": ["asm_load_gs_index", "__rdgsbase_inactive",
                                                 "work", "*indirect"]},
                {"image": "t.ko", "callees": ["helper"]}]
        with mock.patch.object(api, "inventory", lambda v: inv):
            self.assertEqual(api.callee_insns("v", secs),
                             {"asm_load_gs_index": [1, 2], "__rdgsbase_inactive": [3],
                              "t.ko:helper": [5]})
            self.assertEqual(sorted(api.callee_insns("v", secs, exclusive_only=True)),
                             ["asm_load_gs_index", "t.ko:helper"])
            self.assertIn("work", api.callee_insns("v", secs, leaf_only=False))
