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

    def test_after_boot_is_a_monitor_command(self):
        for ver, cmd in (((10, 0), "one-insn-per-tb on"), ((7, 2), "singlestep on")):
            with mock.patch.object(qemu, "version_tuple", return_value=ver):
                cfg = qemu.QemuConfig("bzImage", "initrd", binary="/nonexistent/qemu",
                                      one_insn_per_tb="after-boot")
                a = cfg.argv()
                self.assertEqual(a[a.index("-accel") + 1], "tcg")
                self.assertNotIn("-singlestep", a)
                self.assertEqual(cfg.one_insn_per_tb_monitor(), cmd)

    def test_not_for_kvm(self):
        with mock.patch.object(qemu, "version_tuple", return_value=(10, 0)):
            a = argv(one_insn_per_tb=True, accel="kvm")
        self.assertEqual(a[a.index("-accel") + 1], "kvm")

    def test_version_parsed_from_the_binary(self):
        qemu.version_tuple.cache_clear()
        try:
            with mock.patch.object(qemu, "version",
                                   return_value="QEMU emulator version 10.0.2 (Debian)"):
                self.assertEqual(qemu.version_tuple("/x/qemu"), (10, 0))
            with mock.patch.object(qemu, "version",
                                   return_value="QEMU emulator version 8.0.5"):
                self.assertEqual(qemu.version_tuple("/y/qemu"), (8, 0))
                a = qemu.QemuConfig("bzImage", "initrd", binary="/y/qemu",
                                    one_insn_per_tb=True).argv()
            self.assertIn("-singlestep", a)
        finally:
            qemu.version_tuple.cache_clear()


class PluginTest(unittest.TestCase):
    def test_each_plugin_is_one_option(self):
        a = argv(plugins=["/p/libiftrack.so,out=/r/i.json,top=5", "/p/other.so"])
        i = a.index("-plugin")
        self.assertEqual(a[i + 1], "/p/libiftrack.so,out=/r/i.json,top=5")
        self.assertEqual(a[i + 2:i + 4], ["-plugin", "/p/other.so"])

    def test_no_plugin_option_without_plugins(self):
        self.assertNotIn("-plugin", argv())


class DefaultsTest(unittest.TestCase):
    def test_no_default_devices(self):
        # SeaBIOS 1.16.2 on QEMU 10.0 waits forever on the default CD-ROM.
        self.assertEqual(argv()[1], "-nodefaults")


if __name__ == "__main__":
    unittest.main()
