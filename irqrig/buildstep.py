"""One build step, run by ninja from meson.build (not by people).

    buildstep.py qemu                 --stamp S --depfile D
    buildstep.py kernel VARIANT       --stamp S --depfile D
    buildstep.py driver VARIANT       --stamp S --depfile D
    buildstep.py initramfs VARIANT    --stamp S --depfile D --tool T...

Each step is idempotent and skips work whose inputs did not change; the
depfile tells ninja which files (and directories, for added files) to watch.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from irqrig import errors  # noqa: E402
from irqrig.util import write_if_changed  # noqa: E402


def _escape(path):
    return path.replace("\\", "\\\\").replace(" ", "\\ ").replace("$", "$$")


def write_depfile(depfile, stamp, deps):
    deps = sorted({os.path.abspath(d) for d in deps if os.path.exists(d)})
    text = "%s: \\\n  %s\n" % (_escape(stamp), " \\\n  ".join(_escape(d) for d in deps))
    write_if_changed(depfile, text)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=["qemu", "kernel", "driver", "initramfs"])
    ap.add_argument("variant", nargs="?")
    ap.add_argument("--stamp", required=True)
    ap.add_argument("--depfile", required=True)
    ap.add_argument("--tool", action="append", default=[],
                    help="guest tool binary to put into the initramfs")
    ap.add_argument("--jobs", type=int, default=(os.cpu_count() or 1) + 1)
    args = ap.parse_args(argv)
    try:
        if args.step == "qemu":
            from irqrig import build_qemu
            build_qemu.build(args.jobs)
            deps = build_qemu.dependencies()
        elif args.step == "kernel":
            from irqrig import build_kernel
            build_kernel.build(args.variant)
            deps = build_kernel.dependencies(args.variant)
        elif args.step == "driver":
            from irqrig import build_driver
            build_driver.build(args.variant)
            deps = build_driver.dependencies(args.variant)
        else:
            from irqrig import build_initramfs
            build_initramfs.build(args.variant, args.tool)
            deps = build_initramfs.dependencies(args.variant, args.tool)
    except errors.IrqrigError as e:
        print("irqrig build: %s step failed: %s" % (args.step, e), file=sys.stderr)
        return 1
    deps.append(os.path.abspath(__file__))
    write_depfile(args.depfile, args.stamp, deps)
    with open(args.stamp, "w", encoding="utf-8") as f:
        f.write("ok\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
