"""Soft sections per kernel variant: the API the interrupt campaigns call.

    from irqrig import softsections
    for s in softsections.sections("6.12-rt-irqsoft"):          # default selection
        s["id"], s["function"], s["file"], s["line"], s["subsystem"], \\
            s["entry_call"], s["start"], s["end"], s["insns"], s["bounded"]

The analysis (gdb-scripts/irqrig_gdb/softsections.py) disassembles the
whole vmlinux, which takes a while: results are cached per image (path,
size, mtime, ELF build-id, analysis version) under <tree>/build/cache/ -- the
tree this module runs from, not IRQRIG_BUILD, so another tree's build
directory can be read without writing to it (IRQRIG_SOFTSECTIONS_CACHE
overrides).

Stock kernels (no CONFIG_RT_IRQ_DISABLE) have no soft sections:
local_irq_save() is an inline pushf; cli there.  Their inventory says so
(soft_api False, a note) and sections() returns [].
"""

import fnmatch
import hashlib
import json
import os
import struct

from irqrig import artifacts, errors, gdbscripts, paths, variants

analysis = gdbscripts.module("softsections")
Elf = gdbscripts.module("elf").Elf

DEFAULT_SELECT = analysis.DEFAULT_SELECT
CACHE = os.environ.get("IRQRIG_SOFTSECTIONS_CACHE",
                       os.path.join(paths.ROOT, "build", "cache", "softsections"))
_MEMO = {}
FIELDS = ("id", "function", "file", "line", "subsystem", "entry_call", "start",
          "end", "insns", "bounded")


def build_id(path):
    """The GNU build-id of an ELF file (hex), or ""."""
    elf = Elf(path)
    sec = elf.section(".note.gnu.build-id")
    if sec is None:
        return ""
    data = elf.section_bytes(sec)
    namesz, descsz, _ = struct.unpack_from("<III", data, 0)
    off = 12 + ((namesz + 3) & ~3)
    return data[off:off + descsz].hex()


def _cache_paths(path):
    st = os.stat(path)
    real = os.path.realpath(path)
    key = "%d:%s:%d:%d:%s" % (analysis.VERSION, real, st.st_size, st.st_mtime_ns,
                              build_id(path))
    prefix = hashlib.sha1(real.encode()).hexdigest()[:10]
    name = "%s-%s.json" % (prefix, hashlib.sha1(key.encode()).hexdigest()[:16])
    return os.path.join(CACHE, name), prefix


def image(path, use_cache=True):
    """analysis.analyze(path), cached."""
    if not os.path.exists(path):
        raise errors.MissingError("%s does not exist" % path)
    cached, prefix = _cache_paths(path)
    if use_cache and cached in _MEMO:
        return _MEMO[cached]
    if use_cache and os.path.exists(cached):
        with open(cached, encoding="utf-8") as f:
            _MEMO[cached] = json.load(f)
        return _MEMO[cached]
    os.makedirs(CACHE, exist_ok=True)
    result = analysis.analyze(path, lines=True, workdir=CACHE)
    tmp = cached + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.replace(tmp, cached)
    _MEMO[cached] = result
    for old in os.listdir(CACHE):           # earlier builds of the same image
        if old.startswith(prefix + "-") and os.path.join(CACHE, old) != cached:
            os.unlink(os.path.join(CACHE, old))
    return result


def images(variant, modules=True):
    """vmlinux and the built modules of a variant."""
    try:
        variants.get(variant)
    except KeyError as e:
        raise errors.IrqrigError(e.args[0]) from None
    vmlinux = artifacts.require(variant, "vmlinux")
    return [vmlinux] + (artifacts.modules(variant) if modules else [])


def inventory(variant, modules=True, use_cache=True):
    """All soft sections of a variant: {variant, soft_api, note, images,
    sections, callees, summary}.  images: per image its summary."""
    per, secs, callees, soft = {}, [], {}, False
    for path in images(variant, modules):
        r = image(path, use_cache)
        name = os.path.basename(path)
        per[name] = {"path": path, "soft_api": r["soft_api"], "summary": r["summary"]}
        soft = soft or r["soft_api"]
        secs += r["sections"]
        for k, v in r["callees"].items():
            callees[k if name == "vmlinux" else "%s:%s" % (name, k)] = v
    out = {"variant": variant, "soft_api": soft, "images": per, "sections": secs,
           "callees": callees, "summary": analysis.summarize(secs)}
    if not soft:
        out["note"] = ("%s has no soft sections: no calls of %s (not a "
                       "CONFIG_RT_IRQ_DISABLE kernel; local_irq_save() is inline "
                       "pushf; cli there)" % (variant, "/".join(analysis.ENTRY)))
    return out


def _names(s):
    yield s["function"]
    yield s["function"].split(".")[0]
    for frame in s.get("inlined", ()):
        yield frame.split(" ", 1)[0]


def matches(s, pattern):
    """A section matches a subsystem, a file or directory, or a function
    (also an inlined one: "native_load_gs_index"); globs match any of them."""
    if any(ch in pattern for ch in "*?["):
        cands = [s["subsystem"], s["file"], s["id"]] + list(_names(s))
        return any(fnmatch.fnmatchcase(c, pattern) for c in cands)
    p = pattern.rstrip("/")
    return s["subsystem"] == p or s["file"] == p or s["file"].startswith(p + "/") \
        or p in _names(s)


def pick(secs, patterns=DEFAULT_SELECT):
    """The sections that match any pattern (None or []: all)."""
    if not patterns:
        return list(secs)
    return [s for s in secs if any(matches(s, p) for p in patterns)]


def sections(variant, select=DEFAULT_SELECT, modules=True, use_cache=True):
    """Soft sections of a variant, selected by subsystem/file/function patterns.

    Each: {id, function, file, line, subsystem, entry_call, start, end,
    insns: [addr...], bounded} plus image, call, inlined, ends, escapes,
    dead, callees (see gdb-scripts/irqrig_gdb/softsections.py).  [] for a
    stock kernel.
    """
    return pick(inventory(variant, modules, use_cache)["sections"], select)


def callee_insns(variant, secs, leaf_only=True, exclusive_only=False):
    """{callee: [addr...]}: small direct callees of the given sections.

    They run inside the section: the swapgs windows are in callees
    (asm_load_gs_index, __rdgsbase_inactive, __wrgsbase_inactive).
    leaf_only: callees that call nothing; exclusive_only: callees whose
    every call site lies in a soft section.  A callee also called outside
    soft sections (__rdgsbase_inactive from __switch_to, hard-off) is hit
    there too: check the soft state (preempt count bit 24) at the stop.
    """
    allc = inventory(variant)["callees"]
    out = {}
    for s in secs:
        prefix = "" if s.get("image", "vmlinux") == "vmlinux" else s["image"] + ":"
        for name in s.get("callees", ()):
            c = allc.get(prefix + name)
            if not c or (leaf_only and not c["leaf"]) or \
                    (exclusive_only and c["calls"] != c["calls_in_soft"]):
                continue
            out[prefix + name] = c["insns"]
    return out
