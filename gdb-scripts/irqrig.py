# gdb: source this file to get the `irqrig` commands (see `help irqrig`).
# Load the kernel's vmlinux-gdb.py of the same build first.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from irqrig_gdb import commands  # noqa: E402

commands.register()
