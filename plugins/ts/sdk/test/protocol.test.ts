import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { definePlugin, defineTool, isToolError, protocol, ProtocolError, s } from "../src/index.ts";
import { callTool, fakeHost } from "../src/testing.ts";

beforeEach(() => fakeHost.reset());

/** This plugin's "job not found" (an application-defined code). */
const NO_SUCH_JOB = -30001;

const jobStatus = defineTool({
  name: "job_status",
  description: "Answers a job's status.",
  permission: "jobs:read",
  readOnly: true,
  input: s.object({ job: s.string() }),
  run: ({ job }) => {
    if (job !== "42") protocol.raise(NO_SUCH_JOB, `no such job: ${job}`);
    return { status: "done" };
  },
});

const plugin = definePlugin({ tools: [jobStatus] });

function raised(run: () => unknown): ProtocolError {
  try {
    run();
  } catch (e) {
    assert.ok(e instanceof ProtocolError, `expected a ProtocolError, got ${String(e)}`);
    return e;
  }
  assert.fail("expected a raise");
}

test("outside a component a raise throws the code and message given", () => {
  const e = raised(() => protocol.raise(NO_SUCH_JOB, "no such job: 42"));
  assert.deepEqual([e.code, e.message, e.name], [NO_SUCH_JOB, "no such job: 42", "ProtocolError"]);
  assert.ok(e instanceof Error);
  assert.equal(isToolError(e), false);
});

test("invalid params is JSON-RPC's code", () => {
  assert.equal(protocol.INVALID_PARAMS, -32602);
  assert.equal(raised(() => protocol.raise(protocol.INVALID_PARAMS, "job must be digits")).code, -32602);
});

test("a raise passes through a call as it is, not as a tool error, and is not logged as a bug", () => {
  assert.deepEqual(callTool(plugin, "job_status", { job: "42" }), { ok: { status: "done" }, text: undefined });
  const e = raised(() => callTool(plugin, "job_status", { job: "7" }));
  assert.deepEqual([e.code, e.message], [NO_SUCH_JOB, "no such job: 7"]);
  assert.deepEqual(fakeHost.logs, []);
});

test("the host checks the code's rules, not the SDK", () => {
  for (const code of [-32603, -31001, -(2 ** 31), 2 ** 31 - 1]) assert.equal(raised(() => protocol.raise(code, "the host decides")).code, code);
});

test("arguments that do not fit the WIT signature are refused", () => {
  const raise = protocol.raise as (code: unknown, message: unknown) => never;
  assert.throws(() => raise("-30001", "m"), TypeError);
  assert.throws(() => raise(-30001.5, "m"), RangeError);
  assert.throws(() => raise(2 ** 31, "m"), RangeError);
  assert.throws(() => raise(-(2 ** 31) - 1, "m"), RangeError);
  assert.throws(() => raise(Number.NaN, "m"), RangeError);
  assert.throws(() => raise(-30001, undefined), TypeError);
});
