"""Verdicts: a pure function of a run's records.

judge(record) reads only the run record (run.json, as irqrig/boot.py
writes it) and the files it names (console log, device event log, gdb
JSON, host-noise logs) and returns the run's status, verdicts and figures.
`runner.py rejudge` runs it again on a saved result set; tests feed it
recorded logs (tests/data/).  The IF tracker's verdicts are
irqrig/hardoff.py's judge() on its recorded JSON.

A verdict never says more than was measured: a run that did not complete
is an error whatever its checks say; an expectation whose figure is
missing fails; a step that did not run is a failed check.
"""

import fnmatch
import json
import os
import re

from irqrig import artifacts, campaign, console, gdbcheck, hardoff, hostnoise, sensorlog
from irqrig import figures, variants

STAGES_BOUNDS = (("hard", "hard_p99_us", "p99"), ("hard", "hard_max_us", "max"),
                 ("thread", "thread_p99_us", "p99"), ("user", "user_p99_us", "p99"))
CYCLIC_RE = re.compile(r"T:\s*(\d+).*?C:\s*(\d+).*?Min:\s*(\d+).*?Avg:\s*(\d+).*?Max:\s*(\d+)")


def parse_cyclictest(text):
    threads = [dict(zip(("thread", "cycles", "min", "avg", "max"), map(int, m.groups())))
               for m in CYCLIC_RE.finditer(text)]
    if not threads:
        return None
    return {"threads": threads, "max_us": max(t["max"] for t in threads),
            "avg_us": round(sum(t["avg"] for t in threads) / len(threads), 1)}


def json_lines(text):
    """JSON objects printed on their own lines (kernel messages may interleave)."""
    out = []
    for line in (text or "").splitlines():
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def tool_result(step, tool):
    return next((j for j in json_lines(step.get("output")) if j.get("tool") == tool), None)


