"""Tools and entity kinds registered with a plugin, and the dispatch the
world's exports answer with."""

import json
import unittest
from dataclasses import dataclass

from toolhost_sdk import (
    Ctx,
    Entity,
    Failed,
    InvalidArguments,
    NotFound,
    Output,
    Plan,
    Plugin,
    Target,
    UnknownTool,
    content,
)


@dataclass
class Echo:
    echo: str


def words() -> Plugin:
    p = Plugin()

    @p.tool(permission="words:read", read_only=True)
    def echo(ctx: Ctx, word: str, times: int = 1) -> Output[Echo]:
        """Echoes a word.

        Args:
            word: What to echo.
        """
        if word == "missing":
            raise NotFound("no such word")
        return Output(Echo(" ".join([word] * times)), text=word)

    @p.tool("erase", permission="words:admin:write", description="Erases a word.", destructive=True)
    def erase_word(word: str) -> dict:
        return {"erased": word}

    @erase_word.plan
    def _(word: str) -> Plan:
        return Plan("medium", f"erase {word}").target(Target("word", word, word, ["english"]))

    @p.entities("word", "letter")
    def snapshot(ctx: Ctx, kind: str) -> list[Entity]:
        return [Entity(1, kind, ctx.tenant).child_of("book", 9)]

    return p


class Describe(unittest.TestCase):
    def test_a_tool_carries_schemas_permission_and_conservative_flags(self):
        echo, erase = words().tools.values()
        self.assertEqual((echo.resource, echo.action), ("words", "read"))
        self.assertEqual((echo.description, echo.mutating, echo.risk), ("Echoes a word.", False, "low"))
        self.assertTrue(echo.annotations["read_only"])
        schema = json.loads(echo.input_schema)
        self.assertEqual(schema["required"], ["word"])
        self.assertEqual(schema["properties"]["word"]["description"], "What to echo.")
        self.assertEqual(json.loads(echo.output_schema)["properties"], {"echo": {"type": "string"}})
        self.assertEqual((erase.name, erase.resource, erase.action), ("erase", "words:admin", "write"))
        self.assertEqual((erase.mutating, erase.risk, erase.annotations["destructive"]), (True, "high", True))
        self.assertIsNone(erase.annotations["read_only"])

    def test_a_tool_that_cannot_be_described_is_refused_when_registered(self):
        def untyped(word):
            """Untyped."""
            return {}

        def typed() -> dict:
            return {}

        p = Plugin()
        cases = {
            "RESOURCE:ACTION": lambda: p.tool(permission="words", description="d")(typed),
            "no type hint": lambda: p.tool(permission="w:r")(untyped),
            "a dict or a dataclass": lambda: p.tool(permission="w:r", description="d")(_answers_a_list),
            "give a description": lambda: p.tool(permission="w:r")(typed),
            "1-64": lambda: p.tool("bad name", permission="w:r", description="d")(typed),
            "at least its permission": lambda: p.tool(typed),
        }
        for message, register in cases.items():
            with self.assertRaisesRegex((TypeError, ValueError), message):
                register()

    def test_a_plan_that_cannot_take_the_tools_arguments_is_refused(self):
        erase = words().tools["erase"]
        with self.assertRaisesRegex(TypeError, "must take word"):
            erase.plan(lambda ctx, word: Plan("low", "x"))

    def test_two_tools_or_kinds_of_one_name_are_refused(self):
        p = words()
        with self.assertRaisesRegex(ValueError, "two tools"):
            p.tool("erase", permission="w:r", description="d")(_answers_a_dict)
        with self.assertRaisesRegex(ValueError, "listed twice"):
            p.entities("letter")(lambda ctx, kind: [])


def _answers_a_list() -> list[str]:
    return []


def _answers_a_dict() -> dict:
    return {}


