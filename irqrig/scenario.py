"""Scenario files (TOML): schema, validation, defaults and sweeps.

The schema is documented for people in scenarios/README.md; this module is
its executable form.  Every error names the file, the key and what is allowed.
"""

import copy
import itertools
import math
import os
import re
import tomllib

from irqrig import paths, variants
from irqrig.errors import ScenarioError


class Field:
    def __init__(self, kind, default=None, choices=None, lo=None, hi=None,
                 doc="", required=False):
        self.kind = kind            # bool, int, float, str, list, "str-list"
        self.default = default
        self.choices = choices
        self.lo = lo
        self.hi = hi
        self.doc = doc
        self.required = required


SENSOR_MODES = ["manual", "periodic", "poisson", "burst", "storm"]
LOAD_KINDS = ["fork", "pipe", "timer", "ipi", "mem", "io",
              "exec", "signal", "futex", "fault", "fsgs"]
STEP_TYPES = ["cyclictest", "sensor", "shell", "load", "rmmod-insmod", "gdb-fire",
              "campaign"]
# Where the campaigns look by default (DESIGN.md section 6).
CAMPAIGN_SELECT = ["entry", "arch/x86/kernel", "kernel/sched", "kernel/time", "kernel/irq",
                   "mm", "kernel/locking"]

U32_MAX = 2**32 - 1
# A generator interval or deadline longer than this is no scenario a run can
# finish (scenario timeouts are at most 2 h): refuse it rather than wait.
MAX_NS = 3600 * 10**9
MAX_TIMEOUT_S = 7200
# Sweeps multiply: every point is a boot per variant and repeat.
MAX_SWEEP_POINTS = 256


class Knob:
    """One run-time knob of the irq-sensor device: its scenario key (in
    [sensor], overridable per sensor step), sensor-read's option and the
    device's QOM property (qemu-device/irq-sensor.c's knob table).  The
    ranges are the scenario's; tests/test_scenario.py checks them against
    the device's and sensor-read's."""

    def __init__(self, key, field, option, qom):
        self.key = key
        self.field = field
        self.option = option
        self.qom = qom


SENSOR_KNOBS = [
    Knob("mode", Field(str, "periodic", choices=SENSOR_MODES), "--mode", "mode"),
    Knob("period_ns", Field(int, 1000000, lo=1000, hi=MAX_NS,
                            doc="period or Poisson mean"), "--period-ns", "period-ns"),
    Knob("jitter_ns", Field(int, 0, lo=0, hi=U32_MAX), "--jitter-ns", "jitter-ns"),
    Knob("burst_count", Field(int, 1, lo=1, hi=U32_MAX), "--burst-count", "burst-count"),
    Knob("burst_gap_ns", Field(int, 1000, lo=0, hi=U32_MAX), "--burst-gap-ns",
         "burst-gap-ns"),
    Knob("seed", Field(int, 1, lo=0, hi=U32_MAX), "--seed", "seed"),
    Knob("deadline_ns", Field(int, 0, lo=0, hi=MAX_NS), "--deadline-ns", "deadline-ns"),
    Knob("latch_depth", Field(int, 1, lo=1, hi=16), "--latch", "latch-depth"),
    Knob("spurious_every", Field(int, 0, lo=0, hi=U32_MAX), "--spurious-every",
         "spurious-every"),
    Knob("drop_every", Field(int, 0, lo=0, hi=U32_MAX), "--drop-every", "drop-every"),
]
KNOBS = {k.key: k for k in SENSOR_KNOBS}


def _step_override(field):
    """A sensor step's override of a [sensor] knob: same range, no default."""
    f = copy.copy(field)
    f.default = None
    return f


