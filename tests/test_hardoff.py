"""The IF-tracker's runner side (irqrig/hardoff.py) on recorded plugin output.

tests/data/iftrack-6.12-rt-stock.json is the plugin's JSON of one boot of
stock 6.12-rt (2 vCPUs, icount shift=0, sensor at 1 kHz), cut to its three
longest windows and six sites.  tests/data/iftrack-6.12-rt-irqsoft-rogue.json
is a boot of the patched kernel with the allow-list that loaded the
rogue-cli test module, cut the same way.
"""

import copy
import os
import tempfile
import tomllib
import unittest

from irqrig import hardoff, hardoff_cmd, scenario
from irqrig.errors import IrqrigError, ScenarioError, UsageError

DATA = os.path.join(os.path.dirname(__file__), "data")
STOCK = os.path.join(DATA, "iftrack-6.12-rt-stock.json")
ROGUE = os.path.join(DATA, "iftrack-6.12-rt-irqsoft-rogue.json")


def names(items):
    return {name: (ok, detail) for name, ok, detail in items}


class LoadTest(unittest.TestCase):
    def test_recorded_file_loads(self):
        d = hardoff.load(STOCK)
        self.assertEqual(d["clock"], "icount")
        self.assertEqual(len(d["vcpus"]), 2)

    def test_bad_files_are_one_line_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            missing = os.path.join(tmp, "iftrack.json")
            with self.assertRaises(hardoff.PluginDataError) as cm:
                hardoff.load(missing)
            self.assertIn("missing", str(cm.exception))
            for text, what in (("{not json", "not readable JSON"),
                               ('{"tool": "other"}', "not an iftrack result"),
                               ('{"tool": "iftrack"}', "missing keys")):
                with open(missing, "w") as f:
                    f.write(text)
                with self.assertRaises(hardoff.PluginDataError) as cm:
                    hardoff.load(missing)
                self.assertIn(what, str(cm.exception))
                self.assertNotIn("\n", str(cm.exception))


class VerdictTest(unittest.TestCase):
    def setUp(self):
        self.stock = hardoff.load(STOCK)

    def test_stock_kernel_has_no_violation_verdict(self):
        v = names(hardoff.verdicts(self.stock))
        self.assertEqual(list(v), ["hard-off tracker exact (no IF state it could not explain)"])
        self.assertTrue(v["hard-off tracker exact (no IF state it could not explain)"][0])

    def test_mismatch_fails_the_exactness_verdict(self):
        d = copy.deepcopy(self.stock)
        d["if_mismatch"] = 3
        ((name, ok, detail),) = hardoff.verdicts(d)
        self.assertFalse(ok)
        self.assertIn("3 mismatches", detail)

    def test_firmware_mismatches_are_shown_not_judged(self):
        d = copy.deepcopy(self.stock)
        d["if_mismatch_firmware"] = 1
        ((name, ok, detail),) = hardoff.verdicts(d)
        self.assertTrue(ok)
        self.assertIn("1 in real-mode code below 1 MiB", detail)

    def test_first_mismatch_is_named(self):
        d = copy.deepcopy(self.stock)
        d["if_mismatch"] = 1
        d["vcpus"][0]["first_mismatch"] = {
            "where": "entry", "pc": "0xffffffff81600150",
            "interrupted_rip": "0xffffffff810e8884", "tracked_if": True,
            "last_change_pc": "0xffffffff810e8880"}
        ((name, ok, detail),) = hardoff.verdicts(d)
        self.assertFalse(ok)
        self.assertIn("first on vCPU %d at entry 0xffffffff81600150" % d["vcpus"][0]["vcpu"],
                      detail)
        self.assertIn("interrupted 0xffffffff810e8884", detail)
        self.assertIn("tracked IF on, IF last changed at 0xffffffff810e8880", detail)

    def test_violations_against_the_allow_list(self):
        d = copy.deepcopy(self.stock)
        d["allow_list"] = True
        d["violations"] = 2
        d["sites"][1]["violations"] = 2
        items = hardoff.verdicts(d)
        self.assertFalse(items[1][1])
        self.assertIn("%s x2" % d["sites"][1]["site"], items[1][2])
        self.assertTrue(hardoff.verdicts(d, violations_max=2)[1][1])
        self.assertTrue(hardoff.verdicts(d, expect_violation=True)[1][1])
        d["violations"] = 0
        self.assertFalse(hardoff.verdicts(d, expect_violation=True)[1][1])

    def test_figures(self):
        f = hardoff.figures(self.stock)
        self.assertIsNone(f["violations"])          # no allow-list: not judged
        self.assertEqual(f["max_ns"], self.stock["kernel"]["max_ns"])
        self.assertEqual(f["longest"]["ns"], self.stock["top"][0]["ns"])
        self.assertEqual(f["longest"]["entry"], "asm_sysvec_apic_timer_interrupt")
        maxes = [s["max_ns"] for s in f["sites"]]
        self.assertEqual(maxes, sorted(maxes, reverse=True))
        self.assertEqual(f["sites"][0]["max_ns"], f["max_ns"])

    def test_max_window_bound(self):
        exp = {"hardoff_max_us": 100.0}
        _, items = hardoff.judge(self.stock, exp)
        v = names(items)["longest kernel hard-off window <= 100 us"]
        self.assertFalse(v[0])                      # 441.542 us in the recording
        self.assertIn("441.542 us", v[1])
        _, items = hardoff.judge(self.stock, {"hardoff_max_us": 500.0})
        self.assertTrue(names(items)["longest kernel hard-off window <= 500 us"][0])

    def test_rogue_module_recording(self):
        d = hardoff.load(ROGUE)
        self.assertTrue(d["allow_list"])
        self.assertEqual(d["if_mismatch"], 0)
        self.assertGreaterEqual(d["violations"], 1)
        bad = [s for s in d["sites"] if s["violations"]]
        self.assertEqual([s["insn"] for s in bad], ["cli"])
        # module space, not vmlinux
        self.assertGreaterEqual(hardoff.addr(bad[0]["site"]), 0xffffffffa0000000)
        figs, items = hardoff.judge(d, {"expect_failure": "violation"})
        self.assertTrue(all(ok for _, ok, _ in items), items)
        self.assertEqual(figs["violations"], d["violations"])
        _, items = hardoff.judge(d, {})
        self.assertFalse(names(items)[
            "hard-off windows only from allow-listed sites (<= 0 violations)"][0])


