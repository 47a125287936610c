"""Build-step errors that must say what is missing and how to get it."""

import os
import subprocess
import tempfile
import unittest
from unittest import mock

from irqrig import build, build_kernel, build_qemu, install, paths, variants
from irqrig.errors import BuildError, MissingError


class MissingTest(unittest.TestCase):
    def test_missing_kernel_tarball(self):
        with mock.patch.dict(variants.TARBALLS, {"6.12": "/nonexistent/linux-source-6.12.tar.xz"}):
            with self.assertRaises(MissingError) as cm:
                build_kernel.prepare_source(variants.get("6.12-rt"))
        msg = str(cm.exception)
        self.assertIn("/nonexistent/linux-source-6.12.tar.xz", msg)
        self.assertIn("linux-source-6.12", msg)
        self.assertIn("runner.py install", msg)

    def test_missing_package_detected(self):
        self.assertEqual(install.missing_packages(["irqrig-no-such-package"]),
                         ["irqrig-no-such-package"])
        self.assertEqual(install.missing_packages(["dpkg"]), [])

    def test_backports_versions(self):
        # bookworm's meson 1.0 is too old for QEMU 10.0; backports' 1.7 is not
        self.assertFalse(install._version_ok("meson", "1.0.1-5"))
        self.assertTrue(install._version_ok("meson", "1.7.0-1~bpo12+1"))
        self.assertTrue(install._version_ok("dpkg", "0.1"))     # no minimum
        self.assertIn("Suites: bookworm-backports", install.SOURCES_TEXT)

    def test_missing_packages_as_non_root(self):
        with mock.patch.object(install, "is_complete", return_value=False), \
                mock.patch.object(install, "missing_packages", return_value=["rt-tests"]), \
                mock.patch("os.geteuid", return_value=1000):
            with self.assertRaises(MissingError) as cm:
                build.ensure_installed()
        self.assertIn("rt-tests", str(cm.exception))
        self.assertIn("./runner.py install", str(cm.exception))

    def test_unknown_variant(self):
        from irqrig.errors import UsageError
        with self.assertRaises(UsageError) as cm:
            build.targets_for(["6.12-nope"])
        self.assertIn("6.12-nope", str(cm.exception))

    def test_series_names_missing_patch(self):
        import tempfile
        from irqrig.errors import BuildError
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "series"), "w") as f:
                f.write("# comment\n0001-a.patch\n")
            with self.assertRaises(BuildError) as cm:
                build_kernel.series_patches(d)
            self.assertIn("0001-a.patch", str(cm.exception))


class DiskTest(unittest.TestCase):
    def test_low_disk_is_named(self):
        note = build.disk_note(50 << 20)
        self.assertIn("0.0 GB free", note)
        self.assertIn("build", note)

    def test_enough_disk_says_nothing(self):
        self.assertEqual(build.disk_note(build.LOW_DISK_BYTES), "")

    def test_failed_build_names_a_full_disk(self):
        with mock.patch.object(build, "ensure_installed"), \
                mock.patch.object(build, "ensure_setup"), \
                mock.patch.object(build, "free_bytes", return_value=1 << 20), \
                mock.patch("subprocess.run", return_value=mock.Mock(returncode=1)), \
                mock.patch.object(build, "log") as log:
            with self.assertRaises(BuildError) as cm:
                build.build(["6.12-rt"])
        self.assertIn("GB free", str(cm.exception))
        # The warning before the build (captured: it is not the test log's).
        self.assertTrue(any("GB free" in c.args[0] for c in log.call_args_list))


class QemuPatchesTest(unittest.TestCase):
    """qemu-patches/*.patch: applied after extraction, and a changed patch
    set gives a fresh tree (never a patch applied twice or left behind)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = self.tmp.name
        self.qemu_dir = os.path.join(root, "qemu")
        self.patches = os.path.join(root, "patches")
        os.makedirs(self.patches)
        tree = os.path.join(root, "qemu-10.0.2")
        os.makedirs(tree)
        with open(os.path.join(tree, "clock.c"), "w") as f:
            f.write("warp in main loop\n")
        self.tarball = os.path.join(root, "qemu.orig.tar.xz")
        subprocess.run(["tar", "-cJf", self.tarball, "-C", root, "qemu-10.0.2"], check=True)

    def tearDown(self):
        self.tmp.cleanup()

    def write_patch(self, new_line):
        with open(os.path.join(self.patches, "0001-fix.patch"), "w") as f:
            f.write("Subject: fix\n\n--- a/clock.c\n+++ b/clock.c\n@@ -1 +1 @@\n"
                    "-warp in main loop\n+%s\n" % new_line)

    def extract(self):
        src = os.path.join(self.qemu_dir, "src")
        with mock.patch.object(paths, "QEMU_DIR", self.qemu_dir), \
                mock.patch.object(paths, "QEMU_PATCHES", self.patches), \
                mock.patch.object(build_qemu, "SRC", src), \
                mock.patch.object(build_qemu, "log"):
            build_qemu.extract(self.tarball, "orig")
            with open(os.path.join(src, "clock.c")) as f:
                return f.read()

    def test_patch_applied_and_a_changed_patch_reextracts(self):
        self.write_patch("warp in vcpu thread")
        self.assertEqual(self.extract(), "warp in vcpu thread\n")
        keep = os.path.join(self.qemu_dir, "build", "kept")
        os.makedirs(os.path.dirname(keep))
        open(keep, "w").close()
        self.assertEqual(self.extract(), "warp in vcpu thread\n")   # up to date
        self.write_patch("warp in vcpu thread, v2")
        self.assertEqual(self.extract(), "warp in vcpu thread, v2\n")
        self.assertTrue(os.path.exists(keep), "the build directory was kept")

    def test_patch_that_does_not_apply_fails_the_build(self):
        with open(self.patches + "/0001-bad.patch", "w") as f:
            f.write("--- a/clock.c\n+++ b/clock.c\n@@ -1 +1 @@\n-no such line\n+x\n")
        with self.assertRaises(BuildError):
            self.extract()

    def test_the_rigs_patches_are_dependencies(self):
        deps = build_qemu.dependencies()
        for path, _ in build_qemu.qemu_patches():
            self.assertIn(path, deps)
        self.assertTrue(build_qemu.qemu_patches(), "qemu-patches/ holds the icount fix")


if __name__ == "__main__":
    unittest.main()
