// `defineAuthoring`: one kind of object a plugin authors in its domain (a
// project's test plan…), through the WIT `authoring` export.
//
// The host owns authoring: sessions, proposals, their diffs, reviews and
// promotion. A plugin says what its objects mean: a subject's current
// state, whether a proposal is valid (the normalized proposal, or every
// problem), and what promoting it would change. Promotion is a call of the
// kind's `promotedBy` tool with the normalized proposal as its arguments:
// the SDK checks every normalized proposal against that tool's input
// schema, and hands `diff` the checked arguments, so the two cannot drift
// apart (the Rust SDK gets the same from its types).
//
//     const noteBooks = defineAuthoring({
//       name: "note_book",
//       description: "A book's notes: propose {lines}; promoting writes the new ones.",
//       subjectKind: "book",                    // an entity kind the plugin lists
//       promotedBy: "write_notes",              // a tool of the plugin; its input is the normalized proposal
//       current: (book) => {
//         const notes = backend.get("nb", `/books/${book}`).ok().json<Notes>();
//         return { version: String(notes.lines.length), body: notes };
//       },
//       validate: (notes, proposal) => {
//         const lines = (proposal as { lines?: unknown }).lines;
//         if (!Array.isArray(lines)) throw new Problems([{ path: pointer("lines"), message: "expected a list" }]);
//         return { book: notes.book, lines };
//       },
//       diff: (notes, { lines }) => lines.filter((l) => !notes.lines.includes(l)).map((l) => change.added(l, l)),
//     });
//     const plugin = definePlugin({ tools: [writeNotes], entities: books, authoring: [noteBooks] });
//
// The state (`current`'s body) travels as JSON: the host keeps it and hands
// it back to `validate` and `diff`, so keep it plain data. The proposal is
// whatever JSON the author sent: reporting each thing wrong with it, at its
// JSON pointer, is `validate`'s work. The host runs each function in a
// fresh sandbox: `current` with GET and HEAD backend requests only,
// `validate` and `diff` with no backend at all (keep them pure). It refuses
// a version that is not 1–256 bytes, and bounds how many problems and
// changes it accepts (1000 each).

import { invalidArguments, isToolError } from "./errors.ts";
import type { Ctx, Tool } from "./tool.ts";

/** A subject's current state: a `version` that changes whenever the state
 * does (opaque, 1–256 bytes; the host compares it to tell whether the
 * subject moved under a proposal) and the state itself. */
export interface Current<C> {
  version: string;
  body: C;
}

/** One reason a proposal is invalid: `path` is a JSON pointer into the
 * proposal (`/tests/3/name`, build it with `pointer`), empty for the whole
 * proposal; `message` one line a person can act on. */
export interface Problem {
  path: string;
  message: string;
}

/** What one entry of a diff does. */
export type ChangeOp = "added" | "changed" | "removed";

/** One entry of a structured diff: what `op` does to `item` (named as people
 * name it), with the item's JSON `before` (absent when added) and `after`
 * (absent when removed). Build it with `change`. */
export interface Change {
  op: ChangeOp;
  item: string;
  before?: unknown;
  after?: unknown;
}

/** Changes, by op; each side must be JSON. */
export const change = {
  added: (item: string, after: unknown): Change => ({ op: "added", item, after: plain(`"${item}" after`, after) }),
  changed: (item: string, before: unknown, after: unknown): Change => ({
    op: "changed",
    item,
    before: plain(`"${item}" before`, before),
    after: plain(`"${item}" after`, after),
  }),
  removed: (item: string, before: unknown): Change => ({ op: "removed", item, before: plain(`"${item}" before`, before) }),
};

/**
 * Thrown by `validate`: the proposal is invalid, for every reason given (at
 * least one: the host refuses an empty refusal). Its own `payload` is what
 * componentize lowers into the WIT list of problems. A `ToolError` thrown
 * there becomes one whole-proposal problem.
 */
export class Problems extends Error {
  readonly payload: Problem[];

  constructor(problems: readonly Problem[]) {
    if (problems.length === 0) throw new Error("Problems needs at least one problem");
    super(problems.map((p) => `${p.path || "/"}: ${p.message}`).join("; "));
    this.name = "Problems";
    this.payload = problems.map((p) => ({ path: p.path, message: p.message }));
  }
}

/** A problem of the proposal as a whole (the empty pointer). */
export function wholeProposal(message: string): Problem {
  return { path: "", message };
}