class PhysicalLimitTest(unittest.TestCase):
    """The sensor's CPU from /proc/interrupts, and the hard-stage latency
    max beside that CPU's longest window."""

    INTERRUPTS = ("           CPU0       CPU1       \n"
                  " 24:          3       1207  PCI-MSI-0000:00:03.0   0-edge      irq-sensor\n"
                  " 25:          0          5  PCI-MSI-0000:00:03.0   1-edge      irq-sensor\n")

    def test_irq_cpus(self):
        self.assertEqual(hardoff.irq_cpus(self.INTERRUPTS), {"0": 3, "1": 1212})
        self.assertEqual(hardoff.irq_cpus("           CPU0\n"), {})
        self.assertEqual(hardoff.irq_cpus("grep: /proc/interrupts: No such file"), {})

    def test_irq_cpus_delta(self):
        self.assertEqual(hardoff.irq_cpus_delta({"0": 3, "1": 1}, {"0": 4003, "1": 1}),
                         {"0": 4000})
        self.assertEqual(hardoff.irq_cpus_delta({}, {"1": 5}), {"1": 5})
        self.assertIsNone(hardoff.irq_cpus_delta(None, {"1": 5}))

    FIGS = {"clock": "icount", "max_ns_by_vcpu": {"0": 300000, "1": 500000, "2": None}}

    def test_limit_uses_the_sensor_cpus_only(self):
        lim = hardoff.physical_limit(900000, self.FIGS, {"0": 10})
        self.assertEqual(lim, {"sensor_cpus": {"0": 10}, "hard_max_ns": 900000,
                               "window_max_ns": 300000, "unexplained_ns": 600000,
                               "clock": "icount"})
        both = hardoff.physical_limit(900000, self.FIGS, {"0": 1, "1": 1, "2": 4})
        self.assertEqual(both["window_max_ns"], 500000)
        self.assertEqual(both["sensor_cpus"], {"0": 1, "1": 1})

    def test_no_limit_without_both_figures(self):
        self.assertIsNone(hardoff.physical_limit(None, self.FIGS, {"0": 1}))
        self.assertIsNone(hardoff.physical_limit(1000, self.FIGS, {}))
        self.assertIsNone(hardoff.physical_limit(1000, self.FIGS, {"7": 1}))
        self.assertIsNone(hardoff.physical_limit(1000, {}, {"0": 1}))


