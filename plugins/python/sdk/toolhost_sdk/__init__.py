"""The guest SDK for Python: a toolhost tool plugin in about thirty lines.

This package owns the plugin side of the WIT world `mcp-plugin` of the
contract `toolhost:plugin@0.2.0` (the package's version is the
contract's), for components built by componentize-py: it answers the
host's `describe`, `plan` and `call` from decorated functions, lists and
fills in `@prompt`s, lists and reads `@resource`s and `@template`s,
derives each tool's JSON Schemas (2020-12) from the functions' type hints,
checks and converts arguments before a function runs, serializes answers,
maps `ToolError`s onto the WIT error, lists entities for the host's
resolver, answers the host's authoring sessions from `@author` classes (a
subject's current state, a proposal validated and diffed:
`toolhost_sdk.authoring`), and wraps the host's imports: `log` lines,
`progress` reports, `resolve` (names to ids), `backend` (HTTP to the
backends the manifest declares), `checkpoint` (a person's judgement),
`artifacts` (what an exploration run keeps), `client` (asking the MCP
client: a form, its model, its roots), `resources.updated` (telling
subscribers a resource changed) and `protocol.raise_error` (ending the call
with a JSON-RPC error instead of a tool result). It is pure Python with no
dependency, and enforces nothing: budgets, permissions, approvals, tenancy
and the resolver's decisions are the host's.

    from dataclasses import dataclass

    from toolhost_sdk import Ctx, InvalidArguments, log, tool
    from toolhost_sdk.exports import Authoring, Entities, Prompts, Resources, Tool  # noqa: F401 (the world's exports)

    @dataclass
    class Greeting:
        message: str

    @tool(permission="hello:read", read_only=True)
    def greet(ctx: Ctx, name: str, excited: bool = False) -> Greeting:
        \"""Greets someone by name.

        Args:
            name: Who to greet.
            excited: End with an exclamation mark.
        \"""
        if not name.strip():
            raise InvalidArguments("name must not be blank")
        log.info("greeting %s", name)
        return Greeting(f"Hello, {name}{'!' if excited else '.'}")

Tools that take names of things type the argument `NameOrId` (or
`NameOrId | None`), `resolve` it against the plugin's entities (listed by
an `@entities("kind")` function) and get the thing's id and name; when the
host cannot tell which thing was meant, `resolve` raises
`NeedsClarification`, which the tool lets propagate: the host answers the
call with its question. See `toolhost_sdk.resolver`.

Every call runs in a fresh instance, snapshotted after the plugin module
was imported at build time: registration and schemas cost nothing per
call. Outside a component (native unit tests) log lines, progress and
resource updates go to stderr, the client answers nothing, resolving,
backends, checkpoints and artifacts fail with a `ToolError`, and
`protocol.raise_error` raises `ProtocolError`;
`toolhost_sdk.testing.FakeHost` makes the imports answer.
"""

from . import artifacts, authoring, backend, checkpoint, client, content, log, progress, prompts, protocol, resources
from .authoring import AuthorDef, Change, Current, Problem, Problems
from .ctx import Ctx
from .entity import Entity, Parent
from .errors import (
    ClientError,
    Failed,
    InvalidArguments,
    NeedsClarification,
    NotFound,
    ProtocolError,
    ToolError,
    UnknownTool,
)
from .plugin import PLUGIN, Plugin
from .prompts import Message, PromptDef
from .resources import Contents, ResourceDef, TemplateDef
from .resolver import Candidate, Clarification, NameOrId, Resolved, resolve
from .tool import Output, Plan, Risk, Target, ToolDef, ToolOutput

#: `@tool(permission=..., ...)`: registers a tool with the default plugin
#: (see `Plugin.tool`).
tool = PLUGIN.tool
#: `@entities("kind", ...)`: registers a snapshot function with the
#: default plugin (see `Plugin.entities`).
entities = PLUGIN.entities
#: `@prompt(permission=..., ...)`: registers a prompt with the default
#: plugin (see `Plugin.prompt`).
prompt = PLUGIN.prompt
#: `@resource(URI, permission=..., ...)`: registers a resource at a fixed
#: URI with the default plugin (see `Plugin.resource`).
resource = PLUGIN.resource
#: `@template(URI_TEMPLATE, permission=..., ...)`: registers a resource
#: template with the default plugin (see `Plugin.template`).
template = PLUGIN.template
#: `@author(NAME, subject_kind=..., promoted_by=...)`: registers a class as
#: the author of an authoring kind with the default plugin (see
#: `Plugin.author` and `toolhost_sdk.authoring`).
author = PLUGIN.author

__all__ = [
    "PLUGIN",
    "AuthorDef",
    "Candidate",
    "Change",
    "Clarification",
    "ClientError",
    "Contents",
    "Ctx",
    "Current",
    "Entity",
    "Failed",
    "InvalidArguments",
    "Message",
    "NameOrId",
    "NeedsClarification",
    "NotFound",
    "Output",
    "Parent",
    "Plan",
    "Plugin",
    "Problem",
    "Problems",
    "PromptDef",
    "ProtocolError",
    "Resolved",
    "ResourceDef",
    "Risk",
    "Target",
    "TemplateDef",
    "ToolDef",
    "ToolError",
    "ToolOutput",
    "UnknownTool",
    "artifacts",
    "author",
    "authoring",
    "backend",
    "checkpoint",
    "client",
    "content",
    "entities",
    "log",
    "progress",
    "prompt",
    "prompts",
    "protocol",
    "resolve",
    "resource",
    "resources",
    "template",
    "tool",
]
