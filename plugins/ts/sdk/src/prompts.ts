// `definePrompt`: one prompt a plugin exports (MCP `prompts/list`,
// `prompts/get`), through the WIT `prompts` export:
//
//     const review = definePrompt({
//       name: "review_plan",
//       description: "Review a project's test plan.",
//       permission: "testbench:read",
//       arguments: {
//         project: { description: "The project, by name.", required: true, completes: "project" },
//         focus: { description: "What to look at first." },
//       },
//       get: ({ project, focus }) => [message.user(`Review the test plan of ${project}${focus ? `, ${focus} first` : ""}.`)],
//     });
//
// A prompt needs a permission, as a tool does, and the manifest declares it
// (`[prompts.NAME] permission = "…"`). Arguments are strings; one that
// `completes` an entity kind (one the plugin's entities list) is completed
// by the host from the caller's tenant's names. `get` runs in a fresh
// sandbox that may not have side effects (GET and HEAD backend requests
// only) but may ask the client (`client`); throw a `ToolError` to fail.

import { failed, invalidArguments } from "./errors.ts";
import { heading, splitPermission, type ContentBlock, type Ctx } from "./tool.ts";

/** One argument of a prompt. */
export interface PromptArgumentDefinition {
  description?: string;
  /** Default: optional. */
  required?: boolean;
  /** The entity kind whose names complete it (`completion/complete`). */
  completes?: string;
}

/** The arguments `get` receives: a required one is a string, others may be absent. */
export type PromptArgs<A extends Record<string, PromptArgumentDefinition>> = {
  [K in keyof A]: A[K] extends { required: true } ? string : string | undefined;
};

/** Who says a message. */
export type Role = "user" | "assistant";

/** One message of a filled-in prompt: the WIT `prompt-message`. */
export interface PromptMessage {
  role: Role;
  content: ContentBlock;
}

/** Messages, by role: text or one content block. */
export const message = {
  user: (body: string | ContentBlock): PromptMessage => ({ role: "user", content: blockOf(body) }),
  assistant: (body: string | ContentBlock): PromptMessage => ({ role: "assistant", content: blockOf(body) }),
};

function blockOf(body: string | ContentBlock): ContentBlock {
  return typeof body === "string" ? { tag: "text", val: body } : body;
}

/** What `definePrompt` takes. */
export interface PromptDefinition<A extends Record<string, PromptArgumentDefinition>> {
  /** 1–64 of `[A-Za-z0-9_.-]`; matches the manifest's `[prompts.NAME]`. */
  name: string;
  title?: string;
  description: string;
  /** `resource:action`, as in the manifest. */
  permission: string;
  /** By name, in the order listed (default: none). */
  arguments?: A;
  /** The prompt filled in: a string (one user message), or messages. */
  get(args: PromptArgs<A>, ctx: Ctx): string | PromptMessage | PromptMessage[];
}

/** The WIT `prompt-spec`, as componentize lowers it. */
export interface WitPromptSpec {
  name: string;
  title?: string;
  description: string;
  arguments: Array<{ name: string; description?: string; required: boolean; completes?: string }>;
  permission: { resource: string; action: string };
}

/** The WIT `prompt`. */
export interface WitPrompt {
  description?: string;
  messages: PromptMessage[];
}

/** A defined prompt, as `definePlugin` lists it. */
export interface Prompt {
  readonly name: string;
  spec(): WitPromptSpec;
  get(ctx: Ctx, args: Array<[string, string]>): WitPrompt;
}

/** Names of prompts, arguments, resources: 1–64 of `[A-Za-z0-9_.-]`. */
export const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** Defines a prompt; a bad name or permission throws here (the build fails). */
export function definePrompt<A extends Record<string, PromptArgumentDefinition> = Record<never, PromptArgumentDefinition>>(
  def: PromptDefinition<A>,
): Prompt {
  const where = `prompt "${def.name}"`;
  if (!NAME.test(def.name)) throw new Error(`${where}: a name is 1-64 of [A-Za-z0-9_.-]`);
  const permission = splitPermission(where, def.permission);
  const args = Object.entries(def.arguments ?? {}) as Array<[string, PromptArgumentDefinition]>;
  for (const [name, a] of args) {
    if (!NAME.test(name)) throw new Error(`${where}: argument "${name}" is not 1-64 of [A-Za-z0-9_.-]`);
    if (a.completes !== undefined && a.completes === "") throw new Error(`${where}: argument "${name}" completes an empty kind`);
  }
  const known = args.map(([n]) => n);
  return {
    name: def.name,
    spec: () => ({
      ...heading(def),
      arguments: args.map(([name, a]) => ({ name, description: a.description, required: a.required === true, completes: a.completes })),
      permission,
    }),
    get: (ctx, given) => {
      const values: Record<string, string | undefined> = {};
      for (const [k, v] of given) {
        if (!known.includes(k)) throw invalidArguments(`unknown argument "${k}", expected one of: ${known.join(", ") || "none"}`);
        values[k] = v;
      }
      for (const [name, a] of args) {
        if (a.required === true && values[name] === undefined) throw invalidArguments(`missing argument "${name}"`);
      }
      return { messages: messagesOf(def.name, def.get(values as PromptArgs<A>, ctx)) };
    },
  };
}

function messagesOf(name: string, answer: string | PromptMessage | PromptMessage[]): PromptMessage[] {
  const items = Array.isArray(answer) ? answer : [answer];
  return items.map((m, i) => {
    if (typeof m === "string") return message.user(m);
    if (typeof m !== "object" || m === null || (m.role !== "user" && m.role !== "assistant") || typeof m.content?.tag !== "string") {
      throw failed(`prompt "${name}" answered ${JSON.stringify(m)} as message ${i}: answer a string or messages (message.user(…))`);
    }
    return m;
  });
}
