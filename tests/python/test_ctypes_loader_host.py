"""tests/gpu/attn_jit_ctypes.py's start_library, which the device benchmarks
use to time two builds (or two settings of one build) in one process.

Run: PYTHONPATH=python:tests/python python3 -m unittest test_ctypes_loader_host -v
A path this process has loaded already must come back as another library
(a copy), with an engine of its own: dlopen returns the loaded handle for a
path it knows, so settings given to one handle (attn_set_deterministic, the
environment read when an engine starts) would reach the other, and an A/B
of the two would time one thing twice.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
import attn_jit_ctypes  # noqa: E402


class StartLibraryTest(unittest.TestCase):
    def setUp(self):
        self.path = os.environ.get("ATTN_JIT_LIB", "")
        if not os.path.isfile(self.path):
            self.skipTest("ATTN_JIT_LIB names no built libattn-jit.so")

    def test_second_load_of_a_path_is_a_distinct_library(self):
        loaded = {os.path.realpath(lib.path) for lib in attn_jit_ctypes._LOADED}
        if os.path.realpath(self.path) not in loaded:
            # A path not loaded yet is loaded as it is.
            self.assertEqual(attn_jit_ctypes.distinct_copy(self.path), self.path)
        first = attn_jit_ctypes.AttnJit(self.path)
        second = attn_jit_ctypes.start_library(self.path, {})
        self.assertNotEqual(os.path.realpath(second.path), os.path.realpath(self.path))
        self.assertTrue(os.path.isfile(second.path))
        # Another loaded library, hence another engine.
        self.assertNotEqual(first.lib._handle, second.lib._handle)


if __name__ == "__main__":
    unittest.main()
