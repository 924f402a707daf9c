import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { client, content, contents, definePlugin, definePrompt, defineResource, defineTemplate, message, notFound } from "../src/index.ts";
import { fakeHost, getPrompt, readResource, testCtx } from "../src/testing.ts";

beforeEach(() => fakeHost.reset());

const review = definePrompt({
  name: "review",
  title: "Review",
  description: "Review a project's test plan.",
  permission: "docs:read",
  arguments: {
    project: { description: "The project, by name.", required: true, completes: "project" },
    focus: { description: "What to look at first." },
  },
  get: ({ project, focus }, ctx) => {
    if (project === "missing") throw notFound("no such project");
    return [message.user(`Review ${project} for ${ctx.tenant}${focus ? `, ${focus} first` : ""}.`), message.assistant("Sure.")];
  },
});

const hello = definePrompt({ name: "hello", description: "Says hello.", permission: "docs:read", get: () => "Say hello." });

const askName = definePrompt({
  name: "ask_name",
  description: "Asks whom to greet first.",
  permission: "docs:read",
  get: () => {
    const answer = client.elicit("name", "Who?", { type: "object", properties: { name: { type: "string" } } });
    if (answer.action !== "accept") return "Greet nobody.";
    return message.user(content.text(`Greet ${String(answer.content.name)}.`));
  },
});

const runbook = defineResource({
  uri: "docs://runbook",
  name: "runbook",
  description: "The on-call runbook.",
  mimeType: "text/markdown",
  permission: "docs:read",
  read: (ctx) => `# Runbook of ${ctx.tenant}`,
});

const logo = defineResource({
  uri: "docs://logo",
  name: "logo",
  description: "The logo.",
  mimeType: "image/png",
  permission: "docs:read",
  read: () => new Uint8Array([0x89, 0x50]),
});

const columns = defineTemplate({
  uriTemplate: "db://{schema}/{table}/columns",
  name: "columns",
  description: "A table's columns.",
  mimeType: "text/plain",
  permission: "db:schema:read",
  completes: { table: "table" },
  read: ({ schema, table }) => {
    if (table === "secret") throw notFound("no such table");
    return `${schema}.${table}: id`;
  },
});

const both = defineTemplate({
  uriTemplate: "db://{table}/both",
  name: "both",
  description: "Two contents.",
  permission: "db:read",
  read: ({ table }) => [contents.text(`db://${table}/a`, "text/plain", "a"), contents.blob(`db://${table}/b`, undefined, new Uint8Array([98]))],
});

const plugin = definePlugin({ tools: [], prompts: [review, hello, askName], resources: [runbook, columns, logo, both] });

test("prompts list their arguments, completions and permission", () => {
  const [r, h] = plugin.prompts.list();
  assert.deepEqual(r, {
    name: "review",
    title: "Review",
    description: "Review a project's test plan.",
    arguments: [
      { name: "project", description: "The project, by name.", required: true, completes: "project" },
      { name: "focus", description: "What to look at first.", required: false, completes: undefined },
    ],
    permission: { resource: "docs", action: "read" },
  });
  assert.deepEqual(h.arguments, []);
});

test("get fills a prompt in for the caller; a string is one user message", () => {
  assert.deepEqual(getPrompt(plugin, "review", { project: "payments" }, testCtx({ tenant: "acme" })), {
    ok: [
      { role: "user", content: { tag: "text", val: "Review payments for acme." } },
      { role: "assistant", content: { tag: "text", val: "Sure." } },
    ],
  });
  assert.deepEqual(getPrompt(plugin, "review", { project: "a", focus: "flaky tests" }).ok?.[0].content.val, "Review a for demo, flaky tests first.");
  assert.deepEqual(getPrompt(plugin, "hello"), { ok: [{ role: "user", content: { tag: "text", val: "Say hello." } }] });
});

test("get refuses unknown prompts and arguments, missing ones, and relays tool errors", () => {
  assert.deepEqual(getPrompt(plugin, "nope"), { err: { tag: "unknown-tool", val: "nope" } });
  assert.deepEqual(getPrompt(plugin, "review", {}), { err: { tag: "invalid-arguments", val: 'missing argument "project"' } });
  assert.deepEqual(getPrompt(plugin, "review", { project: "a", fcus: "x" }), {
    err: { tag: "invalid-arguments", val: 'unknown argument "fcus", expected one of: project, focus' },
  });
  assert.deepEqual(getPrompt(plugin, "review", { project: "missing" }), { err: { tag: "not-found", val: "no such project" } });
});

