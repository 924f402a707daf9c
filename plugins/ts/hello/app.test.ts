// hello-ts's tools, run under Node with the host faked
// (`node --import @toolhost/sdk/register --test`, see make ts-plugins).

import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { callTool, fakeHost, snapshot } from "@toolhost/sdk/testing";

import * as app from "./app.ts";

const plugin = { tool: app.tool, entities: app.entities };

beforeEach(() => fakeHost.reset());

test("greet answers exactly the message plugins/hello's greet does", () => {
  assert.deepEqual(callTool(plugin, "greet_ts", { name: "Ada" }), { ok: { message: "Hello, Ada!" }, text: "Hello, Ada!" });
  assert.deepEqual(callTool(plugin, "greet_ts", { name: "  " }), { err: { tag: "invalid-arguments", val: "name must not be blank" } });
  assert.deepEqual(callTool(plugin, "greet_ts", {}), { err: { tag: "invalid-arguments", val: 'missing field "name"' } });
});

test("describe lists both tools read-only under hello:read", () => {
  const specs = plugin.tool.describe();
  assert.deepEqual(specs.map((t) => t.name), ["greet_ts", "describe_project_ts"]);
  for (const t of specs) assert.deepEqual([t.permission, t.mutating], [{ resource: "hello", action: "read" }, false]);
  const project = JSON.parse(specs[1].inputSchema).properties.project;
  assert.deepEqual(project.anyOf, [{ type: "string" }, { type: "integer" }]);
});

test("describe_project answers the project a name or id resolves to", () => {
  fakeHost.resolveOver({ project: [{ id: 1, name: "payments" }, { id: 3, name: "web" }] });
  assert.deepEqual(callTool(plugin, "describe_project_ts", { project: "web" }), { ok: { id: 3, name: "web" }, text: "Project web (#3)." });
  assert.deepEqual(callTool(plugin, "describe_project_ts", { project: 1 }).ok, { id: 1, name: "payments" });
});

test("describe_project without a project becomes the resolver's question", () => {
  fakeHost.resolveOver({ project: [{ id: 1, name: "payments" }, { id: 2, name: "payments" }] });
  const got = callTool(plugin, "describe_project_ts", {});
  assert.ok("err" in got && got.err.tag === "failed" && got.err.val.startsWith("needs clarification: "), JSON.stringify(got));
});

test("projects are listed from GET /api/projects with the tenant the backend gave", () => {
  fakeHost.backend = () => ({ status: 200, body: [{ id: 1, name: "payments", tenant: "demo" }, { id: 9, name: "other", tenant: "acme" }] });
  assert.deepEqual(plugin.entities.kinds(), ["project"]);
  assert.deepEqual(snapshot(plugin, "project").map((e) => [e.id, e.name, e.tenant]), [[1, "payments", "demo"], [9, "other", "acme"]]);
  assert.deepEqual([fakeHost.requests[0].backend, fakeHost.requests[0].path], ["testbench", "/api/projects"]);
  fakeHost.backend = () => ({ status: 503, body: "maintenance" });
  assert.throws(
    () => snapshot(plugin, "project"),
    (e: { payload: { tag: string; val: string } }) =>
      e.payload.tag === "failed" && e.payload.val === "GET /api/projects on backend testbench answered 503: maintenance",
  );
});
