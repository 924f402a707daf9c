// `definePlugin`: the WIT exports of the world `mcp-plugin` (`tool`,
// `entities`, `prompts`, `resources`, `authoring`), answered from a list of
// tools, an entities export, prompts, resources (templates among them) and
// authoring kinds. The plugin's entry module re-exports them under those
// names, which is how jco componentize finds an export; it must export all
// five (a plugin without entities, prompts, resources or authoring kinds
// lists none):
//
//     const plugin = definePlugin({ tools: [greet, applyPlan], entities: projects, prompts: [review], resources: [runbook], authoring: [testPlans] });
//     export const tool = plugin.tool;
//     export const entities = plugin.entities;
//     export const prompts = plugin.prompts;
//     export const resources = plugin.resources;
//     export const authoring = plugin.authoring;
//
// Every export runs in a fresh instance. A ToolError crosses as the WIT
// `tool-error`, and `Problems` thrown by an authoring kind's `validate` as
// its list of problems; anything else thrown is a bug and traps the
// instance (the host answers TRAPPED and discards it), after the SDK logs
// its message at `error`, since a trap itself says only "unreachable".

import { Problems, type Authoring, type WitAuthoringKind, type WitChange } from "./authoring.ts";
import { invalidArguments, isToolError, ProtocolError, ToolError } from "./errors.ts";
import { noEntities, snapshotOf, type Entities } from "./entities.ts";
import * as host from "./host.ts";
import type { Prompt, WitPrompt, WitPromptSpec } from "./prompts.ts";
import { readFrom, type Resource, type ResourceContents, type Template, type WitResourceSpec, type WitTemplateSpec } from "./resources.ts";
import type { Ctx, Tool, WitOutput, WitPlan, WitToolSpec } from "./tool.ts";

/** The WIT `entity`, ids as numbers (see host.ts). */
interface WitEntity {
  id: number;
  name: string;
  tenant: string;
  parents: Array<{ kind: string; id: number }>;
  detail?: string;
}

/** What the entry module exports. */
export interface Plugin {
  tool: {
    describe(): WitToolSpec[];
    plan(ctx: Ctx, tool: string, args: string): WitPlan;
    call(ctx: Ctx, tool: string, args: string): WitOutput;
  };
  entities: {
    kinds(): string[];
    snapshot(ctx: Ctx, kind: string): WitEntity[];
  };
  prompts: {
    list(): WitPromptSpec[];
    get(ctx: Ctx, name: string, args: Array<[string, string]>): WitPrompt;
  };
  resources: {
    list(): WitResourceSpec[];
    templates(): WitTemplateSpec[];
    read(ctx: Ctx, uri: string): ResourceContents[];
  };
  authoring: {
    kinds(): WitAuthoringKind[];
    current(ctx: Ctx, kind: string, subject: number): { version: string; body: string };
    validate(ctx: Ctx, kind: string, current: string, proposal: string): string;
    diff(ctx: Ctx, kind: string, current: string, normalized: string): WitChange[];
  };
}

/** What `definePlugin` takes. */
export interface PluginDefinition {
  /** Unique names. */
  tools: Tool[];
  /** Default: none. */
  entities?: Entities;
  /** `definePrompt`s, unique names (default: none). */
  prompts?: Prompt[];
  /** `defineResource`s and `defineTemplate`s, unique names, resources at unique URIs (default: none). */
  resources?: Array<Resource | Template>;
  /** `defineAuthoring`s, unique names, each promoted by one of `tools` and
   * naming a kind `entities` lists as its subject (default: none). */
  authoring?: Authoring[];
}

/** The exports for the tools, entities, prompts, resources and authoring
 * kinds given; a name given twice, or a kind whose promoting tool or
 * subject kind the plugin lacks, throws here (the build fails). */
