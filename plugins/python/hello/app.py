"""`hello-py`, the reference plugin in Python: `greet_py` (the Rust `hello`'s
greeting, typed arguments and an output schema) and `describe_project_py`,
which resolves a project by name or id over the plugin's own `entities`
export. Read it as the example of how a plugin is written with
`toolhost_sdk`; `test_app.py` is how its tools are tested without a build.
"""

from dataclasses import dataclass
from typing import Literal

from toolhost_sdk import Ctx, Entity, InvalidArguments, NameOrId, Output, backend, entities, log, resolve, tool
from toolhost_sdk.exports import Entities, Tool  # noqa: F401 (the world's exports, for componentize-py)

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
