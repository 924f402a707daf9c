// hello-ts's authoring kind `scenarios`, run under Node with the host faked:
// a whole session (current, propose, promote) against a fake test
// platform, and the rules a proposal meets, each problem at its pointer.

import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { authoringSession, fakeHost, type FakeRequest } from "@toolhost/sdk/testing";

import * as app from "./app.ts";

const plugin = { tool: app.tool, authoring: app.authoring };

/** `GET /api/projects/1/tests` of the fake platform: two scenarios, a UI test. */
const TESTS = {
  project: { id: 1, name: "payments", tenant: "demo" },
  version: "r3",
  tests: [
    { id: 204, name: "Login flow", kind: "api_scenario", tags: ["smoke"], tenant: "demo" },
    { id: 206, name: "Refund", kind: "api_scenario", tags: ["regression", "money"], tenant: "demo" },
    { id: 401, name: "Checkout page", kind: "ui_test", tags: [], tenant: "demo" },
  ],
};

/** The fake platform, at `version`. */
function platform(version = "r3") {
  return (r: FakeRequest) =>
    r.method === "get" ? { status: 200, body: { ...TESTS, version } } : { status: 201, body: { id: 900, name: "Checkout timeout", project_id: 1, tags: ["smoke"] } };
}

beforeEach(() => {
  fakeHost.reset();
  fakeHost.backend = platform();
});

test("the kind is a project's scenarios, promoted by add_scenarios_ts", () => {
  const [kind] = app.authoring.kinds();
  assert.deepEqual([kind.name, kind.subjectKind, kind.promotedBy], ["scenarios", "project", "add_scenarios_ts"]);
});

test("a new scenario is proposed, diffed and created by promotion", () => {
  const session = authoringSession(plugin, "scenarios", 1);
  assert.equal(session.version, "r3");
  assert.deepEqual((session.body as { scenarios: Array<{ name: string }> }).scenarios.map((x) => x.name), ["Login flow", "Refund"]);
  const proposed = session.propose({
    scenarios: [
      { name: "Login flow", tags: ["smoke"] },
      { name: " Checkout timeout ", tags: ["smoke", "smoke"] },
    ],
  });
  assert.ok("ok" in proposed, JSON.stringify(proposed));
  const added = { name: "Checkout timeout", tags: ["smoke"] };
  assert.deepEqual(proposed.ok.normalized, { project: 1, scenarios: [added] });
  assert.deepEqual(proposed.ok.changes, [{ op: "added", item: "Checkout timeout", after: added }]);
  assert.deepEqual(session.promote(proposed.ok), { ok: { added: [{ id: 900, name: "Checkout timeout" }] }, text: undefined });
  const posts = fakeHost.requests.filter((r) => r.method === "post").map((r) => [r.path, r.body]);
  assert.deepEqual(posts, [["/api/scenarios", '{"project_id":1,"name":"Checkout timeout","tags":["smoke"]}']]);
});

test("a project whose tests moved refuses the promotion", () => {
  const session = authoringSession(plugin, "scenarios", 1);
  const proposed = session.propose({ scenarios: [{ name: "Cart" }] });
  assert.ok("ok" in proposed, JSON.stringify(proposed));
  fakeHost.backend = platform("r4");
  const refused = session.promote(proposed.ok);
  assert.ok("err" in refused && refused.err.val.startsWith("SUBJECT_CHANGED"), JSON.stringify(refused));
  assert.equal(fakeHost.requests.filter((r) => r.method === "post").length, 0);
});

test("each problem is reported at its pointer", () => {
  const cases: Array<[unknown, string[]]> = [
    [[], [""]],
    [{ scenarios: [], owner: "x" }, ["/owner", "/scenarios"]],
    [{ scenarios: Array(21).fill({ name: "a" }) }, ["/scenarios"]],
    [{ scenarios: ["Cart"] }, ["/scenarios/0"]],
    [{ scenarios: [{ name: " ", tags: "smoke", id: 3 }] }, ["/scenarios/0/id", "/scenarios/0/name", "/scenarios/0/tags"]],
    [{ scenarios: [{ name: "x".repeat(201) }] }, ["/scenarios/0/name"]],
    [{ scenarios: [{ name: "Cart", tags: ["ok", "Not OK", 3] }] }, ["/scenarios/0/tags/1", "/scenarios/0/tags/2"]],
    [{ scenarios: [{ name: "Cart" }, { name: "cart" }] }, ["/scenarios/1/name"]],
    [{ scenarios: [{ name: "refund", tags: ["money"] }] }, ["/scenarios/0/tags"]],
    [{ scenarios: [{ name: "Login flow", tags: ["smoke"] }] }, [""]],
  ];
  for (const [proposal, want] of cases) {
    const got = authoringSession(plugin, "scenarios", 1).propose(proposal);
    assert.deepEqual("problems" in got ? got.problems.map((p) => p.path) : got, want, JSON.stringify(proposal));
  }
});
