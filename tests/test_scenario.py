"""Scenario schema: defaults, validation errors that name file and key, sweeps."""

import glob
import os
import re
import tempfile
import unittest

from irqrig import paths, scenario
from irqrig.errors import ScenarioError


def parse(text, name="t.toml"):
    import tomllib
    return scenario.parse(tomllib.loads(text), name)


def irqsoft_stats_header(version):
    """The column names of irqsoft_stats once the whole series is applied:
    the last header the series' patches write, in series order."""
    pdir = os.path.join(paths.KERNEL_PATCHES, version)
    with open(os.path.join(pdir, "series")) as f:
        names = [n.strip() for n in f if n.strip() and not n.startswith("#")]
    header = None
    for n in names:
        with open(os.path.join(pdir, n)) as f:
            for m in re.finditer(r'^\+\s*seq_puts\(m, "(cpu logged [^"]*?)\\n"\);', f.read(), re.M):
                header = m.group(1).split()
    return header


class ScenarioTest(unittest.TestCase):
    def test_defaults(self):
        (p,) = parse('variants = ["6.12-rt"]\n[[steps]]\ntype = "cyclictest"\n')
        self.assertEqual(p.name, "t")
        self.assertEqual(p["qemu"]["cpus"], 2)
        self.assertEqual(p["qemu"]["accel"], "tcg")
        self.assertIsNone(p["qemu"]["icount_shift"])
        self.assertEqual(p["steps"][0]["duration_s"], 5.0)
        self.assertEqual(p.variants(), ["6.12-rt"])

    def test_default_variants_expand(self):
        (p,) = parse('variants = ["default", "6.12-rt"]\n')
        self.assertIn("6.12-rt", p.variants())
        self.assertEqual(len(p.variants()), len(set(p.variants())))

    def test_icount_smp_skips_kernels_that_cannot_boot_so(self):
        from irqrig import suite
        (p,) = parse('variants = ["6.12-rt", "6.1-rt"]\n[qemu]\nicount_shift = 0\n')
        todo, skipped = suite.plan([p])
        self.assertEqual([v for _, v, _ in todo], ["6.12-rt"])
        self.assertEqual([s["variant"] for s in skipped], ["6.1-rt"])
        self.assertIn("icount", skipped[0]["reason"])
        (p,) = parse('variants = ["6.1-rt"]\n[qemu]\nicount_shift = 0\ncpus = 1\n')
        self.assertEqual(suite.plan([p]), ([(p, "6.1-rt", 0)], []))

    def assertError(self, text, *fragments):
        with self.assertRaises(ScenarioError) as cm:
            parse(text, "bad.toml")
        msg = str(cm.exception)
        self.assertTrue(msg.startswith("bad.toml: "), msg)
        for f in fragments:
            self.assertIn(f, msg)

    def test_unknown_key_is_named(self):
        self.assertError("[qemu]\ncpus_ = 2\n", "qemu.cpus_", "unknown key", "cpus")

    def test_wrong_type(self):
        self.assertError('[qemu]\ncpus = "two"\n', "qemu.cpus", "must be int")

    def test_bool_is_not_int(self):
        self.assertError("[qemu]\ncpus = true\n", "qemu.cpus")

    def test_choice(self):
        self.assertError('[qemu]\naccel = "hvf"\n', "qemu.accel", "tcg, kvm, auto")

    def test_range(self):
        self.assertError("[sensor]\nperiod_ns = 10\n", "sensor.period_ns", "minimum")

    def test_unknown_variant(self):
        self.assertError('variants = ["5.4-rt"]\n', "variants", "5.4-rt")

    def test_step_type_required(self):
        self.assertError("[[steps]]\nduration_s = 1\n", "steps[0].type", "required")

    def test_shell_step_needs_command(self):
        self.assertError('[[steps]]\ntype = "shell"\n', "steps[0].command")

    def test_driver_needs_sensor(self):
        self.assertError("[driver]\nload = true\n", "sensor.enabled")

    def test_sweep(self):
        points = parse('[sensor]\nenabled = true\n[driver]\nload = true\n'
                       '[sweep]\n"driver.hog_length_us" = [0, 500]\n'
                       '"sensor.period_ns" = [100000, 200000]\n')
        self.assertEqual(len(points), 4)
        self.assertEqual(points[1]["driver"]["hog_length_us"], 0)
        self.assertEqual(points[1]["sensor"]["period_ns"], 200000)
        self.assertEqual(points[3].label, "t[hog_length_us=500,period_ns=200000]")

    def test_sweep_checks_values(self):
        self.assertError('[sweep]\n"sensor.latch_depth" = [1, 99]\n', "sweep.sensor.latch_depth")
        self.assertError('[sweep]\n"qemu.nope" = [1]\n', "sweep.qemu.nope")

    def test_bad_toml_names_file(self):
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write("variants = [\n")
        try:
            with self.assertRaises(ScenarioError) as cm:
                scenario.load(f.name)
            self.assertIn(f.name, str(cm.exception))
            self.assertIn("not valid TOML", str(cm.exception))
        finally:
            os.unlink(f.name)

    def test_missing_file(self):
        with self.assertRaises(ScenarioError) as cm:
            scenario.load("no-such-scenario")
        self.assertIn("no such scenario", str(cm.exception))

    def test_shipped_scenarios_are_valid(self):
        files = glob.glob(os.path.join(paths.SCENARIOS, "*.toml"))
        self.assertTrue(files)
        for f in files:
            self.assertTrue(scenario.load(f), f)

    def test_irqsoft_stats_columns_are_read_by_name(self):
        """A scenario reads /sys/kernel/debug/irqsoft_stats by column name
        (awk -v col=NAME), and NAME is a column of the series of each
        variant it boots: counting by position read exit_replays as
        "lines" once patch 3 added that column."""
        from irqrig import variants
        checked = 0
        for f in glob.glob(os.path.join(paths.SCENARIOS, "*.toml")):
            for p in scenario.load(f):
                for st in p["steps"]:
                    cmd = st.get("command") or ""
                    if "irqsoft_stats" not in cmd or cmd.startswith("cat "):
                        continue
                    cols = re.findall(r"awk -v col=(\w+) ", cmd)
                    self.assertTrue(cols, "%s: irqsoft_stats read by position: %s" % (f, cmd))
                    for v in p.variants():
                        header = irqsoft_stats_header(variants.get(v).version)
                        for col in cols:
                            self.assertIn(col, header, "%s on %s" % (f, v))
                            checked += 1
        self.assertTrue(checked)

    def test_a_parsed_point_checks_again(self):
        """scenario.check (used on --reproduce's replay) accepts what parse
        made of every shipped scenario, and a campaign scenario's replay."""
        from irqrig import campaign
        rep = {"address": "ffffffff81000000", "seed": 3, "variant": "6.12-rt"}
        for f in glob.glob(os.path.join(paths.SCENARIOS, "*.toml")):
            for p in scenario.load(f):
                scenario.check(p)
                if os.path.basename(f).startswith("campaign-"):
                    scenario.check(campaign.reproduce(p, dict(rep)))
        # a replay on a batch scenario cannot work: gdb needs the console
        (p,) = scenario.load("icount-determinism")
        with self.assertRaises(ScenarioError):
            scenario.check(campaign.reproduce(p, dict(rep)))
        (p,) = parse('[sensor]\nenabled = true\n[driver]\nload = true\n'
                     '[[steps]]\ntype = "campaign"\n')
        p.data["gdb"]["check"] = True
        with self.assertRaises(ScenarioError) as cm:
            scenario.check(p, "--reproduce x: ")
        self.assertTrue(str(cm.exception).startswith("--reproduce x: t.toml: gdb.check"))

    def test_settings_that_would_be_ignored_are_refused(self):
        self.assertError('[campaign]\ntarget = "ff"\n', "campaign.target", "no effect")
        self.assertError('[campaign]\nselect = ["mm"]\n', "campaign.select", "no effect")
        self.assertError('[campaign]\nlandings = true\ntries = 4\n', "campaign.tries",
                         "campaign step")
        self.assertError('[trace]\ntop = 3\n', "trace.top", "trace.hardoff")
        self.assertError('[campaign]\nlandings = true\nwindow = 0\n', "campaign.window",
                         "campaign step")
        # set to its default, a key is no setting
        parse('[campaign]\nseed = 1\n[trace]\nlandings = false\n')
        (p,) = parse('[campaign]\nlandings = true\nseed = 9\n')
        self.assertEqual(p["campaign"]["seed"], 9)

    def test_campaign_fire_s_belongs_to_campaign_steps(self):
        exact = ('[sensor]\nenabled = true\nmode = "manual"\n[driver]\nload = true\n'
                 '[campaign]\nwindow = 0\n[[steps]]\ntype = "campaign"\nduration_s = 60\n')
        (p,) = parse(exact)
        self.assertIsNone(p["steps"][0]["fire_s"], "unset: the firing lasts duration_s")
        self.assertEqual(p["campaign"]["window"], 0)
        (p,) = parse(exact + "fire_s = 90\n")
        self.assertEqual(p["steps"][0]["fire_s"], 90.0)
        self.assertError('[[steps]]\ntype = "sensor"\nfire_s = 9\n', "steps[0]", "fire_s")

    def test_every_sweep_point_is_checked(self):
        self.assertError('[sensor]\nenabled = true\n[driver]\nload = true\n'
                         '[[steps]]\ntype = "sensor"\n[sweep]\n"driver.load" = [true, false]\n',
                         "driver.load", "(sweep point driver.load = False)")
        self.assertError('[[steps]]\ntype = "cyclictest"\nduration_s = 100\n'
                         '[sweep]\n"timeout_s" = [600, 60]\n', "steps[0].duration_s",
                         "timeout_s = 60")


