"""Interrupt campaigns: put interrupts inside soft sections on purpose, and
say what broke, where, and how to replay it.

Two modes (DESIGN.md section 6, scenarios/README.md [campaign]):
  random  fine-grained delivery (one instruction per TB) and a high-rate
          sensor, timers and IPIs under a workload; QEMU's interrupt log
          (irqrig/landings.py) says where every interrupt landed;
  exact   gdb stops at instructions inside each selected section and fires
          the sensor there (gdb-scripts/irqrig_gdb/campaign.py).

The sections come from the binary (irqrig/softsections.py), chosen by
subsystem or function patterns; each run writes the ones it used to
sections.json, so its verdicts can be judged again later from its files.
analyze() is pure: coverage per section and findings, each finding with
the section and instruction it is attributed to and a reproducer.
"""

import json
import os
import random
import re
import threading

from irqrig import console, landings, variants
from irqrig.errors import UsageError
from irqrig.util import log

SECTIONS = "campaign-sections.json"
TARGETS = "campaign-targets.json"
PROGRESS = "campaign-progress.jsonl"
LANDINGS = "landings.json"

RIP_RE = re.compile(r"RIP: 0010:([A-Za-z0-9_.]+)\+0x([0-9a-f]+)/0x[0-9a-f]+")


def _hex(a):
    return "0x%x" % a


# -- run time: which sections, which instructions --------------------------

def select(variant, patterns, sections_max, seed):
    """The soft sections of a variant the campaign works on (vmlinux), with
    the small callees inside them; [] on a stock kernel."""
    from irqrig import softsections
    secs = softsections.sections(variant, patterns or None, modules=False)
    if sections_max and len(secs) > sections_max:
        secs = sorted(random.Random(seed).sample(secs, sections_max), key=lambda s: s["start"])
    callees = softsections.callee_insns(variant, secs)
    return [{"id": s["id"], "function": s["function"], "file": s["file"],
             "line": s["line"], "subsystem": s["subsystem"], "start": s["start"],
             "end": s["end"], "insns": s["insns"], "bounded": s["bounded"],
             # the functions inlined at the section's start ("native_load_gs_index
             # (arch/x86/include/asm/gsseg.h:35)"...): a finding names them too
             "inlined": [f.split(" ", 1)[0] for f in s.get("inlined", ())],
             "callees": {n: callees[n] for n in s.get("callees", ()) if n in callees}}
            for s in secs]


def targets(sections, per_section, seed, only=None):
    """Exact mode: every instruction of a short section (and of its small
    callees), a seeded sample of per_section of a longer one.  only: one
    address (a reproducer)."""
    rng = random.Random(seed)
    out = []
    for s in sections:
        insns = list(s["insns"]) + [a for c in s["callees"].values() for a in c]
        if only is not None:
            insns = [a for a in insns if a == only]
        elif len(insns) > per_section:
            insns = sorted(rng.sample(insns, per_section))
        out += [{"addr": a, "section": s["id"]} for a in insns]
    seen, uniq = set(), []
    for t in out:
        if t["addr"] not in seen:
            seen.add(t["addr"])
            uniq.append(t)
    return uniq


def write_json(path, data):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f)


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_progress(path):
    out = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass        # the line gdb was writing when it died
    except OSError:
        pass
    return out


class ProgressTicker:
    """A line on the runner's log every `every_s` while gdb fires: how many
    interrupts it has fired and how many landed (from its progress file),
    so a 10-minute campaign is not silent."""

    def __init__(self, path, name, every_s=60):
        self.path, self.name, self.every_s = path, name, every_s
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._thread.start()

    def stop(self):
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self):
        while not self._done.wait(self.every_s):
            progress = read_progress(self.path)
            fires = [p for p in progress if "landed" in p]
            stops = [p for p in progress if "stops" in p]
            log("%s: campaign: %d interrupts fired, %d landed in a soft section%s" % (
                self.name, len(fires), sum(1 for p in fires if p["landed"]),
                "; %d breakpoint stops (%d on the other CPU)" % (
                    stops[-1]["stops"], stops[-1]["stops_other_cpu"]) if stops else ""))


