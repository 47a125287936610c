"""gdb commands for people: `irqrig ...` (help irqrig lists them).

Modelled on the kernel's scripts/gdb (gdb.Command classes, one concern per
module).  Load with `source gdb-scripts/irqrig.py` after the kernel's
vmlinux-gdb.py of the same build (for $lx_current() and lx-symbols).
"""

import gdb

from irqrig_gdb import campaign, check, inventory, tasks

SOFT_IRQS_OFF_OFFSET = 1 << 24       # include/linux/preempt.h (RT_IRQ_DISABLE)


def _vmlinux():
    prog = gdb.current_progspace().filename
    if not prog:
        raise gdb.GdbError("no vmlinux loaded (file build/kernels/<variant>/vmlinux)")
    return prog


class IrqrigPrefix(gdb.Command):
    """irqrig: interrupt-masking tools for CONFIG_RT_IRQ_DISABLE kernels.

Subcommands:
  irqrig sections          list the hard sections (build-time table)
  irqrig state             soft/hard interrupt state per CPU, last callers
  irqrig tasks [--all]     sleeping tasks, their stacks and locks; deferred work
  irqrig break-window N    stop when a hard-off window exceeds N instructions
  irqrig fire [DEVICE]     raise an irq-sensor interrupt now (QOM fire)
  irqrig fire-at ADDR N    fire each time the guest reaches ADDR, N times
  irqrig campaign T P      the exact interrupt campaign (runner.py)
  irqrig check MODE FILE   run the dynamic cli check until the target ends"""

    def __init__(self):
        super().__init__("irqrig", gdb.COMMAND_USER, prefix=True)


