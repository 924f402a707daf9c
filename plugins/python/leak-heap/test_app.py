"""The fixture's tools, natively: within one process (one instance),
`recall_py` finds what `remember_py` left. In the host, where every call has
an instance of its own, it must not (host/runtime/tests/freshness.rs)."""

import unittest

import app
from toolhost_sdk import PLUGIN, InvalidArguments


class LeakHeap(unittest.TestCase):
    def setUp(self):
        app.KEPT.clear()
        app.CACHE.clear()

    def test_one_instance_recalls_what_it_remembered(self):
        self.assertEqual(PLUGIN.call("recall_py", {}).value, {"kept": [], "cached": []})
        self.assertEqual(PLUGIN.call("remember_py", {"secret": "s3cret"}).value, {"kept": ["s3cret"]})
        self.assertEqual(PLUGIN.call("recall_py", {}).value, {"kept": ["s3cret"], "cached": ["blocks", "s3cret"]})

    def test_an_empty_secret_is_invalid(self):
        with self.assertRaises(InvalidArguments):
            PLUGIN.call("remember_py", {"secret": ""})
