// Fakes of the host, for unit tests of a plugin under Node (`node --test
// --import @toolhost/sdk/register`): the register hook maps every
// `toolhost:plugin/*` import to `testing/host-stub.ts`, which answers from
// `fakeHost` below. Without a fake set, the imports fail as the Rust SDK's
// do outside wasm: the resolver and checkpoints throw, backends are
// unavailable, the client declares nothing (every ask is `unsupported`),
// and log lines and resource updates are only recorded. `protocol.raise`
// always throws a `ProtocolError` (there is nothing to fake).
//
// `authoringSession` runs an authoring kind's whole session as the host
// runs one (current, propose, promote), with the host's grants.

import type { Change, Problem } from "./authoring.ts";
import type { Entity } from "./entities.ts";
import type { Plugin } from "./plugin.ts";
import type { PromptMessage } from "./prompts.ts";
import type { ResourceContents } from "./resources.ts";
import type { HostQuery } from "./host.ts";
import type { ContentBlock, Ctx } from "./tool.ts";
import { decode, encode } from "./utf8.ts";

/** What a fake backend answers: a response, or a WIT transport error. */
export type FakeAnswer =
  | { status: number; body?: unknown; headers?: Array<[string, string]> }
  | { error: { tag: "not-declared" | "refused" | "unavailable"; val: string } | { tag: "timeout" | "too-large" } };

/** A request as the fake backend sees it, its body decoded. */
export interface FakeRequest {
  backend: string;
  method: string;
  path: string;
  headers: Array<[string, string]>;
  body?: string;
}

/** A `client.ask` request, as the stub receives it (the WIT `input-request`). */
export type FakeInput = {
  key: string;
  request: { tag: "elicit"; val: { message: string; requestedSchema: string } } | { tag: "sample"; val: unknown } | { tag: "list-roots" };
};

/**
 * What the fake client answers a key: an elicitation (`{action, content?}`),
 * a sampled message, a list of roots, or a WIT `client.error`.
 */
export type FakeClientAnswer =
  | { action: "accept"; content: unknown }
  | { action: "decline" | "cancel" }
  | { role: "user" | "assistant"; text: string; model: string; stopReason?: string | null }
  | Array<{ uri: string; name?: string | null }>
  | { error: { tag: "unsupported" | "refused" | "failed"; val: string } | { tag: "timeout" } };

/** The WIT resolver query, as the stub receives it. */
export type FakeQuery = HostQuery;

/** What a fake resolver answers: the entity, or the clarification. */
export type FakeResolution =
  | { id: number; name: string }
  | { clarification: { reason: string; askUser: string; field: string } };

function unavailable(what: string): never {
  throw new Error(`${what} only available inside the toolhost`);
}

/** The fakes' state; `reset()` before each test. */
export const fakeHost = {
  logs: [] as Array<[string, string]>,
  progress: [] as Array<[number, number | undefined, string | undefined]>,
  requests: [] as FakeRequest[],
  backend: ((_r: FakeRequest): FakeAnswer => ({ error: { tag: "unavailable", val: "backends are only reachable inside the toolhost" } })),
  resolver: ((_q: FakeQuery): FakeResolution => unavailable("the resolver is")),
  checkpoint: ((_s: string, _t: string, _e: string): unknown => unavailable("checkpoints are")),
  /** What the fake client declares; a request it did not is `unsupported`, as on the host. */
  supports: { elicitation: false, sampling: false, roots: false },
  /** The fake client's answers by request key, in one round (a key without one is `failed`). */
  answers: {} as Record<string, FakeClientAnswer>,
  /** Each `client.ask`'s requests. */
  asked: [] as FakeInput[][],
  /** The URIs told of, once each. */
  updated: [] as string[],
  /** Why the host would refuse an update of `uri`, or nothing: accepted. */
  refuseUpdate: ((_uri: string): string | undefined => undefined),

  reset(): void {
    this.logs = [];
    this.progress = [];
    this.requests = [];
    this.backend = () => ({ error: { tag: "unavailable", val: "backends are only reachable inside the toolhost" } });
    this.resolver = () => unavailable("the resolver is");
    this.checkpoint = () => unavailable("checkpoints are");
    this.supports = { elicitation: false, sampling: false, roots: false };
    this.answers = {};
    this.asked = [];
    this.updated = [];
    this.refuseUpdate = () => undefined;
  },

  /**
   * Resolves over `snapshots` (rows by kind) as the host does in outline:
   * digits match an id, other text a name exactly (case-insensitive); one
   * match answers, several are `ambiguous`, none `not-found`, an absent
   * value `missing-required` (unless `within` names one id). Pins, labels
   * and partial names are the real host's; test those through it.
   */
  resolveOver(snapshots: Record<string, Array<{ id: number; name: string }>>): void {
    this.resolver = (q) => {
      let rows = snapshots[q.kind] ?? [];
      if (q.within !== undefined) rows = rows.filter((r) => q.within?.includes(r.id));
      if (q.value !== undefined) {
        const v = q.value;
        rows = rows.filter((r) => (/^-?\d+$/.test(v) ? String(r.id) === v : r.name.toLowerCase() === v.toLowerCase()));
      }
      if (rows.length === 1 && (q.value !== undefined || q.within !== undefined)) return rows[0];
      const reason = q.value === undefined ? "missing-required" : rows.length === 0 ? "not-found" : "ambiguous";
      const names = rows.map((r) => `${r.name} · #${r.id}`).join(", ");
      return { clarification: { reason, askUser: `Which ${q.kind}? ${names || "none match"}.`, field: q.field } };
    };
  },
};