class EndOnce:
    """End the gdb campaign once, from whichever comes first (a timer, the
    step): write its end file (so that gdb tells this stop from its own
    rotation ticks), then call `interrupt` (SIGINT).  Once: a second SIGINT
    could land in gdb's clean-up of the campaign."""

    def __init__(self, interrupt, end_path):
        self._interrupt = interrupt
        self._end_path = end_path
        self._lock = threading.Lock()
        self._done = False

    def __call__(self):
        with self._lock:
            if self._done:
                return
            self._done = True
        with open(self._end_path, "w", encoding="utf-8"):
            pass
        self._interrupt()


# -- judging: coverage and findings (pure) ---------------------------------

class Index:
    """Which section an address belongs to: its own instructions, or the
    instructions of a small callee called inside it."""

    def __init__(self, sections):
        self.sections = {s["id"]: s for s in sections}
        self.own, self.via = {}, {}
        for s in sections:
            for a in s["insns"]:
                self.own.setdefault(a, []).append(s["id"])
            for name, insns in s["callees"].items():
                for a in insns:
                    self.via.setdefault(a, []).append((s["id"], name))

    def where(self, addr):
        """[(section id, callee name or None)] for an address."""
        return [(i, None) for i in self.own.get(addr, [])] + self.via.get(addr, [])


def coverage(sections, landed):
    """Per section: instructions in range (own + small callees) and those
    where an interrupt landed.  landed: {addr: count}."""
    out = {}
    for s in sections:
        insns = set(s["insns"]) | {a for c in s["callees"].values() for a in c}
        hit = sorted(a for a in insns if landed.get(a))
        out[s["id"]] = {"function": s["function"], "subsystem": s["subsystem"],
                        "insns": len(insns), "landed": len(hit),
                        "landings": sum(landed[a] for a in hit)}
    return out


def _findings_from_console(text):
    """Kernel reports: (kind, first line, the function of the first RIP)."""
    found = console.scan(text)
    m = RIP_RE.search(text)
    rip_fn = m.group(1) if m else None
    return [(kind, lines[0], rip_fn) for kind, lines in found.items() if lines]


def _describe(index, addr):
    where = index.where(addr)
    if not where:
        return None
    sid, callee = where[0]
    s = index.sections[sid]
    return {"section": sid, "function": s["function"], "file": s["file"],
            "line": s["line"], "address": _hex(addr),
            "landed_in": callee or s["function"], "inlined": s.get("inlined", [])}


def task_lines(path, kind):
    """The KIND: lines of a tasks-after-hang file (irqrig tasks), without
    their count line: 'waiting' (each task blocked uninterruptibly, where
    it sleeps and on which lock), 'runnable' (each task ready to run but
    not on a CPU, longest off it first)."""
    if not path or not os.path.exists(path):
        return []
    head = re.compile(r"%s: (?:(\d+ tasks )|(.*))" % kind)
    with open(path, encoding="utf-8", errors="replace") as f:
        found = [head.match(line) for line in f]
    return [m.group(2).strip() for m in found if m and m.group(2)]


def waiting_tasks(path):
    return task_lines(path, "waiting")


def starved_tasks(path, most=3):
    """The runnable tasks longest off the CPU (a guest too slow for its
    load looks hung: its tasks are ready but do not run)."""
    return task_lines(path, "runnable")[:most]


