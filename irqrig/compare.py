"""`runner.py compare BASE NEW`: regressions between two result sets.

Runs are matched by (scenario, variant), or with --variants A:B scenario
by scenario between variant A in BASE and variant B in NEW (stock vs
patched, 6.1 vs 6.12).  Every figure is "lower is better"; a change beyond
the scenario's [compare] threshold_pct is a regression or an improvement,
any change is one under exact = true (icount runs).  A pass that became a
fail or error is a regression too, and so is a run of BASE that NEW does
not have (an incomplete or partial NEW can never look like "no regression").
"""

import json
import os

from irqrig import figures, results, variants
from irqrig.errors import UsageError

# Below these absolute differences a change is noise even when not exact.
NOISE = {"ns": 1000, "us": 5, "samples": 0, "": 0}
STATUS_RANK = {"pass": 0, "fail": 1, "error": 2}


def _index(data, variant=None):
    out = {}
    for r in data["runs"]:
        if variant is not None and r["variant"] != variant:
            continue
        key = (r["scenario"],) if variant is not None else (r["scenario"], r["variant"])
        out.setdefault(key, []).append(r)
    return out


def _worst(runs, name):
    """Across repetitions, the worst (largest) value of a figure."""
    vals = [v for v in (figures.get(r, name) for r in runs) if v is not None]
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


def parse_pair(text):
    """--variants A:B -> (A, B), both known variants."""
    a, sep, b = (text or "").partition(":")
    if not sep or not a or not b:
        raise UsageError("--variants %r: give two variants as A:B (e.g. "
                         "6.12-rt:6.12-rt-irqsoft)" % text)
    variants.check([a, b])
    return a, b


def compare(base_path, new_path, pair=None):
    a, b = parse_pair(pair) if pair else (None, None)
    base, new = results.load(base_path), results.load(new_path)
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
        for name in figures.FIGURES:
            unit = figures.unit(name)
            bv, nv = _worst(bruns, name), _worst(nruns, name)
            if bv is None and nv is None:
                continue
            if bv is not None and nv is None:
                verdict = "regression"          # measured before, not now
            else:
                verdict = judge(bv, nv, threshold, exact, unit)
            rows.append({"run": label, "figure": name + (" (%s)" % unit if unit else ""),
                         "base": bv, "new": nv, "verdict": verdict})
    only_base = sorted(" / ".join(k) for k in set(bi) - set(ni))
    only_new = sorted(" / ".join(k) for k in set(ni) - set(bi))
    for key in only_base:
        rows.append({"run": key, "figure": "run", "base": "ran", "new": "missing",
                     "verdict": "regression"})
    if not new.get("complete"):
        rows.append({"run": "(NEW result set)", "figure": "complete", "base": "-",
                     "new": "incomplete: %s" % new.get("incomplete_reason"),
                     "verdict": "regression"})
    return {"base": base_path, "new": new_path, "variants": pair, "rows": rows,
            "regressions": sum(r["verdict"] == "regression" for r in rows),
            "improvements": sum(r["verdict"] == "improvement" for r in rows),
            "only_in_base": only_base, "only_in_new": only_new}


def text(result):
    """For the terminal."""
    if not result["rows"]:
        return "(nothing in common)"
    return results.table(result["rows"])


def write(result, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "compare.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    text = "# compare\n\nbase: `%s`  \nnew: `%s`\n\n%s\n%d regression(s), %d improvement(s)\n" % (
        result["base"], result["new"], results.table(result["rows"], markdown=True),
        result["regressions"], result["improvements"])
    with open(os.path.join(out_dir, "compare.md"), "w", encoding="utf-8") as f:
        f.write(text)