SCHEMA = {
    "name": Field(str, doc="scenario name (default: the file name)"),
    "description": Field(str, ""),
    "variants": Field("str-list", ["default"],
                      doc='kernel variants, or ["default"] for the default set'),
    "repeat": Field(int, 1, lo=1, hi=100, doc="runs per variant and sweep point"),
    "timeout_s": Field(int, 600, lo=10, hi=MAX_TIMEOUT_S,
                       doc="limit for one run, boot and all steps"),
    "boot_timeout_s": Field(int, 180, lo=5, hi=1800),
    "batch": Field(bool, False, doc="run all steps from the kernel command line, no console "
                                    "input: with icount, identical runs give identical logs"),
    "tier": Field(str, "full", choices=["ci", "full"],
                  doc="ci: part of the test command's short tier"),
    "qemu": {
        "cpus": Field(int, 2, lo=1, hi=8),
        "memory_mb": Field(int, 512, lo=128, hi=8192),
        "accel": Field(str, "tcg", choices=["tcg", "kvm", "auto"]),
        "icount_shift": Field(int, None, lo=0, hi=10,
                              doc="run with -icount shift=N,sleep=off"),
        "machine": Field(str, "q35", choices=["q35", "pc"]),
        "append": Field(str, "", doc="extra kernel command line"),
        "cpu": Field(str, "", doc="-cpu model (\"max\": FSGSBASE and the rest TCG has); "
                                  "empty: QEMU's default"),
        "one_insn_per_tb": Field(bool, False, doc="interrupts land between any two "
                                 "instructions, from the end of the boot on (the "
                                 "runner switches it on through QEMU's monitor)"),
        "one_insn_per_tb_boot": Field(bool, False, doc="one_insn_per_tb from the first "
                                      "instruction (the -debug kernel then boots in more "
                                      "than 10 minutes)"),
    },
    "campaign": {
        "select": Field("str-list", CAMPAIGN_SELECT,
                        doc="soft sections by subsystem, file or function (globs)"),
        "landings": Field(bool, False, doc="record where every interrupt lands (QEMU's "
                                           "interrupt log): the random campaign"),
        "seed": Field(int, 1, lo=0, hi=U32_MAX),
        "insns_per_section": Field(int, 32, lo=1, hi=4096,
                                   doc="exact: every instruction of a section up to this "
                                       "many, else a seeded sample of this many"),
        "sections_max": Field(int, 0, lo=0, hi=100000, doc="0: every selected section"),
        "tries": Field(int, 3, lo=1, hi=100, doc="exact: fires per instruction at most"),
        "target": Field(str, "", doc="exact: this address only (a reproducer)"),
        "window": Field(int, 128, lo=0, hi=100000,
                        doc="exact: breakpoints in the guest at once (0: every target; "
                            "TCG checks each one per block and single-steps its page)"),
    },
    "sensor": dict([
        ("enabled", Field(bool, False)),
        ("irq_mode", Field(str, "msix", choices=["msix", "msi", "intx"])),
    ] + [(k.key, k.field) for k in SENSOR_KNOBS] + [
        ("stuck_intx", Field(bool, False, doc="the device holds its INTx line asserted "
                                              "from the start (QOM stuck-intx)")),
        # Without icount a late QEMU timer would raise its backlog at once
        # and overflow the latch: losses of the host's, not the guest's.
        ("late_skip_ns", Field(int, 2000000, lo=0, hi=MAX_NS,
                               doc="the device counts (host-late) and does not raise a "
                                   "generator event QEMU runs more than this late; 0: never")),
    ]),
    "driver": {
        "load": Field(bool, False, doc="insmod the driver after boot"),
        "module": Field(str, "irq_sensor", choices=["irq_sensor", "irq_sensor_unsafe"],
                        doc="irq_sensor_unsafe: test-only soft-guarded build"),
        "nodelay": Field(bool, False, doc="ask for IRQF_NODELAY where the kernel has it"),
        "shared_irq": Field(bool, False, doc="request the interrupt IRQF_SHARED (needed by "
                                            "the debugfs reqfree loop)"),
        "hog_length_us": Field(int, 0, lo=0, hi=1000000),
        "hog_period_us": Field(int, 10000, lo=1, hi=10000000),
        "hog_cpu": Field(int, -1, lo=-1, hi=7),
        "hog_line_lock": Field(bool, False,
                               doc="the hog holds an irq line lock (kernels with line "
                                   "locks: IO-APIC interrupts wait for it)"),
    },
    "gdb": {
        "check": Field(bool, False, doc="run the dynamic cli check during the run"),
    },
    "trace": {
        "hardoff": Field(bool, False, doc="measure every hard-off window with the IF-tracker "
                                          "TCG plugin (qemu-device/iftrack.c)"),
        "landings": Field(bool, False, doc="with hardoff: record where each interrupt "
                                           "landed (interrupted RIP, per vector class)"),
        "top": Field(int, 20, lo=1, hi=1000, doc="with hardoff: longest windows kept"),
        "windows_log": Field(bool, False, doc="with hardoff: also log every window "
                                              "(iftrack-windows.jsonl; large)"),
    },
    "expect": {
        "console_clean": Field(bool, True, doc="no BUG/WARNING/Oops/lockdep/panic"),
        "cyclictest_max_us": Field(int, None, lo=1),
        "lost_max": Field(int, None, lo=0, doc="device samples lost, at most"),
        "host_stalls_excuse_losses": Field(bool, False, doc="lost samples whose every burst "
                                           "began in a host CPU freeze or vCPU stall and "
                                           "ended soon after it do not count "
                                           "(scenarios without icount)"),
        "hard_p99_us": Field(float, None, lo=0, hi=1e9),
        "hard_max_us": Field(float, None, lo=0, hi=1e9),
        "thread_p99_us": Field(float, None, lo=0, hi=1e9),
        "user_p99_us": Field(float, None, lo=0, hi=1e9),
        "violations_max": Field(int, None, lo=0, doc="gdb check violations, at most"),
        "hardoff_violations_max": Field(int, None, lo=0,
                                        doc="IF-tracker violations, at most (default 0 "
                                            "on kernels with a hard-site table)"),
        "hardoff_max_us": Field(float, None, lo=0, hi=1e9,
                                doc="longest kernel hard-off window, at most"),
        "identical_repeats": Field(bool, False, doc="repeats must give byte-identical "
                                                    "device event logs (batch + icount)"),
        "expect_failure": Field(str, None, choices=["lockdep", "hang", "violation", "finding",
                                                     "any"],
                                doc="negative scenario: this failure must be detected"),
        "findings_max": Field(int, None, lo=0, doc="campaign findings, at most"),
        "finding_in": Field(str, None, doc="a campaign finding must be attributed to a "
                                           "section whose function, a function inlined at "
                                           "its start, or the function the interrupt "
                                           "landed in matches this glob"),
    },
    "compare": {
        "threshold_pct": Field(float, 10.0, lo=0, hi=10000,
                               doc="latency change that counts as a regression"),
        "exact": Field(bool, False, doc="icount runs: any change is a regression"),
    },
}

