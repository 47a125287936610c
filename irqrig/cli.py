"""Command-line interface of runner.py: one function per subcommand.

Exit status (irqrig/errors.py): 0 pass, 1 a scenario failed, 2 bad input or
usage, 3 the rig failed or a run is incomplete.
"""

import argparse
import datetime
import os
import sys
import traceback

from irqrig import errors, install, paths, variants
from irqrig.errors import EXIT_FAIL, EXIT_PASS, EXIT_RIG, MissingError, UsageError


def ensure_runtime(args, modules=("pexpect",)):
    """What a command needs installed is there before anything imports it:
    the install step runs (as in `build`) unless --no-build was given, in
    which case a missing module is one line saying what to run."""
    if not getattr(args, "no_build", False):
        from irqrig import build
        build.ensure_installed()
    missing = install.missing_python_modules(modules)
    if missing:
        pkgs = " ".join(install.PYTHON_MODULES.get(m, m) for m in missing)
        raise MissingError("Python module %s does not import (Debian package %s): "
                           "run ./runner.py install" % (", ".join(missing), pkgs))


def _variants(names):
    return variants.check(names) if names else None


def _status(rs):
    """A run set's exit status: incomplete beats failed beats passed."""
    if not rs.complete or rs.errors:
        return EXIT_RIG
    return EXIT_PASS if rs.ok else EXIT_FAIL


def cmd_install(args):
    install.install()
    return EXIT_PASS


def cmd_build(args):
    from irqrig import build
    names = variants.check(args.variants) if args.variants else variants.DEFAULT_VARIANTS
    build.build(names, qemu=not args.no_qemu)
    return EXIT_PASS


def cmd_run(args):
    only = _variants(args.variant)
    from irqrig import scenario
    points = []
    for path in args.scenarios:
        points += scenario.load(path)
    if args.reproduce:
        from irqrig import campaign
        rep_ = campaign.load_reproducer(args.reproduce)
        points = [campaign.reproduce(p, rep_) for p in points]
        for p in points:        # the replay is a scenario too: check it as one
            scenario.check(p, "--reproduce %s: " % args.reproduce)
        only = only or [rep_["variant"]]
    ensure_runtime(args)
    from irqrig import suite
    rs = suite.execute(points, "+".join(p.name for p in points[:1]) or "run",
                       ["runner.py"] + args.argv, only, do_build=not args.no_build)
    suite.report(rs)
    return _status(rs)


def cmd_suite(args):
    only = _variants(args.variant)
    from irqrig import scenario
    s = scenario.load_suite(args.name, args.tier)
    ensure_runtime(args)
    from irqrig import suite
    if s["inventory"] and not args.no_build:
        from irqrig import build
        build.build(s["inventory"], qemu=False)
    rs = suite.execute(s["points"], "suite-" + args.name, ["runner.py"] + args.argv,
                       only, do_build=not args.no_build, within=s["variants"])
    if s["inventory"]:
        suite.inventory(rs, s["inventory"])
    suite.report(rs)
    return _status(rs)


def cmd_rejudge(args):
    from irqrig import rejudge
    return rejudge.main(args.results)


def cmd_test(args):
    ensure_runtime(args)
    from irqrig import selftest
    return selftest.main(unit_only=args.unit, skip_e2e=args.no_e2e)


def cmd_inventory(args):
    from irqrig import artifacts, inventory_cmd, results
    names = variants.check(args.variants) if args.variants else variants.DEFAULT_VARIANTS
    if args.no_build:
        for n in names:
            artifacts.require(n, "vmlinux")
    else:
        from irqrig import build
        build.build(names, qemu=False)
    out = results.new_run_dir("inventory")
    rows, text, _ = inventory_cmd.run(names, out, lines=not args.no_lines,
                                      soft=not args.no_soft, soft_show=args.soft)
    print(text)
    print("inventory: %s" % out)
    return EXIT_PASS


def cmd_overhead(args):
    from irqrig import overhead
    print(overhead.run(args.results, args.base))
    return EXIT_PASS


def cmd_compare(args):
    from irqrig import compare, results
    res = compare.compare(args.base, args.new, args.variants)
    out = results.new_run_dir("compare")
    compare.write(res, out)
    print(compare.text(res))
    print("%d regression(s), %d improvement(s) -- %s" % (res["regressions"],
                                                         res["improvements"], out))
    return EXIT_FAIL if res["regressions"] else EXIT_PASS


def cmd_report(args):
    ensure_runtime(args, ("matplotlib",))
    from irqrig import report
    made = report.make(args.results)
    for p in made:
        print(p)
    print("report: %d plot(s)" % len(made))
    return EXIT_PASS


def cmd_hardoff(args):
    from irqrig import hardoff_cmd
    print(hardoff_cmd.main(args.results, args.top, args.sites, args.vmlinux))
    return EXIT_PASS


