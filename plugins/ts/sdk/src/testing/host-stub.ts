// Stands in for every `toolhost:plugin/*` import under Node (see
// register.ts), with the component's conventions: an import whose WIT
// result is `err` throws an Error whose `payload` is the error value.
// Each function answers from `fakeHost` in ../testing.ts.

import { fakeBody, fakeHost, fakeRequest, type FakeQuery } from "../testing.ts";

class ComponentError extends Error {
  payload: unknown;
  constructor(payload: unknown) {
    super(`${JSON.stringify(payload)} (see error.payload)`);
    this.payload = payload;
  }
}

/** `log.log`. */
export function log(level: string, message: string): void {
  fakeHost.logs.push([level, message]);
}

/** `progress.report`. */
export function report(progress: number, total?: number, message?: string): void {
  fakeHost.progress.push([progress, total, message]);
}

/** `resolver.resolve`. */
export function resolve(q: FakeQuery): { id: number; name: string } {
  const r = fakeHost.resolver(q);
  if ("clarification" in r) throw new ComponentError({ candidates: [], scopedBy: [], ...r.clarification });
  return r;
}

/** `backend.send`. */
export function send(req: { backend: string; method: string; path: string; headers: Array<[string, string]>; body?: Uint8Array }) {
  const request = fakeRequest(req);
  fakeHost.requests.push(request);
  const a = fakeHost.backend(request);
  if ("error" in a) throw new ComponentError(a.error);
  return { status: a.status, headers: a.headers ?? [], body: fakeBody(a.body) };
}

/** `checkpoint.open`. */
export function open(subject: string, title: string, evidence: string): unknown {
  return fakeHost.checkpoint(subject, title, evidence);
}

/** `artifacts.put`: the SDK does not wrap it yet. */
export function put(): never {
  throw new Error("artifacts are not wrapped by the TypeScript SDK");
}
