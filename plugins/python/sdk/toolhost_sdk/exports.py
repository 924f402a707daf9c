"""The exports of the WIT world `catalog-plugin`, for componentize-py.

componentize-py looks the world's exports up by name in the app module:
a class `Tool` for the `tool` interface and `Entities` for `entities`.
A plugin module makes them its own with one line:

    from toolhost_sdk.exports import Entities, Tool  # noqa: F401 (the world's exports)

Both serve the default plugin (`toolhost_sdk.PLUGIN`) and only translate:
SDK records to the WIT records componentize-py generated (`wit_world`),
`ToolError`s to the WIT `tool-error` variant raised as
`componentize_py_types.Err`. Any other exception is a plugin bug: its
traceback is logged (cut to `TRACEBACK_CHARS`) and it propagates, which
traps the call, as a panic does in a Rust plugin.

Outside a component this module imports (so that a plugin's unit tests can
import the plugin module) but its classes cannot run: test the plugin
through `PLUGIN.call(...)` or the functions themselves.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any, TypeVar

from . import _host, content, log
from .ctx import Ctx
from .errors import ToolError
from .plugin import PLUGIN

__all__ = ["Tool", "Entities"]

#: How much of a plugin bug's traceback is logged: enough to find the
#: line, a small part of the call's log budget (64 KiB by default).
TRACEBACK_CHARS = 4000

if _host.IN_COMPONENT:
    from componentize_py_types import Err
    from wit_world.exports import entities as _ent
    from wit_world.imports import types as _wit

R = TypeVar("R")


class Tool:
    """The `tool` export: `describe`, `plan`, `call`."""

    def describe(self) -> list[Any]:
        return [_spec(t) for t in PLUGIN.tools.values()]

    def plan(self, ctx: Any, tool: str, arguments: str) -> Any:
        p = _guard(lambda: PLUGIN.plan(tool, arguments, _ctx(ctx)))
        targets = [_wit.Target(kind=t.kind, id=t.id, name=t.name, tags=list(t.tags)) for t in p.targets]
        return _wit.CallPlan(targets=targets, risk=_risk(p.risk), summary=p.summary)

    def call(self, ctx: Any, tool: str, arguments: str) -> Any:
        out = _guard(lambda: PLUGIN.call(tool, arguments, _ctx(ctx)))
        return _wit.ToolOutput(structured=out.structured, text=out.text, content=[_block(b) for b in out.content])


def _block(b: content.Block) -> Any:
    """An SDK content block as the WIT `content-block` variant."""
    if isinstance(b, content.Text):
        return _wit.ContentBlock_Text(b.text)
    if isinstance(b, content.Image):
        return _wit.ContentBlock_Image(_wit.Media(mime_type=b.mime_type, data=bytes(b.data)))
    if isinstance(b, content.Audio):
        return _wit.ContentBlock_Audio(_wit.Media(mime_type=b.mime_type, data=bytes(b.data)))
    if isinstance(b, content.Link):
        link = _wit.ResourceLink(
            uri=b.uri, name=b.name, title=b.title, description=b.description, mime_type=b.mime_type, size=b.size
        )
        return _wit.ContentBlock_ResourceLink(link)
    body = _wit.ResourceBody_Text(b.text) if b.text is not None else _wit.ResourceBody_Blob(bytes(b.blob or b""))
    return _wit.ContentBlock_Embedded(_wit.EmbeddedResource(uri=b.uri, mime_type=b.mime_type, body=body))


class Entities:
    """The `entities` export: `kinds`, `snapshot`."""

    def kinds(self) -> list[str]:
        return list(PLUGIN.kinds)

    def snapshot(self, ctx: Any, kind: str) -> list[Any]:
        rows = _guard(lambda: PLUGIN.snapshot(kind, _ctx(ctx)))
        return [
            _ent.Entity(
                id=e.id,
                name=e.name,
                tenant=e.tenant,
                parents=[_ent.Parent(kind=p.kind, id=p.id) for p in e.parents],
                detail=e.detail,
            )
            for e in rows
        ]


def _guard(run: Callable[[], R]) -> R:
    """`run()`, with a `ToolError` raised as the WIT variant and any other
    exception logged before it traps the call."""
    try:
        return run()
    except ToolError as e:
        raise Err(_error(e)) from None
    except Exception:
        log.error("plugin bug, the call traps: %s", traceback.format_exc()[-TRACEBACK_CHARS:])
        raise


def _error(e: ToolError) -> Any:
    case = {
        "unknown-tool": _wit.ToolError_UnknownTool,
        "invalid-arguments": _wit.ToolError_InvalidArguments,
        "not-found": _wit.ToolError_NotFound,
        "failed": _wit.ToolError_Failed,
    }[e.variant]
    return case(e.message)


def _spec(t: Any) -> Any:
    a = t.annotations
    return _wit.ToolSpec(
        name=t.name,
        title=t.title,
        description=t.description,
        input_schema=t.input_schema,
        output_schema=t.output_schema,
        annotations=_wit.Annotations(
            read_only=a["read_only"],
            destructive=a["destructive"],
            idempotent=a["idempotent"],
            open_world=a["open_world"],
        ),
        permission=_wit.Permission(resource=t.resource, action=t.action),
        risk=_risk(t.risk),
        mutating=t.mutating,
    )


def _risk(risk: str) -> Any:
    return _wit.Risk[risk.upper()]


def _ctx(c: Any) -> Ctx:
    return Ctx(call_id=c.call_id, tenant=c.tenant, principal=c.principal)
