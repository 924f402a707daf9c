// Stands in for every `toolhost:plugin/*` import under Node (see
// register.ts), with the component's conventions: an import whose WIT
// result is `err` throws an Error whose `payload` is the error value.
// Each function answers from `fakeHost` in ../testing.ts.

import { ProtocolError } from "../errors.ts";
import { fakeBody, fakeHost, fakeRequest, type FakeInput, type FakeQuery } from "../testing.ts";

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

/** `client.supports`. */
export function supports(): unknown {
  return { ...fakeHost.supports };
}

/** `client.ask`: each request answered from `fakeHost.answers`, as the WIT response. */
export function ask(requests: FakeInput[]): unknown[] {
  fakeHost.asked.push(requests);
  const needs = { elicit: "elicitation", sample: "sampling", "list-roots": "roots" } as const;
  const tags = { elicit: "elicited", sample: "sampled", "list-roots": "roots" } as const;
  return requests.map(({ key, request }) => {
    const capability = needs[request.tag];
    if (!fakeHost.supports[capability]) throw new ComponentError({ tag: "unsupported", val: `the client did not declare the ${capability} capability` });
    const a = fakeHost.answers[key];
    if (a === undefined) throw new ComponentError({ tag: "failed", val: `the fake client has no answer for "${key}"` });
    if (typeof a === "object" && a !== null && "error" in a) throw new ComponentError(a.error);
    if (request.tag !== "elicit") return { tag: tags[request.tag], val: a };
    const e = a as { action: string; content?: unknown };
    return { tag: "elicited", val: e.action === "accept" ? { tag: "accept", val: JSON.stringify(e.content) } : { tag: e.action } };
  });
}

/** `notify.resource-updated`. */
export function resourceUpdated(uri: string): void {
  const refused = fakeHost.refuseUpdate(uri);
  if (refused !== undefined) throw new ComponentError(refused);
  if (!fakeHost.updated.includes(uri)) fakeHost.updated.push(uri);
}

/** `protocol.raise`: no host ends the call, so it throws the error for a test to expect. */
export function raise(code: number, message: string): never {
  throw new ProtocolError(code, message);
}

/** `artifacts.put`: the SDK does not wrap it yet. */
export function put(): never {
  throw new Error("artifacts are not wrapped by the TypeScript SDK");
}
