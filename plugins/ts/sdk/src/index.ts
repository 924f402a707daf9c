// @toolhost/sdk: a toolhost tool plugin in TypeScript.
//
// The guest side of the WIT world `catalog-plugin` (wit/ at the repository
// root): `definePlugin` answers the host's `describe`, `plan` and `call`
// from `defineTool`s and lists `defineEntities` for the host's resolver;
// each tool's input schema (`s.object(…)`) is both its JSON Schema and the
// check of its arguments; `ToolError`s (`invalidArguments`, `notFound`,
// `failed`) cross as the WIT `tool-error`. The host's imports are wrapped
// here: `log`, `progress`, `resolve` (names to ids), `backend` (HTTP to
// the manifest's backends) and `checkpoint`. The SDK enforces nothing:
// budgets, permissions, approvals, tenancy and the resolver's decisions
// are the host's.
//
//     import { definePlugin, defineTool, s } from "@toolhost/sdk";
//
//     const greet = defineTool({
//       name: "greet",
//       description: "Greets someone by name.",
//       permission: "hello:read",
//       readOnly: true,
//       input: s.object({ name: s.string({ description: "Who to greet." }) }),
//       output: s.object({ message: s.string() }),
//       run: ({ name }) => ({ message: `Hello, ${name}!` }),
//     });
//
//     const plugin = definePlugin({ tools: [greet] });
//     export const tool = plugin.tool;
//     export const entities = plugin.entities;
//
// Built with `jco componentize --backend qjs` (plugins/ts/README.md).
// Under Node (unit tests) run with `--import @toolhost/sdk/register`, and
// drive the fakes of `@toolhost/sdk/testing`.

export { ToolError, invalidArguments, notFound, failed, isToolError } from "./errors.ts";
export { s, type Schema, type Infer, type NameOrId, type JsonSchema } from "./schema.ts";
export {
  defineTool,
  withText,
  withContent,
  content,
  parseArguments,
  type ContentBlock,
  type ResourceLink,
  type Ctx,
  type Plan,
  type Target,
  type Risk,
  type Tool,
} from "./tool.ts";
export { defineEntities, noEntities, type Entities, type Entity, type Parent } from "./entities.ts";
export { definePlugin, type Plugin } from "./plugin.ts";
export { log, progress, type Level } from "./log.ts";
export { resolve, type Query, type Resolved } from "./resolve.ts";
export { backend, Response, type Request, type Method } from "./backend.ts";
export { checkpoint, type CheckpointInfo } from "./checkpoint.ts";
