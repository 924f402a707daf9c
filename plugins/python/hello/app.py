"""`hello-py`, the reference plugin in Python: `greet_py` (the Rust `hello`'s
greeting, typed arguments and an output schema) and `describe_project_py`,
which resolves a project by name or id over the plugin's own `entities`
export; the prompt `introduce_project_py` (its argument completed from the
same entities) and the resource `greetings_py` (the greetings `greet_py`
knows, as JSON); and, in `scenarios.py`, the authoring kind `scenarios` (a
project's API scenarios, authored in the host's workspace) with its
promoting tool `add_scenarios_py`. Read it as the example of how a plugin
is written with `toolhost_sdk`; `test_app.py` is how it is tested without
a build.
"""

import json
from dataclasses import dataclass
from typing import Literal

from toolhost_sdk import Ctx, Entity, InvalidArguments, Message, NameOrId, Output, backend, entities, log, prompt, resolve, resource, tool
from toolhost_sdk.exports import Authoring, Entities, Prompts, Resources, Tool  # noqa: F401 (the world's exports, for componentize-py)

import scenarios  # noqa: F401 (registers the authoring kind `scenarios` and its tool `add_scenarios_py`)

#: The backend the manifest declares (`[backends.testbench]`).
TESTBENCH = "testbench"

#: What `greet_py` says, per language.
GREETINGS = {"en": "Hello, {}!", "fr": "Bonjour, {} !", "de": "Hallo, {}!"}


@dataclass
class Greeting:
    """The answer of `greet_py`.

    Attributes:
        message: The greeting, ready to show.
    """

    message: str


@tool(title="Greet", permission="hello:read", read_only=True, idempotent=True)
def greet_py(ctx: Ctx, name: str, language: Literal["en", "fr", "de"] = "en") -> Output[Greeting]:
    """Greets someone by name, in English, French or German.

    Args:
        name: Who to greet_py.
        language: The language of the greeting (default English).
    """
    name = name.strip()
    if not name:
        raise InvalidArguments("name must not be blank")
    message = GREETINGS[language].format(name)
    return Output(Greeting(message), text=message)


@dataclass
class Project:
    """The answer of `describe_project_py`.

    Attributes:
        id: The project's id.
        name: Its name, as the caller's tenant sees it.
    """

    id: int
    name: str


@tool(title="Describe a project", permission="hello:read", read_only=True)
def describe_project_py(ctx: Ctx, project: NameOrId | None) -> Project:
    """Names a project of the test platform, given by name or id.

    Args:
        project: The project, by name or id; omit it to be asked which.
    """
    found = resolve("project", "project", project)
    log.info("described project %d for %s", found.id, ctx.principal)
    return Project(found.id, found.name)


@dataclass
class ProjectRow:
    """A row of the backend's `GET /api/projects` (other fields ignored)."""

    id: int
    name: str
    tenant: str


@entities("project")
def projects(ctx: Ctx, kind: str) -> list[Entity]:
    """Every project the test platform lists for the caller's tenant,
    each with the tenant the backend gave (the host drops the others)."""
    rows = backend.get(TESTBENCH, "/api/projects").ok().json(list[ProjectRow])
    return [Entity(r.id, r.name, r.tenant) for r in rows]


@prompt(title="Introduce a project", permission="hello:read", completes={"project": "project"})
def introduce_project_py(ctx: Ctx, project: str, language: str = "en") -> list[Message]:
    """Asks the model to introduce a project of the test platform to a newcomer.

    Args:
        project: The project, by name (completed from the caller's projects).
        language: The language of the introduction: en (default), fr or de.
    """
    if language not in GREETINGS:
        raise InvalidArguments(f"language must be one of {', '.join(GREETINGS)}")
    if not project.strip():
        raise InvalidArguments("project must not be blank")
    greeting = GREETINGS[language].format("newcomer")
    return [Message.user(f"{greeting} Introduce the project {project.strip()} in a few sentences, in language {language!r}.")]


@resource("hello://py/greetings", permission="hello:read", mime_type="application/json")
def greetings_py(ctx: Ctx) -> str:
    """The greetings greet_py knows, by language."""
    return json.dumps(GREETINGS, sort_keys=True)