class SuiteTest(unittest.TestCase):
    def load(self, text):
        from irqrig import suite
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write(text)
        try:
            return scenario.load_suite(f.name)
        finally:
            os.unlink(f.name)

    def test_variants_keep_only_those_of_each_scenario(self):
        from irqrig import suite
        s = self.load('scenarios = ["smoke", "kthread-defer"]\n'
                      'variants = ["6.12-rt", "6.12-rt-irqsoft"]\n')
        todo, _ = suite.plan(s["points"], None, s["variants"])
        got = sorted((p.name, v) for p, v, _ in todo)
        # kthread-defer does not list 6.12-rt: the suite does not add it
        self.assertEqual(got, [("kthread-defer", "6.12-rt-irqsoft"),
                               ("smoke", "6.12-rt"), ("smoke", "6.12-rt-irqsoft")])
        self.assertIsNone(s["inventory"])

    def test_without_variants_every_scenario_variant_runs(self):
        from irqrig import suite
        s = self.load('scenarios = ["kthread-defer"]\n')
        todo, _ = suite.plan(s["points"], None, s["variants"])
        self.assertEqual(len(todo), len(s["points"][0].variants()))

    def test_bad_variant_is_named(self):
        for text, frag in (('scenarios = ["smoke"]\ninventory = ["6.12-xx"]\n', "6.12-xx"),
                           ('scenarios = ["smoke"]\nvariants = []\n', "non-empty"),
                           ('scenarios = ["smoke"]\nvariant = ["6.12-rt"]\n', "unknown key")):
            with self.assertRaises(ScenarioError) as cm:
                self.load(text)
            self.assertIn(frag, str(cm.exception))

    def test_shipped_suites_are_valid(self):
        from irqrig import suite
        files = glob.glob(os.path.join(paths.SCENARIOS, "suites", "*.toml"))
        self.assertTrue(files)
        for f in files:
            self.assertTrue(scenario.load_suite(f)["points"], f)


