// Names to ids, through the host's `resolver` import.
//
// A tool argument that names a thing is an `s.nameOrId()`; the tool asks
// `resolve` for it and gets the thing's id and name, or, when the host
// cannot tell which thing was meant, a `failed` ToolError to let propagate:
//
//     const project = resolve({ kind: "project", field: "project", value: args.project });
//
// The host has then already recorded the question (reason, candidates) and
// answers the call with it whatever the tool returns, refusing the call's
// side-effecting backend requests: throwing is the whole protocol, as `?`
// is in the Rust SDK. The kind must be one the plugin's entities export
// lists and the tool's manifest entry declares in `resolves = [...]`.

import { failed } from "./errors.ts";
import * as host from "./host.ts";
import type { NameOrId } from "./schema.ts";

/** One argument to resolve. */
export interface Query {
  /** A kind the tool's manifest entry declares in `resolves`. */
  kind: string;
  /** The tool argument being resolved; the question names it. */
  field: string;
  /**
   * What the caller passed, or undefined when it omitted the argument
   * (a `missing-required` question listing everything in scope, unless
   * `within` names exactly one id, which is then the answer).
   */
  value?: NameOrId;
  /**
   * Entities this call already chose, by kind: every candidate with a
   * parent of that kind must have that parent. An undefined id pins
   * nothing (an optional argument that was not given).
   */
  pins?: Record<string, number | undefined>;
  /** The plugin's own narrowing: only these ids would advance the call. */
  within?: number[];
  /**
   * The one-line question; `{names}` becomes the candidates' labels, which
   * the host fills in. Default: the host's "Which {kind}? Available: {names}."
   */
  question?: string;
}

/** What a query resolved to: the id, and the name as the caller's tenant sees it. */
export interface Resolved {
  id: number;
  name: string;
}

/** The WIT query for `q`: the value as text (an id's digits), pins as a list. */
export function toHostQuery(q: Query): host.HostQuery {
  const pins = Object.entries(q.pins ?? {})
    .filter((p): p is [string, number] => p[1] !== undefined)
    .map(([kind, id]) => ({ kind, id }));
  return {
    kind: q.kind,
    field: q.field,
    value: q.value === undefined ? undefined : String(q.value),
    pins,
    within: q.within,
    question: q.question,
  };
}

/**
 * The entity `q` names, or throws `failed("needs clarification: <the
 * question>")`: let it propagate and do nothing else (research failure 8:
 * a clarification left uncaught as it comes from the import would trap).
 */
export function resolve(q: Query): Resolved {
  const a = host.resolve(toHostQuery(q));
  if (a.ok) return a.value;
  throw failed(`needs clarification: ${a.error.askUser}`);
}
