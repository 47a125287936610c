#!/usr/bin/python3
"""Record tests/data/softsections-6.12.objdump (+ .extra.json) from a vmlinux.

    tests/data/record_softsections_excerpt.py build/kernels/6.12-rt-irqsoft/vmlinux

The excerpt: the functions with the swapgs windows, their small callees,
and the lines of .altinstr_aux their sections reach; the extra edges
(static keys, alternatives) of those instructions.
"""

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "gdb-scripts"))
from irqrig_gdb import disasm, softsections as ss  # noqa: E402
from irqrig_gdb.elf import Elf  # noqa: E402

FUNCTIONS = ["start_thread", "current_save_fsgs", "x86_gsbase_read_cpu_inactive",
             "x86_gsbase_write_cpu_inactive", "asm_load_gs_index", "__rdgsbase_inactive",
             "__wrgsbase_inactive"]


def main(vmlinux):
    elf = Elf(vmlinux)
    with tempfile.TemporaryFile() as f:
        disasm.run_objdump(vmlinux, f, False)
        dis = disasm.Disasm(f)
        extra = ss.extra_successors(dis, elf)
        chunks = [c for name in FUNCTIONS for c in dis.chunks_named(name)]
        secs, _ = ss.analyze_listing(dis, extra, lines=False)
        keep = {c.index for c in chunks}
        aux = {}
        for s in secs:
            if dis.chunk_at(s["call"]).index not in keep:
                continue
            for a in s["insns"]:
                c = dis.chunk_at(a)
                if c.index not in keep:
                    aux.setdefault(c.index, []).append(a)
        out = []
        for c in chunks:
            out += ["", "Disassembly of section %s:" % c.section, "",
                    "%016x <%s>:" % (c.start, c.name), dis.text(c).rstrip("\n")]
        for idx, addrs in sorted(aux.items()):
            c = dis.chunks[idx]
            lo, hi = min(addrs), max(addrs)
            lines = [ln for ln in dis.text(c).splitlines()
                     if ln.strip() and ":" in ln
                     and lo <= int(ln.split(":", 1)[0].strip(), 16) <= hi]
            out += ["", "Disassembly of section %s:" % c.section, "",
                    "%016x <%s>:" % (c.start, c.name)] + lines
        text = "\n".join(out) + "\n"
        used = {i.addr for c in chunks for i in dis.insns(c)}
        for addrs in aux.values():
            used.update(addrs)
        edges = {str(a): t for a, t in extra.items() if a in used}
    with open(os.path.join(HERE, "softsections-6.12.objdump"), "w") as f:
        f.write("%s (excerpt, tests/data/record_softsections_excerpt.py)\n%s"
                % (os.path.basename(vmlinux), text))
    with open(os.path.join(HERE, "softsections-6.12.extra.json"), "w") as f:
        json.dump(edges, f, indent=0, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])
