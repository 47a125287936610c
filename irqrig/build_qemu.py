"""Build QEMU 10.0 from Debian's source package with the rig's parts spliced in.

The source is Debian's ``qemu`` 1:10.0.2+ds-2+deb13u1~bpo12+1 from
bookworm-backports (pinned: a plain ``apt-get source qemu`` would pick
bookworm's 7.2).  Steps, each skipped when its inputs did not change:
  fetch      apt-get source --download-only qemu=VERSION  (into the shared cache)
  extract    dpkg-source -x (applies Debian's patches) into build/qemu/src; if
             the archive serves only the upstream tarball (see UPSTREAM_ONLY),
             that tarball, checked against the SHA256 apt's index gives;
             then the rig's fixes to QEMU itself, qemu-patches/*.patch
             (patch -p1; a changed patch set extracts the tree again)
  splice     the irq-sensor device (Kconfig entry, meson line, qtest), and the
             IF-tracker TCG plugin (contrib/plugins), as symlinks into
             qemu-device/ and include/
  configure  x86_64-softmmu only, optional features off, TCG plugins on
  compile    ninja: qemu-system-x86_64, the device's qtest, the plugin
"""

import hashlib
import os
import re
import shutil
import subprocess

from irqrig import paths
from irqrig.errors import BuildError, MissingError
from irqrig.util import ccache_env, log, run, write_if_changed, read_text

# Debian's version; pinned so that apt does not pick bookworm's 7.2.
QEMU_DEBIAN_VERSION = "1:10.0.2+ds-2+deb13u1~bpo12+1"
QEMU_UPSTREAM = "10.0.2"
ORIG_TARBALL = "qemu_10.0.2+ds.orig.tar.xz"
DSC = "qemu_10.0.2+ds-2+deb13u1~bpo12+1.dsc"

SRC = os.path.join(paths.QEMU_DIR, "src")
BLD = os.path.join(paths.QEMU_DIR, "build")

CONFIGURE_ARGS = [
    "--target-list=x86_64-softmmu",
    "--without-default-features",   # no optional libraries: minimal and fast
    "--enable-tcg", "--enable-kvm",
    "--enable-plugins",             # the IF tracker (qemu-device/iftrack.c)
    "--disable-docs", "--disable-install-blobs", "--disable-werror",
    "--disable-download",           # never fetch subprojects
    "--cc=ccache gcc", "--host-cc=gcc",
    # Debian's interpreter: it sees Debian's meson and pycotap (from
    # bookworm-backports); a python3 earlier on PATH (pyenv) would not.
    "--python=/usr/bin/python3",
]

DEVICE_FILES = {
    # splice target (relative to the QEMU tree) -> file in this repository
    "hw/misc/irq-sensor.c": os.path.join(paths.QEMU_DEVICE, "irq-sensor.c"),
    "tests/qtest/irq-sensor-test.c":
        os.path.join(paths.QEMU_DEVICE, "irq-sensor-test.c"),
    "include/hw/misc/irq_sensor_regs.h":
        os.path.join(paths.INCLUDE, "irq_sensor_regs.h"),
    "contrib/plugins/iftrack.c": os.path.join(paths.QEMU_DEVICE, "iftrack.c"),
}

SPLICE_MARK = "# irqrig splice"
SPLICES = [
    ("hw/misc/Kconfig",
     "\nconfig IRQ_SENSOR  %s\n    bool\n    default y if TEST_DEVICES\n"
     "    depends on PCI && MSI_NONBROKEN\n" % SPLICE_MARK, None),
    ("hw/misc/meson.build",
     "system_ss.add(when: 'CONFIG_IRQ_SENSOR', if_true: files('irq-sensor.c'))"
     "  %s\n" % SPLICE_MARK, None),
    ("tests/qtest/meson.build",
     "qtests_x86_64 += ['irq-sensor-test']  %s\n" % SPLICE_MARK,
     "qtests_x86_64 = qtests_i386\n"),
    ("contrib/plugins/meson.build",
     "contrib_plugins += 'iftrack'  %s\n" % SPLICE_MARK,
     "                   'hotpages', 'howvec', 'hwprofile', 'ips', 'stoptrigger']\n"),
]

# Debian's "+ds" tarball drops the firmware blobs (they come from Debian's
# own packages); upstream's meson would still unpack the EDK2 images.
REPLACEMENTS = [
    ("pc-bios/meson.build", "if unpack_edk2_blobs\n",
     "if unpack_edk2_blobs and false  %s: no blobs in +ds\n" % SPLICE_MARK),
]

