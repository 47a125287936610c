"""Dynamic check over QEMU's gdbstub: which IF-clearing sites run, and are
they allowed?

Modes:
  violations  breakpoints only on cli sites outside the build-time table
              (.hard_irq_sites); any stop is a violation.  The normal mode
              for patched kernels: allowed sites never stop the guest.
  census      one-shot breakpoints on every cli site (deleted at the first
              hit): distinct sites executed.  For stock kernels, which
              have no table (every site counts, nothing is "allowed").

At each stop the check records site, CPU, task and backtrace.  It measures
hard-off windows by single-stepping to the next instruction that sets IF,
but a step costs ~15 ms through the gdbstub, so only within a budget of
steps per run (WINDOW_STEP_BUDGET) and a per-window limit: the result says
how many windows were measured and which were cut off.  The device's
hard-stage latency is the figure that covers every window.  Modules loaded later are
covered too: a breakpoint on do_init_module() adds their sites.

Results are written as JSON when the target goes away (guest power-off or
the runner stopping QEMU).
"""

import json
import time

import gdb

from irqrig_gdb import inventory

X86_EFLAGS_IF = 0x200
WINDOW_STEP_LIMIT = 300         # per window
WINDOW_STEP_BUDGET = 600        # per run


def _u64(expr):
    return int(gdb.parse_and_eval(expr)) & 0xFFFFFFFFFFFFFFFF


def current_task():
    """(comm, pid) of the task on the selected CPU, via the kernel's scripts."""
    try:
        task = gdb.parse_and_eval("$lx_current()")
        return task["comm"].string(), int(task["pid"])
    except gdb.error:
        return "?", -1


def symbol_offset(pc):
    """(name, offset) of the ELF symbol covering pc, None if none does.
    Minimal symbols, not DWARF: gdb's relocation of a module's debug info
    can put a .text and an .init.text function at the same address, the
    symbol table never does."""
    try:
        text = gdb.execute("info symbol 0x%x" % pc, to_string=True)
    except gdb.error:
        return None
    if text.startswith("No symbol"):
        return None
    words = text.split()            # NAME [+ OFF] in section SECTION [of FILE]
    return words[0], int(words[2]) if words[1] == "+" else 0


def symbol_at(pc):
    """The ELF symbol covering pc (symbol_offset())."""
    found = symbol_offset(pc)
    return found[0] if found else None


def backtrace(limit=12):
    out = []
    frame = gdb.newest_frame()
    while frame is not None and len(out) < limit:
        pc = frame.pc()
        name = symbol_at(pc) or frame.name() or "0x%x" % pc
        sal = frame.find_sal()
        where = ""
        if sal.symtab and frame.name() == name:
            where = "%s:%d" % (sal.symtab.filename, sal.line)
        out.append("%s %s" % (name, where))
        try:
            frame = frame.older()
        except gdb.error:
            break
    return out


def module_text_base(mod):
    """Where a module's .text starts: mod->mem[MOD_TEXT] since 6.4,
    mod->core_layout before (6.1)."""
    try:
        return int(mod["mem"][0]["base"])
    except gdb.error:
        return int(mod["core_layout"]["base"])


def load_module_symbols(mod, ko, text_base):
    """add-symbol-file for a module being initialised, as lx-symbols does,
    but with every section (.init.text too), so backtraces through its
    init function name it."""
    sections = {}
    try:
        attrs = mod["sect_attrs"].dereference()
        for n in range(int(attrs["nsections"])):
            a = attrs["attrs"][n]
            sections[a["battr"]["attr"]["name"].string()] = int(a["address"])
    except gdb.error:
        pass                                  # no sysfs: .text alone
    text = sections.pop(".text", text_base)
    args = "".join(" -s %s 0x%x" % (k, v) for k, v in sorted(sections.items()) if v)
    try:
        gdb.execute("add-symbol-file %s 0x%x%s" % (ko, text, args), to_string=True)
    except gdb.error as e:
        gdb.write("irqrig check: no symbols for %s: %s\n" % (ko, e))


def measure_window(limit=WINDOW_STEP_LIMIT):
    """Single-step from a cli to the first instruction with IF set again.

    Returns (instructions, function) or (None, None) past the limit."""
    steps = 0
    while steps < limit:
        gdb.execute("stepi", to_string=True)
        steps += 1
        if _u64("$eflags") & X86_EFLAGS_IF:
            return steps, gdb.newest_frame().name()
    return None, None