STEP_SCHEMA = dict([
    ("type", Field(str, None, choices=STEP_TYPES, required=True)),
    ("duration_s", Field(float, 5.0, lo=0.1, hi=86400)),
    ("timeout_s", Field(int, None, lo=1, hi=MAX_TIMEOUT_S)),
    # cyclictest
    ("interval_us", Field(int, 1000, lo=50, hi=1000000)),
    ("priority", Field(int, 90, lo=1, hi=99)),
    ("threads", Field(int, 0, lo=0, hi=8, doc="0: one per CPU")),
    # sensor: samples to read, and per-step overrides of [sensor] knobs
    ("samples", Field(int, 0, lo=0, hi=10**9,
                      doc="sensor-read: samples to read (0: duration)")),
    ("contiguous", Field(bool, False, doc="sensor: no sequence gaps allowed")),
    ("rt_priority", Field(int, 0, lo=0, hi=99,
                          doc="sensor: reader runs SCHED_FIFO at this priority (0: normal)")),
] + [(k.key, _step_override(k.field)) for k in SENSOR_KNOBS] + [
    # shell
    ("command", Field(str, None)),
    ("expect_rc", Field(int, 0, lo=0, hi=255)),
    # load
    ("generators", Field("str-list", [], choices=LOAD_KINDS)),
    ("background", Field(bool, False, doc="load: keep running during the next steps")),
    # rmmod-insmod
    ("cycles", Field(int, 2, lo=1, hi=100)),
    # campaign
    ("fire_s", Field(float, None, lo=1, hi=86400,
                     doc="campaign: host seconds of firing at most (default: duration_s)")),
    # gdb-fire
    ("fires", Field(int, 10, lo=1, hi=1000, doc="gdb-fire: interrupts fired from the hog")),
])

