"""The plugin: its tools and entity kinds, and the dispatch the world's
exports answer with (`toolhost_sdk.exports` is the thin WIT glue over it).

A plugin module registers with the decorators of the default plugin,
`toolhost_sdk.tool` and `toolhost_sdk.entities`. Registration happens
when the module is imported, which componentize-py does once at build
time and snapshots: every schema is computed then, and a tool that cannot
be described (a missing permission, a hint with no schema, two tools of
one name) fails the build.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .ctx import Ctx
from .entity import Entity, check
from .errors import InvalidArguments, UnknownTool
from .tool import Plan, Risk, ToolDef, ToolOutput

__all__ = ["Plugin", "PLUGIN"]

SnapshotFn = Callable[[Ctx, str], list[Entity]]


class Plugin:
    """The tools and entity kinds of one plugin, in registration order."""

    def __init__(self) -> None:
        self.tools: dict[str, ToolDef] = {}
        self.kinds: dict[str, SnapshotFn] = {}

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


def _text(arguments: str | dict[str, Any]) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


#: The plugin a module's `@tool` and `@entities` register with, and the
#: one `toolhost_sdk.exports` serves.
PLUGIN = Plugin()
