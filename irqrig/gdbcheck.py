"""The gdb dynamic check as part of a boot (gdb-scripts/irqrig_gdb/check.py).

QEMU starts paused with a gdbstub on a unix socket; gdb in batch mode loads
vmlinux, the kernel's gdb scripts and ours, sets the breakpoints and lets
the guest run.  When the guest powers off, gdb writes the verdict JSON.
"""

import json
import os

from irqrig import artifacts, gdbrun


def gdb(variant, sock, out_json, log_path, census):
    """The checking gdb (not started)."""
    if os.path.exists(out_json):
        os.unlink(out_json)
    mode = "census" if census else "violations"
    return gdbrun.Gdb(variant, sock, ["irqrig check %s %s %s" % (
        mode, out_json, artifacts.module_dir(variant))], log_path)


def read(out_json):
    """The check's verdict JSON, or None (gdb did not write it)."""
    try:
        with open(out_json, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
