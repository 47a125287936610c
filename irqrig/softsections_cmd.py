"""The soft-section tables of `runner.py inventory`, next to the cli table.

Per variant: soft sections (calls of the soft irqs-off entry points), how
many are bounded statically, per subsystem; optionally the sections that
match given patterns, one row each.  Stock kernels get a row that says
they have none (they have no soft irqs-off state).
"""

import json
import os

from irqrig import results, softsections


def _pct(a, b):
    return "-" if not b else "%.1f%%" % (100.0 * a / b)


def variant_row(inv):
    s = inv["summary"]
    if not inv["soft_api"]:
        return {"variant": inv["variant"], "soft sections": "-", "bounded": "-",
                "partial": "-",
                "functions": "-", "insns": "-", "save/disable": "-",
                "default selection": "- (stock: local_irq_save() is pushf; cli)"}
    sel = softsections.pick(inv["sections"])
    return {"variant": inv["variant"], "soft sections": s["sections"],
            "bounded": "%d (%s)" % (s["bounded"], _pct(s["bounded"], s["sections"])),
            "partial": s["partial"], "functions": s["functions"], "insns": s["insns"],
            "save/disable": "%d/%d" % (s["by_entry"].get("soft_local_irq_save", 0),
                                       s["by_entry"].get("soft_local_irq_disable", 0)),
            "default selection": "%d sections, %d bounded"
                                 % (len(sel), sum(1 for x in sel if x["bounded"]))}


def subsystem_rows(inv, top=25):
    """Per subsystem, most sections first; the default selection marked."""
    per = inv["summary"]["by_subsystem"]
    names = sorted(per, key=lambda k: (-per[k]["sections"], k))
    chosen = set(softsections.DEFAULT_SELECT)
    keep = [n for n in names if n in chosen] + \
        [n for n in names if n not in chosen][:max(0, top - len(chosen))]
    rows = []
    for n in sorted(keep, key=lambda k: (-per[k]["sections"], k)):
        p = per[n]
        rows.append({"subsystem": n + (" *" if n in chosen else ""),
                     "sections": p["sections"],
                     "bounded": "%d (%s)" % (p["bounded"], _pct(p["bounded"], p["sections"])),
                     "partial": p["partial"],
                     "functions": p["functions"], "insns": p["insns"]})
    for n in softsections.DEFAULT_SELECT:
        if n not in per:
            rows.append({"subsystem": n + " *", "sections": 0, "bounded": "-",
                         "partial": 0, "functions": 0, "insns": 0})
    rest = [per[n] for n in names if n not in keep]
    if rest:
        rows.append({"subsystem": "(%d others)" % len(rest),
                     "sections": sum(p["sections"] for p in rest),
                     "bounded": "%d" % sum(p["bounded"] for p in rest),
                     "partial": sum(p["partial"] for p in rest),
                     "functions": sum(p["functions"] for p in rest),
                     "insns": sum(p["insns"] for p in rest)})
    return rows


def section_rows(secs):
    rows = []
    for s in secs:
        rows.append({"id": s["id"], "source": "%s:%s" % (s["file"], s["line"]),
                     "inlined": ",".join(f.split(" ", 1)[0] for f in s.get("inlined", ()))
                                or "-",
                     "start": "-" if s["start"] is None else _hex(s["start"]),
                     "end": "-" if s["end"] is None else _hex(s["end"]),
                     "insns": len(s["insns"]), "bounded": "yes" if s["bounded"] else "no",
                     "callees": ",".join(s.get("callees", ())) or "-"})
    return rows


def _hex(x):
    return "%x" % x if isinstance(x, int) else str(x)


def run(names, out_dir=None, show=None):
    """Tables (text) and data for the variants; show: patterns of sections
    to list one per row.  Writes softsections-<variant>.json (every section
    with its instructions) and softsections.md into out_dir."""
    invs = [softsections.inventory(n) for n in names]
    parts = ["Soft sections (calls of %s; bounded: every path reaches the matching "
             "enable/restore in the function); * = default campaign selection"
             % "/".join(softsections.analysis.ENTRY), results.table([variant_row(i) for i in invs])]
    md = ["# Soft sections per variant", "",
          "Calls of the soft irqs-off entry points (%s) in vmlinux and the modules. "
          "Bounded: every path from the call reaches the matching enable/restore "
          "within the function.  Stock kernels have none (local_irq_save() is an "
          "inline pushf; cli there)." % ", ".join(softsections.analysis.ENTRY), "",
          results.table([variant_row(i) for i in invs], markdown=True)]
    for inv in invs:
        if not inv["soft_api"]:
            parts.append(inv["note"])
            continue
        rows = subsystem_rows(inv)
        parts += ["%s: soft sections per subsystem" % inv["variant"], results.table(rows)]
        md += ["", "## %s per subsystem" % inv["variant"], "", results.table(rows, markdown=True)]
        if show:
            sel = softsections.pick(inv["sections"], show)
            rows = section_rows(sel)
            title = "%s: sections matching %s" % (inv["variant"], " ".join(show))
            parts += [title, results.table(rows) if rows else "(none)\n"]
            md += ["", "## " + title, "", results.table(rows, markdown=True) if rows else "(none)"]
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        for inv in invs:
            with open(os.path.join(out_dir, "softsections-%s.json" % inv["variant"]), "w",
                      encoding="utf-8") as f:
                json.dump(inv, f)
        with open(os.path.join(out_dir, "softsections.md"), "w", encoding="utf-8") as f:
            f.write("\n".join(md) + "\n")
    data = {i["variant"]: {k: i[k] for k in ("soft_api", "summary", "images")}
            for i in invs}
    for i in invs:
        if "note" in i:
            data[i["variant"]]["note"] = i["note"]
    return "\n".join(parts), data
