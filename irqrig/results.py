"""results/<run-id>/: results.json, summary.md, junit.xml, logs/.

results.json is the machine-readable record (schema below, versioned);
summary.md and the terminal table are for people; junit.xml for CI systems.
"""

import datetime
import json
import os
import platform
import re
import sys
import xml.etree.ElementTree as ET

from irqrig import paths

SCHEMA_VERSION = 1


def new_run_dir(label):
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", label)[:40]
    base = os.path.join(paths.RESULTS, "%s-%s" % (stamp, safe))
    path, n = base, 1
    while os.path.exists(path):
        n += 1
        path = "%s.%d" % (base, n)
    os.makedirs(os.path.join(path, "logs"))
    return path


class RunSet:
    """All boots of one runner invocation, written as they complete."""

    def __init__(self, label, argv):
        self.dir = new_run_dir(label)
        self.data = {
            "schema": SCHEMA_VERSION,
            "run_id": os.path.basename(self.dir),
            "label": label,
            "command": argv,
            "started": _now(),
            "host": {"node": platform.node(), "kernel": platform.release(),
                     "python": sys.version.split()[0]},
            "runs": [],
        }

    def log_dir(self, scenario_label, variant, rep):
        # Only characters that survive QEMU option syntax (no "," or "=").
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", scenario_label).strip("_")
        sub = "%s/%s%s" % (name, variant, "" if rep == 0 else "-r%d" % rep)
        return os.path.join(self.dir, "logs", sub)

    def add(self, run):
        self.data["runs"].append(run)
        self.write()

    def write(self):
        runs = self.data["runs"]
        self.data["summary"] = {s: sum(1 for r in runs if r["status"] == s)
                                for s in ("pass", "fail", "error")}
        self.data["finished"] = _now()
        _write_json(os.path.join(self.dir, "results.json"), self.data)
        with open(os.path.join(self.dir, "summary.md"), "w", encoding="utf-8") as f:
            f.write(summary_markdown(self.data))
        write_junit(os.path.join(self.dir, "junit.xml"), self.data)

    @property
    def ok(self):
        return all(r["status"] == "pass" for r in self.data["runs"])


def _now():
    return datetime.datetime.now().isoformat(timespec="seconds")


