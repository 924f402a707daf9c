import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { backend, checkpoint, client, ClientError, input, log, progress, resolve, resources, Response } from "../src/index.ts";
import { fit } from "../src/checkpoint.ts";
import { toHostQuery } from "../src/resolve.ts";
import { decode, encode } from "../src/utf8.ts";
import { fakeHost } from "../src/testing.ts";

beforeEach(() => fakeHost.reset());

function tagOf(run: () => unknown): { tag: string; val: string } {
  try {
    run();
  } catch (e) {
    return (e as { payload: { tag: string; val: string } }).payload;
  }
  assert.fail("expected a tool error");
}

test("a query carries the value as text, the given pins, within and the question", () => {
  const q = toHostQuery({ kind: "environment", field: "env", value: 12, pins: { project: 1, team: undefined }, within: [12, 13], question: "Which? {names}" });
  assert.deepEqual(q, { kind: "environment", field: "env", value: "12", pins: [{ kind: "project", id: 1 }], within: [12, 13], question: "Which? {names}" });
  assert.deepEqual(toHostQuery({ kind: "project", field: "project" }).value, undefined);
});

test("a resolved name answers the id and name; a question becomes needs clarification", () => {
  fakeHost.resolveOver({ project: [{ id: 1, name: "payments" }, { id: 2, name: "payments" }, { id: 3, name: "web" }] });
  assert.deepEqual(resolve({ kind: "project", field: "project", value: "web" }), { id: 3, name: "web" });
  assert.deepEqual(resolve({ kind: "project", field: "project", value: 1 }), { id: 1, name: "payments" });
  assert.deepEqual(tagOf(() => resolve({ kind: "project", field: "project", value: "payments" })), {
    tag: "failed",
    val: "needs clarification: Which project? payments · #1, payments · #2.",
  });
});

test("outside a component the resolver and checkpoints fail instead of answering", () => {
  assert.throws(() => resolve({ kind: "project", field: "project" }), /only available inside the toolhost/);
  assert.throws(() => checkpoint.open("s", "t", "e"), /only available inside the toolhost/);
});

test("a 2xx answer parses as JSON; 404 is not-found and others failed, quoting the body", () => {
  fakeHost.backend = (r) => (r.path === "/ok" ? { status: 200, body: [{ id: 7 }] } : r.path === "/gone" ? { status: 404, body: "no such\nexecution" } : { status: 500 });
  assert.deepEqual(backend.get("tb", "/ok").ok().json(), [{ id: 7 }]);
  assert.deepEqual(fakeHost.requests[0], { backend: "tb", method: "get", path: "/ok", headers: [["accept", "application/json"]], body: undefined });
  assert.deepEqual(tagOf(() => backend.get("tb", "/gone").ok()), { tag: "not-found", val: "GET /gone on backend tb answered 404: no such execution" });
  assert.deepEqual(tagOf(() => backend.get("tb", "/x").ok()), { tag: "failed", val: "GET /x on backend tb answered 500" });
  const long = tagOf(() => new Response(502, "x".repeat(5000)).ok()).val;
  assert.ok(long.length < 300 && long.endsWith("…"), long);
  assert.match(tagOf(() => new Response(200, "<html>").json()).val, /^request answered something that is not JSON/);
});

test("a post sends JSON with its content type; transport errors say which backend and why", () => {
  fakeHost.backend = () => ({ status: 201, body: "{}" });
  backend.post("tb", "/api/runs", { a: "é" });
  assert.equal(fakeHost.requests[0].body, '{"a":"é"}');
  assert.deepEqual(fakeHost.requests[0].headers[1], ["content-type", "application/json"]);
  fakeHost.backend = () => ({ error: { tag: "timeout" } });
  assert.deepEqual(tagOf(() => backend.get("tb", "/x")), { tag: "failed", val: "backend tb did not answer in time" });
  fakeHost.backend = () => ({ error: { tag: "not-declared", val: "tb" } });
  assert.match(tagOf(() => backend.get("tb", "/x")).val, /not declared/);
  fakeHost.reset();
  assert.match(tagOf(() => backend.get("tb", "/x")).val, /unavailable/);
});

test("escape keeps unreserved characters and encodes the rest as UTF-8", () => {
  assert.equal(backend.escape("ex-1_a.b~"), "ex-1_a.b~");
  assert.equal(backend.escape("../a b,c/é"), "..%2Fa%20b%2Cc%2F%C3%A9");
});

test("UTF-8 round-trips and malformed bytes become replacement characters", () => {
  for (const t of ["", "plain", "é€𝄞", "名前"]) assert.equal(decode(encode(t)), t);
  assert.deepEqual([...encode("é")], [0xc3, 0xa9]);
  assert.equal(decode(Uint8Array.from([0x61, 0xff, 0xc3])), "a\ufffd\ufffd");
  assert.equal(decode(Uint8Array.from([0xc0, 0x80])), "\ufffd\ufffd");
});