/** One JSON-pointer reference token (RFC 6901): `~` as `~0`, `/` as `~1`. */
export function escapePointer(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** The JSON pointer of `tokens`, each escaped: `pointer("tests", 3, "name")`
 * is `/tests/3/name`; no tokens, the whole proposal (empty). */
export function pointer(...tokens: Array<string | number>): string {
  return tokens.map((t) => `/${escapePointer(String(t))}`).join("");
}

/** What `defineAuthoring` takes: `C` the state, `N` the normalized proposal
 * (the promoting tool's arguments, `Infer<typeof its input>`). */
export interface AuthoringDefinition<C, N> {
  /** 1–64 of `[a-z0-9_]`, unique in the plugin (`test_plan`). */
  name: string;
  /** What it is and what a proposal looks like, for the model and the person. */
  description: string;
  /** The entity kind (one the plugin's entities list) a session's subject names. */
  subjectKind: string;
  /** The plugin's tool whose call, with the normalized proposal as its arguments, promotes it. */
  promotedBy: string;
  /** The state of `subject` (an entity id) for `ctx.tenant`. GET and HEAD only. */
  current(subject: number, ctx: Ctx): Current<C>;
  /** The normalized proposal, or throw `Problems`. Pure. */
  validate(current: C, proposal: unknown, ctx: Ctx): N;
  /** What promoting `normalized` would change. Pure. */
  diff(current: C, normalized: N, ctx: Ctx): Change[];
}

/** The WIT `authoring-kind`. */
export interface WitAuthoringKind {
  name: string;
  description: string;
  subjectKind: string;
  promotedBy: string;
}

/** The WIT `change`, its sides as JSON text. */
export interface WitChange {
  op: ChangeOp;
  item: string;
  before?: string;
  after?: string;
}

/** A defined kind, as `definePlugin` lists it: its answers on JSON text,
 * given the promoting tool (which `definePlugin` finds). */
export interface Authoring {
  readonly name: string;
  spec(): WitAuthoringKind;
  current(ctx: Ctx, subject: number): { version: string; body: string };
  validate(ctx: Ctx, current: string, proposal: string, promote: Tool): string;
  diff(ctx: Ctx, current: string, normalized: string, promote: Tool): WitChange[];
}

/** Kind and entity kind names: 1–64 of `[a-z0-9_]`, as the host requires. */
const KIND = /^[a-z0-9_]{1,64}$/;

/** Defines an authoring kind; a bad name, subject kind or promoting tool
 * name throws here (the build fails). */
export function defineAuthoring<C, N>(def: AuthoringDefinition<C, N>): Authoring {
  const where = `authoring kind "${def.name}"`;
  if (!KIND.test(def.name)) throw new Error(`${where}: a name is 1-64 of [a-z0-9_]`);
  if (!KIND.test(def.subjectKind)) throw new Error(`${where}: a subject kind is 1-64 of [a-z0-9_]`);
  if (def.promotedBy === "") throw new Error(`${where}: name the tool that promotes it (promotedBy)`);
  if (def.description === "") throw new Error(`${where}: give a description`);
  const normalizedBy = (promote: Tool, value: unknown) => promote.checkArguments(value) as N;
  return {
    name: def.name,
    spec: () => ({ name: def.name, description: def.description, subjectKind: def.subjectKind, promotedBy: def.promotedBy }),
    current: (ctx, subject) => {
      const c = def.current(subject, ctx);
      if (typeof c?.version !== "string") throw new Error(`${where}: current must answer {version: string, body}`);
      return { version: c.version, body: text(where, "the current state", c.body) };
    },
    validate: (ctx, current, proposal, promote) => {
      const state = parse(current, "the current state", (m) => new Problems([wholeProposal(m)])) as C;
      const value = parse(proposal, "the proposal", (m) => new Problems([wholeProposal(m)]));
      let normalized: N;
      try {
        normalized = def.validate(state, value, ctx);
      } catch (e) {
        if (isToolError(e)) throw new Problems([wholeProposal(e.payload.val)]);
        throw e;
      }
      if (typeof normalized !== "object" || normalized === null || Array.isArray(normalized)) {
        throw new Error(`${where}: validate must answer the promoting tool's arguments (an object)`);
      }
      try {
        return text(where, "the normalized proposal", normalizedBy(promote, plain("the normalized proposal", normalized)));
      } catch (e) {
        if (!isToolError(e)) throw e;
        throw new Error(`${where}: validate answered what "${def.promotedBy}" does not take: ${e.payload.val}`);
      }
    },
    diff: (ctx, current, normalized, promote) => {
      const state = parse(current, "the current state", invalidArguments) as C;
      const args = parse(normalized, "the normalized proposal", invalidArguments);
      const checked = guardArguments(() => normalizedBy(promote, args));
      const changes = def.diff(state, checked, ctx);
      if (!Array.isArray(changes)) throw new Error(`${where}: diff must answer a list of changes (change.added(…))`);
      return changes.map((c) => lowered(where, c));
    },
  };
}

/** `run()`, with the promoting tool's refusal of a normalized proposal the
 * host handed back as `invalid-arguments` saying so. */
function guardArguments<T>(run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (!isToolError(e)) throw e;
    throw invalidArguments(`the normalized proposal does not parse: ${e.payload.val}`);
  }
}

/** `text` as JSON, or the error `fail` makes of why not. */
function parse(text: string, what: string, fail: (message: string) => Error): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw fail(`${what} does not parse: ${(e as Error).message}`);
  }
}

/** A change as the WIT carries it: only the sides its op has, as JSON text. */
function lowered(where: string, c: Change): WitChange {
  if (c === null || typeof c !== "object" || !["added", "changed", "removed"].includes(c.op) || typeof c.item !== "string") {
    throw new Error(`${where}: diff answered ${JSON.stringify(c)}: build changes with change.added(…), changed, removed`);
  }
  return {
    op: c.op,
    item: c.item,
    before: c.op === "added" ? undefined : text(where, "a change", c.before ?? null),
    after: c.op === "removed" ? undefined : text(where, "a change", c.after ?? null),
  };
}

/** `value` as JSON text, or an Error (a plugin bug) naming `what`. */
function text(where: string, what: string, value: unknown): string {
  const json = JSON.stringify(value);
  if (json === undefined) throw new Error(`${where}: ${what} does not serialize to JSON`);
  return json;
}

/** `value` as plain JSON values (what JSON.stringify keeps), or an Error naming `what`. */
function plain(what: string, value: unknown): unknown {
  const json = JSON.stringify(value);
  if (json === undefined) throw new Error(`${what} is not JSON`);
  return JSON.parse(json);
}
