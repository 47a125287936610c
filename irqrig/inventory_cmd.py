"""`runner.py inventory`: the static cli table per variant, side by side.

The modern version of the 2005 patch's results table.  Counts come from
gdb-scripts/irqrig_gdb/inventory.py over each variant's vmlinux (and its
modules); nothing here is typed in except the seed's own figures.
"""

import json
import os

from irqrig import artifacts, gdbscripts, results, variants
from irqrig.util import log

inventory = gdbscripts.module("inventory")


def baseline_for(name):
    """The PREEMPT variant of the same kernel version and configuration
    (tinyconfig or wide.config): the removal % base."""
    v = variants.get(name)
    base = "%s-preempt%s" % (v.version, "-wide" if v.wide else "")
    return base if base in variants.VARIANTS else None


def run(names, out_dir=None, lines=True, soft=True, soft_show=None):
    """The cli table; with soft, also the soft-section tables
    (irqrig/softsections_cmd.py), appended to the text and the JSON."""
    rows, full = [], {}
    for name in names:
        vmlinux = artifacts.require(name, "vmlinux")
        log("inventory: %s" % name)
        inv = inventory.inventory(vmlinux, lines=lines)
        mods = {os.path.basename(ko): inventory.inventory(ko, lines=False)["summary"]
                for ko in artifacts.modules(name)}
        full[name] = {"vmlinux": inv, "modules": mods}
    for name in names:
        s = full[name]["vmlinux"]["summary"]
        base = baseline_for(name)
        removal = None
        if base in full:
            b = full[base]["vmlinux"]["summary"]["sites"]
            removal = round(100.0 * (b - s["sites"]) / b, 1) if b else None
        rows.append({
            "variant": name,
            "sites": s["sites"],
            "removal vs PREEMPT": "-" if removal is None else "%.1f%%" % removal,
            "inline cli": s["cli"] - s["cli_in_helpers"],
            "lock-helper calls": s["helper_calls"],
            "cli in table": "-" if s["cli_allowed"] is None else s["cli_allowed"],
            "cli not in table": "-" if s["cli_not_allowed"] is None else s["cli_not_allowed"],
            "popf/iret": "%d/%d" % (s["popf"], s["iret"]),
        })
    seed = [{"variant": "2.6.11 %s (seed)" % k, "sites": v,
             "removal vs PREEMPT": "%.0f%%" % (100.0 * (inventory.SEED["PREEMPT"] - v)
                                                / inventory.SEED["PREEMPT"]),
             "inline cli": "-", "lock-helper calls": "-", "cli in table": "-",
             "cli not in table": "-", "popf/iret": "-"} for k, v in inventory.SEED.items()]
    text = results.table(rows + seed)
    soft_data = None
    if soft:
        from irqrig import softsections_cmd
        soft_text, soft_data = softsections_cmd.run(names, out_dir, soft_show)
        text += "\n" + soft_text
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "inventory.json"), "w", encoding="utf-8") as f:
            json.dump({"variants": full, "table": rows, "seed": inventory.SEED,
                       "soft": soft_data}, f, indent=1)
        with open(os.path.join(out_dir, "inventory.md"), "w", encoding="utf-8") as f:
            f.write("# cli sites per variant\n\n"
                    "sites = inline cli instructions + calls of out-of-line irq-disabling "
                    "lock helpers (each call is a hard section).\n\n")
            f.write(results.table(rows + seed, markdown=True))
    return rows, text, full
