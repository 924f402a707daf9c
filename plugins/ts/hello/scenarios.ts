// hello-ts's authoring kind `scenarios`: a project's API scenarios on the
// test platform, authored in the host's workspace (a session's subject is
// `hello-ts/scenarios:<project>`), and its promoting tool
// `add_scenarios_ts`. The same kind as hello-py's, written with
// @toolhost/sdk.
//
// A proposal is `{"scenarios": [{"name": ..., "tags": [...]}]}`. `validate`
// normalizes it into the arguments of `add_scenarios_ts`: the project and
// the scenarios it does not have yet, names trimmed, tags sorted. The
// rules, each a problem at its JSON pointer:
//
// - no field but `scenarios`: 1 to MAX_SCENARIOS items, each `{name, tags}`
//   and nothing else;
// - a name is not blank, at most MAX_NAME_CHARS characters, and unique in
//   the proposal (ignoring case);
// - at most MAX_TAGS tags, each 1–50 of `[a-z0-9_-]`;
// - a scenario named like one the project has carries the same tags (a set
//   never renames, retags or removes a scenario), and at least one is new.
//
// `diff` names each new scenario `added`. Both are pure; `current` is one
// GET (`/api/projects/{id}/tests`), whose version the backend moves
// whenever the project's tests change.

import { backend, change, defineAuthoring, defineTool, log, pointer, Problems, s, wholeProposal, type Infer, type Problem } from "@toolhost/sdk";

/** The backend's name in toolhost.toml (`[backends.testbench]`). */
const BACKEND = "testbench";
/** Most scenarios one proposal may add: a person reads each before promoting. */
export const MAX_SCENARIOS = 20;
/** Longest scenario name, in characters (the backend's limit). */
const MAX_NAME_CHARS = 200;
/** Most tags a scenario may carry (the backend's limit). */
const MAX_TAGS = 16;
/** A tag: a filter word, as the backend and the `run_by_tag` tool use them. */
const TAG = /^[a-z0-9_-]{1,50}$/;

const scenario = s.object({
  name: s.string({ description: "Its name, unique in its project." }),
  tags: s.array(s.string(), { description: "Its tags, sorted." }),
});
type Scenario = Infer<typeof scenario>;

const addInput = s.object({
  project: s.integer({ description: "The project's id." }),
  scenarios: s.array(scenario, { description: "The scenarios to create, each new to the project." }),
});

/** A scenario the backend created (`POST /api/scenarios`; other fields ignored). */
interface Created {
  id: number;
  name: string;
}

export const addScenarios = defineTool({
  name: "add_scenarios_ts",
  title: "Add scenarios",
  description:
    "Adds API scenarios to a project of the test platform, one request each. It promotes a proposal of the authoring kind `scenarios`, whose normalized form is its arguments.",
  permission: "hello:write",
  input: addInput,
  output: s.object({ added: s.array(s.object({ id: s.integer(), name: s.string() })) }),
  run: ({ project, scenarios }) => {
    const added = scenarios.map((x) => {
      const row = backend.post(BACKEND, "/api/scenarios", { project_id: project, name: x.name, tags: x.tags }).ok().json<Created>();
      return { id: row.id, name: row.name };
    });
    log.info(`added ${added.length} scenarios to project ${project}`);
    return { added };
  },
});

/** The current state of a subject: a project's API scenarios. */
interface ProjectScenarios {
  project: number;
  scenarios: Scenario[];
}

/** The answer of `GET /api/projects/{id}/tests` (other fields ignored). */
interface ProjectTests {
  version: string;
  tests: Array<{ name: string; kind: string; tags: string[] }>;
}

