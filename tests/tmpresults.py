"""A test case base whose results directory is a fresh temporary one."""

import tempfile
import unittest

from irqrig import paths


class TmpResultsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.old_results = paths.RESULTS
        paths.RESULTS = self.tmp.name

    def tearDown(self):
        paths.RESULTS = self.old_results
        self.tmp.cleanup()
