// Resources a plugin exports (MCP `resources/list`,
// `resources/templates/list`, `resources/read`), through the WIT
// `resources` export, and resource updates, through the `notify` import.
//
//     const runbook = defineResource({
//       uri: "docs://runbook", name: "runbook", description: "The on-call runbook.",
//       mimeType: "text/markdown", permission: "docs:read",
//       read: () => "# Runbook",
//     });
//     const columns = defineTemplate({
//       uriTemplate: "db://{table}/columns", name: "columns", description: "A table's columns.",
//       mimeType: "text/plain", permission: "docs:read", completes: { table: "table" },
//       read: ({ table }) => `${table}: id`,
//     });
//     definePlugin({ tools, resources: [runbook, columns] });
//
// A resource sits at a fixed URI; a template (RFC 6570 level 1: each `{var}`
// matches one or more characters other than `/`, `?` and `#`) answers every
// URI of its shape, its `read` given the variables by name. Each needs a
// permission, and the manifest declares it by name (`[resources.NAME]
// permission = "…"`). A read answers a string (text of the declared
// `mimeType` at the URI read), bytes (a blob), or `contents.text(…)` /
// `contents.blob(…)` entries; it runs in a fresh sandbox that may not have
// side effects (GET and HEAD backend requests only) but may ask the client.
// `completes: {var: kind}` marks a template variable that names a thing of
// an entity kind the plugin lists: the host completes it.
//
// A tool call that changes a resource tells its subscribers with
// `resources.updated(uri)` (MCP `notifications/resources/updated`, to
// clients of the caller's tenant that subscribed to the URI and may read
// it). The host accepts only a URI the plugin's `resources` export lists or
// one matching its templates, at most 16 a call, each told once, only from a
// tool call (not a plan or a read).

import { failed, notFound } from "./errors.ts";
import * as host from "./host.ts";
import { NAME } from "./prompts.ts";
import { heading, splitPermission, type Ctx } from "./tool.ts";

/**
 * Tells the clients subscribed to `uri` that the resource changed. A
 * refusal throws `failed` naming the URI and quoting the host's reason.
 */
export function updated(uri: string): void {
  const a = host.resourceUpdated(uri);
  if (!a.ok) throw failed(`the update of resource "${uri}" was refused: ${a.error}`);
}

/** The module as one namespace: `resources.updated(…)`. */
export const resources = { updated };

/** One content of a read: the WIT `resource-contents`. */
export interface ResourceContents {
  uri: string;
  mimeType?: string;
  body: { tag: "text"; val: string } | { tag: "blob"; val: Uint8Array };
}

/** Contents, by kind. */
export const contents = {
  text: (uri: string, mimeType: string | undefined, text: string): ResourceContents => ({ uri, mimeType, body: { tag: "text", val: text } }),
  blob: (uri: string, mimeType: string | undefined, bytes: Uint8Array): ResourceContents => ({ uri, mimeType, body: { tag: "blob", val: bytes } }),
};

/** What a read answers. */
export type ReadAnswer = string | Uint8Array | ResourceContents | ResourceContents[];

interface Described {
  /** 1–64 of `[A-Za-z0-9_.-]`, unique among the plugin's resources and templates: the manifest's key. */
  name: string;
  title?: string;
  description: string;
  mimeType?: string;
  /** `resource:action`, as in the manifest. */
  permission: string;
}

/** What `defineResource` takes. */
export interface ResourceDefinition extends Described {
  /** A URI with a scheme, unique in the plugin. */
  uri: string;
  read(ctx: Ctx): ReadAnswer;
}

/** What `defineTemplate` takes. */
export interface TemplateDefinition<V extends string> extends Described {
  /** `scheme://…{var}…`: RFC 6570 level 1. */
  uriTemplate: string;
  /** Variable to the entity kind whose names complete it. */
  completes?: Partial<Record<V, string>>;
  /** The contents at `uri`, given its variables by name. */
  read(vars: Record<V, string>, ctx: Ctx, uri: string): ReadAnswer;
}

/** The WIT `resource-spec`. */
export interface WitResourceSpec {
  uri: string;
  name: string;
  title?: string;
  description: string;
  mimeType?: string;
  permission: { resource: string; action: string };
}

/** The WIT `template-spec`. */
export interface WitTemplateSpec extends Omit<WitResourceSpec, "uri"> {
  uriTemplate: string;
  completes: Array<[string, string]>;
}

/** A defined resource, as `definePlugin` lists it. */
export interface Resource {
  readonly kind: "resource";
  readonly name: string;
  readonly uri: string;
  spec(): WitResourceSpec;
  read(ctx: Ctx): ResourceContents[];
}