class Call(unittest.TestCase):
    def test_call_checks_arguments_and_serializes_the_answer_and_its_text(self):
        out = words().call("echo", {"word": "hi", "times": 2})
        self.assertEqual((out.structured, out.text), ('{"echo":"hi hi"}', "hi"))

    def test_arguments_that_do_not_fit_are_invalid_arguments_naming_the_field(self):
        p = words()
        for args, message in [
            ('{"word": 3}', "word: expected a string, got 3"),
            ("{}", 'missing required field "word"'),
            ('{"word": "a", "wrd": 1}', 'unknown field "wrd" (expected one of: word, times)'),
            ("[]", "the arguments must be a JSON object, not an array"),
            ('{"word": "a", "word": "b"}', 'duplicate field "word"'),
            ('{"word": NaN}', "NaN is not JSON"),
        ]:
            with self.assertRaises(InvalidArguments) as e:
                p.call("echo", args)
            self.assertEqual(e.exception.message, message, args)
        with self.assertRaisesRegex(InvalidArguments, "not JSON"):
            p.call("echo", "{nope")

    def test_tool_errors_propagate_and_unknown_names_are_unknown_tool(self):
        with self.assertRaises(NotFound):
            words().call("echo", {"word": "missing"})
        with self.assertRaises(UnknownTool) as e:
            words().call("shout")
        self.assertEqual(e.exception.message, "shout")

    def test_content_blocks_travel_in_order_and_a_stranger_block_fails(self):
        p = Plugin()

        @p.tool(permission="w:r", description="d")
        def chart() -> Output[dict]:
            return Output(
                {"weeks": 4},
                text="The chart.",
                content=[content.Image(b"\x89PNG", "image/png"), content.Link("test://c", "c")],
            )

        @p.tool(permission="w:r", description="d")
        def odd() -> Output[dict]:
            return Output({}, content=[{"type": "image"}])

        out = p.call("chart")
        self.assertEqual(out.content, (content.Image(b"\x89PNG", "image/png"), content.Link("test://c", "c")))
        with self.assertRaisesRegex(Failed, "content block 0 is a dict"):
            p.call("odd")
        with self.assertRaisesRegex(TypeError, "text or a blob"):
            content.Embedded("test://e")

    def test_an_answer_that_is_not_a_json_object_fails(self):
        p = Plugin()

        @p.tool(permission="w:r", description="d")
        def bad() -> dict:
            return {"n": float("nan")}

        with self.assertRaisesRegex(Failed, "does not serialize"):
            p.call("bad")

    def test_the_decorated_function_stays_callable_for_unit_tests(self):
        echo = words().tools["echo"]
        self.assertEqual(echo(Ctx(), "hi").structured, Echo("hi"))


class PlanAndSnapshot(unittest.TestCase):
    def test_the_default_plan_checks_the_arguments_and_names_no_targets(self):
        p = words()
        self.assertEqual(p.plan("echo", {"word": "hi"}), Plan("low", "call echo"))
        with self.assertRaises(InvalidArguments):
            p.plan("echo", {})

    def test_a_custom_plan_sees_the_checked_arguments(self):
        plan = words().plan("erase", {"word": "hi"})
        self.assertEqual((plan.risk, plan.summary), ("medium", "erase hi"))
        self.assertEqual(plan.targets, [Target("word", "hi", "hi", ["english"])])

    def test_a_snapshot_runs_for_listed_kinds_with_the_callers_context(self):
        p = words()
        self.assertEqual(list(p.kinds), ["word", "letter"])
        rows = p.snapshot("letter", Ctx(tenant="acme"))
        self.assertEqual((rows[0].name, rows[0].tenant, rows[0].parents[0].id), ("letter", "acme", 9))
        with self.assertRaises(InvalidArguments) as e:
            p.snapshot("book")
        self.assertEqual(e.exception.message, 'this plugin lists no entities of kind "book" (it lists ["word", "letter"])')

    def test_a_snapshot_of_the_wrong_shape_is_a_plugin_bug(self):
        p = Plugin()
        p.entities("word")(lambda ctx, kind: [Entity("1", "a", "t")])
        with self.assertRaisesRegex(TypeError, "row 0: id must be an int"):
            p.snapshot("word")


if __name__ == "__main__":
    unittest.main()