class Judge:
    def __init__(self, rec):
        self.rec = rec
        self.scn = rec["config"]
        self.exp = self.scn["expect"]
        self.items = []
        self.figures = {}

    def add(self, name, ok, detail=""):
        self.items.append({"name": name, "ok": bool(ok), "detail": detail})
        return ok

    # -- the boot ------------------------------------------------------

    def boot(self):
        rec = self.rec
        done = rec.get("outcome") == "completed"
        why = (rec.get("error") or "outcome: %s" % rec.get("outcome")).splitlines()[0]
        self.add("guest ran to the end", done, "" if done else why)
        info = rec.get("guest")
        if info is None:
            return
        built = (rec.get("kernel") or {}).get("release")
        self.add("kernel release", info.get("release") == built,
                 "guest %s, built %s" % (info.get("release"), built))
        want = "rt" if variants.get(rec["variant"]).preempt_rt else "preempt"
        self.add("preemption model", info.get("model") == want,
                 "guest %s, variant wants %s" % (info.get("model"), want))
        cpus = self.scn["qemu"]["cpus"]
        self.add("cpu count", info.get("cpus") == str(cpus),
                 "guest %s, qemu %d" % (info.get("cpus"), cpus))

    def driver(self):
        if not self.scn["driver"]["load"] or self.rec.get("guest") is None:
            return
        d = self.rec.get("driver")
        module = self.scn["driver"]["module"]
        if d is None:
            self.add("driver loaded (%s)" % module, False, "insmod did not run")
            return
        self.add("driver loaded (%s)" % module, d["rc"] == 0, d["output"][-200:])
        if d["rc"] == 0:
            self.add("/dev/irq-sensor0 exists", d.get("dev_rc") == 0,
                     "test -c: rc=%s" % d.get("dev_rc"))

    # -- steps ---------------------------------------------------------

    def steps(self):
        want, got = self.scn["steps"], self.rec.get("steps") or []
        if self.rec.get("guest") is not None and len(got) < len(want):
            self.add("every step ran", False, "%d of %d (next: %s)"
                     % (len(got), len(want), want[len(got)]["type"]))
        for st, step in zip(want, got):
            getattr(self, "step_" + st["type"].replace("-", "_"))(st, step)

    def step_cyclictest(self, st, step):
        res = parse_cyclictest(step.get("output"))
        self.add("cyclictest ran", step["rc"] == 0 and res is not None,
                 "rc=%d" % step["rc"] if res else "no cyclictest summary in output")
        if res:
            self.figures["cyclictest_max_us"] = max(self.figures.get("cyclictest_max_us", 0),
                                                    res["max_us"])
            self.figures["cyclictest_avg_us"] = res["avg_us"]

    def sensor_read(self, st, step, what):
        """The checks of one sensor-read; returns its JSON result or None."""
        res = tool_result(step, "sensor-read")
        if res is None:
            self.add("%s: sensor-read reported" % what, False,
                     "rc=%d, no JSON result: %s" % (step["rc"], step.get("output", "")[-300:]))
            return None
        ok = step["rc"] == 0 and not res.get("timed_out") and not res.get("interrupted")
        self.add("%s: sensor-read completed" % what, ok,
                 "" if ok else "rc=%d timed_out=%s interrupted=%s" % (
                     step["rc"], res.get("timed_out"), res.get("interrupted")))
        self.add("%s: sample values intact" % what, res.get("bad_values") == 0,
                 "bad_values=%s" % res.get("bad_values"))
        if st.get("samples"):
            self.add("%s: read %d samples" % (what, st["samples"]),
                     (res.get("samples") or 0) >= st["samples"],
                     "read %s" % res.get("samples"))
        if st.get("contiguous"):
            self.add("%s: contiguous sequence" % what,
                     res.get("gaps") == 0 and res.get("samples", 0) > 0,
                     "samples=%s gaps=%s missing=%s" % (
                         res.get("samples"), res.get("gaps"), res.get("missing")))
        self.figures.setdefault("sensor_read", []).append(
            {k: res.get(k) for k in ("samples", "gaps", "missing", "bad_values",
                                     "ring_overflows", "elapsed_s")})
        self.figures["driver_counters"] = res.get("counters")
        return res

    def step_sensor(self, st, step):
        mode = st["mode"] or self.scn["sensor"]["mode"]
        self.sensor_read(st, step, "sensor (%s)" % mode)

    def step_gdb_fire(self, st, step):
        res = self.sensor_read({}, step, "gdb-fire") if "command" in step else None
        self.add("gdb-fire: fired from inside the hog", step.get("fired", 0) > 0,
                 "fired %s of %d (address %s)" % (step.get("fired"), st["fires"],
                                                  step.get("address")))
        self.figures["gdb_fire"] = {"fired": step.get("fired"), "address": step.get("address"),
                                    "samples_read": res and res.get("samples")}

    def step_campaign(self, st, step):
        self.sensor_read({}, step, "campaign")

    def campaign(self):
        c = self.scn["campaign"]
        exact = any(st["type"] == "campaign" for st in self.scn["steps"])
        if not (exact or c["landings"]):
            return
        logs = self.rec["logs"]
        files = {"sections": logs.get("campaign_sections"),
                 "progress": logs.get("campaign_progress"),
                 "landings": logs.get("landings"), "console": logs.get("console"),
                 "dmesg_after_hang": logs.get("dmesg_after_hang"),
                 "cpus_after_hang": logs.get("cpus_after_hang"),
                 "tasks_after_hang": logs.get("tasks_after_hang")}
        res = self.figures["campaign"] = campaign.analyze(self.rec, files)
        if self.rec.get("guest") is None:
            return
        self.add("campaign: soft sections to work on", res["sections"] > 0,
                 "%d selected (%s)" % (res["sections"], ", ".join(c["select"])))
        if res["sections"]:
            self.add("campaign: interrupts landed inside soft sections",
                     res["sections_landed"] > 0,
                     "%d of %d sections, %d of %d instructions" % (
                         res["sections_landed"], res["sections"], res["insns_landed"],
                         res["insns"]))
        if self.exp["findings_max"] is not None:
            self.add("campaign: findings <= %d" % self.exp["findings_max"],
                     len(res["findings"]) <= self.exp["findings_max"],
                     "; ".join(_finding_text(f) for f in res["findings"]))
        if self.exp["finding_in"]:
            self.add("campaign: a finding in %s" % self.exp["finding_in"],
                     self.finding_in(res), "; ".join(_finding_text(f) for f in res["findings"])
                     or "no finding")

    def finding_in(self, res):
        pat = self.exp["finding_in"]
        for f in res["findings"]:
            for a in [f.get("attributed")] + list(f.get("candidates", [])):
                if a and any(fnmatch.fnmatchcase(n, pat) for n in
                             [a["function"], a["landed_in"]] + a.get("inlined", [])):
                    return True
        return False

    def step_shell(self, st, step):
        self.add("shell: %s" % st["command"][:60], step["rc"] == st["expect_rc"],
                 "rc=%d, expected %d" % (step["rc"], st["expect_rc"]))

    def step_load(self, st, step):
        name = "loadgen %s" % ",".join(st["generators"])
        if step.get("background"):
            self.add(name + " started", step["rc"] == 0,
                     "rc=%d %s" % (step["rc"], step.get("output", "")[-200:]))
            if step["rc"] != 0:
                return
            # Stopped and waited for after the steps (boot.stop_background):
            # no line means its errors are unknown, which is not "none".
            res = tool_result({"output": step.get("final_output")}, "loadgen")
            if self.add(name + " reported at its stop", res is not None,
                        (step.get("final_output") or "no output")[-200:]):
                self.add(name + " ran without errors", not res.get("errors"),
                         "errors=%s failures=%s unavailable=%s"
                         % (res.get("errors"), res.get("failures"), res.get("unavailable")))
            return
        res = tool_result(step, "loadgen")
        self.add(name + " ran", step["rc"] == 0 and res is not None,
                 "rc=%d %s" % (step["rc"], step.get("output", "")[-200:]))

    def step_rmmod_insmod(self, st, step):
        cycles = step["cycles"]
        ok = len(cycles) == st["cycles"] and all(
            c["rmmod"] == 0 and c.get("insmod") == 0 for c in cycles)
        self.add("rmmod/insmod x%d clean" % st["cycles"], ok,
                 "; ".join("rmmod rc=%s insmod rc=%s" % (c["rmmod"], c.get("insmod"))
                           for c in cycles))

    # -- files ---------------------------------------------------------

    def console(self):
        text = ""
        for key in ("console", "dmesg_after_hang"):
            path = self.rec["logs"].get(key)
            if path and os.path.exists(path):
                with open(path, encoding="utf-8", errors="replace") as f:
                    text += f.read()
        found = console.scan(text)
        self.figures["console"] = {k: len(v) for k, v in found.items()}
        if self.exp["console_clean"]:
            bad = [line for v in found.values() for line in v]
            self.add("console clean (no BUG/WARNING/Oops/lockdep/panic)", not bad,
                     "; ".join(bad[:3]))

    def gdb_check(self):
        if not self.scn["gdb"]["check"]:
            return
        g = gdbcheck.read(self.rec["logs"].get("gdb_check", ""))
        if g is None:
            self.add("gdb check produced a verdict", False,
                     "no gdb-check.json (see %s)" % self.rec["logs"].get("gdb"))
            return
        longest = g.get("longest_window") or {}
        self.figures["gdb"] = {
            "mode": g["mode"], "distinct_sites": g["distinct_sites"], "stops": g["stops"],
            "breakpoints": g["breakpoints"], "violations": g["violations"],
            "static_cli": g["static"]["cli"], "static_sites": g["static"]["sites"],
            "longest_window_insns": longest.get("instructions"),
            "longest_window_at": longest.get("function"),
            "wall_s": g["wall_s"],
        }
        if g["table"]:
            limit = self.exp["violations_max"] or 0
            first = (g["violation_records"] or [{}])[0]
            self.add("gdb: cli only in allow-listed hard sections (<= %d violations)" % limit,
                     g["violations"] <= limit,
                     "%d violations, first at %s (%s)" % (
                         g["violations"], first.get("function"), first.get("task"))
                     if g["violations"] else "")
        else:
            self.add("gdb census ran (stock kernel: counts only)",
                     g["distinct_sites"] > 0, "%d sites" % g["distinct_sites"])

    def hardoff_tracker(self):
        """The IF tracker's verdicts from its recorded JSON (and the loaded
        modules' allowed sites the boot recorded beside it)."""
        if not self.scn["trace"]["hardoff"]:
            return
        try:
            figs, items = hardoff.judge_files(self.rec["logs"], self.exp,
                                              artifacts.vmlinux(self.rec["variant"]))
        except hardoff.PluginDataError as e:
            self.add("hard-off tracker produced a result", False, str(e))
            return
        self.figures["hardoff"] = figs
        for name, ok, detail in items:
            self.add(name, ok, detail)

    def physical_limit(self):
        """Hard-stage latency max beside the longest hard-off window on the
        sensor's CPU (a figure, not a verdict: the two clocks agree only
        under icount, and entry/handler time adds to the window)."""
        cpus = None
        for step in self.rec.get("steps") or []:
            if isinstance(step, dict) and step.get("irq_cpus") is not None:
                cpus = step["irq_cpus"]
        if "hardoff" not in self.figures or cpus is None:
            return
        lim = hardoff.physical_limit(figures.get({"figures": self.figures}, "hard max"),
                                     self.figures["hardoff"], cpus)
        if lim:
            self.figures["physical_limit"] = lim

    def sensor(self):
        if not self.scn["sensor"]["enabled"]:
            return
        path = self.rec["logs"].get("sensor")
        needs = [k for k in ("lost_max",) + tuple(b[1] for b in STAGES_BOUNDS)
                 if self.exp[k] is not None]
        if not path or not os.path.exists(path):
            if needs or self.rec.get("outcome") == "completed":
                self.add("device event log recorded", False,
                         "no %s: cannot judge %s" % (path or "sensor.log",
                                                     ", ".join(needs) or "the device"))
            return
        s = sensorlog.summarize(path)
        self.figures["sensor"] = s
        c = s["counts"]
        self.add("device event log intact", c["corrupt"] == 0 and c["log_full"] == 0,
                 "%d corrupt lines, log %s" % (c["corrupt"], "cut at its size cap"
                                               if c["log_full"] else "complete"))
        if c["raised"]:
            self.add("stage order t_raise <= hard <= thread <= user",
                     s["stage_order_errors"] == 0,
                     "%d samples out of order" % s["stage_order_errors"])
        if self.exp["lost_max"] is not None:
            self.lost(s)
        for stage, key, figure in STAGES_BOUNDS:
            bound = self.exp[key]
            if bound is None:
                continue
            value = s["latency_ns"][stage].get(figure)
            self.add("%s %s <= %g us" % (stage, figure, bound),
                     value is not None and value <= bound * 1000,
                     "%s ns" % value if value is not None else "no %s-stage samples" % stage)

    def lost(self, s):
        c, host = s["counts"], self.figures.get("host")
        lost = c["lost"]
        detail = "lost %d (deadline %d, overflow %d) in %d bursts" % (
            lost, c["lost_deadline"], c["lost_overflow"], s["loss_bursts"])
        if c["host_late"]:
            detail += ("; %d generator events not raised: QEMU ran the device's timer "
                       "more than %g ms late" % (c["host_late"],
                                                 self.scn["sensor"]["late_skip_ns"] / 1e6))
        excused = False
        if host and lost:
            all_host, text, counts = hostnoise.explain_losses(
                s["loss_burst_spans_ns"], s["loss_bursts"], host)
            host.update(counts)
            host["loss_detail"] = text
            detail += text
            excused = all_host and self.exp["host_stalls_excuse_losses"]
        if excused:
            detail += " - excused: every burst is at a host stall or freeze"
            self.excuse_gaps(lost)
        self.add("samples lost <= %d" % self.exp["lost_max"],
                 lost <= self.exp["lost_max"] or excused, detail)

    def excuse_gaps(self, lost):
        """The reader's sequence gaps are the device's lost samples when all
        of those were lost at host stalls or freezes: clear its contiguity verdicts."""
        missing = sum(r.get("missing") or 0 for r in self.figures.get("sensor_read", []))
        if missing > lost:
            return
        for v in self.items:
            if v["name"].endswith(": contiguous sequence") and not v["ok"]:
                v["ok"] = True
                v["detail"] += (" - excused: the missing samples were lost at host stalls "
                                "or freezes")

    def cyclictest_bound(self):
        bound = self.exp["cyclictest_max_us"]
        if bound is None:
            return
        value = self.figures.get("cyclictest_max_us")
        self.add("cyclictest max <= %d us" % bound, value is not None and value <= bound,
                 "max %s us" % value if value is not None else "no cyclictest result")

    # -- the run's status ----------------------------------------------

    def expected_failure(self, result):
        """A negative scenario passes when the rig detects the failure."""
        want = self.exp["expect_failure"]
        found = self.figures.get("console", {})
        error = self.rec.get("error") or ""
        detected = {
            # lock debugging reports: lockdep, the irqsoft check, spinlock BUGs
            "lockdep": found.get("lockdep", 0) + found.get("bug", 0) > 0,
            "hang": self.rec.get("outcome") == "timeout" or (
                self.rec.get("outcome") == "guest-error"
                and ("timed out" in error or "did not" in error)),
            "violation": (self.figures.get("gdb") or {}).get("violations", 0) > 0
            or ((self.figures.get("hardoff") or {}).get("violations") or 0) > 0,
            "finding": bool((self.figures.get("campaign") or {}).get("findings")) and (
                not self.exp["finding_in"] or self.finding_in(self.figures["campaign"])),
        }
        hit = [k for k, v in detected.items() if v] if want == "any" else \
            ([want] if detected[want] else [])
        for v in self.items:
            v["expected_failure_context"] = True
        self.items.insert(0, {"name": "expected failure detected (%s)" % want,
                              "ok": bool(hit),
                              "detail": "detected: %s" % (", ".join(hit) or "nothing")})
        result["expected_failure"] = {"want": want, "detected": detected}
        # A rig failure is never a detection.
        if self.rec.get("outcome") == "rig-error":
            return "error"
        return "pass" if hit else "fail"

    def run(self):
        self.boot()
        self.driver()
        self.steps()
        self.console()
        self.gdb_check()
        self.hardoff_tracker()
        self.campaign()
        if self.rec.get("host"):
            self.figures["host"] = dict(self.rec["host"])   # the loss match adds to it
        self.sensor()
        self.physical_limit()
        self.cyclictest_bound()
        result = {"verdicts": self.items, "figures": self.figures}
        if self.exp["expect_failure"]:
            result["status"] = self.expected_failure(result)
        elif self.rec.get("outcome") != "completed":
            result["status"] = "error"
        else:
            result["status"] = "pass" if all(v["ok"] for v in self.items) else "fail"
        return result


