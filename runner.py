#!/usr/bin/python3
"""irqrig: interrupt fault-injection and verification rig (entry point).

Subcommands: install, build, run, suite, test, gdb, inventory, overhead,
compare, report, rejudge, hardoff.
See README.md; `./runner.py <subcommand> --help` for each.
"""

import sys

from irqrig.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
