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
    """[(label, variant or None, logs)] of the traced boots in a result set."""
    if target.endswith(".json") and os.path.basename(target) != "results.json":
        return [(target, None, _beside(target))]
    data = results.load(target)         # a bad results.json: one line, exit 2
    out = []
    for run in data["runs"]:
        logs = run.get("logs") or {}
        if logs.get("iftrack"):
            label = "%s / %s%s" % (run.get("scenario", "?"), run.get("variant", "?"),
                                   "" if not run.get("repeat") else " r%d" % run["repeat"])
            out.append((label, run.get("variant"), logs))
    return out


def main(target, top=10, sites=15, vmlinux=None):
    if top < 1 or sites < 0:
        raise UsageError("hardoff: --top must be >= 1 and --sites >= 0")
    found = boots(target)
    if not found:
        raise UsageError("%s: no boot with [trace] hardoff = true in it" % target)
    texts = []
    for label, variant, logs in found:
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
        texts.append("== %s\n%s" % (label, hardoff.listing(
            data, hardoff.Symboliser(vm, secs), top, sites)))
    return "\n\n".join(texts)
