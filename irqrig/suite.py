"""Run scenario points over variants, with progress, into one result set.

Suite files are read by irqrig/scenario.py (load_suite).  Each boot is
executed (irqrig/boot.py), judged (irqrig/verdicts.py) and written at once;
the result set says whether it is complete, and why not.
"""

import os
import time

from irqrig import build, paths, results, variants
from irqrig.errors import Interrupted, IrqrigError, ScenarioError
from irqrig.util import log

# Sweeps x variants x repeats: more boots than this is a typo, not a plan.
MAX_BOOTS = 2000


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
    if len(out) > MAX_BOOTS:
        raise ScenarioError("%d boots planned (sweep points x variants x repeats); "
                            "at most %d in one run" % (len(out), MAX_BOOTS))
    return out, skipped


def meta(p, v, rep):
    """What a run record says about its scenario point."""
    return {"scenario": p.label, "scenario_name": p.name,
            "scenario_file": os.path.relpath(p.path, paths.ROOT),
            "params": p.params, "repeat": rep, "config": p.data}


def run_one(rs, p, v, rep):
    """Boot, judge and record one run; an error is this run's, not the suite's."""
    from irqrig import boot, verdicts
    log_dir = rs.log_dir(p.label, v, rep)
    try:
        accel = boot.resolve_accel(p["qemu"]["accel"], v)
    except IrqrigError as e:
        rec = dict(meta(p, v, rep), variant=v, steps=[], logs={},
                   outcome="rig-error", error=str(e))
    else:
        rec = boot.Boot(p, v, log_dir, accel, meta(p, v, rep)).run()
    run = dict(rec, **verdicts.judge(rec))
    verdicts.judge_repeat(run, rs.data["runs"])
    rs.add(run)
    return run


def execute(points, label, argv, only_variants=None, do_build=True, within=None):
    """Build what is needed, run every boot, write results; returns the RunSet.
    The result set is written after every boot and marked incomplete, with
    the reason, if the runner is interrupted or fails between boots."""
    todo, skipped = plan(points, only_variants, within)
    for s in skipped:
        log("skipped: %s on %s: %s" % (s["scenario"], s["variant"], s["reason"]))
    if not todo:
        raise ScenarioError("nothing to run (no scenario point matches)")
    needed = list(dict.fromkeys(v for _, v, _ in todo))
    if do_build:
        build.build(needed)
    else:
        from irqrig import artifacts
        for v in needed:
            for what in ("bzImage", "initramfs", "qemu"):
                artifacts.require(v, what)
    rs = results.RunSet(label, argv, planned=[
        {"scenario": p.label, "variant": v, "repeat": rep} for p, v, rep in todo])
    rs.data["skipped"] = skipped
    rs.write()
    log("run: %d boot(s) over %s; results in %s" % (len(todo), ", ".join(needed), rs.dir))
    t0 = time.monotonic()
    try:
        for i, (p, v, rep) in enumerate(todo, 1):
            elapsed = time.monotonic() - t0
            eta = "" if i == 1 else ", ~%.0f min left" % (
                elapsed / (i - 1) * (len(todo) - i + 1) / 60)
            log("[%d/%d] %s on %s%s (elapsed %.0f min%s)"
                % (i, len(todo), p.label, v, "" if rep == 0 else " #%d" % rep,
                   elapsed / 60, eta))
            r = run_one(rs, p, v, rep)
            note = results.outcome_note(r)
            log("[%d/%d] %s on %s: %s%s" % (i, len(todo), p.label, v, r["status"].upper(),
                                            " (%s)" % note if note else ""))
    except (KeyboardInterrupt, Interrupted) as e:
        rs.finish("interrupted (%s)" % getattr(e, "reason", "Ctrl-C"))
        raise
    except BaseException as e:
        rs.finish("runner failed: %s: %s" % (type(e).__name__, e))
        raise
    rs.finish()
    campaign_summary(rs)
    return rs


def campaign_summary(rs):
    """Campaign runs: findings.json and a summary section."""
    from irqrig import campaign
    runs = [r for r in rs.data["runs"] if (r.get("figures") or {}).get("campaign")]
    if not runs:
        return
    path, findings = campaign.findings_file(rs.dir, runs)
    rows = []
    for r in runs:
        c = r["figures"]["campaign"]
        rows.append({"scenario": r["scenario"], "variant": r["variant"], "mode": c["mode"],
                     "sections landed": "%d/%d" % (c["sections_landed"], c["sections"]),
                     "insns landed": "%d/%d" % (c["insns_landed"], c["insns"]),
                     "fires (landed)": "%d (%d)" % (c["fires"], c["fires_landed"]),
                     "wall s": "%.0f" % r.get("wall_s", 0),
                     "findings": len(c["findings"])})
    text = results.table(rows, markdown=True)
    for i, f in enumerate(findings):
        a = f.get("attributed") or {}
        text += "\n%d. %s on %s: %s; attributed to %s (%s, section %s) - %s.  \n" % (
            i, f["scenario"], f["variant"], ", ".join(r["kind"] for r in f["reports"]),
            a.get("address", "-"), a.get("landed_in", "-"), a.get("section", "-"),
            f.get("how", "not attributed"))
        if f.get("reproducer"):
            text += "   reproduce: `%s`\n" % f["reproducer"]["command"]
    rs.data.setdefault("sections", []).append(
        {"title": "Interrupt campaigns (%s)" % os.path.relpath(path, rs.dir), "text": text})
    rs.write()


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
    except (ImportError, OSError, ValueError, IrqrigError) as e:
        made = []
        log("report: plots skipped: %s" % e)
    if made:
        rs.data.setdefault("sections", []).append({"title": "Plots", "text": "\n".join(
            "![%s](%s)" % (os.path.basename(p), os.path.relpath(p, rs.dir)) for p in made)})
        rs.write()
    print()
    print(results.table(results.summary_rows(rs.data)))
    print(results.status_line(rs.data))
