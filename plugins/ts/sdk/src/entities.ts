// The `entities` export: the things a plugin's tools take names of, listed
// so the host's resolver can narrow over them.
//
// The host calls `snapshot` once per conversation, tenant and kind (for
// the kinds a tool's manifest entry declares in `resolves`), in a sandbox
// that allows only GET and HEAD backend requests, and drops every entity
// whose `tenant` is not the caller's: report the tenant the backend said,
// never `ctx.tenant` in its place.

import { invalidArguments } from "./errors.ts";
import type { Ctx } from "./tool.ts";

/** A parent link: this entity belongs to `kind` `id` (a scenario to its project). */
export interface Parent {
  kind: string;
  id: number;
}

/** One thing the export lists. */
export interface Entity {
  /** Its id, as the backend mints it. */
  id: number;
  name: string;
  /** The tenant the backend says it belongs to. */
  tenant: string;
  /** Its ancestors; none: instance-shared. */
  parents?: Parent[];
  /** What tells namesakes apart in labels: a parent's name, an email, a code. */
  detail?: string;
}

/** The kinds a plugin lists and the function that lists one of them. */
export interface Entities {
  readonly kinds: readonly string[];
  snapshot(kind: string, ctx: Ctx): Entity[];
}

/**
 * `kinds` (deterministic, no duplicates), each listed by `snapshot`. The
 * SDK answers any other kind with `invalid-arguments` before calling it.
 */
export function defineEntities(e: Entities): Entities {
  e.kinds.forEach((k, i) => {
    if (e.kinds.indexOf(k) !== i) throw new Error(`the entity kind "${k}" is listed twice`);
  });
  return e;
}

/** No kinds: what a plugin whose tools take no names exports. */
export const noEntities: Entities = { kinds: [], snapshot: () => [] };

/** Every entity of `kind`, or `invalid-arguments` for a kind not listed. */
export function snapshotOf(e: Entities, kind: string, ctx: Ctx): Entity[] {
  if (!e.kinds.includes(kind)) {
    throw invalidArguments(`this plugin lists no entities of kind "${kind}" (it lists ${JSON.stringify(e.kinds)})`);
  }
  return e.snapshot(kind, ctx);
}
