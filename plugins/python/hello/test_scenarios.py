"""hello-py's authoring kind `scenarios`, tested natively: a whole session
(current, propose, promote) against a fake test platform, and the rules a
proposal meets, each problem at its JSON pointer."""

import unittest

import app  # noqa: F401 (registers the plugin, as componentize-py imports it)
from toolhost_sdk import PLUGIN, Failed, Problems
from toolhost_sdk.testing import AuthoringSession, FakeHost

#: `GET /api/projects/1/tests` of the fake platform: two scenarios, a UI test.
TESTS = {
    "project": {"id": 1, "name": "payments", "tenant": "demo"},
    "version": "r3",
    "tests": [
        {"id": 204, "name": "Login flow", "kind": "api_scenario", "tags": ["smoke"], "tenant": "demo"},
        {"id": 206, "name": "Refund", "kind": "api_scenario", "tags": ["regression", "money"], "tenant": "demo"},
        {"id": 401, "name": "Checkout page", "kind": "ui_test", "tags": [], "tenant": "demo"},
    ],
}


def created(method, path, body):
    """The fake platform's `POST /api/scenarios`: the row it made."""
    return 201, {"id": 900, "name": "Checkout timeout", "project_id": 1, "tags": ["smoke"], "tenant": "demo"}


def host():
    return FakeHost(backend={"GET /api/projects/1/tests": TESTS, "POST /api/scenarios": created})


class Session(unittest.TestCase):
    def test_the_kind_is_a_projects_scenarios_promoted_by_add_scenarios_py(self):
        (kind,) = PLUGIN.authoring_kinds()
        self.assertEqual((kind.name, kind.subject_kind, kind.promoted_by), ("scenarios", "project", "add_scenarios_py"))
        tool = PLUGIN.tools["add_scenarios_py"]
        self.assertEqual((tool.resource, tool.action, tool.mutating), ("hello", "write", True))

    def test_a_new_scenario_is_proposed_diffed_and_created_by_promotion(self):
        with host() as h:
            s = AuthoringSession("scenarios", 1)
            self.assertEqual(s.version, "r3")
            self.assertEqual([x["name"] for x in s.body["scenarios"]], ["Login flow", "Refund"])
            proposal = {"scenarios": [{"name": "Login flow", "tags": ["smoke"]}, {"name": " Checkout timeout ", "tags": ["smoke", "smoke"]}]}
            proposed = s.propose(proposal)
            self.assertEqual(proposed.normalized, {"project": 1, "scenarios": [{"name": "Checkout timeout", "tags": ["smoke"]}]})
            self.assertEqual([(c.op, c.item, c.after) for c in proposed.changes], [("added", "Checkout timeout", {"name": "Checkout timeout", "tags": ["smoke"]})])
            out = s.promote(proposed)
        self.assertEqual(out.value, {"added": [{"id": 900, "name": "Checkout timeout"}]})
        posts = [r for r in h.requests if r[1] == "POST"]
        self.assertEqual(posts, [("testbench", "POST", "/api/scenarios", b'{"project_id":1,"name":"Checkout timeout","tags":["smoke"]}')])

    def test_a_project_whose_tests_moved_refuses_the_promotion(self):
        with host() as h:
            s = AuthoringSession("scenarios", 1)
            proposed = s.propose({"scenarios": [{"name": "Cart"}]})
            h.routes["GET /api/projects/1/tests"] = {**TESTS, "version": "r4"}
            with self.assertRaisesRegex(Failed, "SUBJECT_CHANGED"):
                s.promote(proposed)
        self.assertFalse([r for r in h.requests if r[1] == "POST"])


class Rules(unittest.TestCase):
    def problems(self, proposal):
        with host(), self.assertRaises(Problems) as e:
            AuthoringSession("scenarios", 1).propose(proposal)
        return [p.path for p in e.exception.problems]

    def test_each_problem_is_reported_at_its_pointer(self):
        cases = [
            ([], [""]),
            ({"scenarios": [], "owner": "x"}, ["/owner", "/scenarios"]),
            ({"scenarios": [{"name": "a"}] * 21}, ["/scenarios"]),
            ({"scenarios": ["Cart"]}, ["/scenarios/0"]),
            ({"scenarios": [{"name": " ", "tags": "smoke", "id": 3}]}, ["/scenarios/0/id", "/scenarios/0/name", "/scenarios/0/tags"]),
            ({"scenarios": [{"name": "x" * 201}]}, ["/scenarios/0/name"]),
            ({"scenarios": [{"name": "Cart", "tags": ["ok", "Not OK", 3]}]}, ["/scenarios/0/tags/1", "/scenarios/0/tags/2"]),
            ({"scenarios": [{"name": "Cart"}, {"name": "cart"}]}, ["/scenarios/1/name"]),
            ({"scenarios": [{"name": "refund", "tags": ["money"]}]}, ["/scenarios/0/tags"]),
            ({"scenarios": [{"name": "Login flow", "tags": ["smoke"]}]}, [""]),
        ]
        for proposal, want in cases:
            self.assertEqual(self.problems(proposal), want, proposal)


if __name__ == "__main__":
    unittest.main()