# The keys each step type takes (besides `type`); any other is refused.
STEP_KEYS = {
    "cyclictest": {"duration_s", "timeout_s", "interval_us", "priority", "threads"},
    "sensor": {"duration_s", "timeout_s", "samples", "contiguous", "rt_priority"}
    | set(KNOBS),
    "shell": {"command", "expect_rc", "timeout_s"},
    "load": {"generators", "background", "duration_s", "timeout_s"},
    "rmmod-insmod": {"cycles", "timeout_s"},
    "gdb-fire": {"fires", "duration_s", "timeout_s"},
    "campaign": {"duration_s", "fire_s", "timeout_s"},
}

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def _err(path, key, msg):
    raise ScenarioError("%s: %s: %s" % (path, key, msg))


def _check(path, key, field, value):
    kind = field.kind
    if value is None and field.default is None and not field.required:
        return None         # "not set" (TOML has no null: only a parsed scenario has it)
    if kind == "str-list":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            _err(path, key, "must be a list of strings, got %r" % (value,))
        if field.choices:
            for v in value:
                if v not in field.choices:
                    _err(path, key, "%r is not one of %s" % (v, ", ".join(field.choices)))
        return value
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if (kind is int and isinstance(value, bool)) or not isinstance(value, kind):
        _err(path, key, "must be %s, got %r" % (kind.__name__, value))
    if kind is float and not math.isfinite(value):
        _err(path, key, "must be a finite number, got %r" % value)
    if field.choices and value not in field.choices:
        _err(path, key, "%r is not one of %s" % (value, ", ".join(field.choices)))
    if field.lo is not None and value < field.lo:
        _err(path, key, "%r is below the minimum %r" % (value, field.lo))
    if field.hi is not None and value > field.hi:
        _err(path, key, "%r is above the maximum %r" % (value, field.hi))
    return value


def _apply(path, prefix, schema, data):
    if not isinstance(data, dict):
        _err(path, prefix or "(top)", "must be a table")
    out = {}
    for key, value in data.items():
        full = prefix + key
        if key not in schema:
            _err(path, full, "unknown key (allowed here: %s)" % ", ".join(sorted(schema)))
        if isinstance(schema[key], dict):
            out[key] = _apply(path, full + ".", schema[key], value)
        else:
            out[key] = _check(path, full, schema[key], value)
    for key, field in schema.items():
        if key in out:
            continue
        if isinstance(field, dict):
            out[key] = _apply(path, prefix + key + ".", field, {})
        elif field.required:
            _err(path, prefix + key, "is required")
        else:
            out[key] = copy.deepcopy(field.default)
    return out


def _get(d, dotted):
    for part in dotted.split("."):
        d = d[part]
    return d


def _set(d, dotted, value):
    parts = dotted.split(".")
    for part in parts[:-1]:
        d = d[part]
    d[parts[-1]] = value


def _field(dotted):
    s = SCHEMA
    for part in dotted.split("."):
        if not isinstance(s, dict) or part not in s:
            return None
        s = s[part]
    return s if isinstance(s, Field) else None


class Scenario:
    def __init__(self, path, data, params=None):
        self.path = path
        self.data = data
        self.params = params or {}      # the sweep point, {dotted key: value}

    @property
    def name(self):
        return self.data["name"]

    @property
    def label(self):
        """Name plus sweep point, for results and summaries."""
        if not self.params:
            return self.name
        return self.name + "[" + ",".join("%s=%s" % (k.split(".")[-1], v)
                                         for k, v in self.params.items()) + "]"

    def variants(self):
        names = []
        for v in self.data["variants"]:
            names += variants.DEFAULT_VARIANTS if v == "default" else [v]
        return list(dict.fromkeys(names))

    def __getitem__(self, key):
        return self.data[key]


