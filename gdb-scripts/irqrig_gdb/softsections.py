"""Soft sections of a CONFIG_RT_IRQ_DISABLE image: the complement of the hard table.

Every call of a soft irqs-off entry point (``soft_local_irq_disable`` and
``soft_local_irq_save``: local_irq_disable/save(), the irq/irqsave guards,
the soft raw_spin_lock_irq*() family and the irq line locks all compile to
them) opens a section in which interrupts are only soft-off: the CPU still
takes them.  For each call this module reports the function, the source
line and inline chain (DWARF, addr2line), the subsystem, and the section's
instructions, found by a forward walk of the function's control flow from
the instruction after the call:

- a path ends at a call (or tail jump) of an enable: ``soft_local_irq_enable``
  (also what hard_local_irq_enable() and _raw_spin_unlock_irq() call) ends
  every nesting level; ``soft_local_irq_restore``, ``irqsoft_mixed_restore``
  and ``_raw_spin_unlock_irqrestore`` (restoring a soft word) end one level;
  a nested soft save opens one (a nested disable does not: one enable
  ends all, and the outer restore turns interrupts back on);
- a path leaves the function (``ret``, a tail call, an indirect jump, an
  instruction the walk cannot find): the section is **unbounded**, its end
  is in a caller; *partial* when other paths do reach the enable (often a
  path the code cannot take: the walk does not know that the guard's
  ``if (_T->lock)`` before its unlock is always true);
- a path that ends in a trap (``ud2``, BUG) or a no-return call is dead.

Conditional jumps follow both ways; jumps into the function's ``.cold``
part and the ``.altinstr_aux`` stubs of static_cpu_has() are followed;
static keys (``__jump_table``) and alternatives (``.altinstructions``) add
the paths runtime patching can take.  The walk is path-insensitive: a
section is a superset of the instructions that can run soft-off.

Direct callees inside a section run soft-off too (the swapgs windows of
x86-64 are in ``asm_load_gs_index`` and ``__rdgsbase_inactive``, called
inside the section): small callees are expanded, with how many of their
call sites lie inside soft sections.

Plain Python over objdump/addr2line (binutils), like inventory.py.
"""

import collections
import os
import re
import struct
import subprocess
import tempfile

from irqrig_gdb.disasm import Disasm, run_objdump
from irqrig_gdb.elf import Elf

VERSION = 3                     # of the analysis: part of cache keys

ENTRY = ("soft_local_irq_disable", "soft_local_irq_save")
# Calls that end every nesting level (enable always enables).
CLOSE_ALL = ("soft_local_irq_enable", "_raw_spin_unlock_irq", "_raw_read_unlock_irq",
             "_raw_write_unlock_irq")
# Calls that restore one saved word.
CLOSE_ONE = ("soft_local_irq_restore", "irqsoft_mixed_restore",
             "_raw_spin_unlock_irqrestore", "_raw_read_unlock_irqrestore",
             "_raw_write_unlock_irqrestore")
ENDERS = CLOSE_ALL + CLOSE_ONE
# tools/objtool/noreturns.h (6.12): calls that do not return.
NORETURN = frozenset("""
__fortify_panic __ia32_sys_exit __ia32_sys_exit_group __kunit_abort
__module_put_and_kthread_exit __reiserfs_panic __stack_chk_fail
__tdx_hypercall_failed __ubsan_handle_builtin_unreachable __x64_sys_exit
__x64_sys_exit_group arch_cpu_idle_dead bch2_trans_in_restart_error
bch2_trans_restart_error bch2_trans_unlocked_error cpu_bringup_and_idle
cpu_startup_entry do_exit do_group_exit do_task_dead ex_handler_msr_mce
hlt_play_dead hv_ghcb_terminate kthread_complete_and_exit kthread_exit
kunit_try_catch_throw machine_real_restart make_task_dead mpt_halt_firmware
nmi_panic_self_stop panic panic_smp_self_stop rest_init
rewind_stack_and_make_dead rust_begin_unwind sev_es_terminate snp_abort
start_kernel stop_this_cpu usercopy_abort x86_64_start_kernel
x86_64_start_reservations xen_cpu_bringup_again xen_start_kernel
""".split())
ALT_SECTIONS = (".altinstr_aux", ".altinstr_replacement")
MAX_DEPTH = 8                   # nesting levels followed
MAX_INSNS = 20000               # per section: a walk that big has gone astray
CALLEE_MAX = 64                 # callees up to this size are expanded

