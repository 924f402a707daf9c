"""The hello-py tools, prompt and resource, tested natively (no build, no host):
`python3 -m unittest` with `plugins/python/sdk` and this directory on the path."""

import json
import unittest

import app
from toolhost_sdk import PLUGIN, Ctx, Failed, InvalidArguments, Message, NeedsClarification
from toolhost_sdk.testing import FakeHost

ROWS = [
    {"id": 1, "name": "payments", "tenant": "demo", "created": "2026-01-01"},
    {"id": 2, "name": "search", "tenant": "demo"},
    {"id": 9, "name": "secret", "tenant": "acme"},
]


class Greet(unittest.TestCase):
    def test_greets_by_name_with_the_message_as_text(self):
        out = PLUGIN.call("greet_py", {"name": "Ada"})
        self.assertEqual(out.value, {"message": "Hello, Ada!"})
        self.assertEqual(out.text, "Hello, Ada!")

    def test_speaks_french_and_german_and_trims_the_name(self):
        self.assertEqual(app.greet_py(Ctx(), " Ada ", "fr").structured.message, "Bonjour, Ada !")
        self.assertEqual(app.greet_py(Ctx(), "Ada", language="de").structured, app.Greeting("Hallo, Ada!"))

    def test_a_blank_name_an_unknown_language_or_a_stray_field_is_invalid(self):
        for args in ({"name": "  "}, {"name": "Ada", "language": "es"}, {"name": "Ada", "excited": True}, {}):
            with self.assertRaises(InvalidArguments, msg=args):
                PLUGIN.call("greet_py", args)

    def test_is_read_only_and_asks_for_hello_read(self):
        greet_py = PLUGIN.tools["greet_py"]
        self.assertEqual((greet_py.resource, greet_py.action, greet_py.mutating), ("hello", "read", False))


class DescribeProject(unittest.TestCase):
    def host(self):
        return FakeHost(entities={"project": [(1, "payments"), (2, "payments"), (3, "search")]})

    def test_answers_the_resolved_projects_id_and_name(self):
        with self.host() as host:
            self.assertEqual(PLUGIN.call("describe_project_py", {"project": "search"}).value, {"id": 3, "name": "search"})
            self.assertEqual(PLUGIN.call("describe_project_py", {"project": 1}).value, {"id": 1, "name": "payments"})
        self.assertEqual([q.value for q in host.queries], ["search", "1"])
        self.assertEqual(host.logs[-1], ("info", "described project 1 for test"))

    def test_namesakes_or_no_project_become_the_hosts_question(self):
        for args, reason in (({"project": "payments"}, "ambiguous"), ({}, "missing-required")):
            with self.host(), self.assertRaises(NeedsClarification) as e:
                PLUGIN.call("describe_project_py", args)
            self.assertEqual(e.exception.clarification.reason, reason)
            self.assertEqual(e.exception.clarification.field, "project")

    def test_without_a_host_resolving_fails_instead_of_trapping(self):
        with self.assertRaisesRegex(Failed, "only available inside the toolhost"):
            app.describe_project_py(Ctx(), "payments")

    def test_a_project_is_a_name_or_an_id(self):
        with self.host(), self.assertRaisesRegex(InvalidArguments, "project: expected a string or an integer"):
            PLUGIN.call("describe_project_py", {"project": 1.5})


class Projects(unittest.TestCase):
    def test_lists_every_row_with_the_tenant_the_backend_gave(self):
        with FakeHost(backend={"testbench GET /api/projects": ROWS}) as host:
            rows = PLUGIN.snapshot("project", Ctx(tenant="demo"))
        self.assertEqual([(e.id, e.name, e.tenant) for e in rows], [(1, "payments", "demo"), (2, "search", "demo"), (9, "secret", "acme")])
        self.assertEqual(host.requests, [("testbench", "GET", "/api/projects", None)])

    def test_a_backend_failure_or_a_row_of_the_wrong_shape_fails_naming_it(self):
        with FakeHost(backend={"GET /api/projects": (503, "down for maintenance")}):
            with self.assertRaisesRegex(Failed, 'GET /api/projects on backend testbench answered 503: "down'):
                PLUGIN.snapshot("project")
        with FakeHost(backend={"GET /api/projects": [{"id": 1, "name": "payments"}]}):
            with self.assertRaisesRegex(Failed, 'unexpected shape: missing required field "\\[0\\].tenant"'):
                PLUGIN.snapshot("project")


class IntroduceProject(unittest.TestCase):
    def test_lists_its_arguments_the_project_completed_from_the_entities(self):
        p = PLUGIN.prompts["introduce_project_py"]
        self.assertEqual((p.resource, p.action, p.title), ("hello", "read", "Introduce a project"))
        self.assertEqual([(a.name, a.required, a.completes) for a in p.arguments], [("project", True, "project"), ("language", False, None)])

    def test_asks_for_an_introduction_in_the_language_given(self):
        (m,) = PLUGIN.get_prompt("introduce_project_py", {"project": "payments"})
        self.assertEqual(m, Message.user("Hello, newcomer! Introduce the project payments in a few sentences, in language 'en'."))
        (m,) = PLUGIN.get_prompt("introduce_project_py", {"project": "web", "language": "fr"})
        self.assertTrue(m.content.text.startswith("Bonjour, newcomer !"), m)

    def test_a_blank_project_or_an_unknown_language_is_invalid(self):
        for args in ({"project": " "}, {"project": "web", "language": "es"}, {}):
            with self.assertRaises(InvalidArguments, msg=args):
                PLUGIN.get_prompt("introduce_project_py", args)


class Greetings(unittest.TestCase):
    def test_reads_every_greeting_as_json(self):
        (c,) = PLUGIN.read("hello://py/greetings")
        self.assertEqual((c.uri, c.mime_type), ("hello://py/greetings", "application/json"))
        self.assertEqual(json.loads(c.text), app.GREETINGS)
        self.assertEqual(list(PLUGIN.resources), ["greetings_py"])


if __name__ == "__main__":
    unittest.main()