def _read_toml(path, what):
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError("%s: not valid TOML: %s" % (path, e)) from None
    except UnicodeDecodeError as e:
        raise ScenarioError("%s: not UTF-8 text (byte %d): a %s file is TOML"
                            % (path, e.start, what)) from None
    except OSError as e:
        raise ScenarioError("%s: cannot read: %s" % (path, e.strerror)) from None


def find(name, subdir=""):
    """A scenario (or suite) file by path or by name under scenarios/."""
    if not isinstance(name, str) or not name:
        raise ScenarioError("%r: a scenario is named by a non-empty string" % (name,))
    if os.path.isfile(name):
        return name
    base = os.path.join(paths.SCENARIOS, subdir)
    alt = os.path.join(base, name if name.endswith(".toml") else name + ".toml")
    if os.path.isfile(alt):
        return alt
    raise ScenarioError("%s: no such %s file (looked in %s too)"
                        % (name, "suite" if subdir else "scenario", base))


def load(path):
    """Parse and validate one scenario file; returns its sweep points."""
    path = find(path)
    return parse(_read_toml(path, "scenario"), path)


def _steps(path, steps):
    if not isinstance(steps, list):
        _err(path, "steps", "must be an array of tables ([[steps]])")
    out = []
    for i, step in enumerate(steps):
        where = "steps[%d]" % i
        if not isinstance(step, dict):
            _err(path, where, "must be a table")
        kind = step.get("type")
        if kind in STEP_KEYS:
            extra = sorted(set(step) - STEP_KEYS[kind] - {"type"})
            if extra:
                _err(path, "%s.%s" % (where, extra[0]),
                     "is not a key of a %s step (allowed: %s)"
                     % (kind, ", ".join(sorted(STEP_KEYS[kind]))))
        st = _apply(path, where + ".", STEP_SCHEMA, step)
        if st["type"] == "shell" and not st["command"]:
            _err(path, where + ".command", "is required for a shell step")
        if st["type"] == "load" and not st["generators"]:
            _err(path, where + ".generators", "is required for a load step")
        out.append(st)
    return out


def _sweep(path, sweep):
    if not isinstance(sweep, dict):
        _err(path, "sweep", "must be a table of dotted key = [values]")
    points = 1
    for key, values in sweep.items():
        field = _field(key)
        if field is None or key in ("name", "variants"):
            _err(path, "sweep." + key, "is not a scenario key that can be swept "
                 "(e.g. driver.hog_length_us)")
        if not isinstance(values, list) or not values:
            _err(path, "sweep." + key, "must be a non-empty list of values")
        for v in values:
            _check(path, "sweep." + key, field, v)
        points *= len(values)
    if points > MAX_SWEEP_POINTS:
        _err(path, "sweep", "%d points (each a boot per variant and repeat); at most %d"
             % (points, MAX_SWEEP_POINTS))
    return sweep


def _measured(path, data):
    """Refuse expectations with nothing to measure: they would pass unseen."""
    exp, steps = data["expect"], data["steps"]
    kinds = {s["type"] for s in steps}
    reads = kinds & {"sensor", "gdb-fire"}
    needs = [
        ("cyclictest_max_us", "cyclictest" in kinds, "a cyclictest step"),
        ("violations_max", data["gdb"]["check"], "gdb.check = true"),
        ("hardoff_violations_max", data["trace"]["hardoff"], "trace.hardoff = true"),
        ("hardoff_max_us", data["trace"]["hardoff"], "trace.hardoff = true"),
        ("lost_max", data["sensor"]["enabled"], "sensor.enabled = true"),
        ("host_stalls_excuse_losses", exp["lost_max"] is not None, "lost_max"),
        ("identical_repeats", data["repeat"] > 1 and data["sensor"]["enabled"],
         "repeat >= 2 and sensor.enabled = true"),
    ] + [(k, bool(reads), "a sensor or gdb-fire step")
         for k in ("hard_p99_us", "hard_max_us", "thread_p99_us")] + [
        ("user_p99_us", "sensor" in kinds, "a sensor step (user space acks)")]
    for key, ok, what in needs:
        if exp[key] is not None and exp[key] is not False and not ok:
            _err(path, "expect." + key, "has nothing to measure: needs %s" % what)
    campaign = data["campaign"]["landings"] or "campaign" in kinds
    for key in ("findings_max", "finding_in"):
        if exp[key] is not None and not campaign:
            _err(path, "expect." + key, "has nothing to measure: needs a campaign "
                 "(campaign.landings = true or a campaign step)")
    if exp["expect_failure"] == "finding" and not campaign:
        _err(path, "expect.expect_failure", "\"finding\" needs a campaign")
    if exp["expect_failure"] == "violation" and not (data["gdb"]["check"]
                                                     or data["trace"]["hardoff"]):
        _err(path, "expect.expect_failure",
             "\"violation\" needs gdb.check = true or trace.hardoff = true")


