// hello-ts's tools, run under Node with the host faked
// (`node --import @toolhost/sdk/register --test`, see make ts-plugins).

import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { callTool, fakeHost, getPrompt, readResource, snapshot } from "@toolhost/sdk/testing";

import * as app from "./app.ts";

const plugin = { tool: app.tool, entities: app.entities, prompts: app.prompts, resources: app.resources };

beforeEach(() => fakeHost.reset());

test("greet answers exactly the message plugins/hello's greet does", () => {
  assert.deepEqual(callTool(plugin, "greet_ts", { name: "Ada" }), { ok: { message: "Hello, Ada!" }, text: "Hello, Ada!" });
  assert.deepEqual(callTool(plugin, "greet_ts", { name: "  " }), { err: { tag: "invalid-arguments", val: "name must not be blank" } });
});

test("greet without a name asks the person for one, when the client can be asked", () => {
  assert.deepEqual(callTool(plugin, "greet_ts", {}), { err: { tag: "invalid-arguments", val: 'missing field "name" (and the client cannot be asked for it)' } });
  fakeHost.supports = { elicitation: true, sampling: false, roots: false };
  fakeHost.answers = { name: { action: "accept", content: { name: "Ada" } } };
  assert.deepEqual(callTool(plugin, "greet_ts", {}), { ok: { message: "Hello, Ada!" }, text: "Hello, Ada!" });
  assert.equal(fakeHost.asked[0][0].key, "name");
  fakeHost.answers = { name: { action: "decline" } };
  assert.deepEqual(callTool(plugin, "greet_ts", {}), { err: { tag: "invalid-arguments", val: "no name to greet: the person chose decline" } });
});

test("describe lists the greeting and the description read-only under hello:read, the promoting tool mutating", () => {
  const specs = plugin.tool.describe();
  assert.deepEqual(specs.map((t) => t.name), ["greet_ts", "describe_project_ts", "add_scenarios_ts"]);
  for (const t of specs.slice(0, 2)) assert.deepEqual([t.permission, t.mutating], [{ resource: "hello", action: "read" }, false]);
  assert.deepEqual([specs[2].permission, specs[2].mutating], [{ resource: "hello", action: "write" }, true]);
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

test("introduce_project lists its arguments, the project completed from the entities", () => {
  const [p] = plugin.prompts.list();
  assert.equal(p.name, "introduce_project_ts");
  assert.deepEqual(p.permission, { resource: "hello", action: "read" });
  assert.deepEqual(p.arguments.map((a) => [a.name, a.required, a.completes]), [["project", true, "project"], ["language", false, undefined]]);
});

test("introduce_project asks for an introduction in the language given", () => {
  assert.deepEqual(getPrompt(plugin, "introduce_project_ts", { project: "payments" }), {
    ok: [{ role: "user", content: { tag: "text", val: 'Hello, newcomer! Introduce the project payments in a few sentences, in language "en".' } }],
  });
  const fr = getPrompt(plugin, "introduce_project_ts", { project: "web", language: "fr" });
  assert.ok("ok" in fr && String(fr.ok[0].content.val).startsWith("Bonjour, newcomer !"), JSON.stringify(fr));
  for (const args of [{ project: " " }, { project: "web", language: "es" }, {}]) {
    const got = getPrompt(plugin, "introduce_project_ts", args);
    assert.ok("err" in got && got.err.tag === "invalid-arguments", JSON.stringify(got));
  }
});

test("greetings reads every greeting as JSON; there are no templates", () => {
  assert.deepEqual(plugin.resources.list().map((r) => [r.uri, r.name, r.mimeType]), [["hello://ts/greetings", "greetings_ts", "application/json"]]);
  const read = readResource(plugin, "hello://ts/greetings");
  assert.ok("ok" in read && read.ok[0].body.tag === "text", JSON.stringify(read));
  assert.equal(JSON.parse(read.ok[0].body.val as string).fr, "Bonjour, newcomer !");
  assert.deepEqual(plugin.resources.templates(), []);
});
