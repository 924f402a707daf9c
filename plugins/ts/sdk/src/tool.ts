// `defineTool`: one tool of a plugin, its description for the host and the
// function that runs it, with its arguments checked against its schema.
//
// Conservative defaults, as the Rust SDK: a tool changes state (`mutating`,
// so the host's gates apply) until it says `readOnly: true`, and its risk
// is `low` until it says otherwise. Annotation hints are unset unless given.

import { failed, invalidArguments } from "./errors.ts";
import type { Infer, JsonSchema, Schema } from "./schema.ts";

/** Who is calling, as the host established it. Never a credential. */
export interface Ctx {
  /** Unique per call; the host's logs and audit carry the same id. */
  callId: string;
  tenant: string;
  /** The caller, as an opaque stable id. */
  principal: string;
}

export type Risk = "low" | "medium" | "high";

/** A thing a call would act on, named by a plan. */
export interface Target {
  kind: string;
  id: string;
  name: string;
  tags?: string[];
}

/** The side-effect free preparation of a call. */
export interface Plan {
  targets?: Target[];
  /** Default: the tool's risk. */
  risk?: Risk;
  /** One line a person reads when asked to approve the call. */
  summary: string;
}

const OUTPUT = Symbol("toolhost output");

/** A structured answer plus the text MCP clients show in place of the JSON,
 * and content blocks sent after it. */
export interface Output<T> {
  readonly [OUTPUT]: true;
  readonly structured: T;
  readonly text?: string;
  readonly content: readonly ContentBlock[];
}

/** Answers `structured` with `text` for people (`withText({message}, message)`). */
export function withText<T>(structured: T, text: string, blocks: readonly ContentBlock[] = []): Output<T> {
  return { [OUTPUT]: true, structured, text, content: [...blocks] };
}

/** Answers `structured` with content blocks (images, audio, resources), sent in
 * order: `withContent({weeks: 4}, [content.image("image/png", png)])`. The host
 * counts each against the output budget, refuses one carrying a credential,
 * and keeps one too large to send inline as an artifact, sending a link. */
export function withContent<T>(structured: T, blocks: readonly ContentBlock[], text?: string): Output<T> {
  return { [OUTPUT]: true, structured, text, content: [...blocks] };
}

/** One content block of an answer: the WIT `content-block`. Build it with `content`. */
export type ContentBlock =
  | { tag: "text"; val: string }
  | { tag: "image"; val: { mimeType: string; data: Uint8Array } }
  | { tag: "audio"; val: { mimeType: string; data: Uint8Array } }
  | { tag: "resource-link"; val: ResourceLink }
  | { tag: "embedded"; val: { uri: string; mimeType?: string; body: { tag: "text"; val: string } | { tag: "blob"; val: Uint8Array } } };

/** A link to a resource the client may read. */
export interface ResourceLink {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: bigint;
}

/** Content blocks, by kind. */
export const content = {
  text: (text: string): ContentBlock => ({ tag: "text", val: text }),
  image: (mimeType: string, data: Uint8Array): ContentBlock => ({ tag: "image", val: { mimeType, data } }),
  audio: (mimeType: string, data: Uint8Array): ContentBlock => ({ tag: "audio", val: { mimeType, data } }),
  link: (link: ResourceLink): ContentBlock => ({ tag: "resource-link", val: { ...link } }),
  embeddedText: (uri: string, mimeType: string, text: string): ContentBlock => ({
    tag: "embedded",
    val: { uri, mimeType, body: { tag: "text", val: text } },
  }),
  embeddedBlob: (uri: string, mimeType: string, bytes: Uint8Array): ContentBlock => ({
    tag: "embedded",
    val: { uri, mimeType, body: { tag: "blob", val: bytes } },
  }),
};

/** A tool's answer as the WIT carries it. */
export interface WitOutput {
  structured: string;
  text?: string;
  content: ContentBlock[];
}

/** What `defineTool` takes. */
export interface ToolDefinition<I extends Schema<unknown>, O> {
  /** MCP tool name: 1–64 of `[A-Za-z0-9_.-]`; matches the manifest's `[tools.NAME]`. */
  name: string;
  title?: string;
  description: string;
  /** `resource:action` (the resource may contain colons), as in the manifest. */
  permission: string;
  /** Changes nothing: not mutating, MCP `readOnlyHint`. */
  readOnly?: boolean;
  /** May destroy data: mutating, MCP `destructiveHint`, risk at least `high`. */
  destructive?: boolean;
  idempotent?: boolean;
  openWorld?: boolean;
  risk?: Risk;
  /** The arguments: an `s.object(…)`. */
  input: I;
  /** The structured answer's schema, for `describe` only (not checked). */
  output?: Schema<O>;
  run(args: Infer<I>, ctx: Ctx): O | Output<O>;
  /** Replaces the default plan (no targets, the tool's risk, "call NAME"); no side effects. */
  plan?(args: Infer<I>, ctx: Ctx): Plan;
}