# [campaign] keys and what they need to have any effect: every key a
# campaign (exact: a campaign step; random: campaign.landings), some only
# the exact one.
CAMPAIGN_EXACT_KEYS = ("target", "tries", "insns_per_section", "window")


def _effective(path, data):
    """Refuse settings that nothing would use: a [campaign] key without a
    campaign, an exact-mode key without a campaign step, a [trace] key
    without trace.hardoff (they would be ignored unseen).  A key set to
    its default (or not given) is no setting."""
    def changed(table):
        schema = SCHEMA[table]
        return {k for k, f in schema.items() if data[table][k] != f.default}
    exact = any(s["type"] == "campaign" for s in data["steps"])
    random_ = data["campaign"]["landings"]
    for key in sorted(changed("campaign") - {"landings"}):
        if key in CAMPAIGN_EXACT_KEYS and not exact:
            _err(path, "campaign." + key, "has no effect: needs a campaign step (exact "
                 "mode)%s" % ("; campaign.landings is the random campaign"
                              if random_ else ""))
        if not (exact or random_):
            _err(path, "campaign." + key, "has no effect: needs a campaign "
                 "(campaign.landings = true or a campaign step)")
    if not data["trace"]["hardoff"]:
        for key in sorted(changed("trace") - {"hardoff"}):
            _err(path, "trace." + key, "needs trace.hardoff = true (the plugin records it)")


def check(point, prefix=""):
    """Validate an already-parsed scenario point again (after a change to
    it, e.g. --reproduce's): a ScenarioError names what is wrong."""
    raw = copy.deepcopy(point.data)
    raw["steps"] = [{k: v for k, v in st.items() if k == "type" or k in STEP_KEYS[st["type"]]}
                    for st in raw["steps"]]        # parsing filled in every step key
    try:
        parse(raw, point.path)
    except ScenarioError as e:
        raise ScenarioError(prefix + str(e)) from None


def parse(raw, path="<scenario>"):
    raw = dict(raw)
    steps = raw.pop("steps", [])
    sweep = raw.pop("sweep", {})
    data = _apply(path, "", SCHEMA, raw)
    if data["name"] is None:
        data["name"] = os.path.splitext(os.path.basename(path))[0]
    if not NAME_RE.match(data["name"]):
        _err(path, "name", "%r: 1-64 letters, digits, '_', '.' or '-', not starting with "
             "a punctuation mark (it names the results directory)" % data["name"])
    for v in data["variants"]:
        if v != "default" and v not in variants.VARIANTS:
            _err(path, "variants", "%r is not a variant (known: default, %s)"
                 % (v, ", ".join(variants.VARIANTS)))
    if not data["variants"]:
        _err(path, "variants", "must name at least one variant")
    data["steps"] = _steps(path, steps)
    sweep = _sweep(path, sweep)
    points = []
    keys = list(sweep)
    for combo in itertools.product(*(sweep[k] for k in keys)) if keys else [()]:
        d = copy.deepcopy(data)
        for k, v in zip(keys, combo):
            _set(d, k, v)
        params = dict(zip(keys, combo))
        try:
            _consistent(path, d)        # every point: a sweep can break a rule
        except ScenarioError as e:
            if not params:
                raise
            raise ScenarioError("%s (sweep point %s)" % (e, ", ".join(
                "%s = %r" % kv for kv in params.items()))) from None
        points.append(Scenario(path, d, params))
    return points