class ModuleSitesTest(unittest.TestCase):
    def test_module_sections(self):
        text = ("/sys/module/irq_sensor/sections/.text 0xffffffffa0000000\n"
                "/sys/module/irq_sensor/sections/.init.text 0xffffffffa0004000\n"
                "garbage\n/sys/module/x/sections/.text 0xffffffffa0010000\n")
        self.assertEqual(hardoff.module_sections(text), {
            "irq_sensor": {".text": 0xffffffffa0000000, ".init.text": 0xffffffffa0004000},
            "x": {".text": 0xffffffffa0010000}})
        self.assertEqual(hardoff.module_allowed(hardoff.module_sections(text), {}), set())
        sym = hardoff.Symboliser(None, hardoff.module_sections(text))
        self.assertEqual(sym.name(0xffffffffa0001971), "irq_sensor:.text+0x1971")
        self.assertEqual(sym.name(0xffffffffa0004010), "irq_sensor:.init.text+0x10")
        self.assertEqual(sym.name(0xffffffff81000000), "0xffffffff81000000")

    def test_recorded_module_allow_list(self):
        text = "/sys/module/m/sections/.text 0xffffffffa0000000\n"
        with tempfile.TemporaryDirectory() as tmp:
            ko = os.path.join(tmp, "m.ko")          # no such .ko: nothing allowed
            out = os.path.join(tmp, hardoff.MODULE_ALLOW_FILE)
            hardoff.write_module_allow(hardoff.module_sections(text), {"m": ko}, out)
            self.assertEqual(hardoff.read_addresses(out), set())
            with open(out, "a") as f:
                f.write("0xffffffffa0000002\n")
            self.assertEqual(hardoff.read_addresses(out), {0xffffffffa0000002})

    def test_allowed_module_site_is_no_violation(self):
        d = hardoff.load(ROGUE)
        site = next(s for s in d["sites"] if s["violations"])
        same = hardoff.allow_modules(d, {0xffffffffa0100000})
        self.assertEqual(same["violations"], d["violations"])
        moved = hardoff.allow_modules(d, {hardoff.addr(site["site"])})
        self.assertEqual(moved["violations"], d["violations"] - site["violations"])
        self.assertEqual(moved["module_sites_allowed"], site["violations"])
        self.assertEqual(d["violations"], 1)                # the input is not changed
        self.assertTrue(names(hardoff.verdicts(moved))[
            "hard-off windows only from allow-listed sites (<= 0 violations)"][0])


