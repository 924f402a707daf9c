"""A plugin module written with postponed annotations (`from __future__
import annotations`): every hint is a string until the SDK resolves it."""

from __future__ import annotations

import json
import unittest
from dataclasses import dataclass

from toolhost_sdk import Ctx, NameOrId, Plugin

PLUGIN = Plugin()


@dataclass
class Row:
    id: int
    parent: Row | None = None


@PLUGIN.tool(permission="rows:read", read_only=True)
def find(ctx: Ctx, row: NameOrId | None, rows: list[Row] | None = None) -> Row:
    """Finds a row."""
    return Row(7, rows[0] if rows else None)


class Postponed(unittest.TestCase):
    def test_string_hints_resolve_to_the_same_schemas_and_conversions(self):
        schema = json.loads(PLUGIN.tools["find"].input_schema)
        self.assertEqual(schema["required"], [])
        self.assertEqual(schema["properties"]["rows"]["anyOf"][0]["items"], {"$ref": "#/$defs/Row"})
        out = PLUGIN.call("find", {"row": "a", "rows": [{"id": 1, "parent": {"id": 0}}]})
        self.assertEqual(out.value, {"id": 7, "parent": {"id": 1, "parent": {"id": 0, "parent": None}}})


if __name__ == "__main__":
    unittest.main()