def _consistent(path, data):
    """The rules between keys, on one (swept) scenario point."""
    fire = any(s["type"] in ("gdb-fire", "campaign") for s in data["steps"])
    for i, st in enumerate(data["steps"]):      # (a step's timeout_s is only a bound)
        if st["duration_s"] > data["timeout_s"]:
            _err(path, "steps[%d].duration_s" % i, "%s s is longer than the scenario's "
                 "timeout_s (%d s), which bounds the whole run"
                 % (st["duration_s"], data["timeout_s"]))
    _effective(path, data)
    if data["trace"]["hardoff"] and data["qemu"]["accel"] == "kvm":
        _err(path, "trace.hardoff", "needs TCG (a TCG plugin): accel must be tcg or auto")
    if data["batch"] and (fire or data["gdb"]["check"]):
        _err(path, "batch", "cannot be combined with gdb (the runner must talk to the guest)")
    if fire and data["gdb"]["check"]:
        _err(path, "gdb.check", "cannot be combined with a gdb-fire step (one gdbstub client)")
    if any(s["type"] == "gdb-fire" for s in data["steps"]) and \
            not (data["driver"]["load"] and data["driver"]["hog_length_us"]):
        _err(path, "driver.hog_length_us", "a gdb-fire step needs the driver loaded with a hog")
    if any(s["type"] == "campaign" for s in data["steps"]) and not data["driver"]["load"]:
        _err(path, "driver.load", "a campaign step fires the sensor: load the driver")
    if (data["driver"]["load"] or fire or any(s["type"] == "sensor" for s in data["steps"])) \
            and not data["sensor"]["enabled"]:
        _err(path, "sensor.enabled", "must be true when the driver or a sensor step is used")
    if data["campaign"]["target"]:
        try:
            int(data["campaign"]["target"], 16)
        except ValueError:
            _err(path, "campaign.target", "%r is not a hex address" % data["campaign"]["target"])
    if any(s["type"] in ("sensor", "rmmod-insmod") for s in data["steps"]) \
            and not data["driver"]["load"]:
        _err(path, "driver.load", "must be true for sensor and rmmod-insmod steps")
    _measured(path, data)


# -- suites ---------------------------------------------------------------

SUITE_KEYS = ("description", "scenarios", "variants", "inventory")


def _variant_list(path, data, key):
    names = data.get(key)
    if names is None:
        return None
    if not isinstance(names, list) or not names or \
            not all(isinstance(n, str) for n in names):
        raise ScenarioError("%s: %s: must be a non-empty list of variant names"
                            % (path, key))
    for n in names:
        if n not in variants.VARIANTS:
            raise ScenarioError("%s: %s: unknown variant %r (known: %s)"
                                % (path, key, n, ", ".join(variants.VARIANTS)))
    return names


def load_suite(name, tier="full"):
    """A suite file (scenarios/suites/<name>.toml): its scenario points and
    options {"points", "variants", "inventory"} (None when not given).

        description = "..."
        scenarios = ["smoke", "sensor-latency", ...]
        variants = ["6.12-rt", ...]     # optional: only these of each scenario's
        inventory = ["6.12-rt", ...]    # optional: also the static cli table
    """
    path = find(name, "suites")
    data = _read_toml(path, "suite")
    unknown = set(data) - set(SUITE_KEYS)
    if unknown:
        raise ScenarioError("%s: unknown key %s (allowed: %s)"
                            % (path, ", ".join(sorted(unknown)), ", ".join(SUITE_KEYS)))
    names = data.get("scenarios")
    if not isinstance(names, list) or not names or \
            not all(isinstance(n, str) and n for n in names):
        raise ScenarioError("%s: scenarios: must be a non-empty list of scenario names "
                            "(strings)" % path)
    points = []
    for n in names:
        try:
            found = load(n)
        except ScenarioError as e:
            raise ScenarioError("%s: scenarios: %s" % (path, e)) from None
        points += [p for p in found if tier != "ci" or p["tier"] == "ci"]
    if not points:
        raise ScenarioError("%s: no scenario of tier %r" % (path, tier))
    return {"points": points, "variants": _variant_list(path, data, "variants"),
            "inventory": _variant_list(path, data, "inventory")}
