"""results/<run-id>/: results.json, summary.md, junit.xml, logs/.

results.json is the machine-readable record (schema below, versioned);
summary.md and the terminal table are for people; junit.xml for CI systems.
All three are written after every boot.  A result set is "complete" only
when every planned run ran; otherwise it says why not (interrupted, the
runner failed), and the planned runs that did not run are errors in
junit.xml and in the summary.

Schema 2: {schema, run_id, label, command, started, finished, host,
complete, incomplete_reason, planned: [{scenario, variant, repeat}],
runs: [run record (irqrig/boot.py) + status, verdicts, figures],
summary: {pass, fail, error, not_run}, skipped, sections}.
"""

import datetime
import json
import os
import platform
import re
import sys
import xml.etree.ElementTree as ET

from irqrig import figures, paths
from irqrig.errors import ResultsError

SCHEMA_VERSION = 2


def _safe_name(text, limit=60):
    """A single path component: never empty, never "." or "..", no "/"."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_.")[:limit]
    return safe or "unnamed"


def inside_results(path):
    """Every path the runner writes results to must be under results/."""
    root = os.path.realpath(paths.RESULTS)
    real = os.path.realpath(path)
    if os.path.commonpath([root, real]) != root:
        raise ResultsError("refusing to write %s: outside %s" % (path, root))
    return path


def new_run_dir(label):
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = os.path.join(paths.RESULTS, "%s-%s" % (stamp, _safe_name(label, 40)))
    inside_results(base)
    path, n = base, 1
    while os.path.exists(path):
        n += 1
        path = "%s.%d" % (base, n)
    os.makedirs(os.path.join(path, "logs"))
    return path


class RunSet:
    """All boots of one runner invocation, written as they complete."""

    def __init__(self, label, argv, planned=()):
        self.dir = new_run_dir(label)
        self.data = {
            "schema": SCHEMA_VERSION,
            "run_id": os.path.basename(self.dir),
            "label": label,
            "command": argv,
            "started": _now(),
            "host": {"node": platform.node(), "kernel": platform.release(),
                     "python": sys.version.split()[0]},
            "complete": False,
            "incomplete_reason": "running (or the runner was killed)",
            "planned": list(planned),
            "runs": [],
        }

    def log_dir(self, scenario_label, variant, rep):
        # Only characters that survive QEMU option syntax (no "," or "=").
        sub = os.path.join(_safe_name(scenario_label),
                           _safe_name(variant + ("" if rep == 0 else "-r%d" % rep)))
        return inside_results(os.path.join(self.dir, "logs", sub))

    def add(self, run):
        self.data["runs"].append(run)
        self.write()

    def finish(self, incomplete_reason=None):
        """The run set ends: complete, or not and why."""
        ran = len(self.data["runs"])
        if incomplete_reason is None and ran < len(self.data["planned"]):
            incomplete_reason = "%d of %d planned runs ran" % (ran, len(self.data["planned"]))
        self.data["complete"] = incomplete_reason is None
        self.data["incomplete_reason"] = incomplete_reason
        self.write()

    def write(self):
        self.data["summary"] = summary_counts(self.data)
        self.data["finished"] = _now()
        write_json(os.path.join(self.dir, "results.json"), self.data)
        with open(os.path.join(self.dir, "summary.md"), "w", encoding="utf-8") as f:
            f.write(summary_markdown(self.data))
        write_junit(os.path.join(self.dir, "junit.xml"), self.data)

    @property
    def complete(self):
        return self.data["complete"]

    @property
    def errors(self):
        return self.data["summary"]["error"]

    @property
    def ok(self):
        return self.complete and all(r["status"] == "pass" for r in self.data["runs"])


def not_run(data):
    """The planned runs that have no record (yet)."""
    ran = {(r["scenario"], r["variant"], r.get("repeat", 0)) for r in data["runs"]}
    return [p for p in data.get("planned", [])
            if (p["scenario"], p["variant"], p["repeat"]) not in ran]


def summary_counts(data):
    c = {s: sum(1 for r in data["runs"] if r["status"] == s)
         for s in ("pass", "fail", "error")}
    c["not_run"] = len(not_run(data))
    return c


def status_line(data):
    s = summary_counts(data)
    text = "%d pass, %d fail, %d error" % (s["pass"], s["fail"], s["error"])
    if not data.get("complete"):
        text += ", %d not run -- INCOMPLETE: %s" % (s["not_run"], data.get("incomplete_reason"))
    return "%s -- results: %s" % (text, os.path.join(paths.RESULTS, data["run_id"]))


def _now():
    return datetime.datetime.now().isoformat(timespec="seconds")


def write_json(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(tmp, path)


def load(path):
    """A results.json, or the results.json inside a run directory; any
    file that is not one this runner wrote is a one-line ResultsError."""
    if os.path.isdir(path):
        path = os.path.join(path, "results.json")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise ResultsError("%s: no such results file" % path) from None
    except (OSError, UnicodeDecodeError) as e:
        raise ResultsError("%s: cannot read: %s" % (path, e)) from None
    except ValueError as e:
        raise ResultsError("%s: not a results file (%s)" % (
            path, "empty" if "Expecting value: line 1 column 1 (char 0)" in str(e)
            else "truncated or not JSON: %s" % e)) from None
    if not isinstance(data, dict):
        raise ResultsError("%s: not a results file (a JSON %s, not an object)"
                           % (path, type(data).__name__))
    if data.get("schema") != SCHEMA_VERSION:
        raise ResultsError("%s: results schema %r; this runner reads schema %d "
                           "(rerun, or use the runner that wrote it)"
                           % (path, data.get("schema"), SCHEMA_VERSION))
    runs = data.get("runs")
    if not isinstance(runs, list) or not all(
            isinstance(r, dict) and {"scenario", "variant", "status"} <= set(r) for r in runs):
        raise ResultsError("%s: not a results file (no valid runs list)" % path)
    data.setdefault("planned", [])
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
    gdb = f.get("gdb") or {}
    hard = "/".join(_us(figures.get(run, "hard " + k)) for k in ("p50", "p99", "max"))
    cyc = figures.get(run, "cyclictest max")
    return {
        "boot s": "%.1f" % run["boot_s"] if run.get("boot_s") else "-",
        "cyclictest max us": "-" if cyc is None else str(cyc),
        "hard p50/p99/max us": hard if figures.latency_count(run, "hard") else "-",
        "user p99 us": _us(figures.get(run, "user p99"))
        if figures.latency_count(run, "user") else "-",
        "lost": _lost(f.get("sensor"), f.get("host")),
        "cli hits/viol": ("%s/%s" % (gdb.get("distinct_sites", "-"), gdb.get("violations", "-"))
                          if gdb else "-"),
        "hard-off max us": _hardoff(run),
    }


def _hardoff(run):
    """The IF tracker's longest hard-off window (and violations), when measured."""
    if not (run.get("figures") or {}).get("hardoff"):
        return "-"
    viol = figures.get(run, "hard-off violations")
    return _us(figures.get(run, "hard-off max")) + ("" if viol is None else ", %s viol" % viol)


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
    s = summary_counts(data)
    lines = ["# irqrig run %s" % data["run_id"], ""]
    if not data.get("complete"):
        lines += ["**INCOMPLETE: %s.** %d planned run(s) did not run; this summary says "
                  "nothing about them." % (data.get("incomplete_reason"), s["not_run"]), ""]
    lines += ["Command: `%s`  " % " ".join(data["command"]),
              "Started %s, finished %s.  " % (data["started"], data.get("finished")),
              "Result: %d pass, %d fail, %d error, %d not run." % (
                  s["pass"], s["fail"], s["error"], s["not_run"]), ""]
    accels = sorted({"%s%s" % (r.get("qemu", {}).get("accel"),
                               "" if r.get("qemu", {}).get("icount_shift") is None
                               else " icount shift=%s" % r["qemu"]["icount_shift"])
                     for r in data["runs"]})
    lines += ["Accelerator: %s.  Latencies are device-measured (QEMU virtual clock)."
              % ", ".join(accels), "", table(summary_rows(data), markdown=True)]
    missing = not_run(data)
    if missing:
        lines += ["", "Not run (planned):", ""]
        lines += ["- %s on %s%s" % (p["scenario"], p["variant"],
                                    " #%d" % p["repeat"] if p["repeat"] else "")
                  for p in missing]
    if data.get("skipped"):
        lines += ["", "Skipped (cannot run there):", ""]
        lines += ["- %s on %s: %s" % (s["scenario"], s["variant"], s["reason"])
                  for s in data["skipped"]]
    limits = physical_limit_rows(data)
    if limits:
        lines += ["", "## Hard latency and the hard-off windows of the sensor's CPU", "",
                  "The longest hard-off window the IF tracker measured on the CPU(s) "
                  "that took the sensor's interrupts during its step (whole run) bounds "
                  "how long one waits for delivery. \"not explained\" = hard max - that "
                  "window: positive is what entry, handler and (without icount) host time "
                  "add or a window the tracker missed; negative means the bound held with "
                  "that much slack (no sample met the worst window). Under icount a "
                  "window's ns include the other vCPU's round-robin time slices.", "",
                  table(limits, markdown=True)]
    for extra in data.get("sections", []):
        lines += ["", "## " + extra["title"], "", extra["text"]]
    return "\n".join(lines) + "\n"


