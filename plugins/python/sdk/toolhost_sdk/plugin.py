"""The plugin: its tools, entity kinds, prompts, resources, resource
templates and authoring kinds, and the dispatch the world's exports answer
with (`toolhost_sdk.exports` is the thin WIT glue over it).

A plugin module registers with the decorators of the default plugin,
`toolhost_sdk.tool`, `entities`, `prompt`, `resource`, `template` and
`author` (a plugin that registers no prompt, resource or authoring kind
lists none). Registration happens
when the module is imported, which componentize-py does once at build
time and snapshots: every schema is computed then, and a tool that cannot
be described (a missing permission, a hint with no schema, two tools of
one name) fails the build.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from .authoring import AuthorDef, Change, Current, Problem, Problems, to_text
from .ctx import Ctx
from .entity import Entity, check
from .errors import InvalidArguments, NotFound, ToolError, UnknownTool
from .prompts import Message, PromptDef
from .resources import Contents, ResourceDef, TemplateDef
from .tool import Plan, Risk, ToolDef, ToolOutput

__all__ = ["Plugin", "PLUGIN"]

SnapshotFn = Callable[[Ctx, str], list[Entity]]


class Plugin:
    """The tools, entity kinds, prompts, resources, templates and
    authoring kinds of one plugin, in registration order."""

    def __init__(self) -> None:
        self.tools: dict[str, ToolDef] = {}
        self.kinds: dict[str, SnapshotFn] = {}
        self.prompts: dict[str, PromptDef] = {}
        self.resources: dict[str, ResourceDef] = {}
        self.templates: dict[str, TemplateDef] = {}
        self.authors: dict[str, AuthorDef] = {}

    def tool(
        self,
        name: str | None = None,
        *,
        permission: str | None = None,
        description: str | None = None,
        title: str | None = None,
        read_only: bool | None = None,
        destructive: bool | None = None,
        idempotent: bool | None = None,
        open_world: bool | None = None,
        risk: Risk = "low",
    ) -> Callable[[Callable[..., Any]], ToolDef]:
        """Registers the decorated function as a tool.

        - `name`: the MCP tool name (default: the function's name).
        - `permission`: `resource:action`, the one permission a caller needs
          to see and call it; it must match the tool's entry in the
          plugin's `toolhost.toml`.
        - `description`: for the model and the person (default: the
          docstring's text before its `Args:` section).
        - `read_only=True`: changes nothing (not mutating, MCP
          `readOnlyHint`). Otherwise the tool is mutating: the host's gates
          and idempotency apply.
        - `destructive=True`: may destroy data (MCP `destructiveHint`);
          raises the risk to `high`.
        - `idempotent`, `open_world`: MCP hints, unset by default.
        - `risk`: `low` (default), `medium` or `high`, for a typical call;
          a custom plan (`@the_tool.plan`) may classify each call.

        The function takes the call's `Ctx` first (a parameter annotated
        `Ctx` or named `ctx`; optional), then the tool's arguments as
        parameters with type hints (see `toolhost_sdk.schema`); a parameter
        with a default, or whose hint admits None, is optional. It answers
        a dict or a dataclass (or an `Output` of one) and raises a
        `ToolError` to fail.
        """
        if callable(name) or permission is None:
            raise TypeError("use @tool(permission=...): a tool needs at least its permission")

        def register(fn: Callable[..., Any]) -> ToolDef:
            t = ToolDef(
                fn,
                name=name,
                permission=permission,
                description=description,
                title=title,
                read_only=read_only,
                destructive=destructive,
                idempotent=idempotent,
                open_world=open_world,
                risk=risk,
            )
            if t.name in self.tools:
                raise ValueError(f"two tools are named {t.name!r}")
            self.tools[t.name] = t
            return t

        return register

    def entities(self, *kinds: str) -> Callable[[SnapshotFn], SnapshotFn]:
        """Registers the decorated `fn(ctx, kind) -> list[Entity]` as the
        snapshot of each of `kinds` (listed in registration order). It
        answers every entity of the kind for `ctx.tenant`, each with the
        tenant the backend gave; it runs where the host allows only GET and
        HEAD backend requests."""
        if not kinds or not all(isinstance(k, str) and k for k in kinds):
            raise TypeError("use @entities(KIND, ...): name the kinds the function lists")

        def register(fn: SnapshotFn) -> SnapshotFn:
            for k in kinds:
                if k in self.kinds:
                    raise ValueError(f"the entity kind {k!r} is listed twice")
                self.kinds[k] = fn
            return fn

        return register

    def prompt(
        self,
        name: str | None = None,
        *,
        permission: str | None = None,
        description: str | None = None,
        title: str | None = None,
        completes: Mapping[str, str] | None = None,
    ) -> Callable[[Callable[..., Any]], PromptDef]:
        """Registers the decorated function as a prompt (see
        `toolhost_sdk.prompts`).

        - `name`: the MCP prompt name (default: the function's name), the
          key of its `[prompts.NAME]` entry in `toolhost.toml`.
        - `permission`: `resource:action`, which a caller needs to list and
          get it; the manifest's entry names the same.
        - `description`: default: the docstring's text before `Args:`.
        - `completes`: argument name to the entity kind (one `@entities`
          lists) whose names the host completes it with.

        The function takes the `Ctx` first (optional), then the prompt's
        arguments, each `str` (required unless it has a default) or
        `str | None`; it answers a `str`, a `Message` or a list of them.
        """
        if callable(name) or permission is None:
            raise TypeError("use @prompt(permission=...): a prompt needs at least its permission")

        def register(fn: Callable[..., Any]) -> PromptDef:
            p = PromptDef(fn, name=name, permission=permission, description=description, title=title, completes=completes)
            if p.name in self.prompts:
                raise ValueError(f"two prompts are named {p.name!r}")
            self.prompts[p.name] = p
            return p

        return register

    def resource(
        self,
        uri: str,
        *,
        permission: str | None = None,
        name: str | None = None,
        description: str | None = None,
        title: str | None = None,
        mime_type: str | None = None,
    ) -> Callable[[Callable[..., Any]], ResourceDef]:
        """Registers the decorated `fn(ctx)` as the resource at `uri` (see
        `toolhost_sdk.resources`): `name` (default: the function's name) is
        the key of its `[resources.NAME]` entry, `permission` the
        `resource:action` a caller needs to list and read it. It answers a
        `str` (text of `mime_type`), `bytes`, `Contents` or a list of them."""
        if not isinstance(uri, str) or permission is None:
            raise TypeError("use @resource(URI, permission=...): a resource needs its URI and its permission")

        def register(fn: Callable[..., Any]) -> ResourceDef:
            r = ResourceDef(fn, uri, name=name, permission=permission, description=description, title=title, mime_type=mime_type)
            self._unique(r.name)
            if any(o.uri == r.uri for o in self.resources.values()):
                raise ValueError(f"two resources are at {r.uri!r}")
            self.resources[r.name] = r
            return r

        return register

    def template(
        self,
        uri_template: str,
        *,
        permission: str | None = None,
        name: str | None = None,
        description: str | None = None,
        title: str | None = None,
        mime_type: str | None = None,
        completes: Mapping[str, str] | None = None,
    ) -> Callable[[Callable[..., Any]], TemplateDef]:
        """Registers the decorated `fn(ctx, **variables)` as the resources
        at the URIs `uri_template` (RFC 6570 level 1) matches; it takes
        exactly the template's variables, by name. `completes`: variable to
        the entity kind whose names the host completes it with. Otherwise
        as `resource`."""
        if not isinstance(uri_template, str) or permission is None:
            raise TypeError("use @template(URI_TEMPLATE, permission=...): a template needs its URI template and its permission")

        def register(fn: Callable[..., Any]) -> TemplateDef:
            t = TemplateDef(
                fn,
                uri_template,
                completes,
                name=name,
                permission=permission,
                description=description,
                title=title,
                mime_type=mime_type,
            )
            self._unique(t.name)
            self.templates[t.name] = t
            return t

        return register

    def author(
        self,
        name: str,
        *,
        subject_kind: str,
        promoted_by: str,
        description: str | None = None,
    ) -> Callable[[Any], Any]:
        """Registers the decorated class (instantiated with no arguments)
        or object as the author of the kind `name` (see
        `toolhost_sdk.authoring`).

        - `name`: 1–64 of `[a-z0-9_]`, unique in the plugin (`test_plan`);
          a session's subject names it, `PLUGIN/NAME:OBJECT`.
        - `subject_kind`: the entity kind (one `@entities` lists) whose
          things a session authors the object of (`project`).
        - `promoted_by`: the plugin's tool whose call, with the normalized
          proposal as its arguments, promotes a proposal.
        - `description`: what it is and what a proposal looks like, for the
          model and the person (default: the class's docstring).

        The author has `current(ctx, subject)`, `validate(ctx, current,
        proposal)` and `diff(ctx, current, normalized)`. The class is
        answered unchanged, so tests may build their own."""

        def register(author: Any) -> Any:
            instance = author() if isinstance(author, type) else author
            a = AuthorDef(instance, name, subject_kind=subject_kind, promoted_by=promoted_by, description=description)
            if a.name in self.authors:
                raise ValueError(f"the authoring kind {a.name!r} is registered twice")
            self.authors[a.name] = a
            return author

        return register

    def _unique(self, name: str) -> None:
        if name in self.resources or name in self.templates:
            raise ValueError(f"two resources or templates are named {name!r}")

    def find(self, name: str) -> ToolDef:
        """The tool named `name`, or `UnknownTool`."""
        try:
            return self.tools[name]
        except KeyError:
            raise UnknownTool(name) from None

    def plan(self, name: str, arguments: str | dict[str, Any] = "{}", ctx: Ctx | None = None) -> Plan:
        """`plan` of the named tool (arguments as JSON text or a dict)."""
        return self.find(name).run_plan(ctx or Ctx(), _text(arguments))

    def call(self, name: str, arguments: str | dict[str, Any] = "{}", ctx: Ctx | None = None) -> ToolOutput:
        """`call` of the named tool (arguments as JSON text or a dict):
        what the host would get. Raises the `ToolError` it would get."""
        return self.find(name).run_call(ctx or Ctx(), _text(arguments))

    def snapshot(self, kind: str, ctx: Ctx | None = None) -> list[Entity]:
        """Every entity of `kind`, or `InvalidArguments` for a kind the
        plugin does not list."""
        fn = self.kinds.get(kind)
        if fn is None:
            raise InvalidArguments(f"this plugin lists no entities of kind {json.dumps(kind)} (it lists {json.dumps(list(self.kinds))})")
        return check(kind, fn(ctx or Ctx(), kind))

    def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None, ctx: Ctx | None = None) -> tuple[Message, ...]:
        """The prompt `name` filled in with `arguments` (strings by name):
        what the host would get. `UnknownTool` for a prompt the plugin does
        not export, as the Rust SDK answers."""
        p = self.prompts.get(name)
        if p is None:
            raise UnknownTool(name)
        return p.run(ctx or Ctx(), dict(arguments or {}))

    def read(self, uri: str, ctx: Ctx | None = None) -> tuple[Contents, ...]:
        """The contents at `uri`: the resource listed there, else the first
        template it matches, else `NotFound`."""
        ctx = ctx or Ctx()
        for r in self.resources.values():
            if r.uri == uri:
                return r.read(ctx)
        for t in self.templates.values():
            if t.match(uri) is not None:
                return t.read(ctx, uri)
        raise NotFound(f"no resource at {uri}")

    def authoring_kinds(self) -> list[AuthorDef]:
        """The authoring kinds, each checked against the rest of the plugin
        as the host checks them at load: `ValueError` for a promoting tool
        the plugin does not describe or a subject kind its entities do not
        list (a plugin's unit tests calling this catch it before a build)."""
        for a in self.authors.values():
            if a.promoted_by not in self.tools:
                raise ValueError(f"{a.where}: promoted by {a.promoted_by!r}, which is not one of this plugin's tools")
            if a.subject_kind not in self.kinds:
                raise ValueError(f"{a.where}: subject kind {a.subject_kind!r} is not an entity kind this plugin lists")
        return list(self.authors.values())

    def current(self, kind: str, subject: int, ctx: Ctx | None = None) -> Current[str]:
        """`current` of the kind's author, its body as JSON text: what the
        host would get. `InvalidArguments` for a kind not authored."""
        return self._author(kind, InvalidArguments).run_current(ctx or Ctx(), subject)

    def validate(self, kind: str, current: Any, proposal: Any, ctx: Ctx | None = None) -> str:
        """`validate` of the kind's author (`current` and `proposal` as JSON
        text or values): the normalized proposal as JSON text, what the host
        would get, or `Problems`. A normalized proposal that the promoting
        tool does not take as its arguments is a plugin bug: `TypeError`."""
        a = self._author(kind, Problems)
        normalized = a.run_validate(ctx or Ctx(), _json_text(current), _json_text(proposal))
        try:
            self.find(a.promoted_by).parse(normalized)
        except ToolError as e:
            raise TypeError(f"{a.where}: validate answered what {a.promoted_by!r} does not take: {e.message}") from None
        return to_text(normalized)

    def diff(self, kind: str, current: Any, normalized: Any, ctx: Ctx | None = None) -> list[Change]:
        """`diff` of the kind's author (JSON text or values): its changes.
        `InvalidArguments` for a kind not authored, or a side that does not
        parse as the author's types."""
        return self._author(kind, InvalidArguments).run_diff(ctx or Ctx(), _json_text(current), _json_text(normalized))

    def _author(self, kind: str, error: type[Exception]) -> AuthorDef:
        """The author of `kind`, or `error` (`InvalidArguments`, or
        `Problems` of the whole proposal) naming the kinds authored."""
        a = self.authors.get(kind)
        if a is not None:
            return a
        message = f"this plugin authors no kind {json.dumps(kind)} (it authors {json.dumps(list(self.authors))})"
        raise Problems([Problem.whole(message)]) if error is Problems else InvalidArguments(message)


def _text(arguments: str | dict[str, Any]) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _json_text(value: Any) -> str:
    """JSON text as it is; anything else (JSON values, dataclasses) as text."""
    return value if isinstance(value, str) else to_text(value)


#: The plugin a module's `@tool`, `@entities`, `@prompt`, `@resource`,
#: `@template` and `@author` register with, and the one
#: `toolhost_sdk.exports` serves.
PLUGIN = Plugin()