class IrqrigSections(gdb.Command):
    """List the hard sections of the loaded vmlinux.

Usage: irqrig sections [--all]
Shows each cli site in the build-time table (.hard_irq_sites) with its
function and source line; --all also lists cli sites outside the table and
the counts of calls of irq-disabling lock helpers."""

    def __init__(self):
        super().__init__("irqrig sections", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        inv = inventory.inventory(_vmlinux(), lines=True)
        show_all = "--all" in arg.split()
        s = inv["summary"]
        if s["table_entries"] is None:
            gdb.write("no .hard_irq_sites table: not a CONFIG_RT_IRQ_DISABLE kernel\n")
        for site in inv["sites"]:
            if site["kind"] != "cli":
                continue
            if site["allowed"] or show_all:
                gdb.write("%s 0x%x %-40s %s\n" % (
                    "allowed" if site["allowed"] else "NOT    ", site["addr"],
                    site["function"], site.get("line", "")))
        gdb.write("%d cli sites, %s in the table; %d calls of lock helpers; "
                  "%d sites counted\n" % (s["cli"], s["cli_allowed"], s["helper_calls"],
                                          s["sites"]))


class IrqrigState(gdb.Command):
    """Show each CPU's interrupt state and the current task's last soft callers.

Usage: irqrig state
hard: the CPU's IF flag; soft: the RT_IRQ_DISABLE flag in the preempt
count; last-off/last-on: where the task last disabled/enabled soft irqs
(CONFIG_RT_IRQ_TRACE)."""

    def __init__(self):
        super().__init__("irqrig state", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        selected = gdb.selected_thread()
        try:
            for thread in gdb.selected_inferior().threads():
                thread.switch()
                cpu = thread.num - 1
                eflags = int(gdb.parse_and_eval("$eflags"))
                pc = self._preempt_count(cpu)
                comm, pid = check.current_task()
                line = "cpu%d: hard %s, soft %s, preempt_count 0x%x, task %s/%d" % (
                    cpu, "on " if eflags & check.X86_EFLAGS_IF else "OFF",
                    "OFF" if pc is not None and pc & SOFT_IRQS_OFF_OFFSET else "on ",
                    pc or 0, comm, pid)
                gdb.write(line + self._callers() + "\n")
        finally:
            selected.switch()

    @staticmethod
    def _preempt_count(cpu):
        for expr in ("((struct pcpu_hot *)((char *)&pcpu_hot + __per_cpu_offset[%d]))"
                     "->preempt_count" % cpu,
                     "*(int *)((char *)&__preempt_count + __per_cpu_offset[%d])" % cpu):
            try:
                return int(gdb.parse_and_eval(expr)) & 0x7FFFFFFF
            except gdb.error:
                continue
        return None

    @staticmethod
    def _callers():
        try:
            task = gdb.parse_and_eval("$lx_current()")
            off = int(task["irqsoft_off_ip"])
            on = int(task["irqsoft_on_ip"])
        except gdb.error:
            return ""
        return "\n      last soft off %s\n      last soft on  %s" % (
            gdb.execute("info symbol 0x%x" % off, to_string=True).strip(),
            gdb.execute("info symbol 0x%x" % on, to_string=True).strip())


class IrqrigTasks(gdb.Command):
    """Show who sleeps on what: for a hang.

Usage: irqrig tasks [--all]
Lists the tasks that are not runnable (--all: every task) with their state
and CPU, the stack of each (frame pointers), the rt_mutex each waits on and
its owner, then each CPU's current task and what it holds back under
CONFIG_RT_IRQ_DISABLE (logged vectors, deferred wakeups, kthread works)."""

    def __init__(self):
        super().__init__("irqrig tasks", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        tasks.report(gdb.write, all_states="--all" in arg.split())


class IrqrigBreakWindow(gdb.Command):
    """Stop when a hard-off window is longer than N instructions.

Usage: irqrig break-window N [FUNCTION-REGEX]
Puts breakpoints on the cli sites (optionally only in matching functions),
single-steps each window it meets and stops, with a backtrace, at the
first one longer than N instructions.  Slow: use on a few functions."""

    def __init__(self):
        super().__init__("irqrig break-window", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        import re
        args = arg.split()
        if not args or not args[0].isdigit():
            raise gdb.GdbError("usage: irqrig break-window N [FUNCTION-REGEX]")
        limit = int(args[0])
        rx = re.compile(args[1]) if len(args) > 1 else None
        inv = inventory.inventory(_vmlinux(), lines=False)
        bps = []
        for site in inv["sites"]:
            if site["kind"] == "cli" and (rx is None or rx.search(site["function"] or "")):
                bp = gdb.Breakpoint("*0x%x" % site["addr"], internal=True)
                bp.silent = True
                bps.append(bp)
        gdb.write("irqrig: watching %d cli sites for windows > %d instructions\n"
                  % (len(bps), limit))
        try:
            while True:
                gdb.execute("continue", to_string=True)
                start = gdb.newest_frame().name()
                steps, end = check.measure_window()
                if steps is None or steps > limit:
                    gdb.write("irqrig: window from %s: %s instructions (ended in %s)\n"
                              % (start, steps if steps else ">%d" % check.WINDOW_STEP_LIMIT,
                                 end))
                    gdb.execute("bt 15")
                    return
        finally:
            for bp in bps:
                bp.delete()


class IrqrigFire(gdb.Command):
    """Raise an irq-sensor interrupt now, at the current guest instruction.

Usage: irqrig fire [QOM-PATH]   (default /machine/peripheral/sensor)
Uses QEMU's monitor through the gdbstub (qom-set ... fire true); put it in
a breakpoint's commands to fire at an exact point, e.g. inside a driver's
soft-off section."""

    def __init__(self):
        super().__init__("irqrig fire", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        path = arg.strip() or "/machine/peripheral/sensor"
        out = gdb.execute("monitor qom-set %s fire true" % path, to_string=True)
        gdb.write(out or "irqrig: fired %s\n" % path)


class IrqrigFireAt(gdb.Command):
    """Fire the irq-sensor each time the guest reaches an instruction.

Usage: irqrig fire-at ADDRESS COUNT [QOM-PATH]
Continues the guest; every time a CPU stops at ADDRESS the sensor fires
(qom-set ... fire true), COUNT times, then the breakpoint goes and gdb
detaches.  Prints "irqrig fire-at: fired N times" (the runner reads it);
ends early, with what it fired, when the target goes away."""

    def __init__(self):
        super().__init__("irqrig fire-at", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        args = arg.split()
        if len(args) not in (2, 3):
            raise gdb.GdbError("usage: irqrig fire-at ADDRESS COUNT [QOM-PATH]")
        addr, count = int(args[0], 0), int(args[1])
        path = args[2] if len(args) > 2 else "/machine/peripheral/sensor"
        bp = gdb.Breakpoint("*0x%x" % addr, internal=True)
        bp.silent = True
        fired = 0
        try:
            while fired < count:
                try:
                    gdb.execute("continue", to_string=True)
                except gdb.error:
                    break                   # target gone
                if check._u64("$pc") != addr:
                    continue
                gdb.execute("monitor qom-set %s fire true" % path, to_string=True)
                fired += 1
        finally:
            gdb.write("irqrig fire-at: fired %d times\n" % fired)
            try:
                bp.delete()
                gdb.execute("detach", to_string=True)
            except gdb.error:
                pass


class IrqrigCampaign(gdb.Command):
    """Fire the irq-sensor at chosen instructions; record where it landed.

Usage: irqrig campaign TARGETS.json PROGRESS.jsonl
The exact interrupt campaign (irqrig_gdb/campaign.py): breakpoints on a
rotating window of the targets, and at each stop on the sensor's CPU a
fire and a single step with interrupts allowed.  Ends when all targets are
done, the target goes away, or on SIGINT once PROGRESS.jsonl.end exists
(a SIGINT without it is taken for the window's own rotation tick); then
detaches."""

    def __init__(self):
        super().__init__("irqrig campaign", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        args = arg.split()
        if len(args) != 2:
            raise gdb.GdbError("usage: irqrig campaign TARGETS.json PROGRESS.jsonl")
        campaign.Campaign(args[0], args[1]).run()


class IrqrigCheck(gdb.Command):
    """Run the dynamic cli check until the target goes away.

Usage: irqrig check violations|census OUT.json [MODULES-DIR]
violations: break only on cli sites outside the build-time table;
census: one-shot breakpoints on every cli site (stock kernels).
Writes the verdict as JSON when the guest powers off."""

    def __init__(self):
        super().__init__("irqrig check", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        args = arg.split()
        if len(args) < 2 or args[0] not in ("violations", "census"):
            raise gdb.GdbError("usage: irqrig check violations|census OUT.json [MODULES-DIR]")
        check.Checker(_vmlinux(), args[0], args[1],
                      modules_dir=args[2] if len(args) > 2 else None).run()


def register():
    IrqrigPrefix()
    IrqrigSections()
    IrqrigState()
    IrqrigTasks()
    IrqrigBreakWindow()
    IrqrigFire()
    IrqrigFireAt()
    IrqrigCampaign()
    IrqrigCheck()
