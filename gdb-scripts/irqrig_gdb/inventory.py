"""Static inventory of the instructions that can clear IF in a kernel image.

For vmlinux or a module: every ``cli``, every ``popf`` and ``iret`` (flags
restored from memory), the function and source line of each, and whether
the build-time table ``.hard_irq_sites`` (CONFIG_RT_IRQ_DISABLE) allows it.

Counting sections like the 2005 patch's results table: a ``cli`` inside an
out-of-line irq-disabling lock helper (``_raw_spin_lock_irqsave`` ...) is
counted at each call of the helper, not once; routing ``cli`` through one
helper does not make the hard sections fewer.

Plain Python over objdump/addr2line (binutils): the runner uses it, and gdb
loads it through the ``irqrig`` commands.
"""

import collections
import re
import struct
import subprocess

from irqrig_gdb.elf import Elf

TABLE_SECTION = ".hard_irq_sites"
KINDS = {"cli": "cli", "popf": "popf", "popfq": "popf", "iret": "iret", "iretq": "iret"}
# Out-of-line helpers whose whole purpose is to disable interrupts and lock.
HELPER_RE = re.compile(r"^_raw_(spin|read|write)_(lock|trylock)_irq(save)?(_nested)?$")

_INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)(?:\s+(.*))?$")
_FUNC = re.compile(r"^([0-9a-f]+) <(.+)>:$")
_SECT = re.compile(r"^Disassembly of section (\S+):$")
_CALL_TARGET = re.compile(r"<([^>+]+)>")

# The 2005 patch's results table (2.6.11-RT, i386): cli sites per config.
SEED = {"PREEMPT": 1138, "PREEMPT_RT": 224, "RT_IRQ_DISABLE": 69}


def _objdump(path):
    """Disassembly lines (with relocations) of an image, streamed."""
    proc = subprocess.Popen(["objdump", "-d", "--no-show-raw-insn", "-r", path],
                            stdout=subprocess.PIPE, text=True, errors="replace")
    try:
        yield from proc.stdout
    finally:
        proc.stdout.close()
        if proc.wait() and proc.returncode > 0:
            raise RuntimeError("objdump failed on %s" % path)


def read_table(elf):
    """Allowed sites from .hard_irq_sites: {(section name, offset)}.

    Entries are self-relative 32-bit values.  In vmlinux they are resolved
    (section "" and the absolute address); in a module they are relocations
    against a text section, read from .rela.hard_irq_sites.
    """
    sec = elf.section(TABLE_SECTION)
    if sec is None:
        return None
    data = elf.section_bytes(sec)
    if not elf.relocatable:
        out = set()
        for i in range(0, len(data) - 3, 4):
            (rel,) = struct.unpack_from("<i", data, i)
            out.add(("", (sec.addr + i + rel) & 0xFFFFFFFFFFFFFFFF))
        return out
    rela = elf.section(".rela" + TABLE_SECTION)
    out = set()
    if rela is None:
        return out
    symtab = next(s for s in elf.sections if s.kind == 2)
    for off in range(rela.offset, rela.offset + rela.size, 24):
        _, info, addend = struct.unpack_from("<QQq", elf.data, off)
        sym = info >> 32
        st_name, st_info, _, st_shndx, st_value, _ = struct.unpack_from(
            "<IBBHQQ", elf.data, symtab.offset + sym * 24)
        target = elf.sections[st_shndx].name
        out.add((target, st_value + addend))
    return out


