// The fixture's tools under Node with the host faked: within one process
// (one instance), `recall_ts` finds what `remember_ts` left. In the host,
// where every call has an instance of its own, it must not
// (host/runtime/tests/freshness.rs).

import assert from "node:assert/strict";
import { test } from "node:test";

import { callTool } from "@toolhost/sdk/testing";

import * as app from "./app.ts";

const plugin = { tool: app.tool, entities: app.entities, prompts: app.prompts, resources: app.resources };

test("one instance recalls what it remembered", () => {
  assert.deepEqual(callTool(plugin, "recall_ts", {}).ok, { kept: [], leftBehind: 0 });
  assert.deepEqual(callTool(plugin, "remember_ts", { secret: "s3cret" }).ok, { kept: ["s3cret"] });
  assert.deepEqual(callTool(plugin, "recall_ts", {}).ok, { kept: ["s3cret"], leftBehind: 64 });
  assert.deepEqual(callTool(plugin, "remember_ts", { secret: "" }).err, { tag: "invalid-arguments", val: "secret must not be empty" });
});
