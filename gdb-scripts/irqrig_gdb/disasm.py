"""objdump's disassembly of an image, indexed by code chunk (symbol).

One objdump run writes the whole listing to a file; an index of its chunks
(the code between two symbol labels, with the file offsets of its text)
lets callers parse only the chunks they need, and follow a jump into any
chunk later.  A recorded listing (a list of lines) works the same way, so
tests need no kernel.

Addresses: in a linked image (vmlinux) a location is the absolute address;
in a relocatable object (a module) every section starts at 0, so a
location is (section, offset), and call/jump targets come from the
relocation printed after the instruction (``R_X86_64_PLT32 foo-0x4``).
"""

import bisect
import io
import re
import subprocess

_INSN = re.compile(rb"^\s*([0-9a-f]+):\s+(.*)$")
_LABEL = re.compile(rb"^([0-9a-f]+) <(.+)>:$")
_SECT = re.compile(rb"^Disassembly of section (\S+):$")
_RELOC = re.compile(r"^(R_X86_64_\w+)\s+(.+)$")
# objdump -w prints a relocation on its instruction's line.
_INLINE_RELOC = re.compile(r"\s([0-9a-f]+): (R_X86_64_\w+)\s+(\S+)\s*$")
_TARGET = re.compile(r"^([0-9a-f]+)(?: <([^>]+)>)?$")
_SYMEXPR = re.compile(r"^(.+?)(?:([-+])0x([0-9a-f]+))?$")
# Prefixes objdump prints before a mnemonic.
_PREFIXES = {"cs", "ds", "es", "ss", "fs", "gs", "notrack", "bnd", "lock", "rep",
             "repz", "repe", "repnz", "repne", "data16", "data32", "addr32", "rex",
             "rex.W", "xacquire", "xrelease"}
# A direct call/jump target: "call   ffff... <name>" or "R_X86_64_PLT32 name-0x4".
_REF = re.compile(rb"(?:\tcall|\tjmp)\s+[0-9a-f]+ <([^>+]+)>|R_X86_64_PLT32\s+([^\s+-]+)-0x4")
_COLD = re.compile(r"\.cold(\.\d+)?$")


class Insn:
    """One instruction: kind is one of call, jmp, jcc, ret, stop, other."""

    __slots__ = ("loc", "addr", "mnem", "args", "kind", "indirect", "target",
                 "target_name", "next")

    def __init__(self, loc, addr, mnem, args):
        self.loc, self.addr, self.mnem, self.args = loc, addr, mnem, args
        self.indirect = "*" in args
        self.target = None          # location of a direct call/jump target
        self.target_name = None     # symbol of the target ("foo" of <foo+0x4>)
        self.next = None            # location of the next instruction listed
        m = mnem.rstrip("q") if mnem in ("callq", "jmpq", "retq") else mnem
        if m == "call":
            self.kind = "call"
        elif m == "jmp" or m == "ljmp":
            self.kind = "jmp"
        elif m.startswith("j") or m.startswith("loop"):
            self.kind = "jcc"
        elif m in ("ret", "lret", "iret", "iretq", "sysretq", "sysretl", "sysexit",
                   "eretu", "erets"):
            self.kind = "ret"
        elif m in ("ud2", "ud1", "ud0", "int3"):
            self.kind = "stop"          # BUG()/WARN traps, padding: no fall-through
        else:
            self.kind = "other"

    def __repr__(self):
        return "<%s %s %s>" % (self.loc, self.mnem, self.args)


class Chunk:
    """The code under one label: a function, a .cold part, an alt section."""

    __slots__ = ("name", "section", "start", "offset", "length", "index")

    def __init__(self, name, section, start, offset, index):
        self.name, self.section, self.start = name, section, start
        self.offset, self.length, self.index = offset, 0, index

    @property
    def base(self):
        """foo for foo, foo.cold and foo.cold.1: the function it belongs to."""
        return _COLD.sub("", self.name)


def split_symexpr(expr):
    """'foo-0x4' -> ('foo', -4); '.text+0x1d6' -> ('.text', 0x1d6)."""
    m = _SYMEXPR.match(expr.strip())
    name, sign, num = m.group(1), m.group(2), m.group(3)
    add = int(num, 16) if num else 0
    return name, -add if sign == "-" else add


def run_objdump(path, out, relocatable):
    """objdump -d of path into the open binary file out."""
    cmd = ["objdump", "-d", "--no-show-raw-insn"]
    if relocatable:
        cmd.append("-r")
    proc = subprocess.run(cmd + [path], stdout=out, stderr=subprocess.PIPE, check=False)
    if proc.returncode:
        raise RuntimeError("objdump failed on %s: %s"
                           % (path, proc.stderr.decode(errors="replace").strip()[:200]))


