// hello-ts, the reference plugin in TypeScript: `greet` (as plugins/hello's)
// and `describe_project`, which resolves a project by name or id over the
// plugin's own entities, listed from the testbench backend. Read it as the
// example of a plugin written with @toolhost/sdk.

import { backend, defineEntities, definePlugin, defineTool, invalidArguments, log, resolve, s, withText } from "@toolhost/sdk";

/** The backend's name in toolhost.toml (`[backends.testbench]`). */
const BACKEND = "testbench";

/** A row of the backend's `GET /api/projects`. */
interface ProjectRow {
  id: number;
  name: string;
  tenant: string;
}

const greet = defineTool({
  name: "greet_ts",
  title: "Greet",
  description: "Greets someone by name.",
  permission: "hello:read",
  readOnly: true,
  idempotent: true,
  input: s.object({ name: s.string({ description: "Who to greet." }) }),
  output: s.object({ message: s.string({ description: "The greeting, ready to show." }) }),
  run: ({ name }) => {
    const who = name.trim();
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

const plugin = definePlugin({ tools: [greet, describeProject], entities: projects });

export const tool = plugin.tool;
export const entities = plugin.entities;
