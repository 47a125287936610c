"""`runner.py overhead RESULTS`: the series' cost in instructions, from an
overhead-icount result set (scenarios/overhead-icount.toml).

Under -icount shift=0 with one vCPU the guest clock advances 1 ns per
instruction, so the driver's debugfs irqbench and the ovhbench tool time
instructions.  irqbench's loop is compiled once per primitive, so the
figure per pair is its whole loop iteration (the primitive plus 2-6
instructions of loop); the difference between two variants for the same
primitive is the series' cost, loop independent.  Numbers come only from
the recorded step outputs; a run without them is reported as missing.
"""

import json
import os
import re

from irqrig import results
from irqrig.errors import ResultsError

BENCH = ["local_irq_save_restore", "local_irq_disable_enable",
         "raw_spin_lock_irqsave_unlock", "empty"]
_BENCH_RE = re.compile(r"^(pairs|runs|[a-z_]+_ns) (\d+)\s*$")


def parse_irqbench(text):
    """{"pairs": N, "<name>": instructions per loop iteration} or None."""
    vals = {}
    for line in text.splitlines():
        m = _BENCH_RE.match(line.strip())
        if m:
            vals[m.group(1)] = int(m.group(2))
    pairs = vals.get("pairs")
    if not pairs or any("%s_ns" % b not in vals for b in BENCH):
        return None
    out = {"pairs": pairs, "runs": vals.get("runs")}
    for b in BENCH:
        out[b] = round(vals["%s_ns" % b] / pairs, 2)
    return out


def parse_ovhbench(text):
    """ovhbench's JSON line, or None."""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{") and '"ovhbench"' in line:
            try:
                d = json.loads(line)
            except ValueError:
                return None
            if d.get("fork_ns") and d.get("pipe_ns"):
                return d
    return None


def from_run(run):
    """The two benchmarks' figures of one run (None where not recorded)."""
    bench = ovh = None
    for st in run.get("steps") or []:
        out = st.get("output") or ""
        if st.get("rc") != 0:
            continue
        bench = bench or parse_irqbench(out)
        ovh = ovh or parse_ovhbench(out)
    fig = {"variant": run["variant"], "irqbench": bench, "ovhbench": None}
    if ovh:
        fig["ovhbench"] = {
            "fork": ovh["fork"], "pipe": ovh["pipe"], "runs": ovh["runs"],
            # best run: the fewest instructions (icount: the runs differ by
            # timer interrupts and page-cache state only)
            "fork_insns_per_iter": round(min(ovh["fork_ns"]) / ovh["fork"]),
            "pipe_insns_per_iter": round(min(ovh["pipe_ns"]) / ovh["pipe"]),
            "fork_ns": ovh["fork_ns"], "pipe_ns": ovh["pipe_ns"],
        }
    return fig


def _pct(new, base):
    return "%+.1f%%" % (100.0 * (new - base) / base) if base else "-"


def compute(data, base_variant):
    figs = [from_run(r) for r in data["runs"]]
    if not any(f["irqbench"] or f["ovhbench"] for f in figs):
        raise ResultsError("no irqbench or ovhbench output in this result set "
                           "(run scenarios/overhead-icount.toml)")
    base = next((f for f in figs if f["variant"] == base_variant), None)
    rows = []
    for f in figs:
        b, o = f["irqbench"], f["ovhbench"]
        row = {"variant": f["variant"]}
        for name in BENCH[:3]:
            v = b[name] if b else None
            ref = base["irqbench"][name] if base and base["irqbench"] else None
            row[name] = "-" if v is None else (
                "%.1f" % v if ref is None or f is base else "%.1f (%+.1f)" % (v, v - ref))
        for part in ("fork", "pipe"):
            key = "%s_insns_per_iter" % part
            v = o[key] if o else None
            ref = base["ovhbench"][key] if base and base["ovhbench"] else None
            row[part + " insns/iter"] = "-" if v is None else (
                "%d" % v if ref is None or f is base else "%d (%s)" % (v, _pct(v, ref)))
        rows.append(row)
    return figs, rows


def run(path, base_variant="6.12-rt"):
    data = results.load(path)
    figs, rows = compute(data, base_variant)
    text = ("instructions per loop iteration (icount shift=0, 1 vCPU); "
            "in brackets: the difference to %s\n" % base_variant) + results.table(rows)
    rdir = path if os.path.isdir(path) else os.path.dirname(path)
    with open(os.path.join(rdir, "overhead.json"), "w", encoding="utf-8") as f:
        json.dump({"base": base_variant, "figures": figs, "table": rows}, f, indent=1)
    with open(os.path.join(rdir, "overhead.md"), "w", encoding="utf-8") as f:
        f.write("# Overhead in instructions (`runner.py overhead %s`)\n\n" % rdir)
        f.write("Instructions per loop iteration under icount shift=0 with one vCPU; "
                "in brackets the difference to %s.  irqbench: best of %s runs of %s "
                "pairs; ovhbench: best of its runs.\n\n"
                % (base_variant,
                   next((f["irqbench"]["runs"] for f in figs if f["irqbench"]), "-"),
                   next((f["irqbench"]["pairs"] for f in figs if f["irqbench"]), "-")))
        f.write(results.table(rows, markdown=True))
    return text
