"""Where a variant's build products are, for run-time code.

The build steps (build_*.py) write these; everything that boots, checks or
inventories a variant finds them here, without importing the build code.
"""

import glob
import json
import os

from irqrig import paths
from irqrig.errors import NotBuiltError


def kernel_dir(variant):
    return paths.kernel_dir(variant)


def bzimage(variant):
    return os.path.join(kernel_dir(variant), "arch", "x86", "boot", "bzImage")


def vmlinux(variant):
    return os.path.join(kernel_dir(variant), "vmlinux")


def gdb_scripts(variant):
    """The kernel's scripts/gdb entry (lx-dmesg, lx-symbols, ...)."""
    return os.path.join(kernel_dir(variant), "vmlinux-gdb.py")


def initramfs(variant):
    return paths.initramfs(variant)


def module_dir(variant):
    """The built guest modules: <dir>/<name>/<name>.ko."""
    return os.path.join(paths.BUILD, "driver", variant)


def module(variant, name):
    return os.path.join(module_dir(variant), "irq_sensor", name + ".ko")


def modules(variant):
    return sorted(glob.glob(os.path.join(module_dir(variant), "*", "*.ko")))


def kernel_info_path(variant):
    return os.path.join(kernel_dir(variant), "irqrig-info.json")


def kernel_info(variant):
    """What the kernel build recorded (release, config hash, patches), or None."""
    try:
        with open(kernel_info_path(variant), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def qemu_binary():
    return paths.QEMU_BINARY


_WHAT = {
    "vmlinux": vmlinux,
    "bzImage": bzimage,
    "initramfs": initramfs,
    "qemu": lambda variant: qemu_binary(),
}


def require(variant, what):
    """The path of a build product, or a one-line NotBuiltError."""
    path = _WHAT[what](variant)
    if not os.path.exists(path):
        target = "" if what == "qemu" else " " + variant
        raise NotBuiltError("%s of %s is not built (%s): run ./runner.py build%s "
                            "(or drop --no-build)" % (what, variant, path, target))
    return path
