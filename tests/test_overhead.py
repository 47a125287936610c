"""irqrig/overhead.py: figures from recorded irqbench and ovhbench outputs
(the outputs are as the guest printed them, CRLF and all)."""

import unittest

from irqrig import overhead
from irqrig.errors import ResultsError

BENCH = ("\r\npairs 4096\r\nruns 20\r\nempty_ns 24619\r\nlocal_irq_save_restore_ns %d\r\n"
         "local_irq_disable_enable_ns 16427\r\nraw_spin_lock_irqsave_unlock_ns 118830\r\n"
         "local_irq_save_restore_per_pair_ns_x100 200\r\n")
OVH = ('\r\n{"tool":"ovhbench","fork":1000,"pipe":10000,"runs":3,'
       '"fork_ns":[%d,473939721,474117207],"pipe_ns":[77448475,77378167,77416879]}\r')


def run(variant, save_ns=32816, fork_ns=474165179, rc=0):
    return {"variant": variant, "steps": [
        {"type": "shell", "command": "cat irqbench", "rc": rc, "output": BENCH % save_ns},
        {"type": "shell", "command": "ovhbench", "rc": rc, "output": OVH % fork_ns}]}


class OverheadTest(unittest.TestCase):
    def test_parse_irqbench(self):
        b = overhead.parse_irqbench(BENCH % 352304)
        self.assertEqual(b["pairs"], 4096)
        self.assertEqual(b["local_irq_save_restore"], 86.01)
        self.assertEqual(b["local_irq_disable_enable"], 4.01)
        self.assertIsNone(overhead.parse_irqbench("pairs 4096\r\nempty_ns 1\r\n"))

    def test_parse_ovhbench(self):
        o = overhead.parse_ovhbench(OVH % 1)
        self.assertEqual(o["fork"], 1000)
        self.assertIsNone(overhead.parse_ovhbench('{"tool":"ovhbench", broken'))

    def test_difference_to_base(self):
        data = {"runs": [run("6.12-rt"), run("6.12-rt-irqsoft", save_ns=352304,
                                             fork_ns=400000000)]}
        figs, rows = overhead.compute(data, "6.12-rt")
        self.assertEqual(rows[0]["local_irq_save_restore"], "8.0")
        self.assertEqual(rows[1]["local_irq_save_restore"], "86.0 (+78.0)")
        # best of the runs: 400000000 / 1000 against 473939721 / 1000
        self.assertEqual(rows[1]["fork insns/iter"], "400000 (-15.6%)")
        self.assertEqual(figs[1]["ovhbench"]["pipe_insns_per_iter"], 7738)

    def test_failed_steps_are_not_figures(self):
        with self.assertRaises(ResultsError):
            overhead.compute({"runs": [run("6.12-rt", rc=1)]}, "6.12-rt")
        _, rows = overhead.compute({"runs": [run("6.12-rt"), run("x", rc=1)]}, "6.12-rt")
        self.assertEqual(rows[1]["fork insns/iter"], "-")


if __name__ == "__main__":
    unittest.main()