# The campaign's default selection (issue 17).
DEFAULT_SELECT = ("entry", "arch/x86/kernel", "kernel/sched", "kernel/time",
                  "kernel/irq", "mm", "kernel/locking")


# ---------------------------------------------------------------- extras

def _unpack_rel(data, off):
    return struct.unpack_from("<i", data, off)[0]


def jump_table(elf):
    """Static keys: {code address: [target]} from __jump_table (vmlinux)."""
    sec = elf.section("__jump_table")
    if sec is None or elf.relocatable:
        return {}
    data, out = elf.section_bytes(sec), collections.defaultdict(list)
    for i in range(0, len(data) - 15, 16):
        code = (sec.addr + i + _unpack_rel(data, i)) & (2 ** 64 - 1)
        target = (sec.addr + i + 4 + _unpack_rel(data, i + 4)) & (2 ** 64 - 1)
        out[code].append(target)
    return out


def alternatives(elf):
    """Alternatives: [(orig, orig_len, repl, repl_len)] from .altinstructions.

    struct alt_instr is 14 bytes on 6.12 (u32 ft_flags) and 12 on 6.1
    (u16 cpuid): the size whose every entry points into code is taken.
    """
    sec, repl = elf.section(".altinstructions"), elf.section(".altinstr_replacement")
    if sec is None or repl is None or elf.relocatable:
        return []
    data = elf.section_bytes(sec)
    text = [(s.addr, s.addr + s.size) for s in elf.sections if s.executable and s.addr]
    for size, lens in ((14, 12), (12, 10)):
        if len(data) % size:
            continue
        out, ok = [], True
        for i in range(0, len(data), size):
            orig = sec.addr + i + _unpack_rel(data, i)
            rep = sec.addr + i + 4 + _unpack_rel(data, i + 4)
            olen, rlen = data[i + lens], data[i + lens + 1]
            if not any(a <= orig < b for a, b in text) or \
                    (rlen and not repl.addr <= rep < repl.addr + repl.size):
                ok = False
                break
            out.append((orig, olen, rep, rlen))
        if ok:
            return out
    return []


def extra_successors(dis, elf):
    """{location: [locations]}: paths that runtime code patching can add."""
    extra = collections.defaultdict(list)
    for code, targets in jump_table(elf).items():
        ins = dis.insn_at(code)
        extra[code].extend(targets + ([ins.next] if ins and ins.next is not None else []))
    for orig, olen, rep, rlen in alternatives(elf):
        extra[orig].append(orig + olen)
        if not rlen:
            continue
        chunk = dis.chunk_at(rep)
        for ins in dis.insns(chunk) if chunk else ():
            if rep <= ins.addr < rep + rlen and ins.kind in ("jmp", "jcc") \
                    and ins.target is not None and not rep <= ins.target < rep + rlen:
                extra[orig].append(ins.target)
    return {k: list(dict.fromkeys(v)) for k, v in extra.items()}


# ---------------------------------------------------------------- the walk

def _follows(a, b):
    """Is a jump from chunk a to chunk b inside one function?"""
    return a is b or a.section in ALT_SECTIONS or b.section in ALT_SECTIONS or \
        a.base == b.base


def _is_return_thunk(name):
    return bool(name) and name.startswith("__x86_return_thunk")


def _is_indirect_thunk(name):
    return bool(name) and (name.startswith("__x86_indirect_thunk")
                           or name.startswith("__x86_indirect_jump_thunk")
                           or name.startswith("__x86_indirect_call_thunk"))


