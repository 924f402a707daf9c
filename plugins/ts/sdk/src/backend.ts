// HTTP to the plugin's declared backends, through the host's `backend`
// import. A plugin names a backend (a `[backends.<name>]` of its manifest)
// and a path, never a host: the operator's configuration holds the base
// URL and the credential, which the host adds with the caller's tenant.
//
//     const rows = backend.get("testbench", "/api/projects").ok().json<Project[]>();
//
// Limits, all the host's: every request counts against the call's
// host-call budget and time limit; while a plan or a snapshot runs, and
// after a clarification, only GET and HEAD pass (others are refused, a
// `failed` ToolError); the host caps the answer's size and drops
// credential, cookie, `Host`, `X-Tenant` and hop-by-hop request headers.

import { failed, notFound, type ToolError } from "./errors.ts";
import * as host from "./host.ts";
import { decode, encode } from "./utf8.ts";

/** How many characters of an error answer's body a ToolError quotes. */
const EXCERPT_CHARS = 200;

export type Method = "get" | "head" | "post" | "put" | "patch" | "delete";

/** One request; `get` and `post` cover the usual cases. */
export interface Request {
  backend: string;
  method: Method;
  /** Starts with one `/`, may carry a query; escape callers' text with `escape`. */
  path: string;
  headers?: Array<[string, string]>;
  body?: Uint8Array | string;
}

/** A backend's answer, whatever its status: check it with `ok()`. */
export class Response {
  readonly status: number;
  readonly headers: Array<[string, string]>;
  readonly body: Uint8Array;
  /** `GET /path on backend NAME`, for error messages. */
  readonly origin: string;

  constructor(status: number, body: Uint8Array | string, headers: Array<[string, string]> = [], origin = "request") {
    this.status = status;
    this.body = typeof body === "string" ? encode(body) : body;
    this.headers = headers;
    this.origin = origin;
  }

  /**
   * This answer if 2xx; else 404 throws `not-found` and any other status
   * `failed`, naming the request and quoting the body's start.
   */
  ok(): this {
    if (this.status >= 200 && this.status < 300) return this;
    const message = `${this.origin} answered ${this.status}${excerpt(this.text())}`;
    throw this.status === 404 ? notFound(message) : failed(message);
  }

  /** The body as UTF-8 text. */
  text(): string {
    return decode(this.body);
  }

  /** The body parsed as JSON (`failed` if it is not: the backend broke its API). */
  json<T = unknown>(): T {
    try {
      return JSON.parse(this.text()) as T;
    } catch (e) {
      throw failed(`${this.origin} answered something that is not JSON: ${(e as Error).message}`);
    }
  }

  /** The first header named `name`, case-insensitive. */
  header(name: string): string | undefined {
    return this.headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];
  }
}

/** Sends `req`. Only the transport throws: a 4xx or 5xx is a Response until `ok()`. */
export function send(req: Request): Response {
  const origin = `${req.method.toUpperCase()} ${req.path} on backend ${req.backend}`;
  const body = typeof req.body === "string" ? encode(req.body) : req.body;
  const a = host.send({ backend: req.backend, method: req.method, path: req.path, headers: req.headers ?? [], body });
  if (!a.ok) throw transportError(req.backend, a.error);
  return new Response(a.value.status, a.value.body, a.value.headers, origin);
}

/** `GET path` on `backend`, asking for JSON. */
export function get(backend: string, path: string): Response {
  return send({ backend, method: "get", path, headers: [["accept", "application/json"]] });
}

/** `POST path` on `backend` with `value` as a JSON body, asking for JSON. */
export function post(backend: string, path: string, value: unknown): Response {
  const headers: Array<[string, string]> = [["accept", "application/json"], ["content-type", "application/json"]];
  return send({ backend, method: "post", path, headers, body: JSON.stringify(value) });
}

/** Percent-encodes `text` for a path segment or query value (all but `A-Za-z0-9-._~`). */
export function escape(text: string): string {
  let out = "";
  for (const b of encode(text)) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** The WIT transport error as text a caller can act on. */
export function transportError(backend: string, e: host.BackendError): ToolError {
  switch (e.tag) {
    case "not-declared":
      return failed(`backend "${e.val}" is not declared in the plugin's manifest or not configured by the operator`);
    case "refused":
      return failed(`the host refused the request to backend ${backend}: ${e.val}`);
    case "timeout":
      return failed(`backend ${backend} did not answer in time`);
    case "too-large":
      return failed(`backend ${backend} answered more than the host accepts`);
    case "unavailable":
      return failed(`backend ${backend} is unavailable: ${e.val}`);
  }
}

/** `": <start of body>"` on one line, or nothing for an empty body. */
function excerpt(text: string): string {
  const line = text.split(/\s+/).filter(Boolean).join(" ");
  if (line === "") return "";
  const chars = [...line];
  return `: ${chars.slice(0, EXCERPT_CHARS).join("")}${chars.length > EXCERPT_CHARS ? "…" : ""}`;
}

/** The module as one namespace: `backend.get(…)`. */
export const backend = { send, get, post, escape, Response };
