"""The exact interrupt campaign, inside gdb: fire the irq-sensor at chosen
instructions and record where each interrupt landed.

`irqrig campaign TARGETS.json PROGRESS.jsonl` (commands.py) runs it.
TARGETS.json (written by the runner, irqrig/campaign.py):

    {"targets": [{"addr": N, "section": ID}, ...], "cpu": 0,
     "qom_path": "/machine/peripheral/sensor", "tries": 3}

For each stop at a target on the sensor's CPU: fire the sensor (its MSI is
routed to that CPU), single-step with interrupts allowed, and read the
interrupted RIP from the hardware frame: the interrupt landed at the
target if that RIP is the target.  A landing also records the active GS
base: an interrupt that enters the kernel from kernel code with a user GS
base (between the two swapgs of a GS switch) will read per-CPU data
through the wrong base - that fire is the cause of whatever breaks next,
so the campaign stops there.  One line per fire goes to PROGRESS.jsonl
at once (a crash right after a fire must leave its line behind).  A
covered target's breakpoint goes; a target is tried at most `tries` times.
The loop ends when every target is done, when the target goes away, or on
SIGINT (the runner's way to end the campaign); then gdb detaches and the
guest runs on.

Breakpoints cost the guest even when not hit: QEMU's TCG walks the whole
breakpoint list before each translation block, and runs every instruction
of a page that holds one as a block of its own (accel/tcg/cpu-exec.c,
check_for_breakpoints_slow()).  The campaign had put all its targets
(2289 on 6.1) in at once, on the hot pages of the locking, scheduler and
mm code.  So at most WINDOW targets (the scenario's campaign.window; 0:
all) are inserted at once, taken round-robin over the sections; a target that has waited ROTATE_S without
a fire goes to the back of the queue (keeping its tries) for the next.  A
window of cold targets stops nothing, so a clock thread interrupts the
guest every ROTATE_S to rotate (through gdb's event loop:
gdb.post_event).  The runner ends the campaign by creating PROGRESS.end
and sending SIGINT, so its stop is told from a tick.  Every breakpoint
stop also holds the guest for a gdb round trip, on either CPU: the stops
are counted (all, and those on the other CPU) and logged every
STOPS_EVERY_S.
"""

import collections
import json
import os
import threading
import time

import gdb

from irqrig_gdb import check

FRAME_WORDS = 3                 # look this far up the stack for the frame
KERNEL_CS = 0x10
X86_EFLAGS_IF = 0x200
MAX_STEPS = 4
KERNEL_MIN = 0xffff800000000000
# QEMU's gdbstub single-step flags: ENABLE | NOIRQ | NOTIMER is its
# default; the fire step alone lets interrupts in.
SSTEP_MASKED = 0x7
SSTEP_IRQS = 0x1
STOPS_EVERY_S = 30
WINDOW = 128
ROTATE_S = 5.0


def _landed_rip():
    """The interrupted RIP if we stand just inside an interrupt entry."""
    sp = check._u64("$sp")
    inferior = gdb.selected_inferior()
    words = []
    for i in range(FRAME_WORDS + 2):
        try:
            raw = bytes(inferior.read_memory(sp + 8 * i, 8))
        except gdb.MemoryError:
            return None
        words.append(int.from_bytes(raw, "little"))
    # [rip, cs, rflags]: the hardware frame (an entry stub may have
    # pushed a vector number first).
    for i in range(FRAME_WORDS):
        if words[i + 1] == KERNEL_CS and words[i] >> 47:
            return words[i]
    return None


def round_robin(targets):
    """The targets one section at a time in turn (the first of each, then
    the second, ...), so that a window of them spans many sections."""
    by_section = collections.OrderedDict()
    for t in targets:
        by_section.setdefault(t["section"], []).append(t["addr"])
    out, rank = [], 0
    while len(out) < len(targets):
        out += [addrs[rank] for addrs in by_section.values() if rank < len(addrs)]
        rank += 1
    return out


