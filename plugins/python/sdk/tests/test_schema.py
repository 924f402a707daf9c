"""Type hints to schemas, and arguments checked against them."""

import json
import unittest
from dataclasses import dataclass, field
from enum import Enum
from typing import Annotated, Any, Literal, Optional

from toolhost_sdk import InvalidArguments, NameOrId
from toolhost_sdk import schema


def root(hint):
    return json.loads(schema.root_schema(schema.shape_of(hint)))


class Color(Enum):
    """A color."""

    RED = "red"
    BLUE = "blue"


@dataclass
class Node:
    """A tree node.

    Attributes:
        name: What the node is called,
            on two lines.
    """

    name: str
    weight: float = 1.0
    children: list["Node"] = field(default_factory=list)
    note: Annotated[Optional[str], "A remark."] = None


class Schemas(unittest.TestCase):
    def test_primitives_map_onto_json_types(self):
        for hint, want in [(str, "string"), (int, "integer"), (float, "number"), (bool, "boolean")]:
            self.assertEqual(schema.shape_of(hint).schema(schema.Defs()), {"type": want})

    def test_an_optional_primitive_is_a_type_list_and_other_unions_are_any_of(self):
        self.assertEqual(schema.shape_of(Optional[str]).schema(schema.Defs()), {"type": ["string", "null"]})
        self.assertEqual(
            schema.shape_of(NameOrId).schema(schema.Defs()),
            {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        )

    def test_literals_and_enums_list_their_values(self):
        self.assertEqual(
            schema.shape_of(Literal["a", "b"]).schema(schema.Defs()), {"type": "string", "enum": ["a", "b"]}
        )
        doc = root(dict[str, Color])
        self.assertEqual(doc["additionalProperties"], {"$ref": "#/$defs/Color"})
        self.assertEqual(doc["$defs"]["Color"], {"type": "string", "enum": ["red", "blue"], "description": "A color."})

    def test_a_dataclass_is_inline_at_the_root_and_a_ref_when_nested_even_recursively(self):
        doc = root(Node)
        self.assertEqual(doc["$schema"], schema.DIALECT)
        self.assertEqual((doc["title"], doc["description"]), ("Node", "A tree node."))
        self.assertEqual(doc["required"], ["name"])
        self.assertFalse(doc["additionalProperties"])
        props = doc["properties"]
        self.assertEqual(props["name"]["description"], "What the node is called, on two lines.")
        self.assertEqual(props["weight"], {"type": "number", "default": 1.0})
        self.assertEqual(props["children"]["items"], {"$ref": "#/$defs/Node"})
        self.assertEqual(props["note"], {"type": ["string", "null"], "description": "A remark."})
        self.assertIn("Node", doc["$defs"])

    def test_a_hint_without_a_schema_is_refused_when_compiled(self):
        for hint in (bytes, dict[int, str], set[str], Literal[1.5]):
            with self.assertRaises(TypeError, msg=hint):
                schema.shape_of(hint)

    def test_two_classes_of_one_name_in_one_schema_are_refused(self):
        Other = Enum("Color", {"X": "x"})

        @dataclass
        class Both:
            a: Color
            b: Other

        with self.assertRaisesRegex(TypeError, "two types named Color"):
            root(Both)


class Conversion(unittest.TestCase):
    def convert(self, hint, value, strict=True):
        return schema.shape_of(hint).convert(value, "x", strict)

    def refused(self, hint, value):
        with self.assertRaises(InvalidArguments) as e:
            self.convert(hint, value)
        return e.exception.message

    def test_primitives_are_strict_but_integral_floats_are_integers(self):
        self.assertEqual(self.convert(int, 3.0), 3)
        self.assertIsInstance(self.convert(float, 3), float)
        self.assertEqual(self.refused(int, 3.5), "x: expected an integer, got 3.5")
        self.assertEqual(self.refused(int, True), "x: expected an integer, got true")
        self.assertEqual(self.refused(str, 3), "x: expected a string, got 3")
        self.assertEqual(self.refused(bool, "yes"), 'x: expected a boolean, got "yes"')

    def test_name_or_id_keeps_the_form_the_caller_used(self):
        self.assertEqual(self.convert(NameOrId, 12), 12)
        self.assertEqual(self.convert(NameOrId, "12"), "12")
        self.assertEqual(self.refused(NameOrId, 1.5), "x: expected a string or an integer, got 1.5")
        self.assertIsNone(self.convert(Optional[NameOrId], None))

    def test_dataclasses_are_built_with_defaults_and_errors_name_the_nested_field(self):
        node = self.convert(Node, {"name": "a", "children": [{"name": "b", "weight": 2}]})
        self.assertEqual(node, Node("a", 1.0, [Node("b", 2.0)]))
        self.assertIsNot(self.convert(Node, {"name": "a"}).children, self.convert(Node, {"name": "b"}).children)
        self.assertEqual(
            self.refused(Node, {"name": "a", "children": [{"name": 3}]}), "x.children[0].name: expected a string, got 3"
        )
        self.assertEqual(self.refused(Node, {"children": []}), 'missing required field "x.name"')
        self.assertEqual(
            self.refused(Node, {"name": "a", "colour": 1}),
            'unknown field "x.colour" (expected one of: name, weight, children, note)',
        )

    def test_lenient_conversion_ignores_fields_the_hint_does_not_name(self):
        self.assertEqual(self.convert(Node, {"name": "a", "extra": 1}, strict=False).name, "a")

    def test_enums_become_members_and_literals_compare_types(self):
        self.assertIs(self.convert(Color, "blue"), Color.BLUE)
        self.assertEqual(self.refused(Literal[1, 2], True), "x: expected one of 1, 2, got true")
        self.assertEqual(self.refused(Color, "green"), 'x: expected one of "red", "blue", got "green"')

    def test_long_values_are_cut_in_messages(self):
        message = self.refused(int, "y" * 500)
        self.assertLess(len(message), 80)
        self.assertTrue(message.endswith("…"))

    def test_any_passes_values_through(self):
        self.assertEqual(self.convert(dict[str, Any], {"a": [1, {"b": None}]}), {"a": [1, {"b": None}]})


class Docstrings(unittest.TestCase):
    DOC = """Does a thing.

    In two paragraphs.

    Args:
        name: Who,
            continued.
        count (int): How many.

    Returns:
        nothing: ignored.
    """

    def test_the_summary_stops_at_the_first_section(self):
        self.assertEqual(schema.summary(self.DOC), "Does a thing.\n\nIn two paragraphs.")

    def test_args_entries_join_their_continuation_lines(self):
        args = schema.sections(self.DOC)["args"]
        self.assertEqual(args, {"name": "Who, continued.", "count": "How many."})


class Answers(unittest.TestCase):
    def test_answers_become_plain_json_values(self):
        self.assertEqual(
            schema.to_json({"n": Node("a"), "c": Color.RED, "t": (1, 2)}),
            {"n": {"name": "a", "weight": 1.0, "children": [], "note": None}, "c": "red", "t": [1, 2]},
        )
        with self.assertRaises(TypeError):
            schema.to_json({"s": {1, 2}})


if __name__ == "__main__":
    unittest.main()
