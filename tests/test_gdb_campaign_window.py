"""The exact campaign's breakpoint window (gdb-scripts/irqrig_gdb/campaign.py),
driven through a stand-in for gdb's module: at most WINDOW breakpoints are
in the guest at once, spread over the sections, and a target that waits
ROTATE_S without a fire makes room for a queued one, keeping its tries."""

import json
import os
import sys
import tempfile
import types
import unittest
from unittest import mock

from irqrig import gdbscripts


class FakeBreakpoint:
    live = {}

    def __init__(self, spec, internal=False):
        self.addr = int(spec.lstrip("*"), 16)
        self.enabled = True
        self.silent = False
        FakeBreakpoint.live[self.addr] = self

    def delete(self):
        del FakeBreakpoint.live[self.addr]


def fake_gdb():
    g = types.ModuleType("gdb")
    g.Breakpoint = FakeBreakpoint
    g.error = type("error", (RuntimeError,), {})
    g.MemoryError = type("MemoryError", (g.error,), {})
    g.execute = lambda *a, **k: ""
    return g


class CampaignWindowTest(unittest.TestCase):
    def setUp(self):
        FakeBreakpoint.live = {}
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        patcher = mock.patch.dict(sys.modules, {"gdb": fake_gdb()})
        patcher.start()
        self.addCleanup(patcher.stop)
        for name in ("irqrig_gdb.campaign", "irqrig_gdb.check"):
            sys.modules.pop(name, None)         # import them against the stand-in
        self.addCleanup(lambda: [sys.modules.pop(n, None) for n in
                                 ("irqrig_gdb.campaign", "irqrig_gdb.check")])
        self.mod = gdbscripts.module("campaign")

    def campaign(self, targets, window, rotate_s, tries=2):
        path = os.path.join(self.tmp.name, "targets.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"targets": targets, "tries": tries, "window": window,
                       "rotate_s": rotate_s}, f)
        c = self.mod.Campaign(path, os.path.join(self.tmp.name, "progress.jsonl"))
        self.addCleanup(c.progress.close)
        return c

    def test_round_robin_spreads_a_window_over_the_sections(self):
        targets = [{"addr": a, "section": "s%d" % (a // 10)}
                   for a in (10, 11, 12, 20, 30, 31)]
        self.assertEqual(self.mod.round_robin(targets), [10, 20, 30, 11, 31, 12])

    def test_window_bounds_the_inserted_breakpoints(self):
        targets = [{"addr": a, "section": "s%d" % (a % 5)} for a in range(100, 140)]
        c = self.campaign(targets, window=8, rotate_s=1000)
        c.setup()
        self.assertEqual(len(FakeBreakpoint.live), 8)
        self.assertEqual(sorted({a % 5 for a in FakeBreakpoint.live}), [0, 1, 2, 3, 4])
        c.drop(next(iter(c.bps)))           # a target done: the next one goes in
        c.fill()
        self.assertEqual(len(FakeBreakpoint.live), 8)
        self.assertEqual(c.stop_counts()["left"], 39)

    def test_window_0_inserts_every_target(self):
        targets = [{"addr": a, "section": "s%d" % (a % 3)} for a in range(200, 240)]
        c = self.campaign(targets, window=0, rotate_s=1000)
        c.setup()
        self.assertEqual(len(FakeBreakpoint.live), 40)

    def test_a_waiting_target_rotates_out_and_keeps_its_tries(self):
        targets = [{"addr": a, "section": "s"} for a in (1, 2, 3)]
        c = self.campaign(targets, window=2, rotate_s=10)
        c.setup()
        self.assertEqual(sorted(FakeBreakpoint.live), [1, 2])
        c.inserted[1] -= 20                 # 1 has waited 20 s, 2 has not
        c.rotate()
        self.assertEqual(sorted(FakeBreakpoint.live), [2, 3])
        self.assertEqual(list(c.queue), [1])
        self.assertEqual(c.left[1], 2)
        c.rotate()                          # nothing waited long enough
        self.assertEqual(sorted(FakeBreakpoint.live), [2, 3])


if __name__ == "__main__":
    unittest.main()
