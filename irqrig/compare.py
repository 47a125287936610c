"""`runner.py compare BASE NEW`: regressions between two result sets.

Runs are matched by (scenario, variant), or with --variants A:B scenario
by scenario between variant A in BASE and variant B in NEW (stock vs
patched, 6.1 vs 6.12).  Every figure is "lower is better"; a change beyond
the scenario's [compare] threshold_pct is a regression or an improvement,
any change is one under exact = true (icount runs).  A pass that became a
fail or error is a regression too.
"""

import json
import os

from irqrig import results

# (name, path into a run's figures, unit); all lower-is-better.
FIGURES = [
    ("hard p50", ("sensor", "latency_ns", "hard", "p50"), "ns"),
    ("hard p99", ("sensor", "latency_ns", "hard", "p99"), "ns"),
    ("hard max", ("sensor", "latency_ns", "hard", "max"), "ns"),
    ("thread p99", ("sensor", "latency_ns", "thread", "p99"), "ns"),
    ("user p99", ("sensor", "latency_ns", "user", "p99"), "ns"),
    ("lost", ("sensor", "counts", "lost"), "samples"),
    ("cyclictest max", ("cyclictest_max_us",), "us"),
    ("gdb violations", ("gdb", "violations"), ""),
    ("longest hard-off window", ("hardoff", "max_ns"), "ns"),
    ("hard-off violations", ("hardoff", "violations"), ""),
    ("console reports", None, ""),
]
# Below these absolute differences a change is noise even when not exact.
NOISE = {"ns": 1000, "us": 5, "samples": 0, "": 0}
STATUS_RANK = {"pass": 0, "fail": 1, "error": 2}


def _get(figs, path):
    if path is None:
        c = figs.get("console") or {}
        return sum(c.values()) if c else None
    for key in path:
        if not isinstance(figs, dict) or key not in figs:
            return None
        figs = figs[key]
    return figs


def _index(data, variant=None):
    out = {}
    for r in data["runs"]:
        if variant is not None and r["variant"] != variant:
            continue
        key = (r["scenario"],) if variant is not None else (r["scenario"], r["variant"])
        out.setdefault(key, []).append(r)
    return out


def _worst(runs, path):
    """Across repetitions, the worst (largest) value of a figure."""
    vals = [v for v in (_get(r.get("figures", {}), path) for r in runs) if v is not None]
    return max(vals) if vals else None


def judge(base, new, threshold_pct, exact, unit):
    if base is None or new is None:
        return "n/a"
    if new == base:
        return "unchanged"
    if exact:
        return "regression" if new > base else "improvement"
    delta = new - base
    if abs(delta) <= NOISE[unit]:
        return "unchanged"
    limit = abs(base) * threshold_pct / 100.0
    if delta > limit:
        return "regression"
    if -delta > limit:
        return "improvement"
    return "unchanged"


def compare(base_path, new_path, variants=None):
    base, new = results.load(base_path), results.load(new_path)
    a, b = (variants.split(":", 1) if variants else (None, None))
    bi, ni = _index(base, a), _index(new, b)
    rows = []
    for key in sorted(set(bi) & set(ni)):
        bruns, nruns = bi[key], ni[key]
        cfg = (nruns[0].get("config") or {}).get("compare") or {}
        threshold, exact = cfg.get("threshold_pct", 10.0), cfg.get("exact", False)
        label = " / ".join(key) if b is None else "%s (%s -> %s)" % (key[0], a, b)
        bstat = max((r["status"] for r in bruns), key=STATUS_RANK.get)
        nstat = max((r["status"] for r in nruns), key=STATUS_RANK.get)
        if bstat != nstat:
            rows.append({"run": label, "figure": "status", "base": bstat, "new": nstat,
                         "verdict": "regression" if STATUS_RANK[nstat] > STATUS_RANK[bstat]
                         else "improvement"})
        for name, path, unit in FIGURES:
            bv, nv = _worst(bruns, path), _worst(nruns, path)
            if bv is None and nv is None:
                continue
            rows.append({"run": label, "figure": name + (" (%s)" % unit if unit else ""),
                         "base": bv, "new": nv,
                         "verdict": judge(bv, nv, threshold, exact, unit)})
    only_base = sorted(" / ".join(k) for k in set(bi) - set(ni))
    only_new = sorted(" / ".join(k) for k in set(ni) - set(bi))
    return {"base": base_path, "new": new_path, "variants": variants, "rows": rows,
            "regressions": sum(r["verdict"] == "regression" for r in rows),
            "improvements": sum(r["verdict"] == "improvement" for r in rows),
            "only_in_base": only_base, "only_in_new": only_new}


def write(result, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "compare.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    text = "# compare\n\nbase: `%s`  \nnew: `%s`\n\n%s\n%d regression(s), %d improvement(s)\n" % (
        result["base"], result["new"], results.table(result["rows"], markdown=True),
        result["regressions"], result["improvements"])
    with open(os.path.join(out_dir, "compare.md"), "w", encoding="utf-8") as f:
        f.write(text)
