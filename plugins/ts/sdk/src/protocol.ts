// Ending a call with a JSON-RPC error, through the host's `protocol`
// import. A tool's own failure is a `ToolError`: the client gets a result
// with `isError`, which its model reads. `protocol.raise` is for the rarer
// answer that belongs to the protocol: the request itself cannot be taken,
// and the client (or the Tasks extension, which reports a task `failed`
// only for a JSON-RPC error) must see an error response.
//
//     /** This plugin's "job not found" (an application-defined code). */
//     const NO_SUCH_JOB = -30001;
//     protocol.raise(NO_SUCH_JOB, "no such job: 42");
//
// The host's rules: `code` is the plugin's own, outside -32768..=-31000
// (the range JSON-RPC reserves, then the block the host takes for its own
// codes), or exactly `INVALID_PARAMS`; any other code of the host's fails
// the call as `CONTRACT_VIOLATION`, so a plugin never passes for the host.
// The message is cut at 1 KiB and any secret in it is redacted; raising
// counts against the call's host-call budget. The call's audit row records
// it as `PROTOCOL_ERROR`. The SDK checks none of this (a test under Node
// does not see a reserved code refused): only that the arguments fit the
// WIT signature, `raise: func(code: s32, message: string)`.

import { ProtocolError } from "./errors.ts";
import * as host from "./host.ts";

export { ProtocolError };

/** JSON-RPC's "invalid params": the one reserved code a plugin may raise. */
export const INVALID_PARAMS = -32602;

/** The WIT `s32` bounds a code must fit in. */
const S32_MIN = -(2 ** 31);
const S32_MAX = 2 ** 31 - 1;

/**
 * Ends the call with the JSON-RPC error `code`, `message`. Never returns:
 * the host stops the instance at once (whatever the call did before
 * stands, e.g. a backend write).
 *
 * Under Node (unit tests, `@toolhost/sdk/register`) it throws a
 * `ProtocolError` with `code` and `message`, so a test can expect it. A
 * `code` that is not a number or a `message` that is not a string is a
 * `TypeError`, a code that is not an integer in the `s32` range a
 * `RangeError`: plugin bugs, which trap inside a component.
 */
export function raise(code: number, message: string): never {
  if (typeof code !== "number") throw new TypeError(`a JSON-RPC error code is a number, not ${typeof code}`);
  if (!Number.isInteger(code) || code < S32_MIN || code > S32_MAX) {
    throw new RangeError(`JSON-RPC error code ${code} is not an integer that fits the WIT s32`);
  }
  if (typeof message !== "string") throw new TypeError(`a JSON-RPC error message is a string, not ${typeof message}`);
  return host.raise(code, message);
}

/**
 * The module as one namespace: `protocol.raise(…)`. Typed explicitly so
 * that TypeScript treats `protocol.raise(…)` as never returning (it narrows
 * after a call only through an explicitly typed reference).
 */
export const protocol: { readonly raise: typeof raise; readonly INVALID_PARAMS: typeof INVALID_PARAMS } = {
  raise,
  INVALID_PARAMS,
};