/** The body a fake answers, as bytes: strings as they are, anything else as JSON. */
export function fakeBody(body: unknown): Uint8Array {
  if (body === undefined) return new Uint8Array();
  return encode(typeof body === "string" ? body : JSON.stringify(body));
}

/** The request with its body as text. */
export function fakeRequest(r: { backend: string; method: string; path: string; headers: Array<[string, string]>; body?: Uint8Array }): FakeRequest {
  return { ...r, body: r.body === undefined ? undefined : decode(r.body) };
}

/** A call context for tests: tenant `demo`, principal `alice`. */
export function testCtx(over: Partial<Ctx> = {}): Ctx {
  return { callId: "test-call", tenant: "demo", principal: "alice", ...over };
}

/** What the host would make of a call: the structured answer parsed, or the WIT error. */
export type CallResult = { ok: unknown; text?: string; content?: ContentBlock[] } | { err: { tag: string; val: string } };

/** Calls `tool` of `plugin` with `args` as the host does, catching tool errors. */
export function callTool(plugin: Pick<Plugin, "tool">, tool: string, args: unknown, ctx: Ctx = testCtx()): CallResult {
  try {
    const out = plugin.tool.call(ctx, tool, JSON.stringify(args));
    const answer = { ok: JSON.parse(out.structured), text: out.text };
    return out.content.length > 0 ? { ...answer, content: out.content } : answer;
  } catch (e) {
    const payload = (e as { payload?: { tag: string; val: string } } | null)?.payload;
    if (payload === undefined) throw e;
    return { err: payload };
  }
}

/** The plugin's snapshot of `kind`, as the host would receive it. */
export function snapshot(plugin: Pick<Plugin, "entities">, kind: string, ctx: Ctx = testCtx()): Entity[] {
  return plugin.entities.snapshot(ctx, kind);
}

/** What the host would make of a prompt's get or a read: the answer, or the WIT error. */
export type ExportResult<T> = { ok: T } | { err: { tag: string; val: string } };

function caught<T>(run: () => T): ExportResult<T> {
  try {
    return { ok: run() };
  } catch (e) {
    const payload = (e as { payload?: { tag: string; val: string } } | null)?.payload;
    if (payload === undefined) throw e;
    return { err: payload };
  }
}

/** Gets prompt `name` of `plugin` with `args` (strings by name) as the host does: its messages, or the WIT error. */
export function getPrompt(
  plugin: Pick<Plugin, "prompts">,
  name: string,
  args: Record<string, string> = {},
  ctx: Ctx = testCtx(),
): ExportResult<PromptMessage[]> {
  return caught(() => plugin.prompts.get(ctx, name, Object.entries(args)).messages);
}

/** Reads `uri` of `plugin` as the host does: the contents, or the WIT error. */
export function readResource(plugin: Pick<Plugin, "resources">, uri: string, ctx: Ctx = testCtx()): ExportResult<ResourceContents[]> {
  return caught(() => plugin.resources.read(ctx, uri));
}

/** What the host would make of a validation: the normalized proposal (the
 * promoting tool's arguments) parsed, or the problems. */
export type Validated = { ok: Record<string, unknown> } | { problems: Problem[] };

/** A subject's current state as the host would keep it: the body parsed. */
export interface CurrentOf {
  version: string;
  body: unknown;
}

/** `current` of `kind` for `subject`, as the host asks it: the state, or the WIT error. */
export function currentOf(plugin: Pick<Plugin, "authoring">, kind: string, subject: number, ctx: Ctx = testCtx()): ExportResult<CurrentOf> {
  return caught(() => {
    const c = plugin.authoring.current(ctx, kind, subject);
    return { version: c.version, body: JSON.parse(c.body) };
  });
}

