"""The tools, tested natively (no build, no host): `./build.sh` runs these first."""

import unittest

import app  # noqa: F401 (importing it registers its tools)
from toolhost_sdk import PLUGIN, InvalidArguments


class Greet(unittest.TestCase):
    def test_greets_by_the_trimmed_name_and_refuses_a_blank_one(self):
        self.assertEqual(PLUGIN.call("greet", {"name": " Ada "}).value, {"message": "Hello, Ada!"})
        with self.assertRaises(InvalidArguments):
            PLUGIN.call("greet", {"name": "  "})


if __name__ == "__main__":
    unittest.main()