class ReadmeTest(unittest.TestCase):
    def test_every_key_documented(self):
        with open(os.path.join(paths.SCENARIOS, "README.md")) as f:
            text = f.read()
        keys = []
        for k, v in scenario.SCHEMA.items():
            keys += list(v) if isinstance(v, dict) else [k]
        keys += list(scenario.STEP_SCHEMA)
        missing = [k for k in keys if "`%s`" % k not in text]
        self.assertEqual(missing, [], "undocumented scenario keys")


if __name__ == "__main__":
    unittest.main()


class KnobTableTest(unittest.TestCase):
    """scenario.SENSOR_KNOBS against the device's knob table and
    sensor-read's options: one knob, one entry, ranges inside the device's."""

    LIMITS = {"UINT64_MAX": 2**64 - 1, "UINT32_MAX": 2**32 - 1,
              "IRQ_SENSOR_LATCH_MAX": 16, "IRQ_SENSOR_MODE_MAX": 4}

    def device_knobs(self):
        import re
        with open(os.path.join(paths.QEMU_DEVICE, "irq-sensor.c")) as f:
            text = f.read()
        out = {}
        for m in re.finditer(r'\[KNOB_\w+\] = \{\s*"([\w-]+)", KT_(\w+), (\w+), (\w+),', text):
            name, kind, lo, hi = m.groups()
            out[name] = (kind, int(self.LIMITS.get(lo, lo)), int(self.LIMITS.get(hi, hi)))
        return out

    def test_every_scenario_knob_is_a_device_knob_in_range(self):
        dev = self.device_knobs()
        self.assertIn("period-ns", dev)
        for k in scenario.SENSOR_KNOBS:
            self.assertIn(k.qom, dev, k.key)
            kind, lo, hi = dev[k.qom]
            if kind == "MODE":
                self.assertEqual(len(k.field.choices), hi + 1)
                continue
            self.assertGreaterEqual(k.field.lo, lo, k.key)
            self.assertLessEqual(k.field.hi, hi, k.key)
            self.assertEqual(k.field.kind, int)

    def test_every_knob_has_its_sensor_read_option(self):
        with open(os.path.join(paths.GUEST_DRIVER, "tools", "sensor-read.c")) as f:
            text = f.read()
        for k in scenario.SENSOR_KNOBS:
            self.assertIn('"%s"' % k.option.lstrip("-"), text, k.key)

    def test_step_overrides_are_the_knobs(self):
        for k in scenario.SENSOR_KNOBS:
            self.assertIn(k.key, scenario.STEP_SCHEMA)
            self.assertIsNone(scenario.STEP_SCHEMA[k.key].default)
            self.assertIn(k.key, scenario.STEP_KEYS["sensor"])


class TierTest(unittest.TestCase):
    """tier = "ci" means what scenarios/README.md says: the test command
    runs it (tests/e2e/ names each such scenario)."""

    def test_every_ci_scenario_runs_in_the_test_command(self):
        e2e = ""
        for f in glob.glob(os.path.join(paths.ROOT, "tests", "e2e", "test_*.py")):
            with open(f) as fh:
                e2e += fh.read()
        ci = [p.name for f in glob.glob(os.path.join(paths.SCENARIOS, "*.toml"))
              for p in scenario.load(f) if p["tier"] == "ci"]
        self.assertTrue(ci)
        for name in ci:
            self.assertIn('run_file("%s"' % name, e2e, name)
