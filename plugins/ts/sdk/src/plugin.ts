// `definePlugin`: the WIT exports `tool` and `entities` of the world
// `catalog-plugin`, answered from a list of tools and an entities export.
// The plugin's entry module re-exports them under those names, which is
// how jco componentize finds an export:
//
//     const plugin = definePlugin({ tools: [greet], entities: projects });
//     export const tool = plugin.tool;
//     export const entities = plugin.entities;
//
// Every export runs in a fresh instance. A ToolError crosses as the WIT
// `tool-error`; anything else thrown is a bug and traps the instance (the
// host answers TRAPPED and discards it), after the SDK logs its message at
// `error`, since a trap itself says only "unreachable".

import { isToolError, ToolError } from "./errors.ts";
import { noEntities, snapshotOf, type Entities } from "./entities.ts";
import * as host from "./host.ts";
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
}

/** The exports for `tools` (unique names) and `entities` (default: none). */
export function definePlugin(p: { tools: Tool[]; entities?: Entities }): Plugin {
  const entities = p.entities ?? noEntities;
  const find = (name: string) => {
    const t = p.tools.find((t) => t.name === name);
    if (t === undefined) throw new ToolError("unknown-tool", name);
    return t;
  };
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
  };
}

function describe(tools: Tool[]): WitToolSpec[] {
  tools.forEach((t, i) => {
    if (tools.findIndex((u) => u.name === t.name) !== i) throw new Error(`two tools are named "${t.name}"`);
  });
  return tools.map((t) => t.spec());
}

/** Runs an export: tool errors pass as they are, anything else is logged and rethrown. */
function guard<T>(what: string, run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (!isToolError(e)) host.log("error", `${what}: uncaught ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
    throw e;
  }
}