test("a prompt may ask the client", () => {
  assert.deepEqual(getPrompt(plugin, "ask_name"), { err: { tag: "failed", val: "cannot ask: the client did not declare the elicitation capability" } });
  fakeHost.supports = { elicitation: true, sampling: false, roots: false };
  fakeHost.answers = { name: { action: "accept", content: { name: "Ada" } } };
  assert.deepEqual(getPrompt(plugin, "ask_name"), { ok: [{ role: "user", content: { tag: "text", val: "Greet Ada." } }] });
  assert.equal(fakeHost.asked[0][0].key, "name");
});

test("resources and templates list apart, with their permissions and completions", () => {
  assert.deepEqual(plugin.resources.list().map((r) => [r.uri, r.name, r.mimeType]), [
    ["docs://runbook", "runbook", "text/markdown"],
    ["docs://logo", "logo", "image/png"],
  ]);
  const [c, b] = plugin.resources.templates();
  assert.deepEqual(c, {
    uriTemplate: "db://{schema}/{table}/columns",
    name: "columns",
    title: undefined,
    description: "A table's columns.",
    mimeType: "text/plain",
    permission: { resource: "db:schema", action: "read" },
    completes: [["table", "table"]],
  });
  assert.deepEqual(b.completes, []);
});

test("a read answers the resource at the URI or the first template matching it", () => {
  assert.deepEqual(readResource(plugin, "docs://runbook", testCtx({ tenant: "acme" })), {
    ok: [{ uri: "docs://runbook", mimeType: "text/markdown", body: { tag: "text", val: "# Runbook of acme" } }],
  });
  assert.deepEqual(readResource(plugin, "docs://logo"), {
    ok: [{ uri: "docs://logo", mimeType: "image/png", body: { tag: "blob", val: new Uint8Array([0x89, 0x50]) } }],
  });
  assert.deepEqual(readResource(plugin, "db://public/orders/columns"), {
    ok: [{ uri: "db://public/orders/columns", mimeType: "text/plain", body: { tag: "text", val: "public.orders: id" } }],
  });
  const two = readResource(plugin, "db://orders/both");
  assert.deepEqual("ok" in two && two.ok.map((c) => c.uri), ["db://orders/a", "db://orders/b"]);
  for (const uri of ["docs://nope", "db://a/b/c/columns", "db:///orders/columns", "db://s/t?x/columns", "db://public/secret/columns"]) {
    const got = readResource(plugin, uri);
    assert.ok("err" in got && got.err.tag === "not-found", `${uri}: ${JSON.stringify(got)}`);
  }
});

test("a plugin without prompts or resources lists none and authors nothing", () => {
  const bare = definePlugin({ tools: [] });
  assert.deepEqual([bare.prompts.list(), bare.resources.list(), bare.resources.templates(), bare.authoring.kinds()], [[], [], [], []]);
  assert.deepEqual(getPrompt(bare, "x"), { err: { tag: "unknown-tool", val: "x" } });
  assert.deepEqual(readResource(bare, "docs://x"), { err: { tag: "not-found", val: "no resource at docs://x" } });
  assert.throws(() => bare.authoring.current(testCtx(), "plan", 1), (e: { payload: { tag: string } }) => e.payload.tag === "invalid-arguments");
  assert.throws(() => bare.authoring.validate(testCtx(), "plan", "{}", "{}"), (e: { payload: Array<{ path: string; message: string }> }) =>
    e.payload[0].path === "" && e.payload[0].message.includes('"plan"'));
  assert.throws(() => bare.authoring.diff(testCtx(), "plan", "{}", "{}"), (e: { payload: { tag: string } }) => e.payload.tag === "invalid-arguments");
});

test("what cannot be described is refused where it is defined", () => {
  const read = () => "";
  const cases: Array<[() => unknown, RegExp]> = [
    [() => definePrompt({ name: "bad name", description: "d", permission: "d:r", get: read }), /1-64/],
    [() => definePrompt({ name: "p", description: "d", permission: "d", get: read }), /not resource:action/],
    [() => defineResource({ uri: "runbook", name: "r", description: "d", permission: "d:r", read }), /has no scheme/],
    [() => defineTemplate({ uriTemplate: "x://{a}{b}", name: "t", description: "d", permission: "d:r", read }), /level 1/],
    [() => defineTemplate({ uriTemplate: "x://{a}", name: "t", description: "d", permission: "d:r", completes: { b: "k" }, read }), /not one of its variables/],
    [() => definePlugin({ tools: [], prompts: [hello, hello] }), /two prompts are named "hello"/],
    [() => definePlugin({ tools: [], resources: [runbook, defineTemplate({ uriTemplate: "x://{a}", name: "runbook", description: "d", permission: "d:r", read })] }), /two resources or templates are named "runbook"/],
  ];
  for (const [define, message] of cases) assert.throws(define, message);
});
