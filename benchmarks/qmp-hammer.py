#!/usr/bin/python3
"""Keep QEMU's main loop busy with QMP traffic while a scenario runs.

A stress test for determinism under -icount: host-timed work in the main
loop (here, QMP commands) must not change what the guest sees.  Run it next
to a batch icount scenario with repeats (e.g. icount-determinism); it talks
to every irqrig QEMU's QMP socket (/tmp/irqrig-*/qmp.sock) it finds, one
after the other, until --seconds have passed, and prints how many commands
each socket answered.

  benchmarks/qmp-hammer.py --seconds 300 &
  ./runner.py run scenarios/icount-determinism.toml --no-build
"""

import argparse
import glob
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from irqrig import qemu  # noqa: E402

SOCKETS = "/tmp/irqrig-*/qmp.sock"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--new-only", action="store_true",
                    help="leave alone the QEMUs already running when it starts "
                    "(a long run beside the one under test)")
    args = ap.parse_args()
    end = time.monotonic() + args.seconds
    answered = {}
    spared = set(glob.glob(SOCKETS)) if args.new_only else set()
    while time.monotonic() < end:
        socks = [p for p in glob.glob(SOCKETS) if p not in spared]
        if not socks:
            time.sleep(0.05)
            continue
        for path in socks:
            try:
                q = qemu.Qmp(path, timeout=2)
            except (OSError, ValueError, RuntimeError):
                continue
            try:
                # Short sessions: QEMU serves one QMP client at a time, and
                # the runner's own connections must get their turn.
                for _ in range(100):
                    q.command("query-status")
                    answered[path] = answered.get(path, 0) + 1
            except (OSError, ValueError, RuntimeError):
                pass
            finally:
                q.sock.close()
            time.sleep(0.01)
    for path, n in sorted(answered.items()):
        print("%s: %d QMP commands answered" % (path, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
