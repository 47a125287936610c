"""Install what the rig needs from Debian's archive (idempotent).

Only Debian's binary and source archives are used.  A sources file of the
project's own enables ``deb-src`` so that ``apt-get source qemu`` (and the
``linux`` source package for Debian's 6.1 RT series) can be fetched.
"""

import importlib
import os
import subprocess
import sys

SOURCES_FILE = "/etc/apt/sources.list.d/irqrig-deb-src.sources"
SOURCES_TEXT = """\
# Written by irqrig (runner.py install): Debian source packages for QEMU and
# the kernel's RT series.  Safe to delete; the runner writes it again.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""

# Package -> why the rig needs it (printed when it is installed).
PACKAGES = {
    "build-essential": "C compiler for QEMU, kernels, the driver and tools",
    "pkg-config": "QEMU's configure finds its libraries",
    "dpkg-dev": "apt-get source unpacks Debian source packages",
    "meson": "builds the rig (meson.build)",
    "ninja-build": "meson's backend",
    "ccache": "kernel and QEMU rebuilds",
    "flex": "kernel build",
    "bison": "kernel build",
    "bc": "kernel build",
    "libelf-dev": "kernel objtool",
    "libssl-dev": "kernel build scripts",
    "cpio": "initramfs",
    "xz-utils": "kernel source tarballs",
    "libglib2.0-dev": "QEMU",
    "libpixman-1-dev": "QEMU",
    "libfdt-dev": "QEMU 7.2 (Debian source needs the system libfdt)",
    "zlib1g-dev": "QEMU",
    "qemu-system-x86": "reference QEMU binary",
    "qemu-system-data": "QEMU firmware and keymaps",
    "seabios": "BIOS for the guest",
    "ipxe-qemu": "NIC option ROMs",
    "linux-source-6.12": "kernel 6.12 (mainline PREEMPT_RT)",
    "linux-source-6.1": "kernel 6.1",
    "busybox-static": "guest user space",
    "rt-tests": "cyclictest in the guest",
    "gdb": "hard-section checks over QEMU's gdbstub",
    "python3-pexpect": "the runner talks to the guest console",
    "python3-matplotlib": "plots in reports",
    "patch": "applies the kernel patch series",
}


# Python modules the runner imports, and the Debian package that has each.
PYTHON_MODULES = {"pexpect": "python3-pexpect", "matplotlib": "python3-matplotlib"}


def missing_python_modules(names):
    """The modules of ``names`` that do not import (an actual import: a
    package that dpkg calls installed can still be broken or shadowed)."""
    out = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            out.append(name)
    return out


def missing_packages(packages=None):
    """Return the packages (of ``packages`` or all) that are not installed."""
    names = list(packages or PACKAGES)
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package} ${db:Status-Status}\n"] + names,
        capture_output=True, text=True, check=False).stdout
    installed = {line.split()[0] for line in out.splitlines()
                 if line.endswith(" installed")}
    return [name for name in names if name not in installed]


def deb_src_enabled():
    try:
        with open(SOURCES_FILE, encoding="utf-8") as f:
            return f.read() == SOURCES_TEXT
    except FileNotFoundError:
        return False


def is_complete():
    return deb_src_enabled() and not missing_packages()


def _run(argv):
    print("+ " + " ".join(argv), flush=True)
    subprocess.run(argv, check=True,
                   env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def install(log=print):
    """Enable deb-src and install every missing package.  Says what it does."""
    if os.geteuid() != 0:
        raise PermissionError(
            "runner.py install must run as root (it writes %s and runs apt-get)"
            % SOURCES_FILE)
    updated = False
    if not deb_src_enabled():
        log("install: enabling Debian deb-src in %s" % SOURCES_FILE)
        with open(SOURCES_FILE, "w", encoding="utf-8") as f:
            f.write(SOURCES_TEXT)
        _run(["apt-get", "update", "-q"])
        updated = True
    else:
        log("install: deb-src already enabled (%s)" % SOURCES_FILE)
    missing = missing_packages()
    if not missing:
        log("install: all %d packages present" % len(PACKAGES))
        return
    for name in missing:
        log("install: %-20s %s" % (name, PACKAGES[name]))
    if not updated:
        _run(["apt-get", "update", "-q"])
    _run(["apt-get", "install", "-y", "-q", "--no-install-recommends"] + missing)
    still = missing_packages()
    if still:
        raise RuntimeError("apt-get left packages missing: " + " ".join(still))
    log("install: done")


if __name__ == "__main__":
    try:
        install()
    except (OSError, RuntimeError, subprocess.CalledProcessError) as e:
        sys.exit("install: %s" % e)
