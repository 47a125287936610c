"""Build-step errors that must say what is missing and how to get it."""

import unittest
from unittest import mock

from irqrig import build, build_kernel, install, variants
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
        import os
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


if __name__ == "__main__":
    unittest.main()
