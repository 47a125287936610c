"""QEMU command-line options that depend on the QEMU version or a scenario:
one instruction per translation block, and TCG plugins."""

import unittest
from unittest import mock

from irqrig import qemu


def argv(**kw):
    return qemu.QemuConfig("bzImage", "initrd", binary="/nonexistent/qemu", **kw).argv()


class OneInsnPerTbTest(unittest.TestCase):
    def test_qemu_10_uses_the_accel_property(self):
        with mock.patch.object(qemu, "version_tuple", return_value=(10, 0)):
            a = argv(one_insn_per_tb=True)
        self.assertEqual(a[a.index("-accel") + 1], "tcg,one-insn-per-tb=on")
        self.assertNotIn("-singlestep", a)

    def test_qemu_7_2_uses_singlestep(self):
        with mock.patch.object(qemu, "version_tuple", return_value=(7, 2)):
            a = argv(one_insn_per_tb=True)
        self.assertEqual(a[a.index("-accel") + 1], "tcg")
        self.assertIn("-singlestep", a)

    def test_off_by_default(self):
        with mock.patch.object(qemu, "version_tuple", return_value=(10, 0)):
            a = argv()
        self.assertEqual(a[a.index("-accel") + 1], "tcg")
        self.assertNotIn("-singlestep", a)

    def test_not_for_kvm(self):
        with mock.patch.object(qemu, "version_tuple", return_value=(10, 0)):
            a = argv(one_insn_per_tb=True, accel="kvm")
        self.assertEqual(a[a.index("-accel") + 1], "kvm")

    def test_version_parsed_from_the_binary(self):
        qemu._versions.clear()
        with mock.patch.object(qemu, "version",
                               return_value="QEMU emulator version 10.0.2 (Debian)"):
            self.assertEqual(qemu.version_tuple("/x/qemu"), (10, 0))
            self.assertTrue(qemu.one_insn_option("/x/qemu"))
        qemu._versions.clear()
        with mock.patch.object(qemu, "version", return_value="QEMU emulator version 8.0.5"):
            self.assertFalse(qemu.one_insn_option("/y/qemu"))
        qemu._versions.clear()


class PluginTest(unittest.TestCase):
    def test_each_plugin_is_one_option(self):
        a = argv(plugins=["/p/libiftrack.so,out=/r/i.json,top=5", "/p/other.so"])
        i = a.index("-plugin")
        self.assertEqual(a[i + 1], "/p/libiftrack.so,out=/r/i.json,top=5")
        self.assertEqual(a[i + 2:i + 4], ["-plugin", "/p/other.so"])


if __name__ == "__main__":
    unittest.main()
