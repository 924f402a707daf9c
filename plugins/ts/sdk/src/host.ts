// The host's imports, and nothing else: the one module that names the
// `toolhost:plugin/*` interfaces. jco componentize binds these specifiers
// to the component's imports; outside a component (unit tests under Node)
// `@toolhost/sdk/register` maps them to the fakes in `testing.ts`.
//
// The engine is QuickJS (componentize-qjs, see plugins/ts/README.md),
// which lowers `s64` from and lifts it to a JS Number, not a BigInt as
// `jco guest-types` declares: ids are `number` everywhere in this SDK
// (exact up to 2^53, as JSON's own integers in practice), and the few
// casts below are where the generated types disagree with the engine.
// An import whose WIT result is `err` throws an `Error` whose `payload`
// is the error value.
//
// The `toolhost:plugin/*` modules' types are what `jco guest-types`
// generates from the WIT into types/ (at build time, shipped in the
// package): the reference below stays in dist/host.d.ts, so a plugin's type
// check that imports the SDK sees them too.

/// <reference path="../types/mcp-plugin.d.ts" preserve="true" />

import { log as witLog } from "toolhost:plugin/log@0.2.0";
import { report as witReport } from "toolhost:plugin/progress@0.2.0";
import { resolve as witResolve } from "toolhost:plugin/resolver@0.2.0";
import { send as witSend } from "toolhost:plugin/backend@0.2.0";
import { open as witOpen } from "toolhost:plugin/checkpoint@0.2.0";
import { ask as witAsk, supports as witSupports } from "toolhost:plugin/client@0.2.0";
import { resourceUpdated as witResourceUpdated } from "toolhost:plugin/notify@0.2.0";
import { raise as witRaise } from "toolhost:plugin/protocol@0.2.0";

import type { Level } from "toolhost:plugin/log@0.2.0";
import type { Query, Resolved, Clarification } from "toolhost:plugin/resolver@0.2.0";
import type { Request, Response, Error as BackendError } from "toolhost:plugin/backend@0.2.0";
import type { CheckpointInfo as WitCheckpointInfo } from "toolhost:plugin/checkpoint@0.2.0";
import type {
  Error as ClientError,
  InputRequest,
  Response as ClientResponse,
  Support,
} from "toolhost:plugin/client@0.2.0";

export type { Level, BackendError, Clarification, ClientError, ClientResponse, InputRequest, Support };

/** The WIT query with ids as numbers. */
export interface HostQuery {
  kind: string;
  field: string;
  value?: string;
  pins: Array<{ kind: string; id: number }>;
  within?: number[];
  question?: string;
}

/** What an import answers: its value, or the WIT error it threw. */
export type Answer<T, E> = { ok: true; value: T } | { ok: false; error: E };

/**
 * Runs an import, catching only the WIT error it throws (an `Error` with a
 * `payload`); anything else (a trap on the way) is not ours to catch.
 */
function answer<T, E>(run: () => T): Answer<T, E> {
  try {
    return { ok: true, value: run() };
  } catch (e) {
    const payload = (e as { payload?: E } | null)?.payload;
    if (payload === undefined) throw e;
    return { ok: false, error: payload };
  }
}

export function log(level: Level, message: string): void {
  witLog(level, message);
}

export function report(progress: number, total: number | undefined, message: string | undefined): void {
  witReport(progress, total, message);
}

export function resolve(q: HostQuery): Answer<{ id: number; name: string }, Clarification> {
  return answer(() => {
    const r: Resolved = witResolve(q as unknown as Query);
    return { id: Number(r.id), name: r.name };
  });
}

export function send(req: Request): Answer<Response, BackendError> {
  return answer(() => witSend(req));
}

export function open(subject: string, title: string, evidence: string): Answer<WitCheckpointInfo, string> {
  return answer(() => witOpen(subject, title, evidence));
}

export function supports(): Support {
  return witSupports();
}

/**
 * The client's answers. An input-required round never returns: the host
 * ends the call inside the import (a trap) and runs it again with the
 * answers. An `option` the engine lifts as `null` (a root's name, a stop
 * reason) is left to `client.ts` to read.
 */
export function ask(requests: InputRequest[]): Answer<ClientResponse[], ClientError> {
  return answer(() => witAsk(requests));
}

export function resourceUpdated(uri: string): Answer<void, string> {
  return answer(() => witResourceUpdated(uri));
}

/**
 * Ends the call with a JSON-RPC error: the host stops the instance inside
 * the import. Under Node the stub throws a `ProtocolError` instead.
 */
export function raise(code: number, message: string): never {
  witRaise(code, message);
  // The host never returns from `raise`; if one did, the call must still
  // end here (a trap, as the Rust SDK aborts) rather than go on as if it
  // had not raised: a throw with no `payload` is a bug, which traps.
  throw new Error(`the host returned from protocol.raise(${code}), which ends the call`);
}