class Checker:
    def __init__(self, vmlinux, mode, out, modules_dir=None):
        self.vmlinux = vmlinux
        self.mode = mode
        self.out = out
        self.modules_dir = modules_dir
        self.sites = {}              # address -> site dict (static inventory)
        self.hits = {}               # address -> number of stops
        self.violations = []
        self.windows = []
        self.breakpoints = {}
        self.t0 = time.monotonic()
        self.stops = 0
        self.module_bp = None
        self.step_budget = WINDOW_STEP_BUDGET

    # -- setup -------------------------------------------------------

    def load(self):
        inv = inventory.inventory(self.vmlinux, lines=True)
        self.has_table = inv["summary"]["table_entries"] is not None
        for s in inv["sites"]:
            if s["kind"] == "cli":
                self.sites[s["addr"]] = dict(s, image="vmlinux")
        self.static = inv["summary"]
        if self.mode == "violations" and not self.has_table:
            # Every site would be a breakpoint and a violation: the guest
            # would crawl through thousands of stops and never boot.
            raise gdb.GdbError("irqrig check: %s has no .hard_irq_sites table; "
                               "the violations mode needs an irqsoft kernel "
                               "(use census)" % self.vmlinux)
        for addr, s in self.sites.items():
            if self.mode == "census" or not s["allowed"]:
                self.add_breakpoint(addr)
        try:
            self.module_addr = _u64("(unsigned long)&do_init_module")
            self.module_bp = gdb.Breakpoint("*0x%x" % self.module_addr, internal=True)
            self.module_bp.silent = True
        except gdb.error:
            self.module_bp = None

    def add_breakpoint(self, addr):
        if addr in self.breakpoints:
            return
        bp = gdb.Breakpoint("*0x%x" % addr, internal=True)
        bp.silent = True
        self.breakpoints[addr] = bp

    def add_module(self):
        """do_init_module(mod) hit: add the new module's cli sites."""
        try:
            # At the first instruction: the argument is still in %rdi.
            mod = gdb.parse_and_eval("(struct module *)$rdi").dereference()
            name = mod["name"].string()
            base = module_text_base(mod)
        except gdb.error:
            return
        ko = self.find_module(name)
        if ko is None:
            return
        load_module_symbols(mod, ko, base)
        inv = inventory.inventory(ko, lines=False)
        for s in inv["sites"]:
            if s["kind"] != "cli" or s["section"] != ".text":
                continue
            addr = base + s["addr"]
            self.sites[addr] = dict(s, image=name, addr=addr,
                                    line="%s+0x%x" % (s["function"], s["offset"]))
            if self.mode == "census" or not s["allowed"]:
                self.add_breakpoint(addr)

    def find_module(self, name):
        import glob
        import os
        if not self.modules_dir:
            return None
        for ko in glob.glob(os.path.join(self.modules_dir, "**", "*.ko"), recursive=True):
            if os.path.basename(ko)[:-3].replace("-", "_") == name:
                return ko
        return None

    # -- the loop ----------------------------------------------------

    def on_stop(self):
        pc = _u64("$pc")
        if self.module_bp is not None and pc == self.module_addr:
            self.add_module()
            return
        site = self.sites.get(pc)
        if site is None:
            return
        self.stops += 1
        self.hits[pc] = self.hits.get(pc, 0) + 1
        cpu = gdb.selected_thread().num - 1
        comm, pid = current_task()
        record = {"addr": "0x%x" % pc, "function": site["function"],
                  "line": site.get("line"), "image": site["image"], "cpu": cpu,
                  "task": "%s/%d" % (comm, pid)}
        allowed = site.get("allowed")
        if self.has_table and not allowed:
            record["backtrace"] = backtrace()
            self.violations.append(record)
        if self.step_budget > 0 and self.hits[pc] == 1:     # one window per site
            limit = min(WINDOW_STEP_LIMIT, self.step_budget)
            steps, end = measure_window(limit)
            self.step_budget -= steps or limit
            self.windows.append({"addr": record["addr"], "function": site["function"],
                                 "line": site.get("line"), "instructions": steps,
                                 "cut_off_at": None if steps else limit, "ended_in": end})
        if self.mode == "census":
            bp = self.breakpoints.pop(pc, None)
            if bp is not None:
                bp.delete()

    def run(self):
        self.load()
        while True:
            try:
                gdb.execute("continue", to_string=True)
            except gdb.error:
                break                      # target gone: guest off or QEMU stopped
            try:
                self.on_stop()
            except gdb.error as e:
                gdb.write("irqrig check: %s\n" % e)
        self.write()

    def write(self):
        longest = max((w for w in self.windows if w["instructions"]),
                      key=lambda w: w["instructions"], default=None)
        result = {
            "mode": self.mode,
            "table": self.has_table,
            "static": self.static,
            "breakpoints": len(self.breakpoints),
            "stops": self.stops,
            "distinct_sites": len(self.hits),
            "hits": {"0x%x" % a: {"count": n, "function": self.sites[a]["function"],
                                   "line": self.sites[a].get("line"),
                                   "allowed": self.sites[a].get("allowed")}
                     for a, n in sorted(self.hits.items())},
            "violations": len(self.violations),
            "violation_records": self.violations[:50],
            "windows": self.windows,
            "longest_window": longest,
            "wall_s": round(time.monotonic() - self.t0, 1),
        }
        with open(self.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
