// The errors a tool reports, and how they cross the WIT boundary.
//
// componentize-js turns a throw out of an export that returns
// `result<_, tool-error>` into the `err` case when the thrown value has an
// own `payload` property: here the WIT variant as `{tag, val}`. Anything
// else thrown traps the instance, which is what a bug should do (the host
// discards the instance and answers TRAPPED); the SDK logs its message
// first, because the trap itself says only "unreachable".
//
// `ProtocolError` is not a tool error: it is what `protocol.raise` throws
// under Node, where no host ends the call.

/** The `tool-error` variants a tool may report (`unknown-tool` is the SDK's). */
export type ToolErrorTag = "invalid-arguments" | "not-found" | "failed";

/** The WIT `tool-error`, as componentize-js lowers it. */
export interface WitToolError {
  tag: "unknown-tool" | ToolErrorTag;
  val: string;
}

/**
 * A failure the tool reports to its caller. The host relays it as a tool
 * error (MCP `isError`) with a stable code per tag; the message is shown to
 * the caller, so it must not leak secrets or another tenant's data.
 */
export class ToolError extends Error {
  /** What crosses the boundary: an own property, as componentize-js expects. */
  readonly payload: WitToolError;

  constructor(tag: WitToolError["tag"], message: string) {
    super(`${tag}: ${message}`);
    this.name = "ToolError";
    this.payload = { tag, val: message };
  }

  /** The tag: `invalid-arguments`, `not-found`, `failed` (or `unknown-tool`). */
  get tag(): WitToolError["tag"] {
    return this.payload.tag;
  }

  /** The message the caller sees, without the tag. */
  get detail(): string {
    return this.payload.val;
  }
}

/** The arguments do not fit the tool's input schema or meaning. */
export function invalidArguments(message: string): ToolError {
  return new ToolError("invalid-arguments", message);
}

/** A named thing does not exist (or is not the caller's tenant's). */
export function notFound(message: string): ToolError {
  return new ToolError("not-found", message);
}

/** The tool ran and failed; the message is safe to show the caller. */
export function failed(message: string): ToolError {
  return new ToolError("failed", message);
}

/** Whether `e` is a tool error (of this SDK, or any object shaped like one). */
export function isToolError(e: unknown): e is ToolError {
  if (e instanceof ToolError) return true;
  const payload = (e as { payload?: { tag?: unknown; val?: unknown } } | null)?.payload;
  return typeof payload?.tag === "string" && typeof payload.val === "string";
}

/**
 * The JSON-RPC error `protocol.raise` ended the call with, thrown under
 * Node (unit tests), where no host ends the call: `code` and `message` as
 * the tool gave them, before the host's checks, cut and redaction. Inside
 * a component it is never thrown: the host stops the instance inside the
 * import.
 *
 * Not a tool error (it has no `payload`): `callTool` lets it through, so a
 * test expects it with `assert.throws(…, ProtocolError)`. A tool's own
 * `catch` around a raise would catch it here, where inside a component it
 * never runs: a test of such a tool sees what the host would not.
 */
export class ProtocolError extends Error {
  /** The JSON-RPC error code given. */
  readonly code: number;

  constructor(code: number, message: string) {
    super(message);
    this.name = "ProtocolError";
    this.code = code;
  }
}