export function definePlugin(p: PluginDefinition): Plugin {
  const entities = p.entities ?? noEntities;
  const prompts = p.prompts ?? [];
  const readables = p.resources ?? [];
  const kinds = p.authoring ?? [];
  unique("authoring kinds are named", kinds.map((k) => k.name));
  for (const k of kinds) {
    const { promotedBy, subjectKind } = k.spec();
    if (!p.tools.some((t) => t.name === promotedBy)) throw new Error(`authoring kind "${k.name}": promoted by "${promotedBy}", which is not one of the plugin's tools`);
    if (!entities.kinds.includes(subjectKind)) throw new Error(`authoring kind "${k.name}": subject kind "${subjectKind}" is not an entity kind the plugin lists`);
  }
  unique("prompts are named", prompts.map((x) => x.name));
  unique("resources or templates are named", readables.map((x) => x.name));
  unique("resources are at", readables.flatMap((x) => (x.kind === "resource" ? [x.uri] : [])));
  const find = (name: string) => {
    const t = p.tools.find((t) => t.name === name);
    if (t === undefined) throw new ToolError("unknown-tool", name);
    return t;
  };
  /** The kind named `kind` with its promoting tool, or `fail` naming the kinds authored. */
  const authorOf = (kind: string, fail: (message: string) => Error): [Authoring, Tool] => {
    const k = kinds.find((k) => k.name === kind);
    if (k === undefined) throw fail(`this plugin authors no kind "${kind}" (it authors ${JSON.stringify(kinds.map((k) => k.name))})`);
    return [k, find(k.spec().promotedBy)];
  };
  const wholeProblem = (message: string) => new Problems([{ path: "", message }]);
  return {
    tool: {
      describe: () => guard("describe", () => describe(p.tools)),
      plan: (ctx, name, args) => guard("plan", () => find(name).plan(ctx, args)),
      call: (ctx, name, args) => guard("call", () => find(name).call(ctx, args)),
    },
    entities: {
      kinds: () => guard("kinds", () => [...entities.kinds]),
      snapshot: (ctx, kind) =>
        guard("snapshot", () =>
          snapshotOf(entities, kind, ctx).map((e) => ({
            id: e.id,
            name: e.name,
            tenant: e.tenant,
            parents: e.parents ?? [],
            detail: e.detail,
          })),
        ),
    },
    prompts: {
      list: () => guard("prompts.list", () => prompts.map((x) => x.spec())),
      get: (ctx, name, args) =>
        guard("prompts.get", () => {
          const found = prompts.find((x) => x.name === name);
          if (found === undefined) throw new ToolError("unknown-tool", name);
          return found.get(ctx, args);
        }),
    },
    resources: {
      list: () => guard("resources.list", () => readables.flatMap((x) => (x.kind === "resource" ? [x.spec()] : []))),
      templates: () => guard("resources.templates", () => readables.flatMap((x) => (x.kind === "template" ? [x.spec()] : []))),
      read: (ctx, uri) => guard("resources.read", () => readFrom(readables, ctx, uri)),
    },
    authoring: {
      kinds: () => guard("authoring.kinds", () => kinds.map((k) => k.spec())),
      current: (ctx, kind, subject) => guard("authoring.current", () => authorOf(kind, invalidArguments)[0].current(ctx, subject)),
      validate: (ctx, kind, current, proposal) =>
        guard("authoring.validate", () => {
          const [k, promote] = authorOf(kind, wholeProblem);
          return k.validate(ctx, current, proposal, promote);
        }),
      diff: (ctx, kind, current, normalized) =>
        guard("authoring.diff", () => {
          const [k, promote] = authorOf(kind, invalidArguments);
          return k.diff(ctx, current, normalized, promote);
        }),
    },
  };
}

/** Refuses the plugin (at module init: the build fails) over a name given twice. */
function unique(what: string, names: string[]): void {
  names.forEach((n, i) => {
    if (names.indexOf(n) !== i) throw new Error(`two ${what} "${n}"`);
  });
}

function describe(tools: Tool[]): WitToolSpec[] {
  tools.forEach((t, i) => {
    if (tools.findIndex((u) => u.name === t.name) !== i) throw new Error(`two tools are named "${t.name}"`);
  });
  return tools.map((t) => t.spec());
}

/**
 * Runs an export: tool errors and problems pass as they are, and so does a
 * raised JSON-RPC error under Node (inside a component a raise never comes
 * back); anything else is logged and rethrown.
 */
function guard<T>(what: string, run: () => T): T {
  try {
    return run();
  } catch (e) {
    const expected = isToolError(e) || e instanceof Problems || e instanceof ProtocolError;
    if (!expected) host.log("error", `${what}: uncaught ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
    throw e;
  }
}
