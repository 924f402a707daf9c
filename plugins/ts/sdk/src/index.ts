// @toolhost/sdk: a toolhost tool plugin in TypeScript.
//
// The guest side of the WIT world `mcp-plugin` of the contract
// `toolhost:plugin@0.2.0` (the package's version is the contract's):
// `definePlugin` answers the host's `describe`, `plan` and `call`
// from `defineTool`s, lists `defineEntities` for the host's resolver, and
// lists and fills in `definePrompt`s and lists and reads
// `defineResource`s and `defineTemplate`s;
// each tool's input schema (`s.object(…)`) is both its JSON Schema and the
// check of its arguments; `ToolError`s (`invalidArguments`, `notFound`,
// `failed`) cross as the WIT `tool-error`. The host's imports are wrapped
// here: `log`, `progress`, `resolve` (names to ids), `backend` (HTTP to
// the manifest's backends), `checkpoint`, `client` (asking the MCP client:
// a form, its model, its roots), `resources.updated` (telling
// subscribers a resource changed) and `protocol.raise` (ending the call
// with a JSON-RPC error instead of a tool result). `defineAuthoring`
// answers the host's authoring sessions (a subject's current state, a
// proposal validated and diffed; see authoring.ts). The SDK enforces
// nothing: budgets, permissions, approvals, tenancy and the resolver's
// decisions are the host's.
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
//     export const tool = plugin.tool;           // the world's five exports
//     export const entities = plugin.entities;
//     export const prompts = plugin.prompts;
//     export const resources = plugin.resources;
//     export const authoring = plugin.authoring;
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
export { definePlugin, type Plugin, type PluginDefinition } from "./plugin.ts";
export {
  defineAuthoring,
  change,
  pointer,
  escapePointer,
  wholeProposal,
  Problems,
  type Authoring,
  type AuthoringDefinition,
  type Change,
  type ChangeOp,
  type Current,
  type Problem,
} from "./authoring.ts";
export {
  definePrompt,
  message,
  type Prompt,
  type PromptArgs,
  type PromptArgumentDefinition,
  type PromptDefinition,
  type PromptMessage,
  type Role,
} from "./prompts.ts";
export { log, progress, type Level } from "./log.ts";
export { resolve, type Query, type Resolved } from "./resolve.ts";
export { backend, Response, type Request, type Method } from "./backend.ts";
export { checkpoint, type CheckpointInfo } from "./checkpoint.ts";
export { protocol, ProtocolError } from "./protocol.ts";
export {
  client,
  input,
  ClientError,
  type ClientAnswer,
  type ClientErrorKind,
  type Elicitation,
  type Input,
  type Root,
  type Sampled,
  type SamplingMessage,
  type SamplingRequest,
  type Support,
} from "./client.ts";
export {
  resources,
  contents,
  defineResource,
  defineTemplate,
  type ReadAnswer,
  type Resource,
  type ResourceContents,
  type ResourceDefinition,
  type Template,
  type TemplateDefinition,
} from "./resources.ts";