class Disasm:
    """An indexed listing.  text: a binary file object or bytes."""

    def __init__(self, text, relocatable=False, keep_sections=None):
        if isinstance(text, (bytes, str)):
            text = io.BytesIO(text.encode() if isinstance(text, str) else text)
        self.f = text
        self.relocatable = relocatable
        self.chunks = []
        self.by_section = {}        # section -> sorted starts, chunks
        self.labels = {}            # name -> location (first definition)
        self._insns = {}
        self._maps = {}
        self._index()

    def loc(self, section, addr):
        return (section, addr) if self.relocatable else addr

    def _index(self):
        f = self.f
        f.seek(0)
        section, cur, pos = "", None, 0
        for raw in iter(f.readline, b""):
            here = pos
            pos += len(raw)
            line = raw.rstrip(b"\r\n")
            if not line or line[0] in b" \t":
                continue
            m = _LABEL.match(line)
            if m:
                if cur is not None:
                    cur.length = here - cur.offset
                cur = Chunk(m.group(2).decode(errors="replace"), section,
                            int(m.group(1), 16), pos, len(self.chunks))
                self.chunks.append(cur)
                self.labels.setdefault(cur.name, self.loc(section, cur.start))
                continue
            m = _SECT.match(line)
            if m:
                if cur is not None:
                    cur.length = here - cur.offset
                    cur = None
                section = m.group(1).decode()
        if cur is not None:
            cur.length = pos - cur.offset
        for c in self.chunks:
            key = c.section if self.relocatable else ""
            starts, chunks = self.by_section.setdefault(key, ([], []))
            starts.append(c.start)
            chunks.append(c)
        for starts, chunks in self.by_section.values():
            order = sorted(range(len(starts)), key=lambda i: starts[i])
            starts[:] = [starts[i] for i in order]
            chunks[:] = [chunks[i] for i in order]

    def text(self, chunk):
        self.f.seek(chunk.offset)
        return self.f.read(chunk.length).decode(errors="replace")

    def chunk_at(self, loc):
        sec, addr = loc if self.relocatable else ("", loc)
        if sec not in self.by_section:
            return None
        starts, chunks = self.by_section[sec]
        i = bisect.bisect_right(starts, addr) - 1
        if i < 0:
            return None
        return chunks[i]

    def insn_at(self, loc):
        """The instruction that starts at loc, or None."""
        c = self.chunk_at(loc)
        if c is None:
            return None
        m = self._maps.get(c.index)
        if m is None:
            m = self._maps[c.index] = {i.loc: i for i in self.insns(c)}
        return m.get(loc)

    def chunks_named(self, name):
        return [c for c in self.chunks if c.name == name]

    def grep(self, needles):
        """Chunks whose text contains any of the needles (bytes), one scan."""
        out = {n: [] for n in needles}
        for c in self.chunks:
            self.f.seek(c.offset)
            blob = self.f.read(c.length)
            for n in needles:
                if n in blob:
                    out[n].append(c)
        return out

    def referencing(self, names):
        """Chunks with a direct call or jump to any of the names, one scan."""
        want = {n.encode() for n in names}
        out = []
        for c in self.chunks:
            self.f.seek(c.offset)
            blob = self.f.read(c.length)
            if any(a in want or b in want for a, b in _REF.findall(blob)):
                out.append(c)
        return out

    def insns(self, chunk):
        """The parsed instructions of a chunk (cached)."""
        got = self._insns.get(chunk.index)
        if got is not None:
            return got
        out, last = [], None
        for line in self.text(chunk).splitlines():
            if not line.strip() or line.strip() == "...":
                continue
            body = line.split(":", 1)
            if len(body) != 2:
                continue
            rest = body[1].strip()
            try:
                addr = int(body[0].strip(), 16)
            except ValueError:
                continue
            r = _RELOC.match(rest)
            if r:
                if last is not None and self.relocatable:
                    self._apply_reloc(last, r.group(1), r.group(2), addr)
                continue
            inline = _INLINE_RELOC.search(rest)
            if inline:
                rest = rest[:inline.start()].strip()
            toks = rest.split(None, 1)
            mnem, args = toks[0], toks[1] if len(toks) > 1 else ""
            while mnem in _PREFIXES and args:
                toks = args.split(None, 1)
                mnem, args = toks[0], toks[1] if len(toks) > 1 else ""
            args = args.split("#", 1)[0].strip()
            ins = Insn(self.loc(chunk.section, addr), addr, mnem, args)
            if ins.kind in ("call", "jmp", "jcc") and not ins.indirect:
                t = _TARGET.match(args)
                if t:
                    ins.target = self.loc(chunk.section, int(t.group(1), 16))
                    if t.group(2):
                        ins.target_name = split_symexpr(t.group(2))[0]
            if last is not None:
                last.next = ins.loc
            out.append(ins)
            last = ins
            if inline and self.relocatable:
                self._apply_reloc(ins, inline.group(2), inline.group(3),
                                  int(inline.group(1), 16))
        self._insns[chunk.index] = out
        return out

    def _apply_reloc(self, ins, rtype, expr, at):
        """A relocation inside a call/jump gives its real target."""
        if ins.kind not in ("call", "jmp", "jcc") or ins.indirect or at <= ins.addr:
            return
        if rtype not in ("R_X86_64_PLT32", "R_X86_64_PC32"):
            return
        name, addend = split_symexpr(expr)
        # The displacement is the insn's last 4 bytes: target = S + A + 4.
        if name.startswith("."):
            ins.target = (name, addend + 4)
            c = self.chunk_at(ins.target)
            ins.target_name = c.name if c else name
        elif name in self.labels:
            sec, off = self.labels[name]
            ins.target = (sec, off + addend + 4)
            ins.target_name = name
        else:
            ins.target = None
            ins.target_name = name          # external: a kernel function