# Two QEMU 10.0.2 bugs, measured with the IF tracker.  Without CF_PARALLEL
# (icount, or any round-robin TCG run) gen_cpu_index() returns a TCG
# constant, and gen_plugin_u64_ptr() multiplies that constant in place by
# the scoreboard's entry size.  The rest of the block then sees a wrong
# vCPU index (vCPU 1 became 16: an assertion in qemu_plugin_scoreboard_find,
# or another vCPU's counters).  Scale into a fresh temporary instead.
# The same function's "single vCPU" shortcut is wrong in system mode with
# several vCPUs and round-robin TCG (every -icount run with -smp 2): blocks
# are shared by the vCPUs, so a block translated on vCPU 0 reported vCPU 0
# for every vCPU that ran it.  Always load the running vCPU's index.
REPLACEMENTS.append(
    ("accel/tcg/plugin-gen.c",
     "    if (!tcg_cflags_has(current_cpu, CF_PARALLEL)) {\n"
     "        return tcg_constant_i32(current_cpu->cpu_index);\n"
     "    }\n",
     "    /* irqrig splice: no constant index, blocks are shared by vCPUs */\n"))
REPLACEMENTS.append(
    ("accel/tcg/plugin-gen.c",
     "    TCGv_i32 cpu_index = gen_cpu_index();\n"
     "    tcg_gen_muli_i32(cpu_index, cpu_index, entry_size);\n"
     "    tcg_gen_ext_i32_ptr(ptr, cpu_index);\n"
     "    tcg_temp_free_i32(cpu_index);\n",
     "    TCGv_i32 cpu_index = gen_cpu_index();\n"
     "    TCGv_i32 offset = tcg_temp_ebb_new_i32();  /* irqrig splice: not in place */\n"
     "    tcg_gen_muli_i32(offset, cpu_index, entry_size);\n"
     "    tcg_gen_ext_i32_ptr(ptr, offset);\n"
     "    tcg_temp_free_i32(offset);\n"
     "    tcg_temp_free_i32(cpu_index);\n"))

NINJA_TARGETS = ["qemu-system-x86_64", "tests/qtest/irq-sensor-test",
                 "contrib/plugins/libiftrack.so"]

# Measured on this archive mirror (Dec 2026): bookworm-backports' qemu .dsc
# and .debian.tar.xz answer 404 while the upstream tarball they share with
# trixie is served.  Then the build uses that tarball alone (without
# Debian's patches, which are packaging changes), after checking it against
# the SHA256 of apt's source index, and says so.
UPSTREAM_ONLY = "upstream tarball only (Debian's .dsc/.debian.tar.xz unavailable)"


def download_dir():
    return os.path.join(paths.DOWNLOADS, "qemu-" + QEMU_UPSTREAM)


def _local(name):
    path = os.path.join(download_dir(), name)
    return path if os.path.exists(path) else None


def source_uris():
    """{file name: sha256} of the pinned source package, from apt's index."""
    proc = subprocess.run(["apt-get", "source", "--print-uris",
                           "qemu=" + QEMU_DEBIAN_VERSION],
                          capture_output=True, text=True, check=False)
    files = {}
    for m in re.finditer(r"^'[^']+' (\S+) \d+ SHA256:([0-9a-f]{64})$",
                         proc.stdout, re.M):
        files[m.group(1)] = m.group(2)
    if not files:
        raise MissingError(
            "apt knows no source package qemu=%s (%s); run './runner.py install'"
            " (it enables bookworm-backports deb-src), then build again"
            % (QEMU_DEBIAN_VERSION, (proc.stderr or proc.stdout).strip()[-200:]))
    return files


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch():
    """Return (path, kind): the .dsc, or the checked upstream tarball."""
    if _local(DSC):
        return _local(DSC), "dsc"
    if _local(ORIG_TARBALL) and read_text(_local(ORIG_TARBALL) + ".sha256-ok"):
        return _local(ORIG_TARBALL), "orig"
    os.makedirs(download_dir(), exist_ok=True)
    log("qemu: fetching Debian's qemu %s source package (apt-get source)"
        % QEMU_DEBIAN_VERSION)
    try:
        run(["apt-get", "source", "--download-only", "qemu=" + QEMU_DEBIAN_VERSION],
            cwd=download_dir(), quiet=True)
    except BuildError as e:
        log("qemu: apt-get source failed: %s" % str(e).splitlines()[0])
    if _local(DSC):
        return _local(DSC), "dsc"
    orig = _local(ORIG_TARBALL)
    if not orig:
        raise MissingError(
            "could not fetch Debian's qemu %s source; run './runner.py install' to"
            " enable bookworm-backports deb-src, then build again" % QEMU_DEBIAN_VERSION)
    want = source_uris().get(ORIG_TARBALL)
    got = sha256(orig)
    if want != got:
        raise BuildError("%s: SHA256 %s does not match apt's index (%s)"
                         % (orig, got, want))
    write_if_changed(orig + ".sha256-ok", got + "\n")
    log("qemu: warning: %s; %s verified against apt's SHA256" % (UPSTREAM_ONLY, ORIG_TARBALL))
    return orig, "orig"


def qemu_patches():
    """The rig's patches to QEMU, in order, as [(path, sha256)]."""
    if not os.path.isdir(paths.QEMU_PATCHES):
        return []
    names = sorted(n for n in os.listdir(paths.QEMU_PATCHES) if n.endswith(".patch"))
    return [(os.path.join(paths.QEMU_PATCHES, n),
             sha256(os.path.join(paths.QEMU_PATCHES, n))) for n in names]


