"""Run scenario points over variants with progress; suites of scenarios.

A suite file (scenarios/suites/<name>.toml) lists scenario files:

    description = "..."
    scenarios = ["smoke", "sensor-latency", ...]
    variants = ["6.12-rt", ...]     # optional: only these of each scenario's
    inventory = ["6.12-rt", ...]    # optional: also the static cli table
"""

import os
import time
import tomllib

from irqrig import build, paths, results, run, scenario, variants
from irqrig.errors import ScenarioError
from irqrig.util import log


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
    """The suite's scenario points and its options: {"points", "variants",
    "inventory"} (the two lists None when the file has none)."""
    path = name if name.endswith(".toml") else os.path.join(
        paths.SCENARIOS, "suites", name + ".toml")
    if not os.path.exists(path):
        raise ScenarioError("%s: no such suite" % path)
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError("%s: not valid TOML: %s" % (path, e)) from None
    unknown = set(data) - set(SUITE_KEYS)
    if unknown:
        raise ScenarioError("%s: unknown key %s (allowed: %s)"
                            % (path, ", ".join(sorted(unknown)), ", ".join(SUITE_KEYS)))
    if not isinstance(data.get("scenarios"), list) or not data["scenarios"]:
        raise ScenarioError("%s: scenarios: must be a non-empty list of scenario names"
                            % path)
    points = []
    for name in data["scenarios"]:
        for p in scenario.load(name):
            if tier == "ci" and p["tier"] != "ci":
                continue
            points.append(p)
    return {"points": points, "variants": _variant_list(path, data, "variants"),
            "inventory": _variant_list(path, data, "inventory")}


def skip_reason(point, variant):
    """Why a variant cannot run a scenario point, or None."""
    q = point["qemu"]
    if q["icount_shift"] is not None and q["cpus"] > 1 and \
            not variants.get(variant).icount_smp:
        return "%s does not boot SMP under -icount (see irqrig/variants.py)" % variant
    return None


def plan(points, only_variants=None, within=None):
    """(point, variant, repetition) triples in run order, and the
    (point label, variant, reason) of the combinations that cannot run.
    only_variants replaces each point's variants; within keeps only those
    of its variants (a suite's own restriction)."""
    out, skipped = [], []
    for p in points:
        names = only_variants or p.variants()
        if within is not None:
            names = [v for v in names if v in within]
        for v in names:
            why = skip_reason(p, v)
            if why:
                skipped.append({"scenario": p.label, "variant": v, "reason": why})
                continue
            for rep in range(p["repeat"]):
                out.append((p, v, rep))
    return out, skipped


def execute(points, label, argv, only_variants=None, do_build=True, within=None):
    """Build what is needed, run every boot, write results; returns the RunSet."""
    todo, skipped = plan(points, only_variants, within)
    for s in skipped:
        log("skipped: %s on %s: %s" % (s["scenario"], s["variant"], s["reason"]))
    if not todo:
        raise ScenarioError("nothing to run (no scenario point matches)")
    needed = list(dict.fromkeys(v for _, v, _ in todo))
    if do_build:
        build.build(needed)
    rs = results.RunSet(label, argv)
    rs.data["skipped"] = skipped
    log("run: %d boot(s) over %s; results in %s"
        % (len(todo), ", ".join(needed), rs.dir))
    t0 = time.monotonic()
    for i, (p, v, rep) in enumerate(todo, 1):
        elapsed = time.monotonic() - t0
        eta = "" if i == 1 else ", ~%.0f min left" % (elapsed / (i - 1) * (len(todo) - i + 1) / 60)
        log("[%d/%d] %s on %s%s (elapsed %.0f min%s)"
            % (i, len(todo), p.label, v, "" if rep == 0 else " #%d" % rep, elapsed / 60, eta))
        accel = run.resolve_accel(p["qemu"]["accel"], *_kernel_initrd(v))
        boot = run.Boot(p, v, rs.log_dir(p.label, v, rep), accel)
        r = boot.run()
        r.update({"scenario": p.label, "scenario_name": p.name,
                  "scenario_file": os.path.relpath(p.path, paths.ROOT),
                  "params": p.params, "repeat": rep, "config": p.data})
        rs.add(r)
        if rep > 0 and p["expect"]["identical_repeats"]:
            check_identical(rs, r)
        note = results.outcome_note(r)
        log("[%d/%d] %s on %s: %s%s" % (i, len(todo), p.label, v, r["status"].upper(),
                                        " (%s)" % note if note else ""))
    rs.write()
    return rs


def _digest(path):
    import hashlib
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def check_identical(rs, run):
    """A repeat's device event log must equal the first run's, byte for byte."""
    first = next(r for r in rs.data["runs"] if r["scenario"] == run["scenario"]
                 and r["variant"] == run["variant"] and r["repeat"] == 0)
    a = _digest((first.get("logs") or {}).get("sensor", ""))
    b = _digest((run.get("logs") or {}).get("sensor", ""))
    ok = a is not None and a == b
    run["verdicts"].append({"name": "device event log identical to run #0", "ok": ok,
                            "detail": "sha256 %s vs %s" % ((a or "-")[:12], (b or "-")[:12])})
    if not ok and run["status"] == "pass":
        run["status"] = "fail"


def _kernel_initrd(variant):
    return (os.path.join(paths.kernel_dir(variant), "arch", "x86", "boot", "bzImage"),
            paths.initramfs(variant))


def inventory(rs, names):
    """The static cli table of these variants, into the run's results."""
    from irqrig import inventory_cmd
    rows, text, _ = inventory_cmd.run(names, os.path.join(rs.dir, "inventory"))
    rs.data.setdefault("sections", []).append(
        {"title": "Static cli table (inventory/inventory.md)", "text": "```\n" + text + "\n```"})
    rs.write()
    print(text)


def report(rs):
    from irqrig import report as plots
    try:
        made = plots.make(rs.dir)
    except (ImportError, OSError, ValueError) as e:
        made = []
        log("report: plots skipped: %s" % e)
    if made:
        rs.data.setdefault("sections", []).append({"title": "Plots", "text": "\n".join(
            "![%s](%s)" % (os.path.basename(p), os.path.relpath(p, rs.dir)) for p in made)})
        rs.write()
    print()
    print(results.table(results.summary_rows(rs.data)))
    s = rs.data["summary"]
    print("%d pass, %d fail, %d error -- results: %s"
          % (s["pass"], s["fail"], s["error"], rs.dir))