/** A defined tool, as `definePlugin` lists it. */
export interface Tool {
  readonly name: string;
  spec(): WitToolSpec;
  plan(ctx: Ctx, args: string): WitPlan;
  call(ctx: Ctx, args: string): WitOutput;
  /** Parsed arguments checked against the input schema (defaults filled),
   * or `invalid-arguments` naming the field: how an authoring kind's
   * normalized proposal is held to its promoting tool's arguments. */
  checkArguments(value: unknown): unknown;
}

/** The WIT `tool-spec`, as componentize lowers it. */
export interface WitToolSpec {
  name: string;
  title?: string;
  description: string;
  inputSchema: string;
  outputSchema?: string;
  annotations: { readOnly?: boolean; destructive?: boolean; idempotent?: boolean; openWorld?: boolean };
  permission: { resource: string; action: string };
  risk: Risk;
  mutating: boolean;
}

/** The WIT `call-plan`. */
export interface WitPlan {
  targets: Array<Required<Target>>;
  risk: Risk;
  summary: string;
}

const RISKS: Risk[] = ["low", "medium", "high"];

/** Defines a tool; see `ToolDefinition` for each field. */
export function defineTool<I extends Schema<unknown>, O>(def: ToolDefinition<I, O>): Tool {
  const risk: Risk = def.destructive && def.risk !== "high" ? "high" : (def.risk ?? "low");
  const parse = (args: string) => parseArguments(def.input, args) as Infer<I>;
  return {
    name: def.name,
    spec: () => ({
      ...heading(def),
      inputSchema: schemaText(def.input.json),
      outputSchema: def.output && schemaText(def.output.json),
      annotations: {
        readOnly: def.destructive ? false : def.readOnly,
        destructive: def.destructive,
        idempotent: def.idempotent,
        openWorld: def.openWorld,
      },
      permission: permission(def.name, def.permission),
      risk,
      mutating: def.destructive === true || def.readOnly !== true,
    }),
    plan: (ctx, args) => {
      const parsed = parse(args);
      const p = def.plan ? def.plan(parsed, ctx) : { summary: `call ${def.name}` };
      const targets = (p.targets ?? []).map((t) => ({ ...t, tags: t.tags ?? [] }));
      return { targets, risk: RISKS.includes(p.risk as Risk) ? (p.risk as Risk) : risk, summary: p.summary };
    },
    call: (ctx, args) => outputOf(def.run(parse(args), ctx)),
    checkArguments: (value) => def.input.check(value, ""),
  };
}

/** The arguments' JSON checked against `input`; bad JSON or a misfit is `invalid-arguments`. */
export function parseArguments<T>(input: Schema<T>, args: string): T {
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch (e) {
    throw invalidArguments(`the arguments are not JSON: ${(e as Error).message}`);
  }
  return input.check(value, "");
}

function outputOf<O>(answer: O | Output<O>): WitOutput {
  const wrapped = typeof answer === "object" && answer !== null && OUTPUT in answer;
  const structured = wrapped ? (answer as Output<O>).structured : answer;
  const json = JSON.stringify(structured);
  if (json === undefined) throw failed("the tool's answer does not serialize to JSON");
  if (!wrapped) return { structured: json, content: [] };
  const out = answer as Output<O>;
  return { structured: json, text: out.text, content: [...out.content] };
}

/** `resource:action` split at the last colon; a malformed one refuses the plugin. */
function permission(tool: string, text: string): { resource: string; action: string } {
  return splitPermission(`tool "${tool}"`, text);
}

/** What every spec opens with: the name, the display title, the description. */
export function heading<D extends { name: string; title?: string; description?: string }>(
  def: D,
): Pick<D, "name" | "title" | "description"> {
  return { name: def.name, title: def.title, description: def.description };
}

/** `resource:action` of `where` (`tool "x"`, `prompt "y"`…) split at the last colon, or an Error. */
export function splitPermission(where: string, text: string): { resource: string; action: string } {
  const at = text.lastIndexOf(":");
  if (at <= 0 || at === text.length - 1) {
    throw new Error(`${where}: permission "${text}" is not resource:action`);
  }
  return { resource: text.slice(0, at), action: text.slice(at + 1) };
}

/** The JSON Schema text `describe` carries, with the draft it follows. */
function schemaText(json: JsonSchema): string {
  return JSON.stringify({ $schema: "https://json-schema.org/draft/2020-12/schema", ...json });
}
