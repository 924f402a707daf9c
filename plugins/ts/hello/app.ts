// hello-ts, the reference plugin in TypeScript: `greet` (as plugins/hello's,
// but it asks the person for a name it was not given, through the client)
// and `describe_project`, which resolves a project by name or id over the
// plugin's own entities, listed from the testbench backend; the prompt
// `introduce_project_ts` (its argument completed from the same entities)
// and the resource `greetings_ts`; and, in scenarios.ts, the authoring kind
// `scenarios` (a project's API scenarios, authored in the host's
// workspace) with its promoting tool `add_scenarios_ts`. Read it as the
// example of a plugin written with @toolhost/sdk.

import {
  backend,
  client,
  ClientError,
  defineEntities,
  definePlugin,
  definePrompt,
  defineResource,
  defineTool,
  invalidArguments,
  log,
  message,
  resolve,
  s,
  withText,
} from "@toolhost/sdk";

import { addScenarios, scenarios } from "./scenarios.ts";

/** The backend's name in toolhost.toml (`[backends.testbench]`). */
const BACKEND = "testbench";

/** A row of the backend's `GET /api/projects`. */
interface ProjectRow {
  id: number;
  name: string;
  tenant: string;
}

/** The form `greet_ts` asks the person when it was given no name. */
const NAME_FORM = { type: "object", properties: { name: { type: "string", description: "Who to greet." } }, required: ["name"] };

/**
 * Asks the person whom to greet (the `client` import, key `name`). On a
 * 2026-07-28 request the call ends here and runs again with the answer; a
 * client that cannot be asked leaves the name missing.
 */
function askName(): string {
  try {
    const answer = client.elicit("name", "Whom should I greet?", NAME_FORM);
    if (answer.action !== "accept") throw invalidArguments(`no name to greet: the person chose ${answer.action}`);
    return String(answer.content.name);
  } catch (e) {
    if (e instanceof ClientError && e.kind === "unsupported") throw invalidArguments('missing field "name" (and the client cannot be asked for it)');
    throw e;
  }
}

const greet = defineTool({
  name: "greet_ts",
  title: "Greet",
  description: "Greets someone by name; without one, asks the person whom to greet.",
  permission: "hello:read",
  readOnly: true,
  idempotent: true,
  input: s.object({ name: s.optional(s.string({ description: "Who to greet; omit it to be asked." })) }),
  output: s.object({ message: s.string({ description: "The greeting, ready to show." }) }),
  run: ({ name }) => {
    const who = (name ?? askName()).trim();
    if (who === "") throw invalidArguments("name must not be blank");
    const message = `Hello, ${who}!`;
    return withText({ message }, message);
  },
});

const describeProject = defineTool({
  name: "describe_project_ts",
  title: "Describe a project",
  description: "Tells which project a name or id means: its id and name as your tenant sees it.",
  permission: "hello:read",
  readOnly: true,
  idempotent: true,
  input: s.object({
    project: s.optional(s.nameOrId({ description: "The project, by name or id; omit it to be asked." })),
  }),
  output: s.object({ id: s.integer(), name: s.string() }),
  run: ({ project }) => {
    const found = resolve({ kind: "project", field: "project", value: project });
    log.info(`described project ${found.id}`);
    return withText(found, `Project ${found.name} (#${found.id}).`);
  },
});

/** Projects, for the host's resolver: the backend's rows with the tenant it gave. */
const projects = defineEntities({
  kinds: ["project"],
  snapshot: () =>
    backend
      .get(BACKEND, "/api/projects")
      .ok()
      .json<ProjectRow[]>()
      .map((p) => ({ id: p.id, name: p.name, tenant: p.tenant })),
});

/** What `introduce_project_ts` greets the newcomer with, per language. */
const GREETINGS: Record<string, string> = { en: "Hello, newcomer!", fr: "Bonjour, newcomer !", de: "Hallo, newcomer!" };

const introduceProject = definePrompt({
  name: "introduce_project_ts",
  title: "Introduce a project",
  description: "Asks the model to introduce a project of the test platform to a newcomer.",
  permission: "hello:read",
  arguments: {
    project: { description: "The project, by name (completed from your projects).", required: true, completes: "project" },
    language: { description: "The language of the introduction: en (default), fr or de." },
  },
  get: ({ project, language = "en" }) => {
    const greeting = GREETINGS[language];
    if (greeting === undefined) throw invalidArguments(`language must be one of ${Object.keys(GREETINGS).join(", ")}`);
    if (project.trim() === "") throw invalidArguments("project must not be blank");
    return [message.user(`${greeting} Introduce the project ${project.trim()} in a few sentences, in language "${language}".`)];
  },
});

const greetings = defineResource({
  uri: "hello://ts/greetings",
  name: "greetings_ts",
  description: "The greetings introduce_project_ts opens with, by language.",
  mimeType: "application/json",
  permission: "hello:read",
  read: () => JSON.stringify(GREETINGS),
});

const plugin = definePlugin({
  tools: [greet, describeProject, addScenarios],
  entities: projects,
  prompts: [introduceProject],
  resources: [greetings],
  authoring: [scenarios],
});

// The five exports of the world `mcp-plugin`, by the names componentize looks for.
export const tool = plugin.tool;
export const entities = plugin.entities;
export const prompts = plugin.prompts;
export const resources = plugin.resources;
export const authoring = plugin.authoring;
