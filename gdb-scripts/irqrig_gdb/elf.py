"""Just enough ELF64 reading for the inventory: sections and function symbols.

Plain Python (no gdb, no pyelftools), so the runner and gdb share it.
"""

import bisect
import struct


class Section:
    def __init__(self, name, kind, flags, addr, offset, size):
        self.name = name
        self.kind = kind
        self.flags = flags
        self.addr = addr
        self.offset = offset
        self.size = size

    @property
    def executable(self):
        return bool(self.flags & 0x4)          # SHF_EXECINSTR


class Elf:
    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.data = f.read()
        if self.data[:4] != b"\x7fELF" or self.data[4] != 2:
            raise ValueError("%s: not an ELF64 file" % path)
        (self.e_type,) = struct.unpack_from("<H", self.data, 16)
        shoff, = struct.unpack_from("<Q", self.data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", self.data, 0x3A)
        raw = []
        for i in range(shnum):
            raw.append(struct.unpack_from("<IIQQQQIIQQ", self.data, shoff + i * shentsize))
        strtab = raw[shstrndx]
        self.sections = []
        for r in raw:
            name = self._cstr(strtab[4] + r[0])
            self.sections.append(Section(name, r[1], r[2], r[3], r[4], r[5]))
        self._raw = raw
        self._funcs = None

    def _cstr(self, off):
        end = self.data.index(b"\0", off)
        return self.data[off:end].decode("utf-8", "replace")

    @property
    def relocatable(self):
        return self.e_type == 1                 # ET_REL: a module

    def section(self, name):
        for s in self.sections:
            if s.name == name:
                return s
        return None

    def section_bytes(self, sec):
        return self.data[sec.offset:sec.offset + sec.size]

    def functions(self):
        """Sorted (start, end, name, section index) of STT_FUNC symbols."""
        if self._funcs is not None:
            return self._funcs
        out = []
        for idx, s in enumerate(self.sections):
            if s.kind != 2:                     # SHT_SYMTAB
                continue
            link = self._raw[idx][6]
            str_off = self.sections[link].offset
            for off in range(s.offset, s.offset + s.size, 24):
                st_name, st_info, _, st_shndx, st_value, st_size = \
                    struct.unpack_from("<IBBHQQ", self.data, off)
                if st_info & 0xF == 2 and st_shndx not in (0, 0xFFF1, 0xFFF2):
                    out.append((st_value, st_value + max(st_size, 1),
                                self._cstr(str_off + st_name), st_shndx))
        out.sort()
        self._funcs = out
        return out

    def symbol_names(self):
        """Names of all symbols (defined or not) in the symbol table."""
        out = set()
        for idx, s in enumerate(self.sections):
            if s.kind != 2:                     # SHT_SYMTAB
                continue
            str_off = self.sections[self._raw[idx][6]].offset
            for off in range(s.offset, s.offset + s.size, 24):
                (st_name,) = struct.unpack_from("<I", self.data, off)
                if st_name:
                    out.add(self._cstr(str_off + st_name))
        return out

    def function_at(self, addr, shndx=None):
        """Name of the function containing addr (vmlinux: by address)."""
        funcs = self.functions()
        starts = [f[0] for f in funcs]
        i = bisect.bisect_right(starts, addr) - 1
        while i >= 0:
            start, end, name, sh = funcs[i]
            if start <= addr < end and (shndx is None or sh == shndx):
                return name, addr - start
            if addr - start > 1 << 20:
                break
            i -= 1
        return None, None
