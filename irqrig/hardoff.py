"""Hard-off windows from the IF-tracker TCG plugin (qemu-device/iftrack.c).

Three parts, each usable alone:
  inputs    what the plugin needs from a kernel image: the allow-list (the
            .hard_irq_sites table) and the IDT entry points (nm symbols),
            written as the plugin's text files, and the -plugin argument.
  reading   load() checks a recorded iftrack.json and symbolise() names its
            addresses (vmlinux functions, source lines).
  verdicts  figures() and verdicts() are pure functions of the JSON: the
            longest windows per site, violations (a window opened by an
            instruction outside the allow-list), the tracker's self-check.

irqrig/boot.py writes the inputs and records the files of a traced boot;
irqrig/verdicts.py judges them (judge_files()), from the records alone.
The plugin's arguments and its JSON are documented in qemu-device/README.md.
"""

import json
import os
import re
import subprocess

from irqrig import artifacts, gdbscripts, paths
from irqrig.errors import IrqrigError

inventory = gdbscripts.module("inventory")
Elf = gdbscripts.module("elf").Elf

JSON_NAME = "iftrack.json"
KERNEL_HALF = 0xffff800000000000

# IDT entry points whose exception pushes an error code (x86-64, 6.x).
ERRCODE_ENTRIES = {
    "asm_exc_double_fault", "asm_exc_invalid_tss", "asm_exc_segment_not_present",
    "asm_exc_stack_segment", "asm_exc_general_protection", "asm_exc_alignment_check",
    "asm_exc_page_fault", "asm_exc_control_protection", "asm_exc_vmm_communication",
}
IPI_ENTRIES = {
    "asm_sysvec_reschedule_ipi", "asm_sysvec_call_function",
    "asm_sysvec_call_function_single", "asm_sysvec_irq_work", "asm_sysvec_reboot",
}
NR_EXTERNAL_VECTORS = 256 - 32
SYSVEC_RE = re.compile(r"^asm_(sysvec_\w+|exc_\w+|int80_emulation)$")


class PluginDataError(IrqrigError):
    """A recorded plugin file is missing, unreadable or not iftrack's."""


# -- inputs ------------------------------------------------------------------

def nm_symbols(vmlinux):
    """{name: (address, size)} of vmlinux's text symbols (nm -S)."""
    proc = subprocess.run(["nm", "-S", "--defined-only", vmlinux], capture_output=True,
                          text=True, check=False)
    if proc.returncode:
        raise IrqrigError("nm failed on %s: %s" % (vmlinux, proc.stderr.strip()[-200:]))
    out = {}
    for line in proc.stdout.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tT":
            out[f[3]] = (int(f[0], 16), int(f[1], 16))
        elif len(f) == 3 and f[1] in "tT":
            out.setdefault(f[2], (int(f[0], 16), 0))
    return out


def entry_class(name):
    if name == "asm_sysvec_apic_timer_interrupt":
        return "timer"
    if name in IPI_ENTRIES:
        return "ipi"
    if name.startswith("asm_sysvec_"):
        return "apic"
    if name == "asm_exc_nmi":
        return "nmi"
    if name == "asm_int80_emulation":
        return "syscall"
    return "exception"


