"""`runner.py hardoff RESULTS`: the longest hard-off windows of a result set,
symbolised (the IF-tracker plugin's iftrack.json of each boot).

RESULTS is results/<run-id> (or its results.json), or one iftrack.json.
Sites are named with the variant's vmlinux in this tree's build/.
"""

import os

from irqrig import hardoff, paths, results
from irqrig.errors import IrqrigError


def boots(target):
    """[(label, variant or None, iftrack.json path)] in a result set."""
    if target.endswith(".json") and os.path.basename(target) != "results.json":
        return [(target, None, target)]
    try:
        data = results.load(target)
    except (OSError, ValueError) as e:
        raise IrqrigError("%s: not a result set (%s)" % (target, e)) from None
    out = []
    for run in data["runs"]:
        path = (run.get("logs") or {}).get("iftrack")
        if path:
            label = "%s / %s%s" % (run.get("scenario", "?"), run.get("variant", "?"),
                                   "" if not run.get("repeat") else " r%d" % run["repeat"])
            out.append((label, run.get("variant"), path))
    return out


def main(target, top=10, sites=15, vmlinux=None):
    found = boots(target)
    if not found:
        raise IrqrigError("%s: no boot with [trace] hardoff = true in it" % target)
    texts = []
    for label, variant, path in found:
        try:
            data = hardoff.load(path)
        except hardoff.PluginDataError as e:
            texts.append("== %s\n%s" % (label, e))
            continue
        vm = vmlinux or (os.path.join(paths.kernel_dir(variant), "vmlinux")
                         if variant else None)
        mods = os.path.join(os.path.dirname(path), hardoff.MODULES_FILE)
        secs = {}
        if os.path.exists(mods):
            with open(mods, encoding="utf-8") as f:
                secs = hardoff.module_sections(f.read())
            if variant:
                data = hardoff.allow_modules(
                    data, hardoff.module_allowed(secs, hardoff.ko_files(variant)))
        texts.append("== %s\n%s" % (label, hardoff.listing(
            data, hardoff.Symboliser(vm, secs), top, sites)))
    return "\n\n".join(texts)
