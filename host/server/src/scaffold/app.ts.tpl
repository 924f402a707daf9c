// `{{name}}`: {{description}}
//
// One tool to start from. Each tool is a `defineTool` whose schema (built
// with `s`) is both the JSON Schema the host lists and the check of the
// arguments; the host runs every call in a fresh sandbox with the
// permission the manifest (`toolhost.toml`) declares.

import { definePlugin, defineTool, invalidArguments, log, s } from "@toolhost/sdk";

const greet = defineTool({
  name: "greet",
  description: "Greets someone by name.",
  permission: "{{name}}:read",
  readOnly: true,
  input: s.object({ name: s.string({ description: "Who to greet." }) }),
  output: s.object({ message: s.string({ description: "The greeting." }) }),
  run: ({ name }) => {
    const who = name.trim();
    if (who === "") throw invalidArguments("name must not be blank");
    log.info(`greeting ${who}`);
    return { message: `Hello, ${who}!` };
  },
});

const plugin = definePlugin({ tools: [greet] });

/** The world's exports, for componentize. */
export const tool = plugin.tool;
export const entities = plugin.entities;
export const prompts = plugin.prompts;
export const resources = plugin.resources;
export const authoring = plugin.authoring;