def walk(dis, start, extra=None):
    """The section that begins at location start (after the entry call).

    Returns {insns: set of locations, ends: [locations of enders],
    escapes: [(location, why)], dead: [locations], callees: Counter}.
    """
    extra = extra or {}
    seen, insns = set(), set()
    ends, escapes, dead = set(), [], set()
    callees = collections.Counter()
    todo = [(start, 1)]
    while todo:
        loc, depth = todo.pop()
        if (loc, depth) in seen:
            continue
        seen.add((loc, depth))
        if len(insns) >= MAX_INSNS:
            escapes.append((loc, "limit"))
            break
        ins = dis.insn_at(loc) if loc is not None else None
        if ins is None:
            escapes.append((loc, "unknown"))
            continue
        insns.add(loc)
        here = dis.chunk_at(loc)
        for t in extra.get(loc, ()):
            todo.append((t, depth))
        name = ins.target_name
        if ins.kind == "call":
            if ins.indirect or _is_indirect_thunk(name):
                callees["*indirect"] += 1
            elif name == "soft_local_irq_disable":
                pass                        # no new level: one enable ends all
            elif name in ENTRY:
                if depth >= MAX_DEPTH:
                    escapes.append((loc, "nesting"))
                    continue
                todo.append((ins.next, depth + 1))
                continue
            elif name in CLOSE_ALL or (name in CLOSE_ONE and depth == 1):
                ends.add(loc)
                continue
            elif name in CLOSE_ONE:
                todo.append((ins.next, depth - 1))
                continue
            elif name in NORETURN:
                dead.add(loc)
                continue
            else:
                callees[name] += 1
            todo.append((ins.next, depth))
        elif ins.kind in ("jmp", "jcc"):
            if ins.kind == "jcc":
                todo.append((ins.next, depth))
            if ins.indirect or _is_indirect_thunk(name):
                escapes.append((loc, "indirect jump"))
                continue
            if _is_return_thunk(name):
                escapes.append((loc, "return"))
                continue
            there = dis.chunk_at(ins.target) if ins.target is not None else None
            if there is not None and here is not None and _follows(here, there) \
                    and dis.insn_at(ins.target) is not None:
                todo.append((ins.target, depth))
            elif name in CLOSE_ALL or (name in CLOSE_ONE and depth == 1):
                ends.add(loc)               # tail call of the enable
            elif name in NORETURN:
                dead.add(loc)
            else:
                escapes.append((loc, "tail call %s" % name))
        elif ins.kind == "ret":
            escapes.append((loc, "return"))
        elif ins.kind == "stop":
            dead.add(loc)
        else:
            todo.append((ins.next, depth))
    return {"insns": insns, "ends": ends, "escapes": list(dict.fromkeys(escapes)),
            "dead": dead, "callees": callees}


# ---------------------------------------------------------------- sites

def find_sites(dis):
    """Every call (or tail jump) of an entry point: [(chunk, insn)]."""
    out = []
    needles = [n.encode() for n in ENTRY]
    hit = set()
    for chunks in dis.grep(needles).values():
        hit.update(c.index for c in chunks)
    for c in dis.chunks:
        if c.index not in hit or c.name in ENTRY:
            continue
        for ins in dis.insns(c):
            if ins.kind in ("call", "jmp") and not ins.indirect and ins.target_name in ENTRY:
                out.append((c, ins))
    return out


def subsystem(path):
    """Top source directories: entry, arch/x86/kernel, kernel/sched, mm, ..."""
    if not path or path.startswith("?"):
        return "?"
    parts = path.split("/")
    if parts[0] in ("arch",) and len(parts) > 3:
        if parts[2] == "entry":
            return "entry"
        return "/".join(parts[:3])
    if parts[0] == "kernel":
        if len(parts) > 2 and parts[1] == "entry":
            return "entry"
        return "/".join(parts[:2]) if len(parts) > 2 else "kernel"
    if parts[0] in ("drivers", "net", "sound") and len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0] if len(parts) > 1 else path


def short_path(loc):
    """/…/build/src/linux-6.12+irqsoft/kernel/sched/core.c:6656 -> kernel/…"""
    loc = loc.split(" (discriminator")[0]
    m = re.search(r"/linux-[^/]+/(.*)$", loc)
    if m:
        return m.group(1)
    while loc.startswith("./"):
        loc = loc[2:]
    return loc