def scan(path):
    """Walk the disassembly: IF-clearing instructions and helper calls.

    In a module a call's target is a relocation on the next line
    ("R_X86_64_PLT32 _raw_spin_lock_irqsave-0x4"); in vmlinux it is resolved.
    """
    sites, calls = [], []
    section, func, fstart, last_call = "", None, 0, None
    for line in _objdump(path):
        line = line.rstrip("\n")
        m = _SECT.match(line)
        if m:
            section = m.group(1)
            continue
        m = _FUNC.match(line)
        if m:
            fstart, func = int(m.group(1), 16), m.group(2)
            continue
        m = _INSN.match(line)
        if not m:
            continue
        addr, mnem, args = int(m.group(1), 16), m.group(2), m.group(3) or ""
        if mnem.startswith("R_X86_64_"):
            sym = re.split(r"[-+]", args.strip())[0]
            if last_call is not None and HELPER_RE.match(sym):
                calls.append(dict(last_call, helper=sym))
            last_call = None
            continue
        last_call = None
        if mnem in KINDS:
            sites.append({"section": section, "addr": addr, "function": func,
                          "offset": addr - fstart, "insn": mnem, "kind": KINDS[mnem]})
        elif mnem.startswith("call") or mnem.startswith("jmp"):
            where = {"section": section, "addr": addr, "function": func}
            t = _CALL_TARGET.search(args)
            if t and HELPER_RE.match(t.group(1)):
                calls.append(dict(where, helper=t.group(1)))
            else:
                last_call = where
    return sites, calls


def source_lines(path, addrs):
    """addr -> "file:line" of the function the code was inlined into.

    One addr2line run; with -i the innermost frame comes first and the
    outermost (the real function's line) last.
    """
    if not addrs:
        return {}
    addrs = sorted(set(addrs))
    proc = subprocess.run(["addr2line", "-a", "-i", "-e", path],
                          input="\n".join("%x" % a for a in addrs) + "\n",
                          capture_output=True, text=True, check=False)
    out, cur = {}, None
    for line in proc.stdout.splitlines():
        if line.startswith("0x"):
            cur = int(line, 16)
        elif cur is not None:
            out[cur] = _short_path(line)        # the last frame wins
    return out


def _short_path(loc):
    # /.../build/src/linux-6.12/kernel/sched/core.c:6656 -> kernel/sched/core.c:6656
    m = re.search(r"/linux-[^/]+/(.*)$", loc)
    return m.group(1) if m else loc


def inventory(path, lines=True):
    """The inventory of one image, as a dict (JSON-ready)."""
    elf = Elf(path)
    table = read_table(elf)
    sites, calls = scan(path)
    helper_funcs = {s["function"] for s in sites if s["function"]
                    and HELPER_RE.match(s["function"])}
    for s in sites:
        key = (s["section"] if elf.relocatable else "", s["addr"])
        s["in_helper"] = s["function"] in helper_funcs
        if s["kind"] != "cli":
            s["allowed"] = None
        else:
            s["allowed"] = None if table is None else key in table
    if lines and not elf.relocatable:
        where = source_lines(path, [s["addr"] for s in sites] + [c["addr"] for c in calls])
        for item in sites + calls:
            item["line"] = where.get(item["addr"], "??:0")
    cli = [s for s in sites if s["kind"] == "cli"]
    inline_cli = [s for s in cli if not s["in_helper"]]
    per_helper = collections.Counter(c["helper"] for c in calls)
    summary = {
        "cli": len(cli),
        "popf": sum(1 for s in sites if s["kind"] == "popf"),
        "iret": sum(1 for s in sites if s["kind"] == "iret"),
        "cli_in_helpers": len(cli) - len(inline_cli),
        "helper_calls": len(calls),
        "helper_calls_by_name": dict(per_helper.most_common()),
        # The comparable figure: inline cli sites + calls of cli helpers.
        "sites": len(inline_cli) + len(calls),
        "table_entries": None if table is None else len(table),
        "cli_allowed": None if table is None else sum(1 for s in cli if s["allowed"]),
        "cli_not_allowed": None if table is None else sum(1 for s in cli if not s["allowed"]),
        "functions_with_cli": len({s["function"] for s in inline_cli}),
    }
    return {"image": path, "summary": summary, "sites": sites, "helper_calls": calls}


def allowed_addresses(path):
    """The build-time allow-list of a vmlinux: absolute addresses, or None."""
    table = read_table(Elf(path))
    return None if table is None else {a for _, a in table}
