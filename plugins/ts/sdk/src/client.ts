// Asking the MCP client for input while a call runs, through the host's
// `client` import: a form for the person (elicitation), the client's model
// (sampling, when the plugin's reviewed manifest grants it), the client's
// roots.
//
//     const form = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
//     const answer = client.elicit("user_name", "What is your name?", form);
//     if (answer.action !== "accept") throw failed("the person declined");
//     log.info(`hello ${answer.content.name}`);
//
// Ask before acting. On a 2026-07-28 request the host answers the client
// `input_required` and runs the call again, from the start, with the
// answers: the round ends the call inside the ask (the instance stops
// there; no `catch` or `finally` runs), so each request's key (1–64 of
// `[A-Za-z0-9_.-]`) must be the same on every run, and a call that already
// wrote to a backend or opened a checkpoint is refused. Ask several things
// at once with `client.ask`: on a 2026-07-28 request they then cost one
// round. A call asks at most 8 rounds; plans and entity listings cannot
// ask. A failed ask throws `ClientError` (a `failed` tool error) whose
// `kind` says why. Under Node (unit tests) nothing can be asked until a
// test sets `fakeHost.supports` and `fakeHost.answers`.

import { ToolError } from "./errors.ts";
import * as host from "./host.ts";

/** What the client can answer (`sampling`: also whether the manifest grants it). */
export interface Support {
  elicitation: boolean;
  sampling: boolean;
  roots: boolean;
}

/** One message of a sampling conversation (text only). */
export interface SamplingMessage {
  role: "user" | "assistant";
  text: string;
}

/** A request for the client's model. */
export interface SamplingRequest {
  messages: SamplingMessage[];
  maxTokens: number;
  systemPrompt?: string;
  temperature?: number;
  /** A model name the client may prefer. */
  modelHint?: string;
}

/** What the person did with a form: submitted it (its content, checked by the host against the form), declined or dismissed it. */
export type Elicitation = { action: "accept"; content: Record<string, unknown> } | { action: "decline" } | { action: "cancel" };

/** The client's model's answer. */
export interface Sampled {
  role: "user" | "assistant";
  text: string;
  model: string;
  stopReason?: string;
}

/** One of the client's roots. */
export interface Root {
  uri: string;
  name?: string;
}

/** One answer of `client.ask`, in the order asked. */
export type ClientAnswer = Elicitation | Sampled | Root[];

/** One request of `client.ask`: build it with `input.elicit`, `input.sample` or `input.roots`. */
export type Input = host.InputRequest;

/** The requests `client.ask` takes, each named by a key the same on every run of the call. */
export const input = {
  /**
   * A form for the person: `schema` is MCP's flat elicitation schema (an
   * object whose properties are strings, numbers, integers, booleans or
   * string enums), as an object or JSON text.
   */
  elicit(key: string, message: string, schema: object | string): Input {
    const requestedSchema = typeof schema === "string" ? schema : JSON.stringify(schema);
    return { key, request: { tag: "elicit", val: { message, requestedSchema } } };
  },
  /** A request for the client's model (see `prompt`). */
  sample(key: string, request: SamplingRequest): Input {
    return { key, request: { tag: "sample", val: request } };
  },
  /** The client's roots. */
  roots(key: string): Input {
    return { key, request: { tag: "list-roots" } };
  },
};

/** Why an ask was not answered: the WIT `client.error` case. */
export type ClientErrorKind = "unsupported" | "refused" | "timeout" | "failed";

const WORDS: Record<ClientErrorKind, string> = {
  unsupported: "cannot ask: ",
  refused: "the host refused the request: ",
  timeout: "the client did not answer in time",
  failed: "the client failed: ",
};

/**
 * Nothing was answered: `unsupported` (the client did not declare the
 * capability; a plan, a listing), `refused` (sampling not granted or over
 * budget, a secret, a malformed key or form, asked after acting, too many
 * rounds), `timeout`, or `failed` (the client's error, or an answer that
 * does not fit). A `failed` tool error reading as the Rust SDK's
 * (`cannot ask: …`): let it propagate, or catch it to go on without.
 */
export class ClientError extends ToolError {
  readonly kind: ClientErrorKind;
  readonly reason?: string;

  constructor(kind: ClientErrorKind, reason?: string) {
    super("failed", WORDS[kind] + (reason ?? ""));
    this.name = "ClientError";
    this.kind = kind;
    this.reason = reason;
  }
}

/** What the client can answer. Under Node: what `fakeHost.supports` says. */
export function supports(): Support {
  const s = host.supports();
  return { elicitation: s.elicitation, sampling: s.sampling, roots: s.roots };
}

/** Asks every request at once; answers in the same order. Throws `ClientError`. */
export function ask(requests: Input[]): ClientAnswer[] {
  const a = host.ask(requests);
  if (!a.ok) {
    const e = a.error as { tag: ClientErrorKind; val?: string };
    throw new ClientError(e.tag, e.val);
  }
  return a.value.map(answerOf);
}

/** Asks the person one form (see `input.elicit`). */
export function elicit(key: string, message: string, schema: object | string): Elicitation {
  return one(input.elicit(key, message, schema), (a) => !Array.isArray(a) && "action" in a) as Elicitation;
}

/** Asks the client's model one request. */
export function sample(key: string, request: SamplingRequest): Sampled {
  return one(input.sample(key, request), (a) => !Array.isArray(a) && "model" in a) as Sampled;
}

/** Asks the client for its roots. */
export function roots(key: string): Root[] {
  return one(input.roots(key), Array.isArray) as Root[];
}

/** A one-message text request of at most `maxTokens`. */
export function prompt(text: string, maxTokens: number): SamplingRequest {
  return { messages: [{ role: "user", text }], maxTokens };
}

function one(request: Input, fits: (a: ClientAnswer) => boolean): ClientAnswer {
  const answers = ask([request]);
  if (answers.length !== 1 || !fits(answers[0])) throw new ClientError("failed", `unexpected answer ${JSON.stringify(answers)}`);
  return answers[0];
}

/** The WIT response as the SDK's answer (QuickJS lifts an absent option as `null`). */
function answerOf(r: host.ClientResponse): ClientAnswer {
  switch (r.tag) {
    case "roots":
      return r.val.map((x) => (x.name == null ? { uri: x.uri } : { uri: x.uri, name: x.name }));
    case "sampled": {
      const { role, text, model, stopReason } = r.val;
      return stopReason == null ? { role, text, model } : { role, text, model, stopReason };
    }
    case "elicited": {
      const e = r.val;
      if (e.tag !== "accept") return { action: e.tag };
      let content: unknown;
      try {
        content = JSON.parse(e.val);
      } catch (err) {
        throw new ClientError("failed", `the host's answer is not JSON: ${String(err)}`);
      }
      return { action: "accept", content: content as Record<string, unknown> };
    }
  }
}

/** The module as one namespace: `client.elicit(…)`. */
export const client = { supports, ask, elicit, sample, roots, prompt, input };
