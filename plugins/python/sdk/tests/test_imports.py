"""The host's imports: outside a component they fail (or print) without
trapping; under a FakeHost they answer; their errors read like the Rust SDK's."""

import contextlib
import io
import json
import unittest

from toolhost_sdk import ClientError, Entity, Failed, NeedsClarification, NotFound, artifacts, backend, checkpoint, client, log, progress, resolve, resources
from toolhost_sdk import _host
from toolhost_sdk.backend import Response
from toolhost_sdk.client import Elicitation, Input, Root, Sampled, Support
from toolhost_sdk.resolver import query
from toolhost_sdk.testing import FakeHost


class Native(unittest.TestCase):
    def test_logs_and_progress_go_to_stderr(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            log.info("%d rows", 3)
            progress.report(1, 2, "half")
        self.assertEqual(err.getvalue(), "[info] 3 rows\n[progress] 1.0/2.0 half\n")

    def test_resolve_backend_checkpoint_and_artifacts_fail_instead_of_trapping(self):
        with self.assertRaisesRegex(Failed, "only available inside the toolhost"):
            resolve("project", "project", None)
        with self.assertRaisesRegex(Failed, "backend tb is unavailable"):
            backend.get("tb", "/x")
        with self.assertRaisesRegex(Failed, 'checkpoint "ex:1" could not be opened: checkpoints are only'):
            checkpoint.open("ex:1", "t", "e")
        with self.assertRaisesRegex(Failed, 'artifact "a" was not kept'):
            artifacts.put("a", "text/plain", "x")

    def test_nothing_can_be_asked_and_updates_go_to_stderr(self):
        self.assertEqual(client.supports(), Support(False, False, False))
        with self.assertRaises(ClientError) as e:
            client.roots("r")
        self.assertEqual((e.exception.kind, e.exception.message), ("unsupported", "cannot ask: outside a component"))
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            resources.updated("db://orders")
        self.assertEqual(err.getvalue(), "[resource updated] db://orders\n")

    def test_a_log_level_is_one_of_the_wits(self):
        with self.assertRaises(ValueError):
            log.log("fatal", "x")


class Resolver(unittest.TestCase):
    def test_a_query_carries_the_value_as_text_pins_within_and_question(self):
        q = query("environment", "env", 12, pins={"project": 1, "team": None}, within=[12, 13], question="Which? {names}")
        self.assertEqual((q.kind, q.field, q.value), ("environment", "env", "12"))
        self.assertEqual((q.pins, q.within, q.question), ((("project", 1),), (12, 13), "Which? {names}"))
        self.assertIsNone(query("project", "project", None).value)
        with self.assertRaises(TypeError):
            query("project", "project", True)

    def test_a_question_becomes_needs_clarification_quoting_it(self):
        rows = {"project": [(1, "payments"), (2, "payments"), Entity(3, "secret", "acme")]}
        with FakeHost(entities=rows) as host:
            self.assertEqual(resolve("project", "project", "2").name, "payments")
            with self.assertRaises(NeedsClarification) as e:
                resolve("project", "project", "payments")
        c = e.exception.clarification
        self.assertEqual((c.reason, c.field, [x.id for x in c.candidates]), ("ambiguous", "project", [1, 2]))
        self.assertEqual(e.exception.message, "needs clarification: Which project? Available: payments, payments.")
        self.assertIsInstance(e.exception, Failed)
        self.assertEqual(len(host.queries), 2)

    def test_the_fake_resolver_asks_for_what_is_missing_or_unknown_and_honours_within(self):
        with FakeHost(entities={"project": [(1, "payments"), (2, "search")]}):
            for value, reason in [(None, "missing-required"), ("nope", "not-found"), (3, "not-found")]:
                with self.assertRaises(NeedsClarification) as e:
                    resolve("project", "project", value)
                self.assertEqual(e.exception.clarification.reason, reason)
            self.assertEqual(resolve("project", "project", None, within=[2]).name, "search")


class Backend(unittest.TestCase):
    def test_a_2xx_answer_passes_and_parses_into_a_hint(self):
        r = Response(201, body=b'[{"id": 7, "name": "a", "extra": true}]').ok()
        self.assertEqual(r.json(), [{"id": 7, "name": "a", "extra": True}])
        self.assertEqual(r.json(list[dict[str, object]])[0]["id"], 7)

    def test_a_404_is_not_found_and_other_failures_failed_with_status_and_excerpt(self):
        with self.assertRaises(NotFound) as e:
            Response(404, body=b"no such\nexecution").ok()
        self.assertEqual(e.exception.message, "request answered 404: no such execution")
        with self.assertRaises(Failed) as e:
            Response(500).ok()
        self.assertEqual(e.exception.message, "request answered 500")
        with self.assertRaises(Failed) as e:
            Response(502, body=b"x" * 5000).ok()
        self.assertTrue(len(e.exception.message) < 300 and e.exception.message.endswith("…"))

    def test_a_body_of_the_wrong_shape_is_failed_naming_the_request_and_field(self):
        from dataclasses import dataclass

        @dataclass
        class Row:
            id: int

        with self.assertRaises(Failed) as e:
            Response(200, body=b'[{"id": "x"}]', origin="GET /a on backend tb").json(list[Row])
        self.assertEqual(e.exception.message, "GET /a on backend tb answered JSON of an unexpected shape: [0].id: expected an integer, got \"x\"")
        with self.assertRaisesRegex(Failed, "not JSON"):
            Response(200, body=b"<html>").json()

    def test_escape_keeps_unreserved_characters_and_encodes_the_rest(self):
        self.assertEqual(backend.escape("ex-1_a.b~"), "ex-1_a.b~")
        self.assertEqual(backend.escape("../a b,c/é"), "..%2Fa%20b%2Cc%2F%C3%A9")

    def test_transport_errors_say_which_backend_and_why(self):
        def text(kind, detail=None):
            return backend.transport_error("tb", _host.TransportError(kind, detail)).message

        self.assertEqual(text("timeout"), "backend tb did not answer in time")
        self.assertIn("not declared", text("not-declared", "tb"))
        self.assertIn("POST while planning", text("refused", "POST while planning"))

    def test_json_requests_carry_a_content_type_and_the_serialized_body(self):
        with FakeHost(backend={"POST /api/x": (201, {"id": 1})}) as host:
            r = backend.post("tb", "/api/x", {"a": 1})
        self.assertEqual((r.status, r.json(), r.origin), (201, {"id": 1}, "POST /api/x on backend tb"))
        self.assertEqual(host.requests, [("tb", "POST", "/api/x", b'{"a":1}')])
        self.assertEqual(r.header("Content-Type"), "application/json")


class Checkpoints(unittest.TestCase):
    def test_text_that_fits_is_kept_and_longer_text_is_cut_at_a_character_boundary(self):
        self.assertEqual(checkpoint.fit("short", 10), "short")
        self.assertEqual(checkpoint.fit("0123456789ab", 10), "0123456…")
        cut = checkpoint.fit("é" * 10, 10)
        self.assertEqual(cut, "ééé…")
        self.assertLessEqual(len(cut.encode()), 10)

    def test_opening_again_reads_the_decision(self):
        with FakeHost() as host:
            first = checkpoint.open("ex:1", "t", "e")
            host.decide("ex:1", "false_positive")
            again = checkpoint.open("ex:1", "t", "e")
        self.assertEqual((first.id, first.is_decided), ("chk_1", False))
        self.assertEqual((again.id, again.version, again.outcome, again.is_decided), ("chk_1", 2, "inconclusive", True))


class Client(unittest.TestCase):
    NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}

    def test_one_ask_sends_every_request_and_answers_in_order(self):
        answers = {
            "name": Elicitation("accept", {"name": "Ada"}),
            "greeting": Sampled("assistant", "Hi", "m-1", "endTurn"),
            "roots": [Root("file:///src", "src")],
        }
        with FakeHost(answers=answers) as host:
            got = client.ask([Input.elicit("name", "Who?", self.NAME), Input.sample("greeting", client.prompt("Greet", 50)), Input.roots("roots")])
        self.assertEqual(got, [answers["name"], answers["greeting"], (Root("file:///src", "src"),)])
        name, greeting, roots = host.asked[0]
        self.assertEqual((name.key, name.request.message, json.loads(name.request.requested_schema)), ("name", "Who?", self.NAME))
        self.assertEqual((greeting.request.max_tokens, greeting.request.messages[0].role), (50, "user"))
        self.assertIsNone(roots.request)

    def test_the_shortcuts_answer_one_request_each(self):
        with FakeHost(answers={"n": Elicitation("decline"), "s": Sampled("assistant", "Paris", "m"), "r": []}):
            self.assertFalse(client.elicit("n", "Who?", self.NAME).accepted)
            self.assertEqual(client.sample("s", client.prompt("Capital?", 10)).text, "Paris")
            self.assertEqual(client.roots("r"), ())
            self.assertEqual(client.supports(), Support(True, True, True))

    def test_refusals_and_undeclared_capabilities_are_client_errors(self):
        refused = ClientError("refused", "asked after acting")
        with FakeHost(client=Support(elicitation=True), answers={"n": refused}):
            with self.assertRaises(ClientError) as e:
                client.elicit("n", "Who?", self.NAME)
            self.assertEqual(e.exception.message, "the host refused the request: asked after acting")
            with self.assertRaises(ClientError) as e:
                client.sample("s", client.prompt("x", 1))
            self.assertEqual(e.exception.kind, "unsupported")
        self.assertIsInstance(e.exception, Failed)
        self.assertEqual(ClientError("timeout").message, "the client did not answer in time")


class Resources(unittest.TestCase):
    def test_an_update_is_told_once_and_a_refusal_is_failed_with_the_reason(self):
        with FakeHost(resources={"db://orders"}) as host:
            resources.updated("db://orders")
            resources.updated("db://orders")
            with self.assertRaises(Failed) as e:
                resources.updated("db://other")
        self.assertEqual(host.updated, ["db://orders"])
        self.assertEqual(e.exception.message, "the update of resource \"db://other\" was refused: 'db://other' is not a resource this plugin exports")


class Artifacts(unittest.TestCase):
    def test_put_json_keeps_indented_json_and_answers_its_digest(self):
        with FakeHost() as host:
            info = artifacts.put_json("plan.json", {"a": 1})
        self.assertEqual(host.artifacts, [("plan.json", "application/json", b'{\n  "a": 1\n}')])
        self.assertEqual((info.uri, info.size, len(info.sha256)), ("toolhost://artifacts/art_1", 12, 64))
        with self.assertRaisesRegex(Failed, "does not serialize"):
            artifacts.put_json("x", {1, 2})


if __name__ == "__main__":
    unittest.main()