def _write_json(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(tmp, path)


def load(path):
    """A results.json, or the results.json inside a run directory."""
    if os.path.isdir(path):
        path = os.path.join(path, "results.json")
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if data.get("schema") != SCHEMA_VERSION:
        raise ValueError("%s: results schema %r, this runner reads %d"
                         % (path, data.get("schema"), SCHEMA_VERSION))
    return data


def _us(ns):
    return "-" if ns is None else "%.1f" % (ns / 1000.0)


def _lost(sensor, host):
    """Lost samples, how many of their bursts the host explains, and the
    events the device did not raise because QEMU ran its timer too late
    (the host's, not the guest's)."""
    counts = sensor.get("counts", {}) if sensor else {}
    if "lost" not in counts:
        return "-"
    notes = []
    if counts["lost"] and host and "loss_bursts_explained" in host:
        notes.append("%d/%d bursts host" % (host["loss_bursts_explained"],
                                            sensor.get("loss_bursts", 0)))
    if counts.get("host_late"):
        notes.append("+%d host-late" % counts["host_late"])
    return "%d (%s)" % (counts["lost"], ", ".join(notes)) if notes else str(counts["lost"])


def row_figures(run):
    """The columns people look at, as strings."""
    f = run.get("figures", {})
    sensor = f.get("sensor") or {}
    lat = sensor.get("latency_ns", {})
    hard = lat.get("hard", {})
    user = lat.get("user", {})
    gdb = f.get("gdb") or {}
    return {
        "boot s": "%.1f" % run["boot_s"] if run.get("boot_s") else "-",
        "cyclictest max us": str(f.get("cyclictest_max_us", "-")),
        "hard p50/p99/max us": "/".join(_us(hard.get(k)) for k in ("p50", "p99", "max"))
        if hard.get("count") else "-",
        "user p99 us": _us(user.get("p99")) if user.get("count") else "-",
        "lost": _lost(sensor, f.get("host")),
        "cli hits/viol": ("%s/%s" % (gdb.get("distinct_sites", "-"), gdb.get("violations", "-"))
                          if gdb else "-"),
        **_hardoff_column(f.get("hardoff")),
    }


def _hardoff_column(h):
    """The IF tracker's longest hard-off window (and violations), when measured."""
    if not h:
        return {"hard-off max us": "-"}
    viol = "" if h.get("violations") is None else ", %s viol" % h["violations"]
    return {"hard-off max us": "%s%s" % (_us(h.get("max_ns")), viol)}


def outcome_note(run):
    """Why a run ended as it did: the failed checks, or for a negative
    scenario what was detected (its other checks are meant to fail)."""
    if run.get("expected_failure"):
        return run["verdicts"][0]["detail"]
    if run["status"] == "error" and run.get("error"):
        return run["error"].splitlines()[0]
    return "; ".join(v["name"] for v in run.get("verdicts", []) if not v["ok"])


def summary_rows(data):
    rows = []
    for r in data["runs"]:
        row = {"scenario": r["scenario"], "variant": r["variant"], "result": r["status"]}
        row.update(row_figures(r))
        row["notes"] = outcome_note(r)[:80]
        rows.append(row)
    return rows


def table(rows, markdown=False):
    if not rows:
        return "(no runs)\n"
    cols = list(rows[0])
    width = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    if markdown:
        out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
        out += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    else:
        out = ["  ".join(c.ljust(width[c]) for c in cols)]
        out += ["  ".join(str(r[c]).ljust(width[c]) for c in cols) for r in rows]
    return "\n".join(out) + "\n"


def summary_markdown(data):
    s = data.get("summary", {})
    lines = ["# irqrig run %s" % data["run_id"], "",
             "Command: `%s`  " % " ".join(data["command"]),
             "Started %s, finished %s.  " % (data["started"], data.get("finished")),
             "Result: %d pass, %d fail, %d error." % (s.get("pass", 0), s.get("fail", 0),
                                                       s.get("error", 0)), ""]
    accels = sorted({"%s%s" % (r.get("qemu", {}).get("accel"),
                               "" if r.get("qemu", {}).get("icount_shift") is None
                               else " icount shift=%s" % r["qemu"]["icount_shift"])
                     for r in data["runs"]})
    lines += ["Accelerator: %s.  Latencies are device-measured (QEMU virtual clock)."
              % ", ".join(accels), "", table(summary_rows(data), markdown=True)]
    if data.get("skipped"):
        lines += ["", "Skipped (cannot run there):", ""]
        lines += ["- %s on %s: %s" % (s["scenario"], s["variant"], s["reason"])
                  for s in data["skipped"]]
    for extra in data.get("sections", []):
        lines += ["", "## " + extra["title"], "", extra["text"]]
    return "\n".join(lines) + "\n"


def write_junit(path, data):
    suites = ET.Element("testsuites", name="irqrig " + data["run_id"])
    by_scn = {}
    for r in data["runs"]:
        by_scn.setdefault(r["scenario"], []).append(r)
    for scn, runs in by_scn.items():
        ts = ET.SubElement(suites, "testsuite", name=scn, tests=str(len(runs)),
                           failures=str(sum(r["status"] == "fail" for r in runs)),
                           errors=str(sum(r["status"] == "error" for r in runs)))
        for r in runs:
            name = r["variant"] + ("" if not r.get("repeat") else " #%d" % r["repeat"])
            tc = ET.SubElement(ts, "testcase", classname="irqrig." + scn, name=name,
                               time=str(r.get("wall_s", 0)))
            bad = [v for v in r.get("verdicts", []) if not v["ok"]]
            if r["status"] == "error":
                el = ET.SubElement(tc, "error", message=(r.get("error") or "error")
                                   .splitlines()[0][:200])
                el.text = r.get("error", "")
            elif bad:
                el = ET.SubElement(tc, "failure", message=bad[0]["name"])
                el.text = "\n".join("%s: %s" % (v["name"], v["detail"]) for v in bad)
            out = ET.SubElement(tc, "system-out")
            out.text = "logs: %s" % json.dumps(r.get("logs", {}))
    ET.indent(suites)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