def analyze(rec, files):
    """Coverage and findings of a campaign run from its recorded files.
    files: {sections, progress, landings, console, dmesg_after_hang,
    cpus_after_hang, tasks_after_hang} paths (None if absent)."""
    spec = rec["config"]["campaign"]
    sections = read_json(files.get("sections") or "") or []
    index = Index(sections)
    progress = read_progress(files.get("progress") or "")
    land = landings.read(files.get("landings") or "") if files.get("landings") else None
    landed = {}
    if land:
        for ip, n in land["by_ip"].items():
            landed[int(ip, 16)] = landed.get(int(ip, 16), 0) + n
    fires = [p for p in progress if "landed" in p]
    for p in fires:
        if p["landed"]:
            landed[p["addr"]] = landed.get(p["addr"], 0) + 1
    cov = coverage(sections, landed)
    text = ""
    for key in ("console", "dmesg_after_hang"):
        path = files.get(key)
        if path and os.path.exists(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                text += f.read()
    kinds = _findings_from_console(text)
    outcome, error = rec.get("outcome"), rec.get("error") or ""
    if outcome == "timeout" or (outcome == "guest-error" and "timed out" in error):
        cpus = read_json(files.get("cpus_after_hang") or "") or []
        where = ", ".join("CPU%d in %s" % (c["cpu"], c["function"]) for c in cpus)
        waiting = waiting_tasks(files.get("tasks_after_hang") or "")
        starved = starved_tasks(files.get("tasks_after_hang") or "")
        kinds.append(("hang", error.splitlines()[0] + (" [then %s]" % where if where else "")
                      + (" [waiting: %s]" % "; ".join(waiting) if waiting else "")
                      + (" [runnable, not running: %s]" % "; ".join(starved)
                         if starved else ""),
                      cpus[0]["function"] if cpus else None))
    elif outcome == "guest-error" and "exited unexpectedly" in error \
            and not any(k == "panic" for k, _, _ in kinds):
        kinds.append(("reset", "QEMU exited without a kernel panic: a triple fault "
                      "or reset", None))
    # A bug by itself, crash or not: in kernel code with IF set, the GS
    # base is the kernel's, or the next interrupt reads per-CPU data
    # through the user's.
    for p in fires:
        if p.get("user_gs"):
            kinds.append(("user-gs", "an interrupt landed at 0x%x with the user GS base "
                          "0x%x" % (p.get("landed_rip") or p["addr"], p["gs_base"]), None))
            break
    if land and land.get("fault"):
        kinds.append((land["fault"]["kind"].replace(" ", "-"),
                      "QEMU's interrupt log: %s" % land["fault"]["kind"], None))
    findings = []
    if kinds:
        findings.append(_attribute(rec, index, kinds, fires, land))
    per = [dict(s_cov, id=sid) for sid, s_cov in cov.items()]
    covered = [c for c in per if c["landed"]]
    return {
        "mode": "exact" if any(s["type"] == "campaign" for s in rec["config"]["steps"])
        else "random",
        "select": spec["select"],
        "sections": len(sections),
        "sections_landed": len(covered),
        "insns": sum(c["insns"] for c in per),
        "insns_landed": sum(c["landed"] for c in per),
        "fires": len(fires),
        "fires_landed": sum(1 for p in fires if p["landed"]),
        "landings": (land or {}).get("kernel_landings"),
        "coverage": per,
        "findings": findings,
        "ended": next((p for p in progress if "ended" in p), None),
        # the guest's breakpoint stops (all, the other CPU's): its slowdown
        "stops": next((p for p in reversed(progress) if "stops" in p), None),
    }


def _attribute(rec, index, kinds, fires, land):
    """One finding for the run: what was reported, and the interrupt it is
    attributed to: exact mode, the fire that entered with a user GS base,
    else the last fire that landed, else the last fire; random mode,
    the last kernel landing inside a section before the first double or
    triple fault (candidates listed: the log has no vCPU number)."""
    finding = {"reports": [{"kind": k, "line": line, "rip_function": fn}
                           for k, line, fn in kinds],
               "variant": rec["variant"], "scenario": rec["scenario"],
               "scenario_file": rec.get("scenario_file"),
               "seed": rec["config"]["campaign"]["seed"], "attributed": None}
    if fires:
        # The strongest evidence first: a fire whose interrupt entered the
        # kernel with a user GS base; then the last fire that landed (one
        # that did not land changed nothing); then the last fire.
        wrong_gs = [p for p in fires if p.get("user_gs")]
        landed = [p for p in fires if p["landed"]]
        last = (wrong_gs or landed or fires)[-1]
        finding["attributed"] = _describe(index, last["addr"])
        if wrong_gs and last.get("landed_rip", last["addr"]) != last["addr"]:
            # another interrupt was pending first and landed elsewhere:
            # that landing is the one with the wrong base
            finding["attributed"] = _describe(index, last["landed_rip"]) or \
                finding["attributed"]
        if wrong_gs:
            how = "the interrupt fired there entered the kernel with the user GS " \
                  "base 0x%x (fire %d of %d)" % (last["gs_base"], last["fire"], len(fires))
        elif landed:
            after = sum(1 for p in fires if p["fire"] > last["fire"])
            how = "the last interrupt fired that landed (fire %d of %d%s)" % (
                last["fire"], len(fires),
                "; the %d after it did not land" % after if after else "")
        else:
            how = "the last interrupt fired (fire %d of %d), which did not land " \
                  "there: IF was clear or another interrupt came first" % (
                      last["fire"], len(fires))
        finding["how"] = how
    elif land and land.get("fault"):
        cands = []
        for ev in reversed(land["fault"]["before"]):
            if ev["v"] >= landings.FIRST_EXTERNAL_VECTOR and not ev["soft"]:
                d = _describe(index, int(ev["ip"], 16))
                if d:
                    cands.append(dict(d, vector="0x%02x" % ev["v"]))
        if cands:
            finding["attributed"] = cands[0]
            finding["candidates"] = cands[:8]
            finding["how"] = ("the last hardware interrupt that landed inside a soft "
                              "section before the %s" % land["fault"]["kind"])
    if finding["attributed"]:
        finding["reproducer"] = {
            "scenario": rec.get("scenario_file"), "variant": rec["variant"],
            "seed": finding["seed"], "address": finding["attributed"]["address"],
            "command": "./runner.py run %s --variant %s --reproduce RESULTS/findings.json#N"
                       % (rec.get("scenario_file"), rec["variant"])}
    return finding


# -- reproducers -----------------------------------------------------------

def load_reproducer(ref):
    """RESULTS[/findings.json]#N -> the finding's reproducer dict, checked
    (a one-line UsageError for anything this runner did not write)."""
    path, _, n = ref.partition("#")
    if os.path.isdir(path):
        path = os.path.join(path, "findings.json")
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        raise UsageError("--reproduce %s: %s is not a findings file" % (ref, path))
    found = data["findings"]
    if not (n or "0").isdigit() or int(n or 0) >= len(found) or \
            not isinstance(found[int(n or 0)], dict) or \
            not isinstance(found[int(n or 0)].get("reproducer"), dict):
        raise UsageError("--reproduce %s: no finding #%s with a reproducer in %s "
                         "(%d findings)" % (ref, n, path, len(found)))
    rep = found[int(n or 0)]["reproducer"]
    bad = [k for k, ok in (
        ("address", lambda v: isinstance(v, str) and _is_hex(v)),
        ("seed", lambda v: isinstance(v, int) and not isinstance(v, bool)
         and 0 <= v < 2**32),
        ("variant", lambda v: v in variants.VARIANTS)) if not ok(rep.get(k))]
    if bad:
        raise UsageError("--reproduce %s: finding #%s's reproducer has no valid %s"
                         % (ref, n or 0, ", ".join(bad)))
    return rep


def _is_hex(text):
    try:
        int(text, 16)
        return True
    except ValueError:
        return False


def reproduce(point, rep):
    """A scenario point that replays a finding: exact mode at one address
    (the random part of the scenario becomes a campaign step there)."""
    d = point.data
    d["campaign"]["target"] = rep["address"]
    d["campaign"]["seed"] = rep["seed"]
    d["campaign"]["tries"] = max(d["campaign"]["tries"], 20)
    steps = []
    for st in d["steps"]:
        if st["type"] == "sensor":
            st = {"type": "campaign", "duration_s": st["duration_s"],
                  "fire_s": None, "timeout_s": st["timeout_s"]}
        steps.append(st)
    if not any(st["type"] == "campaign" for st in steps):
        raise UsageError("--reproduce: %s has no sensor or campaign step to replay a "
                         "finding with (use the scenario the finding came from: %s)"
                         % (point.path, rep.get("scenario")))
    d["steps"] = steps
    d["qemu"]["one_insn_per_tb"] = False     # gdb stops at the exact instruction
    d["qemu"]["one_insn_per_tb_boot"] = False
    d["campaign"]["landings"] = False
    return point


def findings_file(rs_dir, runs):
    """results/<run>/findings.json: every finding of the result set."""
    out = []
    for r in runs:
        camp = (r.get("figures") or {}).get("campaign")
        for f in (camp or {}).get("findings", []):
            out.append(dict(f, run_status=r["status"]))
    path = os.path.join(rs_dir, "findings.json")
    for i, f in enumerate(out):
        if f.get("reproducer"):
            f["reproducer"]["command"] = f["reproducer"]["command"].replace(
                "RESULTS/findings.json#N", "%s#%d" % (path, i))
    write_json(path, {"findings": out})
    return path, out