def _finding_text(f):
    a = f.get("attributed")
    kinds = ",".join(r["kind"] for r in f["reports"])
    if not a:
        return "%s (not attributed)" % kinds
    return "%s at %s in %s (section %s)" % (kinds, a["address"], a["landed_in"], a["section"])


def judge(rec):
    """{"status", "verdicts", "figures"[, "expected_failure"]} of a run record."""
    return Judge(rec).run()


def _digest(path):
    import hashlib
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except (OSError, TypeError):
        return None


def judge_repeat(run, earlier):
    """A repeat of a scenario that expects identical repeats: its device
    event log must equal run #0's (among ``earlier`` judged runs), byte for
    byte.  Adds the verdict to ``run`` (judged)."""
    if not run["config"]["expect"]["identical_repeats"] or run["repeat"] == 0:
        return
    first = next((r for r in earlier if r["scenario"] == run["scenario"]
                  and r["variant"] == run["variant"] and r["repeat"] == 0), None)
    a = _digest(((first or {}).get("logs") or {}).get("sensor"))
    b = _digest((run.get("logs") or {}).get("sensor"))
    ok = a is not None and a == b
    run["verdicts"].append({"name": "device event log identical to run #0", "ok": ok,
                            "detail": "sha256 %s vs %s" % ((a or "-")[:12], (b or "-")[:12])})
    if not ok and run["status"] == "pass":
        run["status"] = "fail"
