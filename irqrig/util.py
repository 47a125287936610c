"""Small helpers shared by the build steps and the runner."""

import os
import subprocess
import sys
import time

from irqrig import paths
from irqrig.errors import BuildError

_T0 = time.monotonic()


def log(msg):
    print("[%6.1fs] %s" % (time.monotonic() - _T0, msg), flush=True)


def ccache_env(**extra):
    """The environment of a compile with the shared ccache (QEMU, kernels).

    Both build with -g, so ccache would hash the build directory and a
    second clone (CI's) would miss the whole cache: NOHASHDIR.
    """
    env = dict(os.environ, CCACHE_DIR=paths.CCACHE_DIR, CCACHE_BASEDIR=paths.BUILD,
               CCACHE_NOHASHDIR="1", **extra)
    env.setdefault("CCACHE_MAXSIZE", "10G")
    return env


def read_text(path, default=None):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return default


def write_if_changed(path, text):
    """Write text unless the file already holds it (keeps mtimes stable)."""
    if read_text(path) == text:
        return False
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    return True


def run(argv, cwd=None, env=None, quiet=False, logfile=None, progress=None,
        every=1):
    """Run a command; raise BuildError naming the log on failure.

    quiet: output goes to logfile only (tail shown on failure).
    progress: a prefix; every ``every``-th output line is echoed with it and
    a line count (long make/ninja runs show they are alive).
    """
    if logfile is None and quiet:
        from irqrig import paths
        os.makedirs(os.path.join(paths.BUILD, "logs"), exist_ok=True)
        logfile = os.path.join(paths.BUILD, "logs",
                               os.path.basename(argv[0]) + ".log")
    out = open(logfile, "a", encoding="utf-8") if logfile else None
    try:
        if out:
            out.write("\n$ %s  (cwd %s)\n" % (" ".join(argv), cwd or os.getcwd()))
            out.flush()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True,
                                errors="replace")
        tail = []
        for count, line in enumerate(proc.stdout, 1):
            if out:
                out.write(line)
            tail.append(line)
            del tail[:-30]
            if progress is not None and count % every == 0:
                sys.stdout.write("%s[%d] %s" % (progress, count, line.lstrip()))
                sys.stdout.flush()
            elif not quiet and progress is None:
                sys.stdout.write(line)
                sys.stdout.flush()
        rc = proc.wait()
    except FileNotFoundError as e:
        raise BuildError("cannot run %s: %s" % (argv[0], e)) from None
    finally:
        if out:
            out.close()
    if rc != 0:
        where = (" (full log: %s)" % logfile) if logfile else ""
        raise BuildError("%s failed with exit code %d%s; last lines:\n%s"
                         % (" ".join(argv[:3]), rc, where, "".join(tail[-15:])))
    return rc