test("a checkpoint opens through the host; a refusal names the subject; long text is cut", () => {
  fakeHost.checkpoint = (subject) => ({ id: "chk_1", version: 1, state: "waiting", subject });
  assert.equal(checkpoint.open("execution:ex-3", "t", "e").id, "chk_1");
  fakeHost.checkpoint = () => {
    throw Object.assign(new Error("refused"), { payload: "refused while planning" });
  };
  assert.deepEqual(tagOf(() => checkpoint.open("execution:ex-3", "t", "e")), {
    tag: "failed",
    val: 'checkpoint "execution:ex-3" could not be opened: refused while planning',
  });
  assert.equal(fit("short", 300), "short");
  const cut = fit("é".repeat(400), 300);
  assert.ok(encode(cut).length <= 300 && cut.endsWith("…"));
});

test("log lines and progress reports reach the host", () => {
  log.info("ready");
  log("warn", "careful");
  progress.report(1, 3, "one of three");
  assert.deepEqual(fakeHost.logs, [["info", "ready"], ["warn", "careful"]]);
  assert.deepEqual(fakeHost.progress, [[1, 3, "one of three"]]);
});

const NAME = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };

test("one ask sends every request and answers in order, absent options left out", () => {
  fakeHost.supports = { elicitation: true, sampling: true, roots: true };
  fakeHost.answers = {
    name: { action: "accept", content: { name: "Ada" } },
    greeting: { role: "assistant", text: "Hi", model: "m-1", stopReason: null },
    roots: [{ uri: "file:///src", name: null }, { uri: "file:///doc", name: "doc" }],
  };
  const got = client.ask([input.elicit("name", "Who?", NAME), input.sample("greeting", client.prompt("Greet", 50)), input.roots("roots")]);
  assert.deepEqual(got, [
    { action: "accept", content: { name: "Ada" } },
    { role: "assistant", text: "Hi", model: "m-1" },
    [{ uri: "file:///src" }, { uri: "file:///doc", name: "doc" }],
  ]);
  assert.deepEqual(fakeHost.asked[0], [
    { key: "name", request: { tag: "elicit", val: { message: "Who?", requestedSchema: JSON.stringify(NAME) } } },
    { key: "greeting", request: { tag: "sample", val: { messages: [{ role: "user", text: "Greet" }], maxTokens: 50 } } },
    { key: "roots", request: { tag: "list-roots" } },
  ]);
});

test("the shortcuts answer one request each; what the client declares is read through", () => {
  fakeHost.supports = { elicitation: true, sampling: true, roots: true };
  fakeHost.answers = { n: { action: "decline" }, s: { role: "assistant", text: "Paris", model: "m", stopReason: "endTurn" }, r: [] };
  assert.deepEqual(client.elicit("n", "Who?", NAME), { action: "decline" });
  assert.equal(client.sample("s", client.prompt("Capital?", 10)).stopReason, "endTurn");
  assert.deepEqual(client.roots("r"), []);
  assert.deepEqual(client.supports(), { elicitation: true, sampling: true, roots: true });
});

test("outside a component nothing can be asked; refusals and timeouts are ClientErrors", () => {
  assert.deepEqual(client.supports(), { elicitation: false, sampling: false, roots: false });
  const unsupported = tagOf(() => client.roots("r"));
  assert.deepEqual(unsupported, { tag: "failed", val: "cannot ask: the client did not declare the roots capability" });
  fakeHost.supports = { elicitation: true, sampling: false, roots: false };
  fakeHost.answers = { n: { error: { tag: "refused", val: "asked after acting" } }, t: { error: { tag: "timeout" } } };
  assert.throws(() => client.elicit("n", "Who?", NAME), (e: unknown) => e instanceof ClientError && e.kind === "refused" && e.reason === "asked after acting" && e.detail === "the host refused the request: asked after acting");
  assert.throws(() => client.elicit("t", "Who?", NAME), (e: unknown) => e instanceof ClientError && e.kind === "timeout" && e.detail === "the client did not answer in time");
});

test("a resource update is told once; a refusal is failed with the host's reason", () => {
  resources.updated("db://orders");
  resources.updated("db://orders");
  assert.deepEqual(fakeHost.updated, ["db://orders"]);
  fakeHost.refuseUpdate = (uri) => `"${uri}" is not a resource this plugin exports`;
  assert.deepEqual(tagOf(() => resources.updated("db://x")), {
    tag: "failed",
    val: 'the update of resource "db://x" was refused: "db://x" is not a resource this plugin exports',
  });
});
