"""Scenario files (TOML): schema, validation, defaults and sweeps.

The schema is documented for people in scenarios/README.md; this module is
its executable form.  Every error names the file, the key and what is allowed.
"""

import copy
import itertools
import os
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
LOAD_KINDS = ["fork", "pipe", "timer", "ipi", "mem", "io"]
STEP_TYPES = ["cyclictest", "sensor", "shell", "load", "rmmod-insmod", "gdb-fire"]

SCHEMA = {
    "name": Field(str, doc="scenario name (default: the file name)"),
    "description": Field(str, ""),
    "variants": Field("str-list", ["default"],
                      doc='kernel variants, or ["default"] for the default set'),
    "repeat": Field(int, 1, lo=1, hi=100, doc="runs per variant and sweep point"),
    "timeout_s": Field(int, 600, lo=10, hi=7200, doc="limit for one boot, all steps"),
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
    },
    "sensor": {
        "enabled": Field(bool, False),
        "irq_mode": Field(str, "msix", choices=["msix", "msi", "intx"]),
        "mode": Field(str, "periodic", choices=SENSOR_MODES),
        "period_ns": Field(int, 1000000, lo=1000),
        "jitter_ns": Field(int, 0, lo=0, hi=2**32 - 1),
        "burst_count": Field(int, 1, lo=1, hi=2**32 - 1),
        "burst_gap_ns": Field(int, 1000, lo=0, hi=2**32 - 1),
        "seed": Field(int, 1, lo=0, hi=2**32 - 1),
        "deadline_ns": Field(int, 0, lo=0),
        "latch_depth": Field(int, 1, lo=1, hi=16),
        "spurious_every": Field(int, 0, lo=0, hi=2**32 - 1),
        "drop_every": Field(int, 0, lo=0, hi=2**32 - 1),
        "stuck_intx": Field(bool, False),
        # Without icount a late QEMU timer would raise its backlog at once
        # and overflow the latch: losses of the host's, not the guest's.
        "late_skip_ns": Field(int, 2000000, lo=0,
                              doc="the device counts (host-late) and does not raise a "
                                  "generator event QEMU runs more than this late; 0: never"),
    },
    "driver": {
        "load": Field(bool, False, doc="insmod the driver after boot"),
        "module": Field(str, "irq_sensor", choices=["irq_sensor", "irq_sensor_unsafe"],
                        doc="irq_sensor_unsafe: test-only soft-guarded build"),
        "nodelay": Field(bool, False, doc="ask for IRQF_NODELAY where the kernel has it"),
        "hog_length_us": Field(int, 0, lo=0, hi=1000000),
        "hog_period_us": Field(int, 10000, lo=1, hi=10000000),
        "hog_cpu": Field(int, -1, lo=-1, hi=7),
        "hog_line_lock": Field(bool, False,
                               doc="the hog holds an irq line lock (kernels with line "
                                   "locks: IO-APIC interrupts wait for it)"),
    },
    "gdb": {
        "check": Field(bool, False, doc="run the dynamic cli check during the run"),
        "sample_sites": Field(int, 0, lo=0, doc="0: all sites; N: a sample of N"),
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
        "hard_p99_us": Field(float, None, lo=0),
        "hard_max_us": Field(float, None, lo=0),
        "thread_p99_us": Field(float, None, lo=0),
        "user_p99_us": Field(float, None, lo=0),
        "violations_max": Field(int, None, lo=0, doc="gdb check violations, at most"),
        "hardoff_violations_max": Field(int, None, lo=0,
                                        doc="IF-tracker violations, at most (default 0 "
                                            "on kernels with a hard-site table)"),
        "hardoff_max_us": Field(float, None, lo=0,
                                doc="longest kernel hard-off window, at most"),
        "identical_repeats": Field(bool, False, doc="repeats must give byte-identical "
                                                    "device event logs (batch + icount)"),
        "expect_failure": Field(str, None, choices=["lockdep", "hang", "violation", "any"],
                                doc="negative scenario: this failure must be detected"),
    },
    "compare": {
        "threshold_pct": Field(float, 10.0, lo=0,
                               doc="latency change that counts as a regression"),
        "exact": Field(bool, False, doc="icount runs: any change is a regression"),
    },
}

