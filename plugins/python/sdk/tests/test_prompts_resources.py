"""Prompts, resources and templates registered with a plugin, and the
dispatch the world's `prompts` and `resources` exports answer with."""

import unittest
from typing import Annotated

from toolhost_sdk import (
    PLUGIN,
    ClientError,
    Contents,
    Ctx,
    Failed,
    InvalidArguments,
    Message,
    NotFound,
    Plugin,
    UnknownTool,
    client,
    content,
)
from toolhost_sdk.client import Elicitation
from toolhost_sdk.testing import FakeHost


def docs() -> Plugin:
    p = Plugin()

    @p.prompt(permission="docs:read", title="Review", completes={"project": "project"})
    def review(ctx: Ctx, project: str, focus: Annotated[str | None, "What to look at first."] = None) -> list[Message]:
        """Review a project's test plan.

        Args:
            project: The project, by name.
        """
        if project == "missing":
            raise NotFound("no such project")
        return [Message.user(f"Review {project} for {ctx.tenant}" + (f", {focus} first." if focus else ".")), Message.assistant("Sure.")]

    @p.prompt("hello", permission="docs:read", description="Says hello.")
    def _hello(tone: str = "warm") -> str:
        return f"Say hello, {tone}ly."

    @p.prompt(permission="docs:read")
    def ask_name(ctx: Ctx) -> Message:
        """Asks whom to greet first."""
        answer = client.elicit("name", "Who?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return Message.user(content.Text(f"Greet {answer.content['name']}."))

    @p.resource("docs://runbook", permission="docs:read", mime_type="text/markdown")
    def runbook(ctx: Ctx) -> str:
        """The on-call runbook."""
        return f"# Runbook of {ctx.tenant}"

    @p.resource("docs://logo", name="logo", permission="docs:read", description="The logo.", mime_type="image/png")
    def _logo() -> bytes:
        return b"\x89PNG"

    @p.template("db://{schema}/{table}/columns", permission="db:schema:read", mime_type="text/plain", completes={"table": "table"})
    def columns(ctx: Ctx, schema: str, table: str) -> str:
        """A table's columns."""
        if table == "secret":
            raise NotFound("no such table")
        return f"{schema}.{table}: id"

    @p.template("db://{table}/both", permission="db:read", description="Two contents.")
    def both(table: str) -> list[Contents]:
        return [Contents(f"db://{table}/a", "text/plain", text="a"), Contents(f"db://{table}/b", blob=b"b")]

    return p


class Prompts(unittest.TestCase):
    def test_a_prompt_lists_its_arguments_descriptions_completions_and_permission(self):
        review, hello, ask = docs().prompts.values()
        self.assertEqual((review.name, review.title, review.description), ("review", "Review", "Review a project's test plan."))
        self.assertEqual((review.resource, review.action), ("docs", "read"))
        self.assertEqual(
            [(a.name, a.description, a.required, a.completes) for a in review.arguments],
            [("project", "The project, by name.", True, "project"), ("focus", "What to look at first.", False, None)],
        )
        self.assertEqual([(a.name, a.required) for a in hello.arguments], [("tone", False)])
        self.assertEqual((hello.name, hello.description, ask.arguments), ("hello", "Says hello.", []))

    def test_get_fills_it_in_with_defaults_and_the_callers_context(self):
        p = docs()
        self.assertEqual(
            p.get_prompt("review", {"project": "payments"}, Ctx(tenant="acme")),
            (Message("user", content.Text("Review payments for acme.")), Message("assistant", content.Text("Sure."))),
        )
        self.assertEqual(p.get_prompt("review", {"project": "a", "focus": "flaky tests"})[0].content.text, "Review a for local, flaky tests first.")
        self.assertEqual(p.get_prompt("hello"), (Message.user("Say hello, warmly."),))

    def test_arguments_that_do_not_fit_unknown_prompts_and_tool_errors(self):
        p = docs()
        for args, message in [
            ({}, 'missing required argument "project"'),
            ({"project": "a", "fcus": "x"}, 'unknown argument "fcus" (expected one of: focus, project)'),
            ({"project": 3}, "project: expected a string, got 3"),
        ]:
            with self.assertRaises(InvalidArguments) as e:
                p.get_prompt("review", args)
            self.assertEqual(e.exception.message, message)
        with self.assertRaises(UnknownTool):
            p.get_prompt("nope")
        with self.assertRaises(NotFound):
            p.get_prompt("review", {"project": "missing"})

    def test_a_prompt_may_ask_the_client(self):
        p = docs()
        with self.assertRaises(ClientError):
            p.get_prompt("ask_name")
        with FakeHost(answers={"name": Elicitation("accept", {"name": "Ada"})}) as host:
            self.assertEqual(p.get_prompt("ask_name"), (Message.user("Greet Ada."),))
        self.assertEqual(host.asked[0][0].key, "name")

    def test_an_answer_that_is_no_message_fails(self):
        p = Plugin()

        @p.prompt(permission="d:r", description="d")
        def bad() -> int:
            return 3

        with self.assertRaisesRegex(Failed, "answered int as message 0"):
            p.get_prompt("bad")

    def test_a_prompt_that_cannot_be_described_is_refused_when_registered(self):
        def typed(ctx: Ctx, n: int) -> str:
            """d"""
            return ""

        def plain(project: str) -> str:
            """d"""
            return ""

        p = docs()
        cases = {
            "must be str": lambda: p.prompt(permission="d:r")(typed),
            "RESOURCE:ACTION": lambda: p.prompt(permission="d")(plain),
            "does not take": lambda: p.prompt(permission="d:r", completes={"proj": "project"})(plain),
            "two prompts": lambda: p.prompt("hello", permission="d:r")(plain),
            "at least its permission": lambda: p.prompt(plain),
            "give a description": lambda: p.prompt("undescribed", permission="d:r")(lambda project: ""),
        }
        for message, register in cases.items():
            with self.assertRaisesRegex((TypeError, ValueError), message):
                register()


class Resources(unittest.TestCase):
    def test_resources_and_templates_list_what_the_host_needs(self):
        p = docs()
        runbook, logo = p.resources.values()
        self.assertEqual((runbook.uri, runbook.name, runbook.description, runbook.mime_type), ("docs://runbook", "runbook", "The on-call runbook.", "text/markdown"))
        self.assertEqual((logo.name, logo.resource, logo.action), ("logo", "docs", "read"))
        columns, both = p.templates.values()
        self.assertEqual((columns.uri_template, columns.variables, columns.completes), ("db://{schema}/{table}/columns", ["schema", "table"], [("table", "table")]))
        self.assertEqual((columns.resource, columns.action), ("db:schema", "read"))
        self.assertEqual(both.completes, [])

    def test_a_read_answers_the_resource_at_the_uri_or_the_first_template_matching_it(self):
        p = docs()
        self.assertEqual(p.read("docs://runbook", Ctx(tenant="acme")), (Contents("docs://runbook", "text/markdown", text="# Runbook of acme"),))
        self.assertEqual(p.read("docs://logo"), (Contents("docs://logo", "image/png", blob=b"\x89PNG"),))
        self.assertEqual(p.read("db://public/orders/columns"), (Contents("db://public/orders/columns", "text/plain", text="public.orders: id"),))
        self.assertEqual([c.uri for c in p.read("db://orders/both")], ["db://orders/a", "db://orders/b"])

    def test_a_uri_nothing_serves_or_a_tool_error_is_not_found(self):
        p = docs()
        for uri in ("docs://nope", "db://a/b/c/columns", "db:///orders/columns", "db://public/secret/columns"):
            with self.assertRaises(NotFound, msg=uri):
                p.read(uri)

    def test_a_template_matches_one_segment_per_variable(self):
        columns = docs().templates["columns"]
        self.assertEqual(columns.match("db://s/t/columns"), {"schema": "s", "table": "t"})
        for uri in ("db://s/t/columns/x", "db://s//columns", "db://s/t?x/columns", "db://s/t#x/columns"):
            self.assertIsNone(columns.match(uri), uri)

    def test_an_answer_that_is_no_contents_fails(self):
        p = Plugin()

        @p.resource("x://y", permission="d:r", description="d")
        def y() -> dict:
            return {}

        with self.assertRaisesRegex(Failed, "answered dict as contents 0"):
            p.read("x://y")

    def test_a_resource_or_template_that_cannot_be_described_is_refused_when_registered(self):
        def var(ctx: Ctx, table: str) -> str:
            """d"""
            return ""

        def fixed(ctx: Ctx) -> str:
            """d"""
            return ""

        p = docs()
        cases = {
            "has no scheme": lambda: p.resource("runbook", permission="d:r", name="n1")(fixed),
            "takes only ctx": lambda: p.resource("x://a", permission="d:r", name="n2")(var),
            "two resources are at": lambda: p.resource("docs://runbook", permission="d:r", name="n3")(fixed),
            "two resources or templates are named": lambda: p.template("x://{table}", permission="d:r", name="runbook")(var),
            "exactly the template's variables": lambda: p.template("x://{id}", permission="d:r", name="n4")(var),
            "not one of its variables": lambda: p.template("x://{table}", permission="d:r", name="n5", completes={"id": "k"})(var),
            "level 1": lambda: p.template("x://{table}{id}", permission="d:r", name="n6")(var),
            "its permission": lambda: p.resource("x://b")(fixed),
        }
        for message, register in cases.items():
            with self.assertRaisesRegex((TypeError, ValueError), message):
                register()


class DefaultPlugin(unittest.TestCase):
    def test_the_default_plugin_lists_none_until_told(self):
        # Other test modules register nothing with the default plugin.
        self.assertEqual((PLUGIN.prompts, PLUGIN.resources, PLUGIN.templates), ({}, {}, {}))
        with self.assertRaises(NotFound):
            PLUGIN.read("docs://runbook")


if __name__ == "__main__":
    unittest.main()