class Campaign:
    def __init__(self, targets_path, progress_path):
        with open(targets_path, encoding="utf-8") as f:
            spec = json.load(f)
        self.cpu = spec.get("cpu", 0)
        self.qom = spec.get("qom_path", "/machine/peripheral/sensor")
        self.tries = spec.get("tries", 3)
        self.window = spec.get("window", WINDOW) or len(spec["targets"])
        self.rotate_s = spec.get("rotate_s", ROTATE_S)
        self.section = {t["addr"]: t["section"] for t in spec["targets"]}
        self.left = {a: self.tries for a in self.section}
        self.queue = collections.deque(round_robin(spec["targets"]))
        self.progress = open(progress_path, "a", encoding="utf-8")
        self.bps = {}
        self.inserted = {}
        self.end_path = progress_path + ".end"
        self.continuing = False
        self.ticked = False
        self.clock_done = threading.Event()
        self.fired = 0
        self.stops = 0
        self.stops_other_cpu = 0
        self.ticks = 0
        self.stops_logged = time.time()

    def log(self, record):
        self.progress.write(json.dumps(record) + "\n")
        self.progress.flush()

    def setup(self):
        # Breakpoints stay in guest memory while stopped: with hundreds of
        # them, removing and inserting all at each stop would cost more
        # than the stop.
        gdb.execute("set breakpoint always-inserted on", to_string=True)
        # Every step but the fire step masks interrupts: gdb steps a CPU
        # over a breakpoint when it continues from one, and a pending
        # timer let in there would land at a target unseen (on the other
        # CPU, say), leaving a crash no fire explains.
        self.sstep(SSTEP_MASKED)
        # Step only the CPU that stopped at the target: otherwise the other
        # CPU runs too and may report a stop first, and the step's result
        # would be read from the wrong CPU.
        gdb.execute("set scheduler-locking step", to_string=True)
        self.fill()
        self.log({"started": time.time(), "targets": len(self.section),
                  "window": self.window, "rotate_s": self.rotate_s})

    def fill(self):
        """Insert queued targets until the window is full."""
        while len(self.bps) < self.window and self.queue:
            addr = self.queue.popleft()
            try:
                bp = gdb.Breakpoint("*0x%x" % addr, internal=True)
            except gdb.error as e:
                self.log({"addr": addr, "error": str(e)})
                continue
            bp.silent = True
            self.bps[addr] = bp
            self.inserted[addr] = time.time()

    def rotate(self):
        """Targets not fired at for ROTATE_S make room for queued ones;
        then the window is filled (after a target is done, too)."""
        if not self.queue:
            return
        now = time.time()
        for addr in [a for a, t in self.inserted.items() if now - t >= self.rotate_s]:
            self.drop(addr)
            self.queue.append(addr)
        self.fill()

    @staticmethod
    def sstep(flags):
        gdb.execute("maintenance packet Qqemu.sstep=0x%x" % flags, to_string=True)

    def drop(self, addr):
        bp = self.bps.pop(addr, None)
        self.inserted.pop(addr, None)
        if bp is not None:
            bp.delete()

    def start_clock(self):
        def clock():
            while not self.clock_done.wait(self.rotate_s):
                gdb.post_event(self.tick)
        threading.Thread(target=clock, daemon=True).start()

    def tick(self):
        """In gdb's event loop: stop a `continue` that waits on cold
        targets, so that they rotate."""
        if self.continuing and self.queue and not self.ticked:
            self.ticked = True
            try:
                gdb.execute("interrupt", to_string=True)
            except gdb.error:
                self.ticked = False

    def loop(self):
        self.start_clock()
        try:
            return self.targets_loop()
        finally:
            self.clock_done.set()

    def targets_loop(self):
        while self.bps:
            self.continuing = True
            try:
                gdb.execute("continue", to_string=True)
            except gdb.error:
                return "target gone"
            finally:
                self.continuing = False
                # An interrupt sent as a breakpoint stopped the guest may
                # come later or never: the next tick must not wait for it.
                self.ticked = False
            pc = check._u64("$pc")
            cpu = gdb.selected_thread().num - 1
            if pc not in self.bps:
                if os.path.exists(self.end_path):
                    return "interrupted"        # SIGINT from the runner
                self.ticks += 1                 # a tick, or one that came late
                self.rotate()
                continue
            self.count_stop(cpu)
            if cpu == self.cpu:                 # the sensor cannot reach the other
                try:
                    record = self.on_target(pc)
                except gdb.error as e:
                    return "gdb error: %s" % e
                if record.get("user_gs"):
                    return "an interrupt entered the kernel with the user GS base"
                if self.left[pc] > 0 and pc in self.bps:
                    self.inserted[pc] = time.time()     # fired at: its wait restarts
            self.rotate()
        return "done"

    def on_target(self, pc):
        # Lift this breakpoint for the step: QEMU checks breakpoints before
        # it executes or delivers anything, so a step from an inserted one
        # would stop at once, where it is.
        bp = self.bps[pc]
        bp.enabled = False
        if_set = bool(check._u64("$eflags") & X86_EFLAGS_IF)
        gdb.execute("monitor qom-set %s fire true" % self.qom, to_string=True)
        self.fired += 1
        record = {"addr": pc, "section": self.section[pc], "fire": self.fired,
                  "t": time.time(), "if": if_set}
        self.log(dict(record, state="fired"))
        # The first step from a breakpoint stop reports a stop at once,
        # nothing executed or delivered (measured on QEMU 7.2: always
        # exactly one such stop); step until the pc moves, a few times.
        # Single steps let interrupts in here, so the fired interrupt lands
        # at the stepped instruction.
        self.sstep(SSTEP_IRQS)
        steps = 0
        while steps < MAX_STEPS:
            gdb.execute("stepi", to_string=True)
            steps += 1
            if check._u64("$pc") != pc:
                break
        self.sstep(SSTEP_MASKED)
        record["steps"] = steps
        bp.enabled = True
        if gdb.selected_thread().num - 1 != self.cpu:
            raise gdb.error("the step stopped on another CPU")
        rip = _landed_rip()
        record.update(landed=rip == pc, landed_rip=rip, pc_after=check._u64("$pc"))
        if rip is not None:
            # No swapgs on entry from kernel code: this is the base the
            # handler will use for per-CPU data.
            gs = check._u64("$gs_base")
            record.update(gs_base=gs, user_gs=gs < KERNEL_MIN)
        self.log(record)
        self.left[pc] -= 1
        if record["landed"] or self.left[pc] <= 0:
            self.drop(pc)
        return record

    def count_stop(self, cpu):
        self.stops += 1
        if cpu != self.cpu:
            self.stops_other_cpu += 1
        now = time.time()
        if now - self.stops_logged >= STOPS_EVERY_S:
            self.stops_logged = now
            self.log(self.stop_counts(t=now))

    def stop_counts(self, **extra):
        return dict(extra, stops=self.stops, stops_other_cpu=self.stops_other_cpu,
                    ticks=self.ticks, fired=self.fired, left=len(self.bps) + len(self.queue))

    def run(self):
        self.setup()
        try:
            reason = self.loop()
        except KeyboardInterrupt:               # SIGINT while gdb Python ran
            reason = "interrupted"
        self.log(self.stop_counts(ended=time.time(), reason=reason))
        for addr in list(self.bps):
            try:
                self.drop(addr)
            except gdb.error:
                pass
        self.progress.close()
        try:
            gdb.execute("detach", to_string=True)
        except gdb.error:
            pass