STEP_SCHEMA = {
    "type": Field(str, None, choices=STEP_TYPES, required=True),
    "duration_s": Field(float, 5.0, lo=0.1, hi=86400),
    "timeout_s": Field(int, None, lo=1),
    # cyclictest
    "interval_us": Field(int, 1000, lo=50),
    "priority": Field(int, 90, lo=1, hi=99),
    "threads": Field(int, 0, lo=0, hi=8, doc="0: one per CPU"),
    # sensor: samples to read, and per-step overrides of [sensor] keys
    "samples": Field(int, 0, lo=0, doc="sensor-read: samples to read (0: duration)"),
    "contiguous": Field(bool, False, doc="sensor: no sequence gaps allowed"),
    "rt_priority": Field(int, 0, lo=0, hi=99,
                         doc="sensor: reader runs SCHED_FIFO at this priority (0: normal)"),
    "mode": Field(str, None, choices=SENSOR_MODES),
    "period_ns": Field(int, None, lo=1000),
    "jitter_ns": Field(int, None, lo=0, hi=2**32 - 1),
    "burst_count": Field(int, None, lo=1, hi=2**32 - 1),
    "burst_gap_ns": Field(int, None, lo=0, hi=2**32 - 1),
    "deadline_ns": Field(int, None, lo=0),
    "latch_depth": Field(int, None, lo=1, hi=16),
    "spurious_every": Field(int, None, lo=0, hi=2**32 - 1),
    "drop_every": Field(int, None, lo=0, hi=2**32 - 1),
    # shell
    "command": Field(str, None),
    "expect_rc": Field(int, 0),
    # load
    "generators": Field("str-list", [], choices=LOAD_KINDS),
    "background": Field(bool, False, doc="load: keep running during the next steps"),
    # rmmod-insmod
    "cycles": Field(int, 2, lo=1, hi=100),
    # gdb-fire
    "fires": Field(int, 10, lo=1, hi=1000, doc="gdb-fire: interrupts fired from the hog"),
}


def _err(path, key, msg):
    raise ScenarioError("%s: %s: %s" % (path, key, msg))


def _check(path, key, field, value):
    kind = field.kind
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


def load(path):
    """Parse and validate one scenario file; returns its sweep points."""
    if not os.path.exists(path):
        alt = os.path.join(paths.SCENARIOS, path if path.endswith(".toml")
                           else path + ".toml")
        if os.path.exists(alt):
            path = alt
        else:
            raise ScenarioError("%s: no such scenario file (looked in %s too)"
                                % (path, paths.SCENARIOS))
    try:
        with open(path, "rb") as f:
            raw = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError("%s: not valid TOML: %s" % (path, e)) from None
    return parse(raw, path)


def parse(raw, path="<scenario>"):
    raw = dict(raw)
    steps = raw.pop("steps", [])
    sweep = raw.pop("sweep", {})
    data = _apply(path, "", SCHEMA, raw)
    if data["name"] is None:
        data["name"] = os.path.splitext(os.path.basename(path))[0]
    for v in data["variants"]:
        if v != "default" and v not in variants.VARIANTS:
            _err(path, "variants", "%r is not a variant (known: default, %s)"
                 % (v, ", ".join(variants.VARIANTS)))
    if not isinstance(steps, list):
        _err(path, "steps", "must be an array of tables ([[steps]])")
    data["steps"] = []
    for i, step in enumerate(steps):
        st = _apply(path, "steps[%d]." % i, STEP_SCHEMA, step)
        if st["type"] == "shell" and not st["command"]:
            _err(path, "steps[%d].command" % i, "is required for a shell step")
        if st["type"] == "load" and not st["generators"]:
            _err(path, "steps[%d].generators" % i, "is required for a load step")
        data["steps"].append(st)
    if not isinstance(sweep, dict):
        _err(path, "sweep", "must be a table of dotted key = [values]")
    for key, values in sweep.items():
        field = _field(key)
        if field is None:
            _err(path, "sweep." + key, "is not a scenario key (e.g. driver.hog_length_us)")
        if not isinstance(values, list) or not values:
            _err(path, "sweep." + key, "must be a non-empty list of values")
        for v in values:
            _check(path, "sweep." + key, field, v)
    fire = any(s["type"] == "gdb-fire" for s in data["steps"])
    if data["trace"]["landings"] and not data["trace"]["hardoff"]:
        _err(path, "trace.landings", "needs trace.hardoff = true (the plugin records them)")
    if data["trace"]["hardoff"] and data["qemu"]["accel"] == "kvm":
        _err(path, "trace.hardoff", "needs TCG (a TCG plugin): accel must be tcg or auto")
    if data["batch"] and (fire or data["gdb"]["check"]):
        _err(path, "batch", "cannot be combined with gdb (the runner must talk to the guest)")
    if fire and data["gdb"]["check"]:
        _err(path, "gdb.check", "cannot be combined with a gdb-fire step (one gdbstub client)")
    if fire and not (data["driver"]["load"] and data["driver"]["hog_length_us"]):
        _err(path, "driver.hog_length_us", "a gdb-fire step needs the driver loaded with a hog")
    if (data["driver"]["load"] or fire or any(s["type"] == "sensor" for s in data["steps"])) \
            and not data["sensor"]["enabled"]:
        _err(path, "sensor.enabled", "must be true when the driver or a sensor step is used")
    points = []
    keys = list(sweep)
    for combo in itertools.product(*(sweep[k] for k in keys)) if keys else [()]:
        d = copy.deepcopy(data)
        for k, v in zip(keys, combo):
            _set(d, k, v)
        points.append(Scenario(path, d, dict(zip(keys, combo))))
    return points
