"""`runner.py hardoff RESULTS`: the longest hard-off windows of a result set,
symbolised (the IF-tracker plugin's iftrack.json of each boot).

RESULTS is results/<run-id> (or its results.json), or one iftrack.json.
Sites are named with the variant's vmlinux in this tree's build/; the
modules' allowed sites are those the boot recorded beside the JSON.
"""

import os

from irqrig import artifacts, hardoff, results
from irqrig.errors import UsageError


def _beside(path):
    """The log names of a lone iftrack.json and the files recorded beside it."""
    d = os.path.dirname(os.path.abspath(path))
    return {"iftrack": path, "modules": os.path.join(d, hardoff.MODULES_FILE),
            "iftrack_module_allow": os.path.join(d, hardoff.MODULE_ALLOW_FILE)}


def boots(target):
    """[(label, variant or None, logs, physical limit or None)] of the traced
    boots in a result set."""
    if target.endswith(".json") and os.path.basename(target) != "results.json":
        return [(target, None, _beside(target), None)]
    data = results.load(target)         # a bad results.json: one line, exit 2
    out = []
    for run in data["runs"]:
        logs = run.get("logs") or {}
        if logs.get("iftrack"):
            label = "%s / %s%s" % (run.get("scenario", "?"), run.get("variant", "?"),
                                   "" if not run.get("repeat") else " r%d" % run["repeat"])
            out.append((label, run.get("variant"), logs,
                        (run.get("figures") or {}).get("physical_limit")))
    return out


def main(target, top=10, sites=15, vmlinux=None):
    if top < 1 or sites < 0:
        raise UsageError("hardoff: --top must be >= 1 and --sites >= 0")
    found = boots(target)
    if not found:
        raise UsageError("%s: no boot with [trace] hardoff = true in it" % target)
    texts = []
    for label, variant, logs, limit in found:
        try:
            data = hardoff.load(logs["iftrack"])
        except hardoff.PluginDataError as e:
            if variant is None:         # the one iftrack.json given
                raise UsageError(str(e)) from None
            texts.append("== %s\n%s" % (label, e))
            continue
        vm = vmlinux or (artifacts.vmlinux(variant) if variant else None)
        secs = {}
        if logs.get("modules") and os.path.exists(logs["modules"]):
            with open(logs["modules"], encoding="utf-8") as f:
                secs = hardoff.module_sections(f.read())
        allow = logs.get("iftrack_module_allow")
        if allow and os.path.exists(allow):
            data = hardoff.allow_modules(data, hardoff.read_addresses(allow))
        texts.append("== %s\n%s%s" % (label, hardoff.listing(
            data, hardoff.Symboliser(vm, secs), top, sites), limit_text(limit)))
    return "\n\n".join(texts)


def limit_text(lim):
    """The hard-stage latency max beside the sensor CPU's longest window."""
    if not lim:
        return ""
    cpus = ", ".join("CPU%s (%d irqs)" % kv for kv in lim["sensor_cpus"].items())
    return ("\nhard latency max %.1f us; longest hard-off window on the sensor's %s "
            "%.1f us (%s clock); not explained by it: %.1f us\n" % (
                lim["hard_max_ns"] / 1000.0, cpus, lim["window_max_ns"] / 1000.0,
                lim.get("clock") or "?", lim["unexplained_ns"] / 1000.0))
