"""Build a kernel variant out of tree (O=build/kernels/<variant>).

  source     unpack Debian's linux-source tarball into build/src/linux-<key>
             and apply the variant's patch stacks (quilt series order)
  config     tinyconfig + kernel-patches/configs fragments, then checked: an
             option a fragment asks for that Kconfig dropped is an error
  compile    make all (vmlinux, bzImage, modules, scripts/gdb), with ccache
"""

import hashlib
import json
import os
import re
import shutil
import subprocess

from irqrig import artifacts, debian_rt, paths, variants
from irqrig.errors import BuildError, MissingError
from irqrig.util import ccache_env, log, read_text, run, write_if_changed

ARCH = "x86_64"
BUILD_ENV = {
    # Fixed so that the version string, and ccache hits, do not depend on
    # who built when.
    "KBUILD_BUILD_TIMESTAMP": "irqrig",
    "KBUILD_BUILD_USER": "irqrig",
    "KBUILD_BUILD_HOST": "irqrig",
}


def _hash_files(files):
    h = hashlib.sha256()
    for f in files:
        h.update(f.encode())
        with open(f, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()


def series_patches(series_dir):
    """Patch files named by <series_dir>/series, in order (quilt format)."""
    series = os.path.join(series_dir, "series")
    text = read_text(series)
    if text is None:
        raise MissingError("no patch series %s" % series)
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        path = os.path.join(series_dir, line.split()[0])
        if not os.path.exists(path):
            raise BuildError("%s names %s, which does not exist" % (series, path))
        out.append(path)
    return out


def patch_stack(variant):
    """All patch files for a variant's source tree, in application order."""
    out = []
    for name in variant.patchsets:
        if name == "irqsoft":
            out += series_patches(variant.series_dir())
        elif name == "debian-rt":
            out += debian_rt.patches(variant.version)
        elif os.path.exists(variant.test_patch(name)):
            out.append(variant.test_patch(name))
        else:
            raise BuildError("variant %s: unknown patch set %r (no %s)"
                             % (variant.name, name, variant.test_patch(name)))
    return out


def _patch_name(path):
    """Tree patches by their path in the tree, cached ones (Debian's RT
    series) by their cache directory's name and file."""
    if path.startswith(paths.ROOT + os.sep):
        return os.path.relpath(path, paths.ROOT)
    return os.path.join(*path.split(os.sep)[-3:])


def source_dir(variant):
    return os.path.join(paths.SOURCES, "linux-" + variant.source_key)


def source_identity(variant):
    tarball = variant.tarball
    if not os.path.exists(tarball):
        raise MissingError(
            "kernel source %s is missing: install Debian's %s (./runner.py install)"
            % (tarball, variants.TARBALL_PACKAGES[variant.version]))
    st = os.stat(tarball)
    return json.dumps({"tarball": tarball, "size": st.st_size,
                       "mtime": int(st.st_mtime),
                       "patches": _hash_files(patch_stack(variant))})


def prepare_source(variant):
    src = source_dir(variant)
    marker = src + ".identity"
    ident = source_identity(variant)
    if read_text(marker) == ident and os.path.isdir(src):
        return src
    log("%s: unpacking %s" % (variant.name, variant.tarball))
    tmp = src + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(tmp)
    run(["tar", "-xf", variant.tarball, "-C", tmp], quiet=True)
    (top,) = os.listdir(tmp)
    stack = patch_stack(variant)
    if stack:
        log("%s: applying %d patches from %s" % (
            variant.name, len(stack), ", ".join(sorted({os.path.dirname(p) for p in stack}))))
    for patch in stack:
        run(["patch", "-p1", "--forward", "--batch", "--no-backup-if-mismatch",
             "-i", patch], cwd=os.path.join(tmp, top), quiet=True)
    os.rename(os.path.join(tmp, top), src)
    os.rmdir(tmp)
    write_if_changed(marker, ident)
    return src


def _make(variant, src, targets, quiet=True, progress=False):
    out = paths.kernel_dir(variant.name)
    argv = ["make", "-C", src, "O=" + out, "ARCH=" + ARCH, "CC=ccache gcc",
            "-j%d" % jobs_for_make()] + targets
    env = ccache_env(**BUILD_ENV)
    logfile = os.path.join(out, "irqrig-build.log")
    os.makedirs(out, exist_ok=True)
    run(argv, env=env, quiet=quiet or progress, logfile=logfile,
        progress=("%s: " % variant.name) if progress else None, every=100)


def jobs_for_make():
    return int(os.environ.get("IRQRIG_JOBS", (os.cpu_count() or 1) + 1))


_OPT = re.compile(r"^(CONFIG_\w+)=(.*)$|^# (CONFIG_\w+) is not set$")


def parse_config(text):
    opts = {}
    for line in text.splitlines():
        m = _OPT.match(line.strip())
        if m:
            if m.group(1):
                opts[m.group(1)] = m.group(2)
            else:
                opts[m.group(3)] = "n"
    return opts


def configure(variant, src):
    out = paths.kernel_dir(variant.name)
    frags = variant.fragment_paths()
    for f in frags:
        if not os.path.exists(f):
            raise BuildError("variant %s needs config fragment %s" % (variant.name, f))
    marker = os.path.join(out, "irqrig-config.identity")
    ident = json.dumps({"source": read_text(source_dir(variant) + ".identity"),
                        "fragments": _hash_files(frags)})
    if read_text(marker) == ident and os.path.exists(os.path.join(out, ".config")):
        return
    log("%s: configuring (tinyconfig + %s)" % (
        variant.name, " + ".join(os.path.basename(f) for f in frags)))
    _make(variant, src, ["tinyconfig"])
    config = os.path.join(out, ".config")
    run([os.path.join(src, "scripts", "kconfig", "merge_config.sh"), "-m", "-O", out,
         config] + frags, cwd=src, quiet=True, logfile=os.path.join(out, "irqrig-build.log"))
    _make(variant, src, ["olddefconfig"])
    check_config(variant, config, frags)
    write_if_changed(marker, ident)


def check_config(variant, config, frags):
    have = parse_config(read_text(config))
    wrong = []
    for f in frags:
        for opt, want in parse_config(read_text(f)).items():
            got = have.get(opt, "n")
            if got != want:
                wrong.append("%s=%s (wanted %s, from %s)" % (opt, got, want,
                                                             os.path.basename(f)))
    if wrong:
        raise BuildError("%s: Kconfig did not take these options (unmet dependencies?):\n  %s"
                         % (variant.name, "\n  ".join(wrong)))


def kernel_release(variant):
    out = paths.kernel_dir(variant.name)
    return (read_text(os.path.join(out, "include", "config", "kernel.release")) or "").strip()


def build(name):
    variant = variants.get(name)
    src = prepare_source(variant)
    configure(variant, src)
    log("%s: compiling (make all)" % variant.name)
    _make(variant, src, ["all"], progress=True)
    out = paths.kernel_dir(variant.name)
    bzimage = os.path.join(out, "arch", "x86", "boot", "bzImage")
    if not os.path.exists(bzimage):
        raise BuildError("%s: make finished without %s" % (variant.name, bzimage))
    config = read_text(os.path.join(out, ".config"))
    info = {
        "variant": variant.name,
        "release": kernel_release(variant),
        "source": os.path.basename(variant.tarball),
        "tarball_package_version": package_version(variants.TARBALL_PACKAGES[variant.version]),
        "patches": [_patch_name(p) for p in patch_stack(variant)],
        "fragments": [os.path.basename(f) for f in variant.fragment_paths()],
        "config_sha256": hashlib.sha256(config.encode()).hexdigest(),
    }
    write_if_changed(artifacts.kernel_info_path(name),
                     json.dumps(info, indent=2) + "\n")
    return out


def package_version(pkg):
    return subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                          capture_output=True, text=True, check=False).stdout.strip()


def dependencies(name):
    variant = variants.get(name)
    deps = [variant.tarball, paths.KERNEL_CONFIGS, os.path.abspath(__file__)]
    deps += variant.fragment_paths()
    if variant.irqsoft:
        deps.append(variant.series_dir())
        deps.append(os.path.join(variant.series_dir(), "series"))
    if "debian-rt" in variant.patchsets:
        deps.append(debian_rt.pin_file(variant.version))
        fixes = debian_rt.fixes_dir(variant.version)
        deps += [p for p in (fixes, os.path.join(fixes, "series")) if os.path.exists(p)]
    if variant.patchsets:
        try:
            deps += patch_stack(variant)
        except (BuildError, MissingError):
            pass
    return deps


def info(name):
    return artifacts.kernel_info(name)