def _extract_marker(source):
    """What the tree in SRC was made from: the source and each patch's digest."""
    return "\n".join([source] + ["%s %s" % (os.path.basename(p), h)
                                  for p, h in qemu_patches()])


def extract(source, kind):
    marker = os.path.join(paths.QEMU_DIR, "extracted-from")
    want = _extract_marker(source)
    if os.path.isdir(SRC) and read_text(marker) == want:
        return
    if (read_text(marker) or "").split("\n")[0] == source:
        # Same source, other patches: a fresh tree, but keep the build
        # directory (ccache makes the rebuild cheap, configure is kept).
        shutil.rmtree(SRC, ignore_errors=True)
    else:
        shutil.rmtree(paths.QEMU_DIR, ignore_errors=True)
    os.makedirs(paths.QEMU_DIR, exist_ok=True)
    if kind == "dsc":
        log("qemu: unpacking %s (Debian patches applied)" % os.path.basename(source))
        run(["dpkg-source", "--no-check", "-x", source, SRC], quiet=True)
    else:
        log("qemu: unpacking %s (%s)" % (os.path.basename(source), UPSTREAM_ONLY))
        tmp = os.path.join(paths.QEMU_DIR, "unpack")
        os.makedirs(tmp)
        run(["tar", "-xJf", source, "-C", tmp], quiet=True)
        top = os.listdir(tmp)
        if len(top) != 1:
            raise BuildError("%s: expected one top directory, got %s" % (source, top))
        os.rename(os.path.join(tmp, top[0]), SRC)
        os.rmdir(tmp)
    for patch, _ in qemu_patches():
        log("qemu: applying %s" % os.path.relpath(patch, paths.ROOT))
        run(["patch", "-p1", "--forward", "--batch", "-i", patch], cwd=SRC, quiet=True)
    write_if_changed(marker, want)


def source_kind():
    """How the built tree was obtained (for results and the report)."""
    src = (read_text(os.path.join(paths.QEMU_DIR, "extracted-from")) or "").split("\n")[0]
    return "debian-source" if src.endswith(".dsc") else UPSTREAM_ONLY


def splice():
    for rel, target in DEVICE_FILES.items():
        if not os.path.exists(target):
            raise BuildError("missing device source %s" % target)
        link = os.path.join(SRC, rel)
        if os.path.islink(link) and os.readlink(link) == target:
            continue
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(target, link)
    for rel, text, after in SPLICES:
        path = os.path.join(SRC, rel)
        body = read_text(path)
        if SPLICE_MARK in body:
            continue
        if after is None:
            body += text
        else:
            if after not in body:
                raise BuildError("cannot splice %s: %r not found" % (rel, after))
            body = body.replace(after, after + text, 1)
        with open(path, "w", encoding="utf-8") as f:
            f.write(body)
    for rel, old, new in REPLACEMENTS:
        path = os.path.join(SRC, rel)
        body = read_text(path)
        if new in body:
            continue
        if old not in body:
            raise BuildError("cannot splice %s: %r not found" % (rel, old))
        with open(path, "w", encoding="utf-8") as f:
            f.write(body.replace(old, new, 1))


def configure():
    marker = os.path.join(BLD, "irqrig-configure-args")
    args = "\n".join(CONFIGURE_ARGS)
    if read_text(marker) == args and os.path.exists(os.path.join(BLD, "build.ninja")):
        return
    log("qemu: configuring (x86_64-softmmu, minimal features, TCG plugins)")
    os.makedirs(BLD, exist_ok=True)
    run([os.path.join(SRC, "configure")] + CONFIGURE_ARGS, cwd=BLD, quiet=True,
        env=ccache_env())
    write_if_changed(marker, args)


def compile_(jobs):
    log("qemu: compiling qemu-system-x86_64, the irq-sensor qtest and the IF-tracker plugin")
    run(["ninja", "-j%d" % jobs] + NINJA_TARGETS, cwd=BLD, env=ccache_env(),
        progress="qemu: ", every=50)


def dependencies():
    """Files whose change must trigger this step again (for ninja's depfile)."""
    deps = list(DEVICE_FILES.values()) + [paths.QEMU_DEVICE, paths.QEMU_PATCHES]
    deps += [p for p, _ in qemu_patches()]
    for name in (DSC, ORIG_TARBALL):
        if _local(name):
            deps.append(_local(name))
    deps.append(os.path.abspath(__file__))
    return deps


def build(jobs):
    source, kind = fetch()
    extract(source, kind)
    splice()
    configure()
    compile_(jobs)
    for path in (paths.QEMU_BINARY, paths.QEMU_QTEST):
        if not os.access(path, os.X_OK):
            raise BuildError("QEMU build finished without %s" % path)
    if not os.path.exists(paths.IFTRACK_PLUGIN):
        raise BuildError("QEMU build finished without %s" % paths.IFTRACK_PLUGIN)
    return paths.QEMU_BINARY


def version():
    out = subprocess.run([paths.QEMU_BINARY, "--version"], capture_output=True,
                         text=True, check=False).stdout
    return out.splitlines()[0] if out else "unknown"
