// A small schema builder: each schema is both the JSON Schema `describe`
// reports and the check that turns a call's parsed arguments into typed
// values, so the two never drift apart.
//
// Checks are strict, like the Rust SDK's serde: a wrong type, a missing
// required field and an unknown field are each `invalid-arguments` naming
// the field by its path (`project`, `filters.tags[2]`). The only coercion
// is filling an optional field's default.

import { invalidArguments } from "./errors.ts";

/** A JSON Schema (draft 2020-12) as a plain object. */
export type JsonSchema = Record<string, unknown>;

/** What every builder accepts. */
export interface Doc {
  /** Shown to the model and the person beside the field. */
  description?: string;
}

/**
 * One schema: its JSON Schema and the check of a value at `path`.
 * `T` is the checked value's type; `Infer<typeof schema>` names it.
 */
export interface Schema<T> {
  readonly json: JsonSchema;
  /** Whether an object may omit the field (set by `s.optional`). */
  readonly optional: boolean;
  check(value: unknown, path: string): T;
}

/** The type a schema checks into. */
export type Infer<S> = S extends Schema<infer T> ? T : never;

/** A name, or an id as an integer: what a caller passes for a thing. */
export type NameOrId = string | number;

type Shape = Record<string, Schema<unknown>>;
type OptionalKeys<S extends Shape> = {
  [K in keyof S]: S[K] extends { optional: true } ? K : never;
}[keyof S];
type RequiredKeys<S extends Shape> = Exclude<keyof S, OptionalKeys<S>>;
/** The object type a shape checks into: optional fields may be absent. */
export type ObjectOf<S extends Shape> = { [K in RequiredKeys<S>]: Infer<S[K]> } & {
  [K in OptionalKeys<S>]?: Infer<S[K]>;
};

function schema<T>(json: JsonSchema, check: (v: unknown, path: string) => T): Schema<T> {
  return { json, optional: false, check };
}

function doc(json: JsonSchema, d: Doc | undefined): JsonSchema {
  return d?.description === undefined ? json : { ...json, description: d.description };
}

/** `a string`, `an integer`…: what a value is, for error messages. */
export function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "number") return Number.isInteger(v) ? "an integer" : "a number";
  if (typeof v === "object") return "an object";
  return `a ${typeof v}`;
}

function wrong(path: string, expected: string, v: unknown): never {
  throw invalidArguments(`field "${path}": expected ${expected}, got ${kindOf(v)}`);
}

function string(d?: Doc & { minLength?: number; enum?: readonly string[] }): Schema<string> {
  const json = doc({ type: "string" }, d);
  if (d?.minLength !== undefined) json.minLength = d.minLength;
  if (d?.enum !== undefined) json.enum = [...d.enum];
  return schema(json, (v, path) => {
    if (typeof v !== "string") wrong(path, "a string", v);
    if (d?.minLength !== undefined && [...v].length < d.minLength) {
      throw invalidArguments(`field "${path}": at least ${d.minLength} characters`);
    }
    if (d?.enum !== undefined && !d.enum.includes(v)) {
      throw invalidArguments(`field "${path}": expected one of ${d.enum.join(", ")}`);
    }
    return v;
  });
}

function integer(d?: Doc & { minimum?: number; maximum?: number }): Schema<number> {
  const json = doc({ type: "integer" }, d);
  if (d?.minimum !== undefined) json.minimum = d.minimum;
  if (d?.maximum !== undefined) json.maximum = d.maximum;
  return schema(json, (v, path) => {
    if (typeof v !== "number" || !Number.isSafeInteger(v)) wrong(path, "an integer", v);
    if ((d?.minimum !== undefined && v < d.minimum) || (d?.maximum !== undefined && v > d.maximum)) {
      throw invalidArguments(`field "${path}": ${v} is out of range`);
    }
    return v;
  });
}

function number(d?: Doc): Schema<number> {
  return schema(doc({ type: "number" }, d), (v, path) => {
    if (typeof v !== "number" || !Number.isFinite(v)) wrong(path, "a number", v);
    return v;
  });
}

function boolean(d?: Doc): Schema<boolean> {
  return schema(doc({ type: "boolean" }, d), (v, path) => {
    if (typeof v !== "boolean") wrong(path, "a boolean", v);
    return v;
  });
}

function array<T>(item: Schema<T>, d?: Doc): Schema<T[]> {
  return schema(doc({ type: "array", items: item.json }, d), (v, path) => {
    if (!Array.isArray(v)) wrong(path, "an array", v);
    return v.map((x, i) => item.check(x, `${path}[${i}]`));
  });
}

/**
 * An object with exactly the fields of `shape` (unknown fields are refused,
 * as `#[serde(deny_unknown_fields)]` does); fields not wrapped in
 * `s.optional` are required.
 */
function object<S extends Shape>(shape: S, d?: Doc): Schema<ObjectOf<S>> {
  const keys = Object.keys(shape);
  const required = keys.filter((k) => !shape[k].optional);
  const properties = Object.fromEntries(keys.map((k) => [k, shape[k].json]));
  const json = doc({ type: "object", properties, additionalProperties: false }, d);
  if (required.length > 0) json.required = required;
  return schema(json, (v, path) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) wrong(path || "arguments", "an object", v);
    const at = (k: string) => (path ? `${path}.${k}` : k);
    const given = v as Record<string, unknown>;
    for (const k of Object.keys(given)) {
      if (!Object.hasOwn(shape, k)) {
        throw invalidArguments(`unknown field "${at(k)}", expected one of: ${keys.join(", ")}`);
      }
    }
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      if (given[k] === undefined && !shape[k].optional) throw invalidArguments(`missing field "${at(k)}"`);
      const checked = shape[k].check(given[k], at(k));
      if (checked !== undefined) out[k] = checked;
    }
    return out as ObjectOf<S>;
  });
}

/**
 * The field may be absent (or `null`, which JSON clients send for "none");
 * it is then `fallback` when given, else absent.
 */
function optional<T>(inner: Schema<T>): Schema<T | undefined> & { optional: true };
function optional<T>(inner: Schema<T>, fallback: T): Schema<T> & { optional: true };
function optional<T>(inner: Schema<T>, fallback?: T): Schema<T | undefined> & { optional: true } {
  const json = fallback === undefined ? inner.json : { ...inner.json, default: fallback };
  return {
    json,
    optional: true,
    check: (v, path) => (v === undefined || v === null ? fallback : inner.check(v, path)),
  };
}

/**
 * A thing named by the caller: a name (string) or its id (integer), as the
 * Rust SDK's `NameOrId` (`anyOf [string, integer]`). Pass it to `resolve`;
 * whether digits are an id is the host resolver's decision.
 */
function nameOrId(d?: Doc): Schema<NameOrId> {
  const json = doc({ anyOf: [{ type: "string" }, { type: "integer" }] }, d);
  return schema(json, (v, path) => {
    if (typeof v === "string" || (typeof v === "number" && Number.isSafeInteger(v))) return v;
    return wrong(path, "a name or an integer id", v);
  });
}

/** The builders: `s.object({name: s.string({description: "Who"})})`. */
export const s = { string, integer, number, boolean, array, object, optional, nameOrId };