def cmd_gdb(args):
    variants.get(args.variant)
    from irqrig import artifacts
    if args.scenario:
        from irqrig import scenario
        scenario.load(args.scenario)        # bad input before anything starts
    if args.no_build:
        for what in ("vmlinux", "bzImage", "initramfs", "qemu"):
            artifacts.require(args.variant, what)
    ensure_runtime(args, ())
    if not args.no_build:
        from irqrig import build
        build.build([args.variant])
    from irqrig import gdbsession
    return gdbsession.run(args.variant, args.scenario)


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line (exit 2), like every other bad input."""

    def error(self, message):
        self.exit(2, "%s: error: %s (see %s --help)\n" % (self.prog, message, self.prog))


def parser():
    ap = _Parser(
        prog="runner.py", description=sys.modules["__main__"].__doc__,
        epilog="exit status: 0 pass, 1 a scenario failed, 2 bad input or usage, "
               "3 the rig failed or a run is incomplete",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("install", help="install Debian packages and enable deb-src")
    p.set_defaults(func=cmd_install)

    p = sub.add_parser("build", help="build QEMU, kernels, modules, initramfs")
    p.add_argument("variants", nargs="*",
                   help="variants (default: %s)" % " ".join(variants.DEFAULT_VARIANTS))
    p.add_argument("--no-qemu", action="store_true", help="skip QEMU")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("run", help="run scenario files")
    p.add_argument("scenarios", nargs="+", metavar="SCENARIO",
                   help="a scenario file, or a name under scenarios/")
    p.add_argument("--variant", action="append", help="only these variants")
    p.add_argument("--no-build", action="store_true", help="use what is built")
    p.add_argument("--reproduce", metavar="FINDING",
                   help="replay a campaign finding in exact mode: RESULTS/findings.json#N")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("suite", help="run a scenario suite (the main job)")
    p.add_argument("name", nargs="?", default="default",
                   help="suite under scenarios/suites/ (default: default)")
    p.add_argument("--tier", choices=["ci", "full"], default="full",
                   help="ci: only the scenarios marked tier = \"ci\"")
    p.add_argument("--variant", action="append", help="only these variants")
    p.add_argument("--no-build", action="store_true", help="use what is built")
    p.set_defaults(func=cmd_suite)

    p = sub.add_parser("inventory", help="static cli inventory per variant (vmlinux)")
    p.add_argument("variants", nargs="*")
    p.add_argument("--no-build", action="store_true", help="use what is built")
    p.add_argument("--no-lines", action="store_true", help="skip source lines (faster)")
    p.add_argument("--no-soft", action="store_true", help="skip the soft-section tables")
    p.add_argument("--soft", action="append", metavar="PATTERN",
                   help="also list the soft sections matching PATTERN (subsystem, file, "
                        "function or inlined function, glob)")
    p.set_defaults(func=cmd_inventory)

    p = sub.add_parser("overhead", help="instructions per irq primitive and per "
                       "fork/exec/pipe from an overhead-icount result set")
    p.add_argument("results", help="results/<run-id> of scenarios/overhead-icount.toml")
    p.add_argument("--base", default="6.12-rt", help="the stock variant (default 6.12-rt)")
    p.set_defaults(func=cmd_overhead)

    p = sub.add_parser("compare", help="regressions between two result sets")
    p.add_argument("base", help="results/<run-id> (or its results.json)")
    p.add_argument("new")
    p.add_argument("--variants", metavar="A:B",
                   help="compare variant A in BASE with variant B in NEW, by scenario")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("report", help="plots for a result set")
    p.add_argument("results", help="results/<run-id>")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("rejudge", help="judge a saved result set again with "
                                       "today's verdict rules")
    p.add_argument("results", help="results/<run-id>")
    p.set_defaults(func=cmd_rejudge)

    p = sub.add_parser("hardoff", help="longest hard-off windows of a result set "
                                       "(IF-tracker plugin), symbolised")
    p.add_argument("results", help="results/<run-id>, its results.json, or an iftrack.json")
    p.add_argument("--top", type=int, default=10, help="windows to list (default 10)")
    p.add_argument("--sites", type=int, default=15, help="sites to list (default 15)")
    p.add_argument("--vmlinux", help="name sites with this vmlinux")
    p.set_defaults(func=cmd_hardoff)

    p = sub.add_parser("gdb", help="boot a variant paused under gdb with irqrig's commands")
    p.add_argument("variant")
    p.add_argument("scenario", nargs="?", help="take QEMU and sensor settings from it")
    p.add_argument("--no-build", action="store_true", help="use what is built")
    p.set_defaults(func=cmd_gdb)

    p = sub.add_parser("test", help="the project's tests (build, unit, qtest, boots)")
    p.add_argument("--unit", action="store_true", help="unit tests only (no build)")
    p.add_argument("--no-e2e", action="store_true", help="skip the boots")
    p.set_defaults(func=cmd_test)
    return ap


def _crash_log(command):
    """Save a runner crash's traceback; returns where."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    for d in (paths.RESULTS, "/tmp"):
        try:
            os.makedirs(d, exist_ok=True)
            path = os.path.join(d, "runner-crash-%s-%s.txt" % (stamp, command))
            with open(path, "w", encoding="utf-8") as f:
                f.write(traceback.format_exc())
            return path
        except OSError:
            continue
    return None


def main(argv):
    args = parser().parse_args(argv)        # usage errors exit 2 here
    args.argv = list(argv)
    try:
        return args.func(args)
    except errors.IrqrigError as e:
        print("runner.py %s: %s" % (args.command, e), file=sys.stderr)
        return e.exit_code
    except (KeyboardInterrupt, errors.Interrupted) as e:
        why = getattr(e, "reason", "Ctrl-C")
        print("runner.py %s: interrupted (%s)" % (args.command, why), file=sys.stderr)
        return EXIT_RIG
    except Exception as e:      # a bug in the runner: say where the traceback is
        where = _crash_log(args.command)
        print("runner.py %s: internal error: %s: %s (traceback: %s)"
              % (args.command, type(e).__name__, e, where), file=sys.stderr)
        return EXIT_RIG


__all__ = ["main", "UsageError"]
