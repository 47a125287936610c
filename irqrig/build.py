"""`runner.py build`: meson setup (once) and ninja for the requested parts."""

import os
import shutil
import subprocess
import time

from irqrig import install, paths, variants
from irqrig.errors import BuildError, MissingError
from irqrig.util import log


def ensure_installed():
    """Run the install step when something the rig needs is missing."""
    if install.is_complete():
        return
    missing = install.missing_packages()
    log("setup: missing %s; running the install step"
        % (" ".join(missing) if missing else "the deb-src entry"))
    if os.geteuid() != 0:
        raise MissingError("missing Debian packages: %s. Run as root: ./runner.py install"
                           % " ".join(missing))
    install.install(log)


def ensure_setup():
    if os.path.exists(os.path.join(paths.BUILD, "build.ninja")):
        return
    log("build: meson setup %s" % paths.BUILD)
    rc = subprocess.run(["meson", "setup", paths.BUILD, paths.ROOT],
                        cwd=paths.ROOT, check=False).returncode
    if rc:
        raise BuildError("meson setup failed (exit %d)" % rc)


# A kernel variant's source tree and objects take 2-3 GB, QEMU's about 1 GB.
LOW_DISK_BYTES = 6 << 30


def free_bytes():
    path = paths.BUILD if os.path.isdir(paths.BUILD) else paths.ROOT
    return shutil.disk_usage(path).free


def disk_note(free):
    """What to say about the free space left for the build, or ""."""
    if free >= LOW_DISK_BYTES:
        return ""
    return ("only %.1f GB free on the build's file system (%s); a build needs "
            "up to %d GB: remove old clones' build/ trees or results/"
            % (free / (1 << 30), paths.BUILD, LOW_DISK_BYTES >> 30))


def targets_for(variant_names, qemu=True):
    out = ["qemu.stamp"] if qemu else []
    for name in variant_names:
        variants.get(name)      # a clear error for unknown names
        out.append("initramfs-%s.stamp" % name)
    return out


def build(variant_names, qemu=True):
    """Build QEMU and the named variants (kernel, modules, initramfs)."""
    ensure_installed()
    ensure_setup()
    targets = targets_for(variant_names, qemu)
    t0 = time.monotonic()
    log("build: %s" % ", ".join(targets))
    note = disk_note(free_bytes())
    if note:
        log("build: warning: " + note)
    # ninja prints "no work to do" when everything is up to date.
    proc = subprocess.run(["ninja", "-C", paths.BUILD] + targets, check=False)
    if proc.returncode:
        note = disk_note(free_bytes())
        raise BuildError("build failed (ninja exit %d); the failing step's "
                         "message is above, logs are in %s%s"
                         % (proc.returncode, paths.BUILD, "; " + note if note else ""))
    log("build: done in %.0f s" % (time.monotonic() - t0))
