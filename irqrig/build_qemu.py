"""Build QEMU 7.2 from Debian's source package with the irq-sensor spliced in.

Steps, each skipped when its inputs did not change:
  fetch      apt-get source --download-only qemu   (into the shared cache)
  extract    dpkg-source -x (applies Debian's patches) into build/qemu/src
  splice     Kconfig entry, meson lines, symlinks to qemu-device/ and include/
  configure  x86_64-softmmu only, optional features off
  compile    ninja qemu-system-x86_64 and the device's qtest
"""

import glob
import os
import shutil
import subprocess

from irqrig import paths
from irqrig.errors import BuildError, MissingError
from irqrig.util import ccache_env, log, run, write_if_changed, read_text

SRC = os.path.join(paths.QEMU_DIR, "src")
BLD = os.path.join(paths.QEMU_DIR, "build")

CONFIGURE_ARGS = [
    "--target-list=x86_64-softmmu",
    "--without-default-features",   # no optional libraries: minimal and fast
    "--enable-tcg", "--enable-kvm",
    "--disable-docs", "--disable-install-blobs", "--disable-werror",
    "--cc=ccache gcc", "--host-cc=gcc",
]

DEVICE_FILES = {
    # splice target (relative to the QEMU tree) -> file in this repository
    "hw/misc/irq-sensor.c": os.path.join(paths.QEMU_DEVICE, "irq-sensor.c"),
    "tests/qtest/irq-sensor-test.c":
        os.path.join(paths.QEMU_DEVICE, "irq-sensor-test.c"),
    "include/hw/misc/irq_sensor_regs.h":
        os.path.join(paths.INCLUDE, "irq_sensor_regs.h"),
}

SPLICE_MARK = "# irqrig splice"
SPLICES = [
    ("hw/misc/Kconfig",
     "\nconfig IRQ_SENSOR  %s\n    bool\n    default y if TEST_DEVICES\n"
     "    depends on PCI && MSI_NONBROKEN\n" % SPLICE_MARK, None),
    ("hw/misc/meson.build",
     "softmmu_ss.add(when: 'CONFIG_IRQ_SENSOR', if_true: files('irq-sensor.c'))"
     "  %s\n" % SPLICE_MARK, None),
    ("tests/qtest/meson.build",
     "qtests_x86_64 += ['irq-sensor-test']  %s\n" % SPLICE_MARK,
     "qtests_x86_64 = qtests_i386\n"),
]


def download_dir():
    return os.path.join(paths.DOWNLOADS, "qemu")


def find_dsc():
    found = sorted(glob.glob(os.path.join(download_dir(), "qemu_7.2*.dsc")))
    return found[-1] if found else None


def fetch():
    dsc = find_dsc()
    if dsc:
        return dsc
    os.makedirs(download_dir(), exist_ok=True)
    log("qemu: fetching Debian's qemu source package (apt-get source)")
    try:
        run(["apt-get", "source", "--download-only", "qemu"], cwd=download_dir())
    except BuildError as e:
        raise MissingError(
            "could not fetch Debian's qemu source (%s); run './runner.py install'"
            " to enable deb-src, then build again" % e) from None
    dsc = find_dsc()
    if not dsc:
        raise MissingError("apt-get source qemu gave no qemu_7.2*.dsc in %s"
                           % download_dir())
    return dsc


def extract(dsc):
    marker = os.path.join(paths.QEMU_DIR, "extracted-from")
    if os.path.isdir(SRC) and read_text(marker) == dsc:
        return
    log("qemu: unpacking %s (Debian patches applied)" % os.path.basename(dsc))
    shutil.rmtree(paths.QEMU_DIR, ignore_errors=True)
    os.makedirs(paths.QEMU_DIR)
    run(["dpkg-source", "--no-check", "-x", dsc, SRC], quiet=True)
    write_if_changed(marker, dsc)


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


def configure():
    marker = os.path.join(BLD, "irqrig-configure-args")
    args = "\n".join(CONFIGURE_ARGS)
    if read_text(marker) == args and os.path.exists(os.path.join(BLD, "build.ninja")):
        return
    log("qemu: configuring (x86_64-softmmu, minimal features)")
    os.makedirs(BLD, exist_ok=True)
    run([os.path.join(SRC, "configure")] + CONFIGURE_ARGS, cwd=BLD, quiet=True,
        env=ccache_env())
    write_if_changed(marker, args)


def compile_(jobs):
    log("qemu: compiling qemu-system-x86_64 and the irq-sensor qtest")
    run(["ninja", "-j%d" % jobs, "qemu-system-x86_64",
         "tests/qtest/irq-sensor-test"], cwd=BLD, env=ccache_env(),
        progress="qemu: ", every=50)


def dependencies():
    """Files whose change must trigger this step again (for ninja's depfile)."""
    deps = list(DEVICE_FILES.values()) + [paths.QEMU_DEVICE]
    dsc = find_dsc()
    if dsc:
        deps.append(dsc)
    deps.append(os.path.abspath(__file__))
    return deps


def build(jobs):
    dsc = fetch()
    extract(dsc)
    splice()
    configure()
    compile_(jobs)
    if not os.access(paths.QEMU_BINARY, os.X_OK):
        raise BuildError("QEMU build finished without %s" % paths.QEMU_BINARY)
    return paths.QEMU_BINARY


def version():
    out = subprocess.run([paths.QEMU_BINARY, "--version"], capture_output=True,
                         text=True, check=False).stdout
    return out.splitlines()[0] if out else "unknown"
