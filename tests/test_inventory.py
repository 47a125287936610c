"""The static inventory on small ELF files built here (no kernel needed)."""

import os
import subprocess
import tempfile
import unittest

from irqrig import gdbscripts

inventory = gdbscripts.module("inventory")

SOURCE = r'''
#define SITE(l) ".pushsection .hard_irq_sites,\"a\"\n.balign 4\n.long " l " - .\n.popsection\n"
void _raw_spin_lock_irqsave(void) { asm volatile("cli"); }
void allowed_section(void) { asm volatile("771: cli\n" SITE("771b")); asm volatile("sti"); }
void rogue_section(void) { asm volatile("cli; sti"); }
void restore_flags(unsigned long f) { asm volatile("push %0; popf" : : "r"(f)); }
void caller_a(void) { _raw_spin_lock_irqsave(); }
void caller_b(void) { _raw_spin_lock_irqsave(); _raw_spin_lock_irqsave(); }
void _start(void) { for (;;) ; }
'''


class InventoryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        src = os.path.join(cls.tmp.name, "t.c")
        with open(src, "w") as f:
            f.write(SOURCE)
        cls.obj = os.path.join(cls.tmp.name, "t.o")
        cls.exe = os.path.join(cls.tmp.name, "t.elf")
        flags = ["-O1", "-fno-inline", "-fno-pic", "-ffreestanding", "-fno-asynchronous-unwind-tables"]
        subprocess.run(["gcc", "-c"] + flags + ["-o", cls.obj, src], check=True)
        subprocess.run(["gcc", "-nostdlib", "-static", "-no-pie"] + flags + ["-o", cls.exe, src],
                       check=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, path):
        inv = inventory.inventory(path, lines=False)
        s = inv["summary"]
        self.assertEqual(s["cli"], 3)
        self.assertEqual(s["cli_in_helpers"], 1)
        self.assertEqual(s["helper_calls"], 3)
        self.assertEqual(s["sites"], 2 + 3, "inline cli outside helpers + helper calls")
        self.assertEqual(s["popf"], 1)
        self.assertEqual(s["table_entries"], 1)
        allowed = {x["function"]: x["allowed"] for x in inv["sites"] if x["kind"] == "cli"}
        self.assertEqual(allowed, {"_raw_spin_lock_irqsave": False, "allowed_section": True,
                                   "rogue_section": False})
        self.assertEqual(s["cli_not_allowed"], 2)
        return inv

    def test_linked_image(self):
        self.check(self.exe)

    def test_relocatable_object(self):
        """Like a module: the table is relocations, calls are relocations."""
        self.check(self.obj)

    def test_no_table(self):
        import shutil
        stripped = os.path.join(self.tmp.name, "notable.o")
        shutil.copy(self.obj, stripped)
        subprocess.run(["objcopy", "--remove-section", ".hard_irq_sites",
                        "--remove-section", ".rela.hard_irq_sites", stripped], check=True)
        s = inventory.inventory(stripped, lines=False)["summary"]
        self.assertIsNone(s["table_entries"])
        self.assertIsNone(s["cli_allowed"])
        self.assertEqual(s["cli"], 3)


if __name__ == "__main__":
    unittest.main()