class InputsTest(unittest.TestCase):
    SYMS = {
        "asm_exc_page_fault": (0xffffffff81400aa0, 0x2c),
        "asm_exc_int3": (0xffffffff81400a00, 0x2c),
        "asm_exc_nmi": (0xffffffff81401000, 0x100),
        "asm_sysvec_apic_timer_interrupt": (0xffffffff81400bf0, 0x20),
        "asm_sysvec_call_function_single": (0xffffffff81400c70, 0x20),
        "asm_common_interrupt": (0xffffffff81400b40, 0x2c),
        "irq_entries_start": (0xffffffff81400140, 203 * 8),
        "spurious_entries_start": (0xffffffff814007a0, 21 * 8),
        "entry_SYSCALL_64": (0xffffffff81400040, 0xaa),
    }

    def test_entry_points(self):
        e = {name: (a, err, cls) for a, err, cls, name in hardoff.entry_points(self.SYMS)}
        self.assertEqual(e["asm_exc_page_fault"], (0xffffffff81400aa0, True, "exception"))
        self.assertEqual(e["asm_exc_int3"][1:], (False, "exception"))
        self.assertEqual(e["asm_exc_nmi"][2], "nmi")
        self.assertEqual(e["asm_sysvec_apic_timer_interrupt"][2], "timer")
        self.assertEqual(e["asm_sysvec_call_function_single"][2], "ipi")
        self.assertNotIn("asm_common_interrupt", e)      # not a gate target
        self.assertNotIn("entry_SYSCALL_64", e)          # syscall: decoded instead
        self.assertEqual(e["irq_vector_32"][0], 0xffffffff81400140)
        self.assertEqual(e["irq_vector_234"][0], 0xffffffff81400140 + 202 * 8)
        self.assertEqual(e["spurious_vector_235"], (0xffffffff814007a0, False, "spurious"))
        self.assertEqual(e["spurious_vector_255"][0], 0xffffffff814007a0 + 20 * 8)
        self.assertEqual(sum(1 for n in e if n.startswith(("irq_", "spurious_"))), 224)

    def test_entry_points_need_the_stubs(self):
        syms = dict(self.SYMS)
        syms["irq_entries_start"] = (0xffffffff81400140, 1000)
        with self.assertRaises(IrqrigError):
            hardoff.entry_points(syms)
        del syms["irq_entries_start"]
        with self.assertRaises(IrqrigError):
            hardoff.entry_points(syms)

    def test_plugin_spec(self):
        spec = hardoff.plugin_spec("/r/iftrack.json", {"entries": "/r/e.txt", "allow": "/r/a.txt"},
                                   icount_shift=3, landings=True, top=5, plugin="/p/lib.so")
        self.assertEqual(spec, "/p/lib.so,out=/r/iftrack.json,entries=/r/e.txt,top=5,"
                               "allow=/r/a.txt,icount_shift=3,landings=on")
        with self.assertRaises(IrqrigError):
            hardoff.plugin_spec("/r,x/iftrack.json", {"entries": "/r/e.txt"}, plugin="/p/lib.so")


class ListingTest(unittest.TestCase):
    def test_listing_without_vmlinux(self):
        d = hardoff.load(STOCK)
        text = hardoff.listing(d, hardoff.Symboliser(None), top=2, sites=3)
        self.assertIn("441.542 us", text)
        self.assertIn("interrupted 0xffffffff8136b9f3", text)
        sites = text.split("sites by max window:\n")[1].splitlines()
        self.assertEqual(len(sites), 3)

    def test_command_on_a_plugin_file(self):
        text = hardoff_cmd.main(STOCK, top=1, sites=1)
        self.assertIn("top 1 windows", text)
        with self.assertRaises(UsageError):
            hardoff_cmd.main(os.path.join(DATA, "no-such-results"))
        with self.assertRaises(UsageError) as cm:       # a file that is not the plugin's
            hardoff_cmd.main(os.path.join(DATA, "softsections-6.12.extra.json"))
        self.assertIn("not an iftrack result", str(cm.exception))

    def test_command_uses_the_module_sites_recorded_beside_the_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, hardoff.JSON_NAME)
            with open(ROGUE) as src, open(path, "w") as dst:
                dst.write(src.read())
            self.assertIn("VIOLATION", hardoff_cmd.main(path, top=20))
            with open(os.path.join(tmp, hardoff.MODULE_ALLOW_FILE), "w") as f:
                f.write("0xffffffffa0000002\n")
            self.assertNotIn("VIOLATION", hardoff_cmd.main(path, top=20))


class ScenarioKeysTest(unittest.TestCase):
    def parse(self, text):
        return scenario.parse(tomllib.loads(text), "t.toml")

    def test_defaults_and_keys(self):
        (p,) = self.parse('[trace]\nhardoff = true\nlandings = true\n')
        self.assertEqual(p["trace"], {"hardoff": True, "landings": True, "top": 20,
                                      "windows_log": False})
        (p,) = self.parse('')
        self.assertFalse(p["trace"]["hardoff"])

    def test_bad_combinations(self):
        with self.assertRaises(ScenarioError) as cm:
            self.parse('[trace]\nlandings = true\n')
        self.assertIn("trace.landings", str(cm.exception))
        with self.assertRaises(ScenarioError) as cm:
            self.parse('[trace]\nwindows_log = true\n')
        self.assertIn("trace.windows_log", str(cm.exception))
        with self.assertRaises(ScenarioError) as cm:
            self.parse('[qemu]\naccel = "kvm"\n[trace]\nhardoff = true\n')
        self.assertIn("trace.hardoff", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
