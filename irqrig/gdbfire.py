"""A gdb-driven fault: fire the sensor from inside the driver's soft-off hog.

The exact case of the 2005 patch: an old driver sits in a long
local_irq_disable() section when its device interrupts.  gdb breaks on the
first instruction after the hog's interrupt disable, and raises the
irq-sensor interrupt right there (`irqrig fire-at`, gdb-scripts).  The
device then measures how long the hard stage waits: the rest of the hog on
stock kernels, about nothing with RT_IRQ_DISABLE and IRQF_NODELAY.
"""

import re

from irqrig import gdbrun, gdbscripts, qemu
from irqrig.errors import IrqrigError

HOG_FUNCTION = re.compile(r"sensor_hog")
DISABLE_CALL = re.compile(r"soft_local_irq_disable")


def fire_offset(ko):
    """.text offset of the instruction after the hog's interrupt disable."""
    inventory = gdbscripts.module("inventory")
    prev_disable = False
    func = None
    for line in inventory._objdump(ko):
        line = line.rstrip("\n")
        m = inventory._FUNC.match(line)
        if m:
            func = m.group(2)
            continue
        m = inventory._INSN.match(line)
        if not m:
            continue
        addr, mnem, args = int(m.group(1), 16), m.group(2), m.group(3) or ""
        if not HOG_FUNCTION.search(func or ""):
            continue
        if prev_disable and not mnem.startswith("R_X86_64_"):
            return addr
        if mnem == "cli" or (mnem.startswith("R_X86_64_") and DISABLE_CALL.search(args)):
            prev_disable = True
    raise IrqrigError("%s: found no interrupt disable in the hog" % ko)


def gdb(variant, sock, addr, fires, log_path):
    """The gdb that fires (not started)."""
    return gdbrun.Gdb(variant, sock, ["irqrig fire-at 0x%x %d %s"
                                      % (addr, fires, qemu.SENSOR_QOM_PATH)], log_path)


def fired(output):
    """How many times it fired, from its output."""
    m = re.search(r"irqrig fire-at: fired (\d+) times", output)
    return int(m.group(1)) if m else 0
