"""A gdb-driven fault: fire the sensor from inside the driver's soft-off hog.

The exact case of the 2005 patch: an old driver sits in a long
local_irq_disable() section when its device interrupts.  gdb breaks on the
first instruction after the hog's interrupt disable, and the breakpoint's
action raises the irq-sensor interrupt right there (QEMU monitor through
the gdbstub: qom-set <sensor> fire true).  The device then measures how
long the hard stage waits: the rest of the hog on stock kernels, about
nothing with RT_IRQ_DISABLE and IRQF_NODELAY.
"""

import os
import re
import subprocess
import sys

from irqrig import paths, qemu
from irqrig.errors import IrqrigError

sys.path.insert(0, paths.GDB_SCRIPTS)
from irqrig_gdb import inventory  # noqa: E402

HOG_FUNCTION = re.compile(r"sensor_hog")
DISABLE_CALL = re.compile(r"soft_local_irq_disable")


def fire_offset(ko):
    """.text offset of the instruction after the hog's interrupt disable."""
    prev_disable = False
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


SCRIPT = r'''
import gdb
count = 0
bp = gdb.Breakpoint("*0x%(addr)x", internal=True)
bp.silent = True
while count < %(fires)d:
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
    if int(gdb.parse_and_eval("$pc")) & 0xffffffffffffffff != 0x%(addr)x:
        continue
    gdb.execute("monitor qom-set %(path)s fire true", to_string=True)
    count += 1
bp.delete()
gdb.write("irqrig gdb-fire: fired %%d times\n" %% count)
try:
    gdb.execute("detach")
except gdb.error:
    pass
'''


class GdbFire:
    """gdb in the background, firing the sensor at the hog."""

    def __init__(self, sock, addr, fires, log_path, qom_path=qemu.SENSOR_QOM_PATH):
        self.sock = sock
        self.addr = addr
        self.fires = fires
        self.log_path = log_path
        self.qom_path = qom_path
        self.proc = None

    def start(self):
        script = os.path.join(os.path.dirname(self.log_path), "gdb-fire.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(SCRIPT % {"addr": self.addr, "fires": self.fires, "path": self.qom_path})
        self.log = open(self.log_path, "w", encoding="utf-8")
        self.proc = subprocess.Popen(
            ["gdb", "-batch", "-nx", "-ex", "set pagination off", "-ex", "set remotetimeout 60",
             "-ex", "target remote %s" % self.sock, "-x", script],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def finish(self, timeout=30):
        """Wait for gdb; returns how many times it fired."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            m = re.search(r"fired (\d+) times", f.read())
        return int(m.group(1)) if m else 0
