"""Command-line interface of runner.py: one function per subcommand."""

import argparse
import sys

from irqrig import errors, variants


def cmd_install(args):
    from irqrig import install
    install.install()
    return 0


def cmd_build(args):
    from irqrig import build
    names = args.variants or variants.DEFAULT_VARIANTS
    build.build(names, qemu=not args.no_qemu)
    return 0


def cmd_run(args):
    from irqrig import scenario, suite
    points = []
    for path in args.scenarios:
        points += scenario.load(path)
    rs = suite.execute(points, "+".join(p.name for p in points[:1]) or "run",
                       ["runner.py"] + args.argv, args.variant or None,
                       do_build=not args.no_build)
    suite.report(rs)
    return 0 if rs.ok else 1


def cmd_suite(args):
    from irqrig import suite
    s = suite.load_suite(args.name, args.tier)
    if s["inventory"] and not args.no_build:
        from irqrig import build
        build.build(s["inventory"], qemu=False)
    rs = suite.execute(s["points"], "suite-" + args.name, ["runner.py"] + args.argv,
                       args.variant or None, do_build=not args.no_build,
                       within=s["variants"])
    if s["inventory"]:
        suite.inventory(rs, s["inventory"])
    suite.report(rs)
    return 0 if rs.ok else 1


def cmd_test(args):
    from irqrig import selftest
    return selftest.main(unit_only=args.unit, skip_e2e=args.no_e2e)


def cmd_inventory(args):
    from irqrig import build, inventory_cmd, results
    names = args.variants or variants.DEFAULT_VARIANTS
    if not args.no_build:
        build.build(names, qemu=False)
    out = results.new_run_dir("inventory")
    rows, text, _ = inventory_cmd.run(names, out, lines=not args.no_lines)
    print(text)
    print("inventory: %s" % out)
    return 0


def cmd_compare(args):
    from irqrig import compare, results
    res = compare.compare(args.base, args.new, args.variants)
    out = results.new_run_dir("compare")
    compare.write(res, out)
    print(results.table(res["rows"]) if res["rows"] else "(nothing in common)")
    print("%d regression(s), %d improvement(s) -- %s" % (res["regressions"],
                                                         res["improvements"], out))
    return 1 if res["regressions"] else 0


def cmd_report(args):
    from irqrig import report
    made = report.make(args.results)
    for p in made:
        print(p)
    print("report: %d plot(s)" % len(made))
    return 0


def cmd_hardoff(args):
    from irqrig import hardoff_cmd
    print(hardoff_cmd.main(args.results, args.top, args.sites, args.vmlinux))
    return 0


def cmd_gdb(args):
    from irqrig import build, gdbsession
    if not args.no_build:
        build.build([args.variant])
    return gdbsession.run(args.variant, args.scenario)


def parser():
    ap = argparse.ArgumentParser(prog="runner.py", description=__doc__)
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
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("suite", help="run a scenario suite (the main job)")
    p.add_argument("name", nargs="?", default="default",
                   help="suite under scenarios/suites/ (default: default)")
    p.add_argument("--tier", choices=["ci", "full"], default="full")
    p.add_argument("--variant", action="append", help="only these variants")
    p.add_argument("--no-build", action="store_true", help="use what is built")
    p.set_defaults(func=cmd_suite)

    p = sub.add_parser("inventory", help="static cli inventory per variant (vmlinux)")
    p.add_argument("variants", nargs="*")
    p.add_argument("--no-build", action="store_true", help="use what is built")
    p.add_argument("--no-lines", action="store_true", help="skip source lines (faster)")
    p.set_defaults(func=cmd_inventory)

    p = sub.add_parser("compare", help="regressions between two result sets")
    p.add_argument("base", help="results/<run-id> (or its results.json)")
    p.add_argument("new")
    p.add_argument("--variants", metavar="A:B",
                   help="compare variant A in BASE with variant B in NEW, by scenario")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("report", help="plots for a result set")
    p.add_argument("results", help="results/<run-id>")
    p.set_defaults(func=cmd_report)

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


def main(argv):
    args = parser().parse_args(argv)
    args.argv = list(argv)
    try:
        return args.func(args)
    except errors.IrqrigError as e:
        print("runner.py %s: %s" % (args.command, e), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("runner.py %s: interrupted" % args.command, file=sys.stderr)
        return 130
