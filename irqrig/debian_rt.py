"""Debian's PREEMPT_RT series for a kernel without in-tree RT (6.1).

linux-source-6.1 has no PREEMPT_RT for x86; Debian builds its -rt kernels
from debian/patches-rt/ in the `linux` source package.  Only that directory
is needed, so only the package's debian.tar.xz (about 2 MB, not the 140 MB
orig tarball) is fetched: its URL and SHA256 come from
`apt-get source --print-uris` (the deb-src entry `runner.py install` adds),
it is checked and kept in the cache, never in the tree.

kernel-patches/<version>/debian-rt.toml pins the package version and lists
the patches that are skipped, each with its reason.  The rig's own fixes to
that series (kernel-patches/<version>/debian-rt-fixes/, a quilt series whose
patches say why in their changelogs) are applied after it.
"""

import hashlib
import os
import re
import shutil
import subprocess
import tarfile
import tomllib
import urllib.request

from irqrig import paths
from irqrig.errors import BuildError, MissingError
from irqrig.util import log


def pin_file(version):
    return os.path.join(paths.KERNEL_PATCHES, version, "debian-rt.toml")


def load_pin(version):
    path = pin_file(version)
    try:
        with open(path, "rb") as f:
            pin = tomllib.load(f)
    except FileNotFoundError:
        raise MissingError("no Debian RT pin %s" % path) from None
    except tomllib.TOMLDecodeError as e:
        raise BuildError("%s: %s" % (path, e)) from None
    for key in ("package", "version"):
        if not isinstance(pin.get(key), str):
            raise BuildError("%s: key %r must be a string" % (path, key))
    skip = pin.get("skip", [])
    if not all(isinstance(s, dict) and {"patch", "reason"} <= set(s) for s in skip):
        raise BuildError("%s: every [[skip]] needs patch and reason" % path)
    return pin


def fixes_dir(version):
    return os.path.join(paths.KERNEL_PATCHES, version, "debian-rt-fixes")


def _series_names(path):
    with open(path, encoding="utf-8") as f:
        names = [ln.split("#", 1)[0].strip() for ln in f]
    return [n for n in names if n]


def fixes(version):
    """The rig's fixes to Debian's RT series, in series order (none when
    the version has no debian-rt-fixes/)."""
    d = fixes_dir(version)
    series = os.path.join(d, "series")
    if not os.path.exists(series):
        return []
    out = [os.path.join(d, n) for n in _series_names(series)]
    missing = [p for p in out if not os.path.exists(p)]
    if missing:
        raise BuildError("%s names patches that do not exist: %s"
                         % (series, ", ".join(missing)))
    return out


def cache_dir(pin):
    return os.path.join(paths.DOWNLOADS, "debian-rt", "%s_%s" % (pin["package"], pin["version"]))


def _debian_tarball_uri(pin):
    spec = "%s=%s" % (pin["package"], pin["version"])
    proc = subprocess.run(["apt-get", "source", "--print-uris", spec],
                          capture_output=True, text=True, check=False)
    for line in proc.stdout.splitlines():
        m = re.match(r"'(\S+)' (\S+\.debian\.tar\.xz) (\d+) SHA256:([0-9a-f]{64})", line)
        if m:
            return m.group(1), m.group(2), m.group(4)
    raise MissingError(
        "apt-get source --print-uris %s gave no debian.tar.xz (is deb-src enabled? "
        "run ./runner.py install): %s" % (spec, (proc.stderr or proc.stdout).strip()[-300:]))


def fetch(pin):
    """debian/patches-rt/ of the pinned package, fetched once into the cache."""
    out = cache_dir(pin)
    patches = os.path.join(out, "patches-rt")
    if os.path.exists(os.path.join(patches, "series")):
        return patches
    uri, name, sha = _debian_tarball_uri(pin)
    os.makedirs(out, exist_ok=True)
    tarball = os.path.join(out, name)
    log("debian-rt: fetching %s" % uri)
    try:
        urllib.request.urlretrieve(uri, tarball + ".part")
    except OSError as e:
        raise MissingError("could not download %s: %s" % (uri, e)) from None
    with open(tarball + ".part", "rb") as f:
        got = hashlib.sha256(f.read()).hexdigest()
    if got != sha:
        os.unlink(tarball + ".part")
        raise BuildError("%s: SHA256 %s, the archive says %s" % (uri, got, sha))
    os.rename(tarball + ".part", tarball)
    tmp = patches + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    with tarfile.open(tarball) as tf:
        members = [m for m in tf.getmembers()
                   if m.name.startswith("debian/patches-rt/") and m.isfile()]
        if not members:
            raise BuildError("%s has no debian/patches-rt/" % tarball)
        os.makedirs(tmp)
        for m in members:    # flat: plain files only, no paths from the archive
            with open(os.path.join(tmp, os.path.basename(m.name)), "wb") as out_f:
                out_f.write(tf.extractfile(m).read())
    os.rename(tmp, patches)
    log("debian-rt: %d files in %s" % (len(members), patches))
    return patches


def patches(version):
    """The RT patches to apply, in series order, without the skipped ones,
    then the rig's fixes."""
    pin = load_pin(version)
    d = fetch(pin)
    names = _series_names(os.path.join(d, "series"))
    skip = {s["patch"] for s in pin.get("skip", [])}
    unknown = skip - set(names)
    if unknown:
        raise BuildError("%s skips patches the series does not have: %s"
                         % (pin_file(version), ", ".join(sorted(unknown))))
    return [os.path.join(d, n) for n in names if n not in skip] + fixes(version)
