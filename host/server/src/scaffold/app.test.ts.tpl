// The tools, run under Node with the host faked: `./build.sh` runs these first.

import assert from "node:assert/strict";
import { test } from "node:test";

import { callTool } from "@toolhost/sdk/testing";

import * as app from "./app.ts";

const plugin = { tool: app.tool, entities: app.entities };

test("greet greets by the trimmed name and refuses a blank one", () => {
  assert.deepEqual(callTool(plugin, "greet", { name: " Ada " }).ok, { message: "Hello, Ada!" });
  assert.equal(callTool(plugin, "greet", { name: "  " }).err?.tag, "invalid-arguments");
});