def physical_limit_rows(data):
    rows = []
    for r in data["runs"]:
        lim = (r.get("figures") or {}).get("physical_limit")
        if lim:
            rows.append({"scenario": r["scenario"], "variant": r["variant"],
                         "clock": lim.get("clock") or "-",
                         "sensor CPU (irqs)": ", ".join("%s (%d)" % kv for kv in
                                                        lim["sensor_cpus"].items()),
                         "hard max us": _us(lim["hard_max_ns"]),
                         "longest window us": _us(lim["window_max_ns"]),
                         "not explained us": _us(lim["unexplained_ns"])})
    return rows


def write_junit(path, data):
    suites = ET.Element("testsuites", name="irqrig " + data["run_id"])
    by_scn = {}
    for r in data["runs"]:
        by_scn.setdefault(r["scenario"], []).append(r)
    unrun = {}
    for p in not_run(data):
        unrun.setdefault(p["scenario"], []).append(p)
        by_scn.setdefault(p["scenario"], [])
    why = data.get("incomplete_reason") or "did not run"
    for scn, runs in by_scn.items():
        missing = unrun.get(scn, [])
        ts = ET.SubElement(suites, "testsuite", name=scn, tests=str(len(runs) + len(missing)),
                           failures=str(sum(r["status"] == "fail" for r in runs)),
                           errors=str(sum(r["status"] == "error" for r in runs) + len(missing)))
        for p in missing:
            tc = ET.SubElement(ts, "testcase", classname="irqrig." + scn, time="0",
                               name=p["variant"] + ("" if not p["repeat"]
                                                    else " #%d" % p["repeat"]))
            el = ET.SubElement(tc, "error", message="not run: %s" % why)
            el.text = "planned but not run: %s" % why
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
