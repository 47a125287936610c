"""Build irq_sensor.ko (and the test-only modules) against a variant's tree.

Kbuild writes objects next to the sources, so the sources are symlinked into
build/driver/<variant>/ and built there with M=; the tree stays clean.
"""

import glob
import os

from irqrig import artifacts, paths, variants
from irqrig.build_kernel import ARCH, source_dir
from irqrig.errors import BuildError, MissingError
from irqrig.util import log, run

MODULE_DIRS = {
    # build subdirectory -> source directory in the repository
    "irq_sensor": os.path.join(paths.GUEST_DRIVER, "module"),
    "testmods": os.path.join(paths.ROOT, "tests", "modules"),
}


def out_dir(variant):
    return artifacts.module_dir(variant)


def _link_tree(src, dst):
    os.makedirs(dst, exist_ok=True)
    wanted = {}
    for path in glob.glob(os.path.join(src, "*")):
        if os.path.isfile(path):
            wanted[os.path.basename(path)] = path
    wanted["include"] = paths.INCLUDE
    for name, target in wanted.items():
        link = os.path.join(dst, name)
        if os.path.islink(link) and os.readlink(link) == target:
            continue
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(target, link)
    for name in os.listdir(dst):    # sources removed from the repository
        link = os.path.join(dst, name)
        if os.path.islink(link) and name not in wanted:
            os.unlink(link)


def modules(variant):
    """Paths of the .ko files built for a variant."""
    return artifacts.modules(variant)


def build(name):
    variant = variants.get(name)
    kdir = paths.kernel_dir(name)
    if not os.path.exists(os.path.join(kdir, "Module.symvers")):
        raise MissingError("kernel %s is not built (%s)" % (name, kdir))
    for sub, src in MODULE_DIRS.items():
        if not os.path.exists(os.path.join(src, "Kbuild")):
            continue
        dst = os.path.join(out_dir(name), sub)
        _link_tree(src, dst)
        log("%s: building modules in %s" % (name, os.path.relpath(src, paths.ROOT)))
        run(["make", "-C", source_dir(variant), "O=" + kdir, "ARCH=" + ARCH,
             "M=" + dst, "modules"], quiet=True,
            logfile=os.path.join(dst, "irqrig-build.log"))
    if not modules(name) and os.path.exists(os.path.join(MODULE_DIRS["irq_sensor"], "Kbuild")):
        raise BuildError("%s: no modules were built in %s" % (name, out_dir(name)))
    return out_dir(name)


def dependencies(name):
    deps = [paths.INCLUDE, os.path.abspath(__file__)]
    deps += glob.glob(os.path.join(paths.INCLUDE, "*"))
    for src in MODULE_DIRS.values():
        # A module directory not there yet: watch its parent for it.
        deps.append(src if os.path.isdir(src) else os.path.dirname(src))
        deps += glob.glob(os.path.join(src, "*"))
    return deps
