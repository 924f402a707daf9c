"""hello-py's authoring kind `scenarios`: a project's API scenarios on the
test platform, authored in the host's workspace (a session's subject is
`hello-py/scenarios:<project>`), and its promoting tool
`add_scenarios_py`.

A proposal is `{"scenarios": [{"name": ..., "tags": [...]}]}`. `validate`
normalizes it into the arguments of `add_scenarios_py`: the project and
the scenarios it does not have yet, names trimmed, tags sorted. The rules,
each a problem at its JSON pointer:

- no field but `scenarios`: 1 to `MAX_SCENARIOS` items, each `{name, tags}`
  and nothing else;
- a name is not blank, at most `MAX_NAME_CHARS` characters, and unique in
  the proposal (ignoring case);
- at most `MAX_TAGS` tags, each 1–50 of `[a-z0-9_-]`;
- a scenario named like one the project has carries the same tags (a set
  never renames, retags or removes a scenario), and at least one is new.

`diff` names each new scenario `added`. Both are pure; `current` is one GET
(`/api/projects/{id}/tests`), whose version the backend moves whenever the
project's tests change.
"""

import re
from dataclasses import dataclass, field
from typing import Any

from toolhost_sdk import Change, Ctx, Current, Problem, Problems, author, backend, log, tool
from toolhost_sdk.authoring import pointer

#: The backend the manifest declares (`[backends.testbench]`).
TESTBENCH = "testbench"
#: Most scenarios one proposal may add: a person reads each before promoting.
MAX_SCENARIOS = 20
#: Longest scenario name, in characters (the backend's limit).
MAX_NAME_CHARS = 200
#: Most tags a scenario may carry (the backend's limit).
MAX_TAGS = 16
#: A tag: a filter word, as the backend and the `run_by_tag` tool use them.
TAG = re.compile(r"^[a-z0-9_-]{1,50}$")


@dataclass
class Scenario:
    """An API scenario.

    Attributes:
        name: Its name, unique in its project.
        tags: Its tags, sorted.
    """

    name: str
    tags: list[str] = field(default_factory=list)


@dataclass
class ProjectScenarios:
    """The current state of a subject: a project's API scenarios."""

    project: int
    scenarios: list[Scenario]


@dataclass
class AddScenarios:
    """A normalized proposal: exactly the arguments of `add_scenarios_py`."""

    project: int
    scenarios: list[Scenario]


@dataclass
class Created:
    """A scenario `add_scenarios_py` created.

    Attributes:
        id: Its id on the test platform.
        name: Its name.
    """

    id: int
    name: str


@dataclass
class Added:
    """The answer of `add_scenarios_py`.

    Attributes:
        added: The scenarios created, in the order given.
    """

    added: list[Created]


@tool(title="Add scenarios", permission="hello:write")
def add_scenarios_py(ctx: Ctx, project: int, scenarios: list[Scenario]) -> Added:
    """Adds API scenarios to a project of the test platform, one request
    each. It promotes a proposal of the authoring kind `scenarios`, whose
    normalized form is its arguments.

    Args:
        project: The project's id.
        scenarios: The scenarios to create, each new to the project.
    """
    created = []
    for s in scenarios:
        body = {"project_id": project, "name": s.name, "tags": s.tags}
        created.append(backend.post(TESTBENCH, "/api/scenarios", body).ok().json(Created))
    log.info("added %d scenarios to project %d", len(created), project)
    return Added(created)


@dataclass
class _TestRow:
    """A test of `GET /api/projects/{id}/tests` (other fields ignored)."""

    name: str
    kind: str
    tags: list[str]


@dataclass
class _ProjectTests:
    """The answer of `GET /api/projects/{id}/tests` (other fields ignored)."""

    version: str
    tests: list[_TestRow]


@author("scenarios", subject_kind="project", promoted_by="add_scenarios_py")
class ScenarioSets:
    """A project's API scenarios: propose {"scenarios": [{"name", "tags"}]};
    promoting creates each one the project does not have (add_scenarios_py).
    A set never removes, renames or retags a scenario."""

    def current(self, ctx: Ctx, subject: int) -> Current[ProjectScenarios]:
        found = backend.get(TESTBENCH, f"/api/projects/{subject}/tests").ok().json(_ProjectTests)
        scenarios = [Scenario(t.name, sorted(t.tags)) for t in found.tests if t.kind == "api_scenario"]
        return Current(found.version, ProjectScenarios(subject, scenarios))

    def validate(self, ctx: Ctx, current: ProjectScenarios, proposal: Any) -> AddScenarios:
        if not isinstance(proposal, dict):
            raise Problems([Problem.whole('a proposal is an object: {"scenarios": [{"name", "tags"}]}')])
        problems = [Problem(pointer(k), f"unknown field {k!r} (expected: scenarios)") for k in proposal if k != "scenarios"]
        items = proposal.get("scenarios")
        if not isinstance(items, list) or not 1 <= len(items) <= MAX_SCENARIOS:
            raise Problems([*problems, Problem(pointer("scenarios"), f"expected a list of 1 to {MAX_SCENARIOS} scenarios")])
        have = {s.name.casefold(): s for s in current.scenarios}
        seen: set[str] = set()
        new = []
        for i, item in enumerate(items):
            s = _scenario(item, ("scenarios", i), problems)
            if s is None:
                continue
            key, old = s.name.casefold(), have.get(s.name.casefold())
            if key in seen:
                problems.append(Problem(pointer("scenarios", i, "name"), f"{s.name!r} is proposed twice"))
            elif old is not None and old.tags != s.tags:
                problems.append(Problem(pointer("scenarios", i, "tags"), f"the project has {old.name!r} tagged {old.tags}: a set never retags"))
            elif old is None:
                new.append(s)
            seen.add(key)
        if not problems and not new:
            problems.append(Problem.whole("nothing to add: the project has every scenario proposed"))
        if problems:
            raise Problems(problems)
        return AddScenarios(current.project, new)

    def diff(self, ctx: Ctx, current: ProjectScenarios, normalized: AddScenarios) -> list[Change]:
        return [Change.added(s.name, s) for s in normalized.scenarios]


def _scenario(item: Any, at: tuple[str | int, ...], problems: list[Problem]) -> Scenario | None:
    """`item` as a scenario, or None with its problems added."""
    if not isinstance(item, dict):
        problems.append(Problem(pointer(*at), "expected an object {name, tags}"))
        return None
    before = len(problems)
    problems += [Problem(pointer(*at, k), f"unknown field {k!r} (expected: name, tags)") for k in item if k not in ("name", "tags")]
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append(Problem(pointer(*at, "name"), "a name is a string that is not blank"))
    elif len(name.strip()) > MAX_NAME_CHARS:
        problems.append(Problem(pointer(*at, "name"), f"a name is at most {MAX_NAME_CHARS} characters"))
    tags = item.get("tags", [])
    if not isinstance(tags, list) or len(tags) > MAX_TAGS:
        problems.append(Problem(pointer(*at, "tags"), f"expected a list of at most {MAX_TAGS} tags"))
    else:
        bad = [j for j, t in enumerate(tags) if not isinstance(t, str) or not TAG.match(t)]
        problems += [Problem(pointer(*at, "tags", j), "a tag is 1-50 of [a-z0-9_-]") for j in bad]
    if len(problems) > before:
        return None
    return Scenario(name.strip(), sorted(set(tags)))
