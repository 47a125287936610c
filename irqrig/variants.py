"""Kernel variants: a name says version + preemption model + patches.

A variant is built from one kernel source tree (a Debian tarball plus patch
stacks) and a list of config fragments from kernel-patches/configs/, applied
in order on top of tinyconfig.
"""

import os
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from irqrig import paths  # noqa: E402
from irqrig.errors import UsageError  # noqa: E402

TARBALLS = {
    "6.12": "/usr/src/linux-source-6.12.tar.xz",
    "6.1": "/usr/src/linux-source-6.1.tar.xz",
}
TARBALL_PACKAGES = {"6.12": "linux-source-6.12", "6.1": "linux-source-6.1"}


class Variant:
    def __init__(self, name, version, fragments, patchsets=(), default=True,
                 description="", icount_smp=True):
        self.name = name
        self.version = version
        self.fragments = list(fragments)
        # Patch stacks applied in order: "debian-rt" is Debian's RT series
        # (irqrig/debian_rt.py), "irqsoft" is kernel-patches/<version>/;
        # any other name is a test-only patch (test_patch()).
        self.patchsets = list(patchsets)
        self.default = default
        self.description = description
        # False: an SMP guest of this kernel does not boot under -icount
        # with irqrig's QEMU; icount scenarios with cpus > 1 skip it.
        self.icount_smp = icount_smp

    @property
    def source_key(self):
        """Variants with the same key share one patched source tree."""
        return "+".join([self.version] + self.patchsets)

    @property
    def tarball(self):
        return TARBALLS[self.version]

    @property
    def irqsoft(self):
        """Built with the RT_IRQ_DISABLE series (has a .hard_irq_sites table)."""
        return "irqsoft" in self.patchsets

    @property
    def wide(self):
        """Built with wide.config (a distro-like guest), not tinyconfig alone."""
        return "wide" in self.fragments

    @property
    def preempt_rt(self):
        return "rt" in self.fragments

    def fragment_paths(self):
        return [os.path.join(paths.KERNEL_CONFIGS, f + ".config")
                for f in ["base"] + self.fragments]

    def series_dir(self):
        return os.path.join(paths.KERNEL_PATCHES, self.version)

    def test_patch(self, name):
        """A patch that breaks the series on purpose, for a negative test."""
        return os.path.join(paths.KERNEL_PATCHES, "test-only", self.version, name + ".patch")


VARIANTS = {v.name: v for v in [
    Variant("6.12-preempt", "6.12", ["preempt"],
            description="stock 6.12, CONFIG_PREEMPT"),
    Variant("6.12-rt", "6.12", ["rt"],
            description="stock 6.12, CONFIG_PREEMPT_RT (mainline)"),
    Variant("6.12-rt-irqsoft", "6.12", ["rt", "rt-irq-disable"], ["irqsoft"],
            description="6.12 PREEMPT_RT + the RT_IRQ_DISABLE series"),
    Variant("6.12-rt-irqsoft-debug", "6.12",
            ["rt", "rt-irq-disable", "debug"], ["irqsoft"],
            description="6.12-rt-irqsoft + lockdep and debug checks"),
    # Test only: one swapgs fix reverted, for the campaign's negative test.
    Variant("6.12-rt-irqsoft-debug-swapgs-soft", "6.12",
            ["rt", "rt-irq-disable", "debug"], ["irqsoft", "swapgs-soft"], default=False,
            description="TEST ONLY: 6.12-rt-irqsoft-debug with native_load_gs_index() "
                        "soft again (kernel-patches/test-only)"),
    # Test only: the return to user mode does not run the soft irq log.
    Variant("6.12-rt-irqsoft-debug-exit-noreplay", "6.12",
            ["rt", "rt-irq-disable", "debug"], ["irqsoft", "exit-noreplay"], default=False,
            description="TEST ONLY: 6.12-rt-irqsoft-debug whose return to user mode leaves "
                        "logged interrupts waiting (kernel-patches/test-only)"),
    # 6.1 stops at "Booting SMP configuration" (CPU 1 never comes up) under
    # -icount with QEMU 7.2, whatever the shift or sleep mode; 6.12 boots.
    # With QEMU 10.0 a 2-CPU 6.1-preempt boots under -icount (shift 0 and
    # 3, 6 s; 7.2: not in 150 s); the 6.1-rt variants are not rechecked yet.
    Variant("6.1-preempt", "6.1", ["preempt"],
            description="stock 6.1, CONFIG_PREEMPT"),
    Variant("6.1-rt", "6.1", ["rt"], ["debian-rt"], icount_smp=False,
            description="6.1 + Debian's PREEMPT_RT series (debian/patches-rt)"),
    Variant("6.1-rt-irqsoft", "6.1", ["rt", "rt-irq-disable"], ["debian-rt", "irqsoft"],
            icount_smp=False,
            description="6.1-rt + the RT_IRQ_DISABLE series (kernel-patches/6.1)"),
    Variant("6.1-rt-irqsoft-debug", "6.1", ["rt", "rt-irq-disable", "debug"],
            ["debian-rt", "irqsoft"], icount_smp=False,
            description="6.1-rt-irqsoft + lockdep and debug checks"),
    # A wide, distro-like configuration (kernel-patches/configs/wide.config):
    # built on demand, for the static counts next to tinyconfig's.
    Variant("6.12-preempt-wide", "6.12", ["preempt", "wide"], default=False,
            description="6.12-preempt with wide.config (distro-like guest)"),
    Variant("6.12-rt-wide", "6.12", ["rt", "wide"], default=False,
            description="6.12-rt with wide.config (distro-like guest)"),
    Variant("6.12-rt-irqsoft-wide", "6.12", ["rt", "rt-irq-disable", "wide"], ["irqsoft"],
            default=False,
            description="6.12-rt-irqsoft with wide.config (distro-like guest)"),
    Variant("6.1-preempt-wide", "6.1", ["preempt", "wide"], default=False,
            description="6.1-preempt with wide.config (distro-like guest)"),
    Variant("6.1-rt-wide", "6.1", ["rt", "wide"], ["debian-rt"], default=False,
            icount_smp=False,
            description="6.1-rt with wide.config (distro-like guest)"),
    Variant("6.1-rt-irqsoft-wide", "6.1", ["rt", "rt-irq-disable", "wide"],
            ["debian-rt", "irqsoft"], default=False, icount_smp=False,
            description="6.1-rt-irqsoft with wide.config (distro-like guest)"),
]}

DEFAULT_VARIANTS = [n for n, v in VARIANTS.items() if v.default]


def get(name):
    try:
        return VARIANTS[name]
    except KeyError:
        raise UsageError("unknown kernel variant %r (known: %s)"
                         % (name, ", ".join(VARIANTS))) from None


def check(names):
    """The names, each checked (a one-line error for an unknown one)."""
    for n in names:
        get(n)
    return list(names)


if __name__ == "__main__":
    # meson reads the list at configure time: "name version source_key".
    for v in VARIANTS.values():
        print(v.name, v.version, v.source_key)
