"""The exports of the WIT world `mcp-plugin`, for componentize-py.

componentize-py looks the world's exports up by name in the app module:
a class `Tool` for the `tool` interface, `Entities` for `entities`,
`Prompts` for `prompts`, `Resources` for `resources` and `Authoring` for
`authoring`, and refuses to build a module that lacks one. A plugin
module makes them its own with one line:

    from toolhost_sdk.exports import Authoring, Entities, Prompts, Resources, Tool  # noqa: F401 (the world's exports)

A plugin that registers no entity kind, prompt, resource or authoring
kind (`@author`) lists none. The host loads each optional export when a
component has it, so all five cost nothing.

They serve the default plugin (`toolhost_sdk.PLUGIN`) and only translate:
SDK records to the WIT records componentize-py generated (`wit_world`),
`ToolError`s to the WIT `tool-error` variant and a validation's
`Problems` to the WIT list of `problem`, raised as
`componentize_py_types.Err`. Any other exception is a plugin bug: its
traceback is logged (cut to `TRACEBACK_CHARS`) and it propagates, which
traps the call, as a panic does in a Rust plugin.

Outside a component this module imports (so that a plugin's unit tests can
import the plugin module) but its classes cannot run: test the plugin
through `PLUGIN.call(...)`, `PLUGIN.validate(...)`… or the functions
themselves.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any, TypeVar

from . import _host, content, log
from .authoring import Change, Problems, to_text
from .ctx import Ctx
from .errors import ToolError
from .plugin import PLUGIN

__all__ = ["Authoring", "Entities", "Prompts", "Resources", "Tool"]

#: How much of a plugin bug's traceback is logged: enough to find the
#: line, a small part of the call's log budget (64 KiB by default).
TRACEBACK_CHARS = 4000

if _host.IN_COMPONENT:
    from componentize_py_types import Err
    from wit_world.exports import authoring as _aut
    from wit_world.exports import entities as _ent
    from wit_world.exports import prompts as _pr
    from wit_world.exports import resources as _res
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
    return _wit.ContentBlock_Embedded(_wit.EmbeddedResource(uri=b.uri, mime_type=b.mime_type, body=_body(b)))


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


class Prompts:
    """The `prompts` export: `list`, `get`."""

    def list(self) -> list[Any]:
        return [
            _pr.PromptSpec(
                name=p.name,
                title=p.title,
                description=p.description,
                arguments=[
                    _pr.PromptArgument(name=a.name, description=a.description, required=a.required, completes=a.completes)
                    for a in p.arguments
                ],
                permission=_wit.Permission(resource=p.resource, action=p.action),
            )
            for p in PLUGIN.prompts.values()
        ]

    def get(self, ctx: Any, name: str, arguments: list[tuple[str, str]]) -> Any:
        messages = _guard(lambda: PLUGIN.get_prompt(name, dict(arguments), _ctx(ctx)))
        return _pr.Prompt(
            description=None,
            messages=[_pr.PromptMessage(role=_pr.Role[m.role.upper()], content=_block(m.content)) for m in messages],
        )


class Resources:
    """The `resources` export: `list`, `templates`, `read`."""

    def list(self) -> list[Any]:
        return [
            _res.ResourceSpec(
                uri=r.uri,
                name=r.name,
                title=r.title,
                description=r.description,
                mime_type=r.mime_type,
                permission=_wit.Permission(resource=r.resource, action=r.action),
            )
            for r in PLUGIN.resources.values()
        ]

    def templates(self) -> list[Any]:
        return [
            _res.TemplateSpec(
                uri_template=t.uri_template,
                name=t.name,
                title=t.title,
                description=t.description,
                mime_type=t.mime_type,
                permission=_wit.Permission(resource=t.resource, action=t.action),
                completes=list(t.completes),
            )
            for t in PLUGIN.templates.values()
        ]

    def read(self, ctx: Any, uri: str) -> list[Any]:
        found = _guard(lambda: PLUGIN.read(uri, _ctx(ctx)))
        return [_res.ResourceContents(uri=c.uri, mime_type=c.mime_type, body=_body(c)) for c in found]


class Authoring:
    """The `authoring` export: `kinds`, `current`, `validate`, `diff`, from
    the kinds registered with `@author` (none: it authors nothing, and
    any other call is `invalid-arguments` or one whole-proposal problem,
    as the Rust SDK's `Authoring::none` answers)."""

    def kinds(self) -> list[Any]:
        return [
            _aut.AuthoringKind(name=a.name, description=a.description, subject_kind=a.subject_kind, promoted_by=a.promoted_by)
            for a in _guard(PLUGIN.authoring_kinds)
        ]

    def current(self, ctx: Any, kind: str, subject: int) -> Any:
        state = _guard(lambda: PLUGIN.current(kind, subject, _ctx(ctx)))
        return _aut.CurrentState(version=state.version, body=state.body)

    def validate(self, ctx: Any, kind: str, current: str, proposal: str) -> str:
        try:
            return _guard(lambda: PLUGIN.validate(kind, current, proposal, _ctx(ctx)))
        except Problems as e:
            raise Err([_aut.Problem(path=p.path, message=p.message) for p in e.problems]) from None

    def diff(self, ctx: Any, kind: str, current: str, normalized: str) -> list[Any]:
        return [_change(c) for c in _guard(lambda: PLUGIN.diff(kind, current, normalized, _ctx(ctx)))]


def _change(c: Change) -> Any:
    """An SDK change as the WIT `change` record, its sides as JSON text."""
    before = None if c.op == "added" else to_text(c.before)
    after = None if c.op == "removed" else to_text(c.after)
    return _aut.Change(op=_aut.ChangeOp[c.op.upper()], item=c.item, before=before, after=after)


def _body(c: content.Embedded) -> Any:
    return _wit.ResourceBody_Text(c.text) if c.text is not None else _wit.ResourceBody_Blob(bytes(c.blob or b""))


def _guard(run: Callable[[], R]) -> R:
    """`run()`, with a `ToolError` raised as the WIT variant, `Problems`
    passed on (the caller raises them as the WIT list), and any other
    exception logged before it traps the call."""
    try:
        return run()
    except ToolError as e:
        raise Err(_error(e)) from None
    except Problems:
        raise
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
