import assert from "node:assert/strict";
import { test } from "node:test";

import { s } from "../src/index.ts";

const args = s.object({
  name: s.string({ description: "Who to greet." }),
  count: s.optional(s.integer({ minimum: 1 }), 1),
  loud: s.optional(s.boolean()),
  project: s.optional(s.nameOrId()),
  tags: s.optional(s.array(s.string())),
});

/** The message of the invalid-arguments error `run` throws. */
function invalid(run: () => unknown): string {
  try {
    run();
  } catch (e) {
    const p = (e as { payload: { tag: string; val: string } }).payload;
    assert.equal(p.tag, "invalid-arguments");
    return p.val;
  }
  assert.fail("expected invalid-arguments");
}

test("an object schema lists its properties, the required ones, and refuses others", () => {
  assert.deepEqual(args.json.required, ["name"]);
  assert.equal(args.json.additionalProperties, false);
  const props = args.json.properties as Record<string, Record<string, unknown>>;
  assert.deepEqual(props.name, { type: "string", description: "Who to greet." });
  assert.deepEqual(props.count, { type: "integer", minimum: 1, default: 1 });
  assert.deepEqual(props.project, { anyOf: [{ type: "string" }, { type: "integer" }] });
});

test("checked arguments are typed, defaults filled and absent optionals left out", () => {
  assert.deepEqual(args.check({ name: "Ada" }, ""), { name: "Ada", count: 1 });
  assert.deepEqual(args.check({ name: "Ada", loud: null, project: 12 }, ""), { name: "Ada", count: 1, project: 12 });
  assert.deepEqual(args.check({ name: "Ada", project: "payments", tags: ["a"] }, "").project, "payments");
});

test("a wrong type, a missing field and an unknown field each name the field", () => {
  assert.equal(invalid(() => args.check({ name: 3 }, "")), 'field "name": expected a string, got an integer');
  assert.equal(invalid(() => args.check({}, "")), 'missing field "name"');
  assert.match(invalid(() => args.check({ name: "A", nmae: "A" }, "")), /^unknown field "nmae", expected one of: name, count/);
  assert.equal(invalid(() => args.check({ name: "A", tags: ["a", 1] }, "")), 'field "tags[1]": expected a string, got an integer');
  assert.equal(invalid(() => args.check({ name: "A", project: 1.5 }, "")), 'field "project": expected a name or an integer id, got a number');
  assert.equal(invalid(() => args.check({ name: "A", count: 0 }, "")), 'field "count": 0 is out of range');
  assert.equal(invalid(() => args.check([], "")), 'field "arguments": expected an object, got an array');
});

test("nested objects name fields by their path", () => {
  const nested = s.object({ filter: s.object({ tag: s.string({ enum: ["smoke", "full"] }) }) });
  assert.equal(invalid(() => nested.check({ filter: {} }, "")), 'missing field "filter.tag"');
  assert.equal(invalid(() => nested.check({ filter: { tag: "x" } }, "")), 'field "filter.tag": expected one of smoke, full');
});