def addr2line(path, locs, relocatable=False):
    """location -> [(function, "file:line")], innermost frame first."""
    out = {}
    groups = collections.defaultdict(list)
    for loc in set(locs):
        if relocatable:
            groups[loc[0]].append(loc)
        else:
            groups[None].append(loc)
    for section, group in groups.items():
        group.sort()
        cmd = ["addr2line", "-a", "-f", "-i", "-e", path]
        if section:
            cmd[1:1] = ["-j", section]
        addrs = [g[1] if relocatable else g for g in group]
        proc = subprocess.run(cmd, input="\n".join("%x" % a for a in addrs) + "\n",
                              capture_output=True, text=True, check=False)
        lines, cur, frames = proc.stdout.splitlines(), None, []
        by_addr = dict(zip(addrs, group))
        i = 0
        while i < len(lines):
            line = lines[i]
            if line.startswith("0x"):
                if cur is not None:
                    out[by_addr.get(cur, cur)] = frames
                cur, frames = int(line, 16), []
                i += 1
                continue
            func = line
            where = lines[i + 1] if i + 1 < len(lines) else "??:0"
            frames.append((func, short_path(where)))
            i += 2
        if cur is not None:
            out[by_addr.get(cur, cur)] = frames
    return out


def _fmt(dis, loc):
    return loc if not dis.relocatable else "%s+0x%x" % loc


def _sort(dis, locs):
    return sorted(locs, key=lambda x: x if not dis.relocatable else (x[0], x[1]))


def analyze_listing(dis, extra=None, image="vmlinux", path=None, lines=True):
    """Soft sections of an indexed listing (see module doc).

    extra: extra_successors() of the image; path: the image, for addr2line.
    """
    sites = find_sites(dis)
    where = {}
    if lines and path:
        where = addr2line(path, [ins.loc for _, ins in sites], dis.relocatable)
    out, callee_names = [], collections.Counter()
    for chunk, ins in sites:
        frames = where.get(ins.loc) or [(chunk.base, "??:0")]
        outer_func, outer_loc = frames[-1]
        # The line in the function itself: its innermost frame (DWARF may
        # list a function as inlined into its own out-of-line copy).
        own = next(loc for func, loc in frames if func == outer_func)
        file, _, line = own.rpartition(":")
        sec = {
            "id": "%s%s+0x%x" % ("" if image == "vmlinux" else image + ":", chunk.name,
                                 ins.addr - chunk.start),
            "image": image,
            "function": chunk.name,
            "file": file or outer_loc,
            "line": int(line) if line.isdigit() else 0,
            "inlined": ["%s %s" % f for f in frames[:-1]],
            "subsystem": subsystem(file) if image == "vmlinux"
            else "module/" + image.rsplit(".ko", 1)[0],
            "entry_call": ins.target_name,
            "call": _fmt(dis, ins.loc),
        }
        if dis.relocatable:
            sec["section"] = chunk.section
        if ins.kind == "jmp":
            # local_irq_save() as the last thing: the section is the caller's.
            sec.update(start=None, end=None, insns=[], bounded=False, ends=[],
                       escapes=[[sec["call"], "tail call %s" % ins.target_name]],
                       dead=[], callees=[])
            out.append(sec)
            continue
        w = walk(dis, ins.next, extra)
        locs = _sort(dis, w["insns"])
        sec.update(
            start=_fmt(dis, ins.next) if ins.next is not None else None,
            end=_fmt(dis, locs[-1]) if locs else None,
            insns=[_fmt(dis, x) for x in locs],
            bounded=bool(w["ends"]) and not w["escapes"],
            ends=[_fmt(dis, x) for x in _sort(dis, w["ends"])],
            escapes=[[_fmt(dis, x), why] for x, why in
                     sorted(w["escapes"], key=lambda e: str(e[0]))],
            dead=[_fmt(dis, x) for x in _sort(dis, w["dead"])],
            callees=sorted(w["callees"]),
        )
        callee_names.update(n for n in w["callees"] if not n.startswith("*"))
        out.append(sec)
    ids = collections.Counter(s["id"] for s in out)
    for s in out:                   # static functions and clones share names
        if ids[s["id"]] > 1:
            s["id"] += "@" + (("%x" % s["call"]) if isinstance(s["call"], int) else s["call"])
    return out, callee_names


