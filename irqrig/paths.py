"""Where things live: the tree, build output (git-ignored) and caches."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("IRQRIG_BUILD", os.path.join(ROOT, "build"))
RESULTS = os.environ.get("IRQRIG_RESULTS", os.path.join(ROOT, "results"))
# Shared by every clone on the machine: downloads and ccache survive a fresh
# clone, so CI's second run does not rebuild from nothing.
CACHE = os.environ.get("IRQRIG_CACHE",
                       os.path.join(os.path.expanduser("~"), ".cache", "irqrig"))
DOWNLOADS = os.path.join(CACHE, "downloads")
CCACHE_DIR = os.path.join(CACHE, "ccache")

INCLUDE = os.path.join(ROOT, "include")
QEMU_DEVICE = os.path.join(ROOT, "qemu-device")
QEMU_PATCHES = os.path.join(ROOT, "qemu-patches")
KERNEL_PATCHES = os.path.join(ROOT, "kernel-patches")
KERNEL_CONFIGS = os.path.join(KERNEL_PATCHES, "configs")
GUEST_DRIVER = os.path.join(ROOT, "guest-driver")
GDB_SCRIPTS = os.path.join(ROOT, "gdb-scripts")
SCENARIOS = os.path.join(ROOT, "scenarios")

QEMU_DIR = os.path.join(BUILD, "qemu")
QEMU_BINARY = os.environ.get("IRQRIG_QEMU") or os.path.join(QEMU_DIR, "build", "qemu-system-x86_64")
QEMU_QTEST = os.path.join(QEMU_DIR, "build", "tests", "qtest", "irq-sensor-test")
# The IF-tracker TCG plugin (qemu-device/iftrack.c), built with QEMU.
IFTRACK_PLUGIN = os.environ.get("IRQRIG_IFTRACK") or os.path.join(
    QEMU_DIR, "build", "contrib", "plugins", "libiftrack.so")
KERNELS = os.path.join(BUILD, "kernels")
SOURCES = os.path.join(BUILD, "src")
FIRMWARE_DIRS = ["/usr/share/seabios", "/usr/share/qemu", "/usr/lib/ipxe/qemu"]


def kernel_dir(variant):
    return os.path.join(KERNELS, variant)


def initramfs(variant):
    return os.path.join(BUILD, "initramfs", variant + ".cpio.gz")
