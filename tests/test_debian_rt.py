"""Debian's RT series: the pin file and the skip list (no network)."""

import os
import tempfile
import unittest
from unittest import mock

from irqrig import debian_rt, paths
from irqrig.errors import BuildError


class DebianRtTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.patches_root = os.path.join(self.tmp.name, "kp")
        self.downloads = os.path.join(self.tmp.name, "dl")
        os.makedirs(os.path.join(self.patches_root, "6.1"))
        for p in (mock.patch.object(paths, "KERNEL_PATCHES", self.patches_root),
                  mock.patch.object(paths, "DOWNLOADS", self.downloads)):
            p.start()
            self.addCleanup(p.stop)

    def pin(self, text):
        with open(debian_rt.pin_file("6.1"), "w", encoding="utf-8") as f:
            f.write(text)

    def fake_cache(self, names):
        d = os.path.join(debian_rt.cache_dir({"package": "linux", "version": "1-1"}),
                         "patches-rt")
        os.makedirs(d)
        with open(os.path.join(d, "series"), "w", encoding="utf-8") as f:
            f.write("# comment\n" + "".join(n + "\n" for n in names))
        return d

    def test_skipped_patches_are_left_out_in_order(self):
        self.pin('package = "linux"\nversion = "1-1"\n'
                 '[[skip]]\npatch = "0002-b.patch"\nreason = "arm only"\n')
        d = self.fake_cache(["0001-a.patch", "0002-b.patch", "0003-c.patch"])
        self.assertEqual(debian_rt.patches("6.1"),
                         [os.path.join(d, "0001-a.patch"), os.path.join(d, "0003-c.patch")])

    def test_fixes_follow_the_series(self):
        self.pin('package = "linux"\nversion = "1-1"\n')
        d = self.fake_cache(["0001-a.patch"])
        fixes = debian_rt.fixes_dir("6.1")
        os.makedirs(fixes)
        for name in ("0001-fix.patch", "series"):
            with open(os.path.join(fixes, name), "w", encoding="utf-8") as f:
                f.write("0001-fix.patch\n" if name == "series" else "")
        self.assertEqual(debian_rt.patches("6.1"),
                         [os.path.join(d, "0001-a.patch"), os.path.join(fixes, "0001-fix.patch")])

    def test_fixes_series_naming_a_missing_patch_is_an_error(self):
        fixes = debian_rt.fixes_dir("6.1")
        os.makedirs(fixes)
        with open(os.path.join(fixes, "series"), "w", encoding="utf-8") as f:
            f.write("0001-gone.patch\n")
        with self.assertRaises(BuildError) as cm:
            debian_rt.fixes("6.1")
        self.assertIn("0001-gone.patch", str(cm.exception))

    def test_skip_of_unknown_patch_is_an_error(self):
        self.pin('package = "linux"\nversion = "1-1"\n'
                 '[[skip]]\npatch = "0009-z.patch"\nreason = "gone"\n')
        self.fake_cache(["0001-a.patch"])
        with self.assertRaises(BuildError) as cm:
            debian_rt.patches("6.1")
        self.assertIn("0009-z.patch", str(cm.exception))

    def test_skip_without_reason_is_an_error(self):
        self.pin('package = "linux"\nversion = "1-1"\n[[skip]]\npatch = "0001-a.patch"\n')
        with self.assertRaises(BuildError) as cm:
            debian_rt.load_pin("6.1")
        self.assertIn("reason", str(cm.exception))

    def test_bad_toml_names_the_file(self):
        self.pin('package = "linux\n')
        with self.assertRaises(BuildError) as cm:
            debian_rt.load_pin("6.1")
        self.assertIn("debian-rt.toml", str(cm.exception))

    def test_real_pin_is_valid(self):
        with mock.patch.object(paths, "KERNEL_PATCHES",
                               os.path.join(paths.ROOT, "kernel-patches")):
            pin = debian_rt.load_pin("6.1")
        self.assertEqual(pin["package"], "linux")
        self.assertEqual(len(pin["skip"]), 2)


if __name__ == "__main__":
    unittest.main()