def expand_callees(dis, sections, names, extra=None):
    """{name: {insns, leaf, calls, calls_in_soft}} for small direct callees.

    insns: the callee's instructions reachable from its entry;
    calls: direct call/jump sites of the callee in the whole image;
    calls_in_soft: those inside a soft section (all of them: the callee
    runs only soft-off, e.g. asm_load_gs_index).
    """
    inside = set()
    for s in sections:
        inside.update(s["insns"])
    small = {}
    for name in names:
        chunks = dis.chunks_named(name)
        if len(chunks) != 1:
            continue
        ins = dis.insns(chunks[0])
        if not ins or len(ins) > CALLEE_MAX:
            continue
        w = walk(dis, ins[0].loc, extra)
        leaf = not w["callees"] and not any(why.startswith("tail call")
                                            for _, why in w["escapes"])
        small[name] = {"insns": [_fmt(dis, x) for x in _sort(dis, w["insns"])],
                       "leaf": leaf, "calls": 0, "calls_in_soft": 0}
    if not small:
        return small
    callers = dis.referencing(small)
    for c in callers:
        for i in dis.insns(c):
            if i.kind in ("call", "jmp") and not i.indirect and i.target_name in small:
                d = small[i.target_name]
                d["calls"] += 1
                d["calls_in_soft"] += _fmt(dis, i.loc) in inside
    return small


def summarize(sections):
    per = collections.OrderedDict()
    for s in sorted(sections, key=lambda s: s["subsystem"]):
        p = per.setdefault(s["subsystem"], {"sections": 0, "bounded": 0, "partial": 0,
                                            "insns": 0, "functions": set()})
        p["sections"] += 1
        p["bounded"] += bool(s["bounded"])
        p["partial"] += bool(not s["bounded"] and s["ends"])
        p["insns"] += len(s["insns"])
        p["functions"].add(s["function"])
    for p in per.values():
        p["functions"] = len(p["functions"])
    n = len(sections)
    bounded = sum(1 for s in sections if s["bounded"])
    return {
        "sections": n,
        "bounded": bounded,
        "bounded_share": round(bounded / n, 3) if n else None,
        # Unbounded, but some path reaches the enable: mostly paths the code
        # cannot take (a guard's "if (lock)" before its unlock).
        "partial": sum(1 for s in sections if not s["bounded"] and s["ends"]),
        "insns": sum(len(s["insns"]) for s in sections),
        "by_entry": dict(collections.Counter(s["entry_call"] for s in sections)),
        "functions": len({s["function"] for s in sections}),
        "by_subsystem": per,
    }


def has_soft_api(elf):
    """Does the image define or call the soft entry points?"""
    return bool(elf.symbol_names() & set(ENTRY))


def analyze(path, lines=True, workdir=None):
    """The soft sections of one image (vmlinux or a .ko), JSON-ready."""
    elf = Elf(path)
    image = "vmlinux" if not elf.relocatable else os.path.basename(path)
    if not has_soft_api(elf):
        return {"image": path, "soft_api": False, "sections": [], "callees": {},
                "summary": summarize([]),
                "note": "no soft irqs-off entry points (%s): not a CONFIG_RT_IRQ_DISABLE "
                        "image, local_irq_save() is inline pushf; cli there" % ", ".join(ENTRY)}
    with tempfile.TemporaryFile(dir=workdir) as listing:
        run_objdump(path, listing, elf.relocatable)
        dis = Disasm(listing, relocatable=elf.relocatable)
        extra = extra_successors(dis, elf)
        sections, names = analyze_listing(dis, extra, image, path, lines)
        callees = expand_callees(dis, sections, names, extra)
    return {"image": path, "soft_api": True, "sections": sections, "callees": callees,
            "summary": summarize(sections)}