/** `validate` of `kind` (the current state and the proposal as JSON values), as the host asks it. */
export function validateProposal(
  plugin: Pick<Plugin, "authoring">,
  kind: string,
  current: unknown,
  proposal: unknown,
  ctx: Ctx = testCtx(),
): Validated {
  try {
    return { ok: JSON.parse(plugin.authoring.validate(ctx, kind, JSON.stringify(current), JSON.stringify(proposal))) };
  } catch (e) {
    const payload = (e as { payload?: unknown } | null)?.payload;
    if (!Array.isArray(payload)) throw e;
    return { problems: payload as Problem[] };
  }
}

/** `diff` of `kind` (JSON values), as the host asks it: the changes, their sides parsed, or the WIT error. */
export function diffProposal(
  plugin: Pick<Plugin, "authoring">,
  kind: string,
  current: unknown,
  normalized: unknown,
  ctx: Ctx = testCtx(),
): ExportResult<Change[]> {
  return caught(() =>
    plugin.authoring.diff(ctx, kind, JSON.stringify(current), JSON.stringify(normalized)).map((c) => {
      const out: Change = { op: c.op, item: c.item };
      if (c.before !== undefined) out.before = JSON.parse(c.before);
      if (c.after !== undefined) out.after = JSON.parse(c.after);
      return out;
    }),
  );
}

/** What a session's `propose` answers: the normalized proposal and the
 * changes a person would review, the problems, or the host's refusal. */
export type Proposed =
  | { ok: { normalized: Record<string, unknown>; changes: Change[] } }
  | { problems: Problem[] }
  | { err: { tag: string; val: string } };

/** An authoring session on one subject, as the host runs one. */
export interface AuthoringSession {
  /** The subject's version and state when the session opened. */
  readonly version: string;
  readonly body: unknown;
  /** Re-reads the subject (refused if it moved), then validates and diffs. */
  propose(proposal: unknown): Proposed;
  /** Re-reads the subject (refused if it moved), then calls the promoting tool with the normalized proposal. */
  promote(proposed: { normalized: Record<string, unknown> }): CallResult;
}

/**
 * Opens a session on `subject` (an entity id of the kind's subject kind),
 * run natively as the host runs one, against `fakeHost` with the host's
 * grants: `current` may send GET and HEAD backend requests only (others
 * are `refused`); `validate` and `diff` none at all (`not-declared`) and
 * no resolver. A subject whose version moved since the session opened is
 * refused `SUBJECT_CHANGED`, as on the host. Opening throws what
 * `current` threw.
 */
export function authoringSession(
  plugin: Pick<Plugin, "authoring" | "tool">,
  kind: string,
  subject: number,
  ctx: Ctx = testCtx(),
): AuthoringSession {
  const spec = plugin.authoring.kinds().find((k) => k.name === kind);
  if (spec === undefined) throw new Error(`this plugin authors no kind "${kind}"`);
  const now = () => granted(["get", "head"], () => plugin.authoring.current(ctx, kind, subject));
  const opened = now();
  const moved = (): CallResult | undefined => {
    const version = now().version;
    if (version === opened.version) return undefined;
    return { err: { tag: "failed", val: `SUBJECT_CHANGED: the session is bound to version "${opened.version}", the subject is at "${version}"` } };
  };
  const body = JSON.parse(opened.body);
  return {
    version: opened.version,
    body,
    propose: (proposal) => {
      const refused = moved();
      if (refused !== undefined) return refused as Proposed;
      return granted([], () => {
        const v = validateProposal(plugin, kind, body, proposal, ctx);
        if ("problems" in v) return v;
        const changes = diffProposal(plugin, kind, body, v.ok, ctx);
        return "err" in changes ? changes : { ok: { normalized: v.ok, changes: changes.ok } };
      });
    },
    promote: (proposed) => moved() ?? callTool(plugin, spec.promotedBy, proposed.normalized, ctx),
  };
}

/** `run()` with `fakeHost` granting only `methods` of backend requests (as
 * the stub sees them: `get`, `head`; none: no backend and no resolver
 * either), as the host grants authoring. */
function granted<T>(methods: string[], run: () => T): T {
  const [backend, resolver] = [fakeHost.backend, fakeHost.resolver];
  fakeHost.backend = (r) => {
    if (methods.length === 0) return { error: { tag: "not-declared", val: r.backend } };
    if (!methods.includes(r.method)) return { error: { tag: "refused", val: `${r.method.toUpperCase()} while reading a current state (only GET and HEAD)` } };
    return backend(r);
  };
  if (methods.length === 0) {
    fakeHost.resolver = (q) => ({ clarification: { reason: "not-found", askUser: "validate and diff have no resolver", field: q.field } });
  }
  try {
    return run();
  } finally {
    [fakeHost.backend, fakeHost.resolver] = [backend, resolver];
  }
}