export const scenarios = defineAuthoring<ProjectScenarios, Infer<typeof addInput>>({
  name: "scenarios",
  description:
    'A project\'s API scenarios: propose {"scenarios": [{"name", "tags"}]}; promoting creates each one the project does not have (add_scenarios_ts). A set never removes, renames or retags a scenario.',
  subjectKind: "project",
  promotedBy: "add_scenarios_ts",
  current: (project) => {
    const found = backend.get(BACKEND, `/api/projects/${project}/tests`).ok().json<ProjectTests>();
    const list = found.tests.filter((t) => t.kind === "api_scenario").map((t) => ({ name: t.name, tags: [...t.tags].sort() }));
    return { version: found.version, body: { project, scenarios: list } };
  },
  validate: (current, proposal) => {
    if (typeof proposal !== "object" || proposal === null || Array.isArray(proposal)) {
      throw new Problems([wholeProposal('a proposal is an object: {"scenarios": [{"name", "tags"}]}')]);
    }
    const given = proposal as Record<string, unknown>;
    const problems: Problem[] = Object.keys(given)
      .filter((k) => k !== "scenarios")
      .map((k) => ({ path: pointer(k), message: `unknown field "${k}" (expected: scenarios)` }));
    const items = given.scenarios;
    if (!Array.isArray(items) || items.length < 1 || items.length > MAX_SCENARIOS) {
      throw new Problems([...problems, { path: pointer("scenarios"), message: `expected a list of 1 to ${MAX_SCENARIOS} scenarios` }]);
    }
    const have = new Map(current.scenarios.map((x) => [x.name.toLowerCase(), x]));
    const seen = new Set<string>();
    const added: Scenario[] = [];
    items.forEach((item, i) => {
      const x = scenarioOf(item, ["scenarios", i], problems);
      if (x === undefined) return;
      const key = x.name.toLowerCase();
      const old = have.get(key);
      if (seen.has(key)) problems.push({ path: pointer("scenarios", i, "name"), message: `"${x.name}" is proposed twice` });
      else if (old !== undefined && old.tags.join() !== x.tags.join()) {
        problems.push({ path: pointer("scenarios", i, "tags"), message: `the project has "${old.name}" tagged [${old.tags.join(", ")}]: a set never retags` });
      } else if (old === undefined) added.push(x);
      seen.add(key);
    });
    if (problems.length === 0 && added.length === 0) problems.push(wholeProposal("nothing to add: the project has every scenario proposed"));
    if (problems.length > 0) throw new Problems(problems);
    return { project: current.project, scenarios: added };
  },
  diff: (_current, normalized) => normalized.scenarios.map((x) => change.added(x.name, x)),
});

/** `item` as a scenario, or undefined with its problems added. */
function scenarioOf(item: unknown, at: Array<string | number>, problems: Problem[]): Scenario | undefined {
  if (typeof item !== "object" || item === null || Array.isArray(item)) {
    problems.push({ path: pointer(...at), message: "expected an object {name, tags}" });
    return undefined;
  }
  const before = problems.length;
  const { name, tags = [], ...rest } = item as { name?: unknown; tags?: unknown };
  for (const k of Object.keys(rest)) problems.push({ path: pointer(...at, k), message: `unknown field "${k}" (expected: name, tags)` });
  if (typeof name !== "string" || name.trim() === "") problems.push({ path: pointer(...at, "name"), message: "a name is a string that is not blank" });
  else if ([...name.trim()].length > MAX_NAME_CHARS) problems.push({ path: pointer(...at, "name"), message: `a name is at most ${MAX_NAME_CHARS} characters` });
  if (!Array.isArray(tags) || tags.length > MAX_TAGS) problems.push({ path: pointer(...at, "tags"), message: `expected a list of at most ${MAX_TAGS} tags` });
  else {
    tags.forEach((t, j) => {
      if (typeof t !== "string" || !TAG.test(t)) problems.push({ path: pointer(...at, "tags", j), message: "a tag is 1-50 of [a-z0-9_-]" });
    });
  }
  if (problems.length > before) return undefined;
  return { name: (name as string).trim(), tags: [...new Set(tags as string[])].sort() };
}