def entry_points(symbols):
    """[(address, errcode, class, name)]: where the CPU enters the kernel
    through an IDT gate.  The external-vector stubs are irq_entries_start
    (224 stubs of equal size) and spurious_entries_start (same stride)."""
    out = []
    for name, (addr, _) in symbols.items():
        if SYSVEC_RE.match(name):
            out.append((addr, name in ERRCODE_ENTRIES, entry_class(name), name))
    # irq_entries_start has a stub for each vector from 32 up to the first
    # system vector, spurious_entries_start one for each above: 224 stubs of
    # IDT_ALIGN bytes together.
    irq = symbols.get("irq_entries_start")
    spur = symbols.get("spurious_entries_start") or (0, 0)
    total = (irq[1] + spur[1]) if irq else 0
    if not irq or not irq[1] or total % NR_EXTERNAL_VECTORS:
        raise IrqrigError("vmlinux's irq_entries_start/spurious_entries_start sizes (%s, %s) "
                          "are not 224 equal stubs: cannot place the interrupt entry points"
                          % (irq and irq[1], spur[1]))
    stride = total // NR_EXTERNAL_VECTORS
    n_irq = irq[1] // stride
    for i in range(n_irq):
        out.append((irq[0] + i * stride, False, "irq", "irq_vector_%d" % (32 + i)))
    for i in range(spur[1] // stride):
        out.append((spur[0] + i * stride, False, "spurious",
                    "spurious_vector_%d" % (32 + n_irq + i)))
    return sorted(set(out))


def allow_list(vmlinux):
    """Addresses in vmlinux's .hard_irq_sites, or None (no table: stock kernel)."""
    table = inventory.read_table(Elf(vmlinux))
    if table is None:
        return None
    return sorted(addr for _, addr in table)


def write_inputs(vmlinux, out_dir):
    """Write the plugin's entries (and allow) files; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    entries = entry_points(nm_symbols(vmlinux))
    files = {"entries": os.path.join(out_dir, "iftrack-entries.txt")}
    with open(files["entries"], "w", encoding="utf-8") as f:
        f.write("# address errcode class name (IDT entry points of %s)\n" % vmlinux)
        for addr, err, cls, name in entries:
            f.write("0x%x %d %s %s\n" % (addr, err, cls, name))
    allowed = allow_list(vmlinux)
    if allowed is not None:
        files["allow"] = os.path.join(out_dir, "iftrack-allow.txt")
        with open(files["allow"], "w", encoding="utf-8") as f:
            f.write("# .hard_irq_sites of %s\n" % vmlinux)
            f.writelines("0x%x\n" % a for a in allowed)
    return files


def plugin_spec(out_json, files, icount_shift=None, landings=False, top=20,
                windows=None, plugin=None):
    """The value of QEMU's -plugin option."""
    args = [plugin or paths.IFTRACK_PLUGIN, "out=" + out_json,
            "entries=" + files["entries"], "top=%d" % top]
    if "allow" in files:
        args.append("allow=" + files["allow"])
    if icount_shift is not None:
        args.append("icount_shift=%d" % icount_shift)
    if landings:
        args.append("landings=on")
    if windows:
        args.append("windows=" + windows)
    for a in args:
        if "," in a:
            raise IrqrigError("plugin argument %r contains a comma (QEMU's option "
                              "separator): use a path without commas" % a)
    return ",".join(args)


# -- modules: their hard sites sit where the kernel loaded them ---------------

# Run in the guest after the steps: where each module's code sections are.
MODULES_CMD = ("for f in /sys/module/*/sections/.*text*; do echo \"$f $(cat $f)\"; "
               "done 2>/dev/null; true")
MODULES_FILE = "iftrack-modules.txt"
_MODLINE = re.compile(r"^/sys/module/([^/]+)/sections/(\S+) (0x[0-9a-f]+)\s*$")


def module_sections(text):
    """{module: {section: load address}} from MODULES_CMD's output."""
    out = {}
    for line in text.splitlines():
        m = _MODLINE.match(line.strip())
        if m:
            out.setdefault(m.group(1), {})[m.group(2)] = int(m.group(3), 16)
    return out


def module_allowed(sections, ko_files):
    """Addresses of the loaded modules' .hard_irq_sites entries.

    ko_files: {module name: path of its .ko}; modules without a .ko here or
    without a table add nothing (their cli sites stay violations)."""
    out = set()
    for mod, secs in sections.items():
        ko = ko_files.get(mod)
        if not ko or not os.path.exists(ko):
            continue
        table = inventory.read_table(Elf(ko)) or set()
        for sec, off in table:
            if sec in secs:
                out.add(secs[sec] + off)
    return out


def allow_modules(data, allowed):
    """A copy of the plugin's data with windows opened at allowed module
    sites no longer counted as violations (the plugin knew only vmlinux)."""
    if not data["allow_list"] or not allowed:
        return data
    d = json.loads(json.dumps(data))
    moved = 0
    for s in d["sites"]:
        if s["violations"] and addr(s["site"]) in allowed:
            moved += s["violations"]
            s["violations"] = 0
            s["allowed_in_module"] = True
    for w in d["top"]:
        if w["violation"] and addr(w["open"]["pc"]) in allowed:
            w["violation"] = False
    d["violations"] = d["violations"] - moved
    d["module_sites_allowed"] = moved
    return d


MODULE_ALLOW_FILE = "iftrack-module-allow.txt"


def write_module_allow(sections, ko, out):
    """Write the loaded modules' allowed sites (module_allowed()) to out:
    the boot records them, so a verdict never reads a rebuilt .ko."""
    allowed = sorted(module_allowed(sections, ko))
    with open(out, "w", encoding="utf-8") as f:
        f.write("# .hard_irq_sites of the loaded modules, at their load addresses\n")
        f.writelines("0x%x\n" % a for a in allowed)


def read_addresses(path):
    """The addresses of a file write_module_allow() (or write_inputs()) wrote."""
    with open(path, encoding="utf-8") as f:
        return {int(line.split()[0], 16) for line in f
                if line.strip() and not line.startswith("#")}


def ko_files(variant):
    """{module name: .ko path} of the modules built for a variant."""
    return {os.path.basename(p)[:-3].replace("-", "_"): p
            for p in artifacts.modules(variant)}


# -- reading -----------------------------------------------------------------

REQUIRED = ("tool", "version", "clock", "vcpus", "if_mismatch", "violations",
            "kernel", "sites", "top", "allow_list")


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise PluginDataError("%s: missing (QEMU did not exit cleanly, or the plugin "
                              "was not loaded)" % path) from None
    except (OSError, ValueError) as e:
        raise PluginDataError("%s: not readable JSON (%s)" % (path, e)) from None
    if not isinstance(data, dict) or data.get("tool") != "iftrack":
        raise PluginDataError("%s: not an iftrack result" % path)
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise PluginDataError("%s: missing keys %s" % (path, ", ".join(missing)))
    return data


def addr(text):
    return int(text, 16) if isinstance(text, str) else int(text)


class Symboliser:
    """Addresses to "function+0xoff (file:line)" with vmlinux (cached)."""

    def __init__(self, vmlinux=None, modules=None):
        self.vmlinux = vmlinux if vmlinux and os.path.exists(vmlinux) else None
        self.funcs = None
        self.starts = None
        self.lines = {}
        # (base, module, section) of loaded modules (module_sections())
        self.mods = sorted((base, mod, sec) for mod, secs in (modules or {}).items()
                           for sec, base in secs.items())

    def module_place(self, a):
        """"module:section+0xoff" for an address in a loaded module, or None."""
        best = None
        for base, mod, sec in self.mods:
            if base <= a and (best is None or base > best[0]):
                best = (base, mod, sec)
        if best is None or a - best[0] >= 1 << 20:
            return None
        return "%s:%s+0x%x" % (best[1], best[2], a - best[0])

    def _load(self):
        if self.funcs is None:
            self.funcs, self.starts = [], []
            if self.vmlinux:
                syms = nm_symbols(self.vmlinux)
                self.funcs = sorted((a, s, n) for n, (a, s) in syms.items())
                self.starts = [f[0] for f in self.funcs]

    def function(self, a):
        import bisect
        self._load()
        i = bisect.bisect_right(self.starts, a) - 1
        if i < 0:
            return None
        start, size, name = self.funcs[i]
        if size and a >= start + size:
            return None
        return "%s+0x%x" % (name, a - start)

    def prefetch(self, addrs):
        want = [a for a in set(addrs) if a >= KERNEL_HALF and a not in self.lines]
        if self.vmlinux and want:
            self.lines.update(inventory.source_lines(self.vmlinux, want))

    def name(self, a):
        if a < KERNEL_HALF:
            return "0x%x (outside the kernel)" % a
        fn = self.function(a) or self.module_place(a)
        line = self.lines.get(a)
        text = fn or "0x%x" % a
        return text + (" (%s)" % line if line and not line.startswith("??") else "")


# -- verdicts and figures (pure functions of the recorded JSON) ----------------

def irq_cpus(text):
    """{"cpu": count} of the irq-sensor's interrupts from the guest's
    `grep -e CPU0 -e irq-sensor /proc/interrupts` (header first), summed
    over the device's vectors.  {} when the device has no line."""
    lines = text.splitlines()
    header = next((ln for ln in lines if ln.split() and ln.split()[0] == "CPU0"), None)
    if header is None:
        return {}
    ncpu = len(header.split())
    out = {}
    for ln in lines:
        if "irq-sensor" not in ln or ":" not in ln:
            continue
        counts = ln.split(":", 1)[1].split()[:ncpu]
        for cpu, n in enumerate(counts):
            if n.isdigit() and int(n):
                out[str(cpu)] = out.get(str(cpu), 0) + int(n)
    return out


def irq_cpus_delta(before, after):
    """The interrupts each CPU took between two irq_cpus() readings (None if
    either is missing): the sensor step's, not those of earlier steps."""
    if before is None or after is None:
        return None
    out = {c: n - before.get(c, 0) for c, n in after.items()}
    return {c: n for c, n in out.items() if n > 0}


def physical_limit(hard_max_ns, hardoff_figs, cpus):
    """The hard-stage latency maximum next to the longest hard-off window on
    the CPU(s) that took the sensor's interrupts: a window that long delays
    an interrupt as long; what the window does not explain is entry,
    handler and (without icount) host time.  None without both figures.
    vCPU index = Linux CPU number (QEMU's x86 APIC IDs are in CPU order)."""
    by_vcpu = hardoff_figs.get("max_ns_by_vcpu") or {}
    seen = [c for c in sorted(cpus or {}, key=int) if by_vcpu.get(c) is not None]
    if hard_max_ns is None or not seen:
        return None
    window = max(by_vcpu[c] for c in seen)
    return {"sensor_cpus": {c: cpus[c] for c in seen}, "hard_max_ns": hard_max_ns,
            "window_max_ns": window, "unexplained_ns": hard_max_ns - window,
            "clock": hardoff_figs.get("clock")}


def figures(data, sym=None, sites=10):
    """The figures that go into results.json."""
    k = data["kernel"]
    top = data["top"]
    out = {
        "clock": data["clock"],
        "windows": k["count"],
        "max_ns": k["max_ns"], "max_insns": k["max_insns"],
        "p50_ns": k["p50_ns"], "p99_ns": k["p99_ns"],
        "violations": data["violations"] if data["allow_list"] else None,
        "if_mismatch": data["if_mismatch"],
        "if_mismatch_firmware": data.get("if_mismatch_firmware", 0),
        "distinct_sites": len(data["sites"]),
        "module_sites_allowed": data.get("module_sites_allowed", 0),
        "hist_ns": k.get("hist_ns", []),
        # the physical limit of the hard-stage latency on each CPU
        "max_ns_by_vcpu": {str(v["vcpu"]): v.get("max_ns") for v in data["vcpus"]},
    }
    if top:
        w = top[0]
        out["longest"] = window_summary(w, sym)
    per_site = sorted(data["sites"], key=lambda s: (-s["max_ns"], addr(s["site"])))
    out["sites"] = [site_summary(s, sym) for s in per_site[:sites]]
    if "landings" in data:
        classes = {}
        for ld in data["landings"]:
            classes[ld["class"]] = classes.get(ld["class"], 0) + ld["count"]
        out["landings"] = {"addresses": len(data["landings"]), "by_class": classes}
    return out


def window_summary(w, sym=None):
    o, c = w["open"], w["close"]
    s = {"vcpu": w["vcpu"], "kind": w["kind"], "ns": w["ns"], "insns": w["insns"],
         "open": o["pc"], "open_insn": o["insn"], "close": c["pc"],
         "close_insn": c["insn"], "t_all_insns": o["t_all_insns"],
         "violation": w["violation"]}
    if "from_rip" in w:
        s["from_rip"] = w["from_rip"]
    if "entry" in w:
        s["entry"] = w["entry"]
    if sym:
        s["open_at"] = sym.name(addr(o["pc"]))
        s["close_at"] = sym.name(addr(c["pc"]))
        if "from_rip" in w:
            s["from_at"] = sym.name(addr(w["from_rip"]))
    return s


def site_summary(s, sym=None):
    out = {k: s[k] for k in ("site", "kind", "insn", "count", "max_ns", "max_insns",
                             "p50_ns", "p99_ns", "violations")}
    if sym:
        out["at"] = sym.name(addr(s["site"]))
    return out


def mismatch_detail(data, sym=None):
    """The mismatch count and, where the plugin recorded it, the first one
    per vCPU: where it was seen and where IF last changed before it."""
    mism = data["if_mismatch"]
    fw = data.get("if_mismatch_firmware", 0)
    fw_note = ("%d in real-mode code below 1 MiB (firmware, AP trampoline: interrupts"
               " through the IVT, not tracked; not judged)" % fw) if fw else ""
    if not mism:
        return fw_note
    name = (lambda a: "%s (%s)" % (a, sym.name(addr(a)))) if sym else (lambda a: a)
    parts = ["%d mismatches between tracked IF and EFLAGS" % mism]
    for v in data["vcpus"]:
        m = v.get("first_mismatch")
        if m:
            parts.append("first on vCPU %d at %s %s%s, tracked IF %s, IF last changed at %s" % (
                v["vcpu"], m["where"], name(m["pc"]),
                " (interrupted %s)" % name(m["interrupted_rip"]) if m["where"] == "entry" else "",
                "on" if m["tracked_if"] else "off", name(m["last_change_pc"])))
    return "; ".join(parts + ([fw_note] if fw_note else []))


def verdicts(data, violations_max=0, expect_violation=False, sym=None):
    """[(name, ok, detail)] from the plugin's JSON."""
    out = []
    mism = data["if_mismatch"]
    out.append(("hard-off tracker exact (no IF state it could not explain)", mism == 0,
                mismatch_detail(data, sym)))
    if not data["allow_list"]:
        return out
    v = data["violations"]
    bad = [s for s in data["sites"] if s["violations"]]
    detail = ", ".join("%s x%d" % (s["site"], s["violations"]) for s in bad[:5])
    if expect_violation:
        out.append(("hard-off tracker caught a window opened outside the allow-list",
                    v > 0, detail or "no violation seen"))
    else:
        out.append(("hard-off windows only from allow-listed sites (<= %d violations)"
                    % violations_max, v <= violations_max, detail))
    return out


# -- listing (runner.py hardoff) -----------------------------------------------

def fmt_ns(ns):
    return "%.3f us" % (ns / 1000.0)


def listing(data, sym, top=10, sites=15):
    """Human-readable text: top windows and the sites with the longest max."""
    addrs = [addr(w["open"]["pc"]) for w in data["top"]] + \
        [addr(w["close"]["pc"]) for w in data["top"]] + \
        [addr(s["site"]) for s in data["sites"]]
    sym.prefetch(addrs)
    k = data["kernel"]
    lines = ["clock %s; %d kernel hard-off windows, max %s (%d insns), p99 %s; "
             "violations %s; if_mismatch %d" % (
                 data["clock"], k["count"], fmt_ns(k["max_ns"]), k["max_insns"],
                 fmt_ns(k["p99_ns"]),
                 data["violations"] if data["allow_list"] else "n/a (no allow-list)",
                 data["if_mismatch"])]
    lines.append("top %d windows:" % min(top, len(data["top"])))
    for i, w in enumerate(data["top"][:top], 1):
        s = window_summary(w, sym)
        how = s["kind"] if s["kind"] != "insn" else s["open_insn"]
        extra = ""
        if "from_at" in s:
            extra = "  [interrupted %s%s]" % (s["from_at"],
                                              ", " + s["entry"] if "entry" in s else "")
        lines.append("%3d. %12s %9d insns  cpu%d  %-7s %s  ->  %s %s%s%s" % (
            i, fmt_ns(s["ns"]), s["insns"], s["vcpu"], how, s["open_at"],
            s["close_insn"], s["close_at"], extra, "  VIOLATION" if s["violation"] else ""))
    lines.append("sites by max window:")
    for s in sorted(data["sites"], key=lambda s: -s["max_ns"])[:sites]:
        lines.append("  %12s max  %10s p99  %7d windows  %-6s %s%s" % (
            fmt_ns(s["max_ns"]), fmt_ns(s["p99_ns"]), s["count"],
            s["insn"] or s["kind"], sym.name(addr(s["site"])),
            "  VIOLATIONS %d" % s["violations"] if s["violations"] else ""))
    return "\n".join(lines)


# -- one boot: inputs (irqrig/boot.py) and verdicts (irqrig/verdicts.py) -------

def boot_inputs(scn, variant, log_dir, accel):
    """({log name: path}, [-plugin values]) of a boot: nothing unless the
    scenario asks for [trace] hardoff.  Writes the plugin's input files
    into the boot's log directory and removes a stale result, so a missing
    JSON means the plugin failed."""
    t = scn["trace"]
    if not t["hardoff"]:
        return {}, []
    if accel != "tcg":
        raise IrqrigError("trace.hardoff needs TCG, but this boot uses %s" % accel)
    vmlinux = artifacts.require(variant, "vmlinux")
    if not os.path.exists(paths.IFTRACK_PLUGIN):
        raise IrqrigError("trace.hardoff: the plugin %s is not built (./runner.py build)"
                          % paths.IFTRACK_PLUGIN)
    files = write_inputs(vmlinux, log_dir)
    out = os.path.join(log_dir, JSON_NAME)
    windows = os.path.join(log_dir, "iftrack-windows.jsonl") if t["windows_log"] else None
    for stale in (out, windows):
        if stale and os.path.exists(stale):
            os.unlink(stale)
    logs = {"iftrack": out, "iftrack_entries": files["entries"]}
    if "allow" in files:
        logs["iftrack_allow"] = files["allow"]
    if windows:
        logs["iftrack_windows"] = windows
    return logs, [plugin_spec(out, files, icount_shift=scn["qemu"]["icount_shift"],
                              landings=t["landings"], top=t["top"], windows=windows)]


def judge(data, exp, sym=None):
    """(figures, [(name, ok, detail)]) of one boot: a pure function of the
    recorded JSON and the scenario's expectations."""
    figs = figures(data, sym)
    limit = exp.get("hardoff_violations_max")
    items = verdicts(data, 0 if limit is None else limit,
                     expect_violation=exp.get("expect_failure") == "violation", sym=sym)
    bound = exp.get("hardoff_max_us")
    if bound is not None:
        items.append(("longest kernel hard-off window <= %g us" % bound,
                      data["kernel"]["max_ns"] <= bound * 1000,
                      "%s (%s)" % (fmt_ns(data["kernel"]["max_ns"]),
                                   (figs.get("longest") or {}).get("open_at", "-"))))
    return figs, items


def judge_files(logs, exp, vmlinux=None):
    """judge() on a boot's recorded files: its iftrack.json, the modules'
    load addresses (logs["modules"]) and their allowed sites
    (logs["iftrack_module_allow"]); vmlinux only names sites.  Raises
    PluginDataError when the JSON is missing or not the plugin's."""
    if not logs.get("iftrack"):
        raise PluginDataError("no %s in the run record (the boot did not get as far as "
                              "starting QEMU)" % JSON_NAME)
    data = load(logs["iftrack"])
    secs = {}
    if logs.get("modules") and os.path.exists(logs["modules"]):
        with open(logs["modules"], encoding="utf-8") as f:
            secs = module_sections(f.read())
    allow = logs.get("iftrack_module_allow")
    if allow and os.path.exists(allow):
        data = allow_modules(data, read_addresses(allow))
    sym = Symboliser(vmlinux, secs)
    sites = [addr(s["site"]) for s in data["sites"][:10]]
    if data["top"]:
        sites += [addr(data["top"][0]["open"]["pc"]), addr(data["top"][0]["close"]["pc"])]
    sym.prefetch(sites)
    return judge(data, exp, sym)