/** A defined template, as `definePlugin` lists it. */
export interface Template {
  readonly kind: "template";
  readonly name: string;
  spec(): WitTemplateSpec;
  /** The variables when `uri` has the template's shape. */
  match(uri: string): Record<string, string> | undefined;
  read(ctx: Ctx, uri: string): ResourceContents[];
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\S*$/;

function described(kind: string, d: Described): { where: string; permission: { resource: string; action: string } } {
  const where = `${kind} "${d.name}"`;
  if (!NAME.test(d.name)) throw new Error(`${where}: a name is 1-64 of [A-Za-z0-9_.-]`);
  return { where, permission: splitPermission(where, d.permission) };
}

/** Defines a resource at a fixed URI; a bad name, URI or permission throws here. */
export function defineResource(def: ResourceDefinition): Resource {
  const { where, permission } = described("resource", def);
  if (!SCHEME.test(def.uri)) throw new Error(`${where}: URI "${def.uri}" has no scheme`);
  return {
    kind: "resource",
    name: def.name,
    uri: def.uri,
    spec: () => ({ uri: def.uri, ...heading(def), mimeType: def.mimeType, permission }),
    read: (ctx) => contentsOf(where, def.uri, def.mimeType, def.read(ctx)),
  };
}

/** Defines a template; a bad name, template, completion or permission throws here. */
export function defineTemplate<V extends string = string>(def: TemplateDefinition<V>): Template {
  const { where, permission } = described("template", def);
  const { pattern, variables } = compile(where, def.uriTemplate);
  const completes = Object.entries(def.completes ?? {}) as Array<[string, string]>;
  for (const [v, kind] of completes) {
    if (!variables.includes(v)) throw new Error(`${where}: completes "${v}", which is not one of its variables`);
    if (typeof kind !== "string" || kind === "") throw new Error(`${where}: variable "${v}" completes an empty kind`);
  }
  const match = (uri: string): Record<string, string> | undefined => {
    const m = pattern.exec(uri);
    if (m === null) return undefined;
    return Object.fromEntries(variables.map((v, i) => [v, m[i + 1]]));
  };
  return {
    kind: "template",
    name: def.name,
    spec: () => ({
      uriTemplate: def.uriTemplate,
      ...heading(def),
      mimeType: def.mimeType,
      permission,
      completes,
    }),
    match,
    read: (ctx, uri) => {
      const vars = match(uri);
      if (vars === undefined) throw notFound(`no resource at ${uri}`);
      return contentsOf(where, uri, def.mimeType, def.read(vars as Record<V, string>, ctx, uri));
    },
  };
}

/** The pattern a level 1 template matches, and its variables in order. */
function compile(where: string, template: string): { pattern: RegExp; variables: string[] } {
  if (!SCHEME.test(template)) throw new Error(`${where}: "${template}" has no scheme`);
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const variables: string[] = [];
  let pattern = "";
  let at = 0;
  for (const m of template.matchAll(/\{([A-Za-z0-9_]+)\}/g)) {
    const literal = template.slice(at, m.index);
    if (/[{}]/.test(literal) || (literal === "" && variables.length > 0)) {
      throw new Error(`${where}: "${template}" is not an RFC 6570 level 1 template (two variables need a literal between them)`);
    }
    if (variables.includes(m[1])) throw new Error(`${where}: "${template}" names "${m[1]}" twice`);
    pattern += `${escape(literal)}([^/?#]+?)`;
    variables.push(m[1]);
    at = (m.index ?? 0) + m[0].length;
  }
  const rest = template.slice(at);
  if (/[{}]/.test(rest)) throw new Error(`${where}: "${template}" is not an RFC 6570 level 1 template`);
  return { pattern: new RegExp(`^${pattern}${escape(rest)}$`), variables };
}

function contentsOf(where: string, uri: string, mimeType: string | undefined, answer: ReadAnswer): ResourceContents[] {
  if (typeof answer === "string") return [contents.text(uri, mimeType, answer)];
  if (answer instanceof Uint8Array) return [contents.blob(uri, mimeType, answer)];
  const items = Array.isArray(answer) ? answer : [answer];
  items.forEach((c, i) => {
    if (typeof c !== "object" || c === null || typeof c.uri !== "string" || typeof c.body?.tag !== "string") {
      throw failed(`${where} answered ${JSON.stringify(c)} as contents ${i}: answer a string, bytes or contents.text(…)/contents.blob(…)`);
    }
  });
  return items;
}

/** The contents at `uri`: the resource listed there, else the first template it matches, else `not-found`. */
export function readFrom(list: ReadonlyArray<Resource | Template>, ctx: Ctx, uri: string): ResourceContents[] {
  const fixed = list.find((r): r is Resource => r.kind === "resource" && r.uri === uri);
  if (fixed !== undefined) return fixed.read(ctx);
  const t = list.find((r): r is Template => r.kind === "template" && r.match(uri) !== undefined);
  if (t !== undefined) return t.read(ctx, uri);
  throw notFound(`no resource at ${uri}`);
}
