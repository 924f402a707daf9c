import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { content, defineEntities, definePlugin, defineTool, failed, notFound, s, withContent, withText } from "../src/index.ts";
import { callTool, fakeHost, snapshot, testCtx } from "../src/testing.ts";

const echo = defineTool({
  name: "echo",
  description: "Echoes a word.",
  permission: "words:read",
  readOnly: true,
  input: s.object({ word: s.string() }),
  output: s.object({ echo: s.string() }),
  run: ({ word }) => {
    if (word === "missing") throw notFound("no such word");
    if (word === "bug") throw new TypeError("x is undefined");
    return withText({ echo: word }, word);
  },
});

const erase = defineTool({
  name: "erase",
  description: "Erases a word.",
  permission: "dataset:lineage:write",
  destructive: true,
  input: s.object({ word: s.string() }),
  run: () => ({ erased: true }),
  plan: ({ word }) => ({ summary: `erase ${word}`, targets: [{ kind: "word", id: word, name: word }] }),
});

const words = defineEntities({
  kinds: ["word"],
  snapshot: (_kind, ctx) => [{ id: 1, name: "hello", tenant: ctx.tenant }],
});

const plugin = definePlugin({ tools: [echo, erase], entities: words });

beforeEach(() => fakeHost.reset());

test("describe carries schemas, the split permission and conservative defaults", () => {
  const [e, r] = plugin.tool.describe();
  assert.deepEqual(e.permission, { resource: "words", action: "read" });
  assert.equal(e.mutating, false);
  assert.deepEqual(e.annotations, { readOnly: true, destructive: undefined, idempotent: undefined, openWorld: undefined });
  assert.equal(JSON.parse(e.inputSchema).required[0], "word");
  assert.equal(JSON.parse(e.outputSchema as string).properties.echo.type, "string");
  assert.deepEqual(r.permission, { resource: "dataset:lineage", action: "write" });
  assert.equal(r.mutating, true);
  assert.equal(r.risk, "high");
  assert.equal(r.outputSchema, undefined);
});

test("a permission that is not resource:action refuses the plugin at describe", () => {
  const bad = defineTool({ name: "x", description: "x", permission: "words", input: s.object({}), run: () => ({}) });
  assert.throws(() => definePlugin({ tools: [bad] }).tool.describe(), /permission "words" is not resource:action/);
  assert.throws(() => definePlugin({ tools: [echo, echo] }).tool.describe(), /two tools are named "echo"/);
});

test("a call answers the structured JSON and its text, or the tool's error", () => {
  assert.deepEqual(callTool(plugin, "echo", { word: "hi" }), { ok: { echo: "hi" }, text: "hi" });
  assert.deepEqual(callTool(plugin, "echo", { word: "missing" }), { err: { tag: "not-found", val: "no such word" } });
  assert.deepEqual(callTool(plugin, "nope", {}), { err: { tag: "unknown-tool", val: "nope" } });
  assert.deepEqual(callTool(plugin, "echo", { word: 1 }), {
    err: { tag: "invalid-arguments", val: 'field "word": expected a string, got an integer' },
  });
});

test("content blocks travel after the text, in order, as the WIT variant", () => {
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
  const chart = defineTool({
    name: "chart",
    description: "A chart.",
    permission: "charts:read",
    input: s.object({}),
    run: () =>
      withContent({ weeks: 4 }, [content.image("image/png", png), content.link({ uri: "test://c", name: "c", size: 3n })], "The chart."),
  });
  assert.deepEqual(callTool(definePlugin({ tools: [chart] }), "chart", {}), {
    ok: { weeks: 4 },
    text: "The chart.",
    content: [
      { tag: "image", val: { mimeType: "image/png", data: png } },
      { tag: "resource-link", val: { uri: "test://c", name: "c", size: 3n } },
    ],
  });
});

test("arguments that are not JSON are invalid-arguments", () => {
  assert.throws(() => plugin.tool.call(testCtx(), "echo", "{"), (e: { payload: { tag: string } }) => e.payload.tag === "invalid-arguments");
});

test("a thrown error that is not a tool error is logged and rethrown, to trap", () => {
  assert.throws(() => callTool(plugin, "echo", { word: "bug" }), TypeError);
  assert.deepEqual(fakeHost.logs, [["error", "call: uncaught TypeError: x is undefined"]]);
});

test("a tool error crosses with an own payload, as componentize expects", () => {
  const e = failed("backend down");
  assert.ok(Object.hasOwn(e, "payload"));
  assert.deepEqual(e.payload, { tag: "failed", val: "backend down" });
  assert.equal(e.message, "failed: backend down");
});

test("the default plan checks the arguments; a custom one names targets", () => {
  assert.deepEqual(plugin.tool.plan(testCtx(), "echo", '{"word":"a"}'), { targets: [], risk: "low", summary: "call echo" });
  assert.throws(() => plugin.tool.plan(testCtx(), "echo", "{}"), (e: { payload: { val: string } }) => e.payload.val === 'missing field "word"');
  assert.deepEqual(plugin.tool.plan(testCtx(), "erase", '{"word":"a"}'), {
    targets: [{ kind: "word", id: "a", name: "a", tags: [] }],
    risk: "high",
    summary: "erase a",
  });
});

test("entities list their kinds and refuse a kind they do not list", () => {
  assert.deepEqual(plugin.entities.kinds(), ["word"]);
  assert.deepEqual(snapshot(plugin, "word"), [{ id: 1, name: "hello", tenant: "demo", parents: [], detail: undefined }]);
  assert.throws(() => snapshot(plugin, "pipeline"), (e: { payload: { tag: string; val: string } }) =>
    e.payload.tag === "invalid-arguments" && e.payload.val.includes('"pipeline"'));
  assert.deepEqual(definePlugin({ tools: [] }).entities.kinds(), []);
  assert.throws(() => defineEntities({ kinds: ["a", "a"], snapshot: () => [] }), /listed twice/);
});
