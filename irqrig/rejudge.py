"""`runner.py rejudge RESULTS`: judge a saved result set again.

Verdicts are a pure function of each run's records (irqrig/verdicts.py),
so today's rules can be applied to yesterday's runs: after a change to a
verdict, or to see what an old run would say now.  Writes
RESULTS/rejudged.json (a results file: summary, compare and report read it)
and rejudged.md, and prints the runs whose verdicts changed.
"""

import os

from irqrig import results, verdicts
from irqrig.errors import EXIT_FAIL, EXIT_PASS, EXIT_RIG, ResultsError

# What judging adds to a run record; everything else was recorded.
JUDGED = ("status", "verdicts", "figures", "expected_failure")


def record_of(run):
    """The run record as the boot wrote it (the judged fields removed)."""
    if "outcome" not in run or "config" not in run:
        raise ResultsError("run %s on %s has no run record (outcome, config): "
                           "written by an older runner" % (run["scenario"], run["variant"]))
    return {k: v for k, v in run.items() if k not in JUDGED}


def rejudge(data):
    """A copy of a result set with every run judged again, in run order."""
    out = dict(data, runs=[])
    for run in data["runs"]:
        rec = record_of(run)
        again = dict(rec, **verdicts.judge(rec))
        verdicts.judge_repeat(again, out["runs"])
        out["runs"].append(again)
    out["summary"] = results.summary_counts(out)
    return out


def changes(old, new):
    """[(label, old status, new status, verdicts that changed)]."""
    out = []
    for a, b in zip(old["runs"], new["runs"]):
        va = {v["name"]: v["ok"] for v in a.get("verdicts", [])}
        vb = {v["name"]: v["ok"] for v in b["verdicts"]}
        diff = sorted(k for k in set(va) | set(vb) if va.get(k) != vb.get(k))
        if a["status"] != b["status"] or diff:
            out.append(("%s on %s%s" % (a["scenario"], a["variant"],
                                        " #%d" % a["repeat"] if a.get("repeat") else ""),
                        a["status"], b["status"], diff))
    return out


def main(path):
    data = results.load(path)
    run_dir = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    new = rejudge(data)
    new["rejudged_from"] = os.path.join(run_dir, "results.json")
    out = os.path.join(run_dir, "rejudged.json")
    results.write_json(out, new)
    with open(os.path.join(run_dir, "rejudged.md"), "w", encoding="utf-8") as f:
        f.write(results.summary_markdown(new))
    diff = changes(data, new)
    for label, a, b, names in diff:
        print("%s: %s -> %s%s" % (label, a, b, "; changed: " + ", ".join(names)
                                  if names else ""))
    print("rejudge: %d run(s), %d changed -- %s" % (len(new["runs"]), len(diff), out))
    if not new.get("complete") or new["summary"]["error"]:
        return EXIT_RIG
    return EXIT_PASS if all(r["status"] == "pass" for r in new["runs"]) else EXIT_FAIL
