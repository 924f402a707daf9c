"""Resources a plugin exports (MCP `resources/list`,
`resources/templates/list`, `resources/read`), through the WIT
`resources` export, and resource updates, through the `notify` import.

    from toolhost_sdk import Ctx, resource, template

    @resource("docs://runbook", permission="docs:read", mime_type="text/markdown")
    def runbook(ctx: Ctx) -> str:
        \"""The on-call runbook.\"""
        return "# Runbook"

    @template("db://{table}/schema", permission="docs:read", mime_type="text/plain",
              completes={"table": "table"})
    def table_schema(ctx: Ctx, table: str) -> str:
        \"""A table's schema.\"""
        return f"{table}: id int"

A resource sits at a fixed URI; a template (RFC 6570 level 1: each
`{var}` matches one or more characters other than `/`, `?` and `#`)
answers every URI of its shape, its function taking the variables by
name. Each needs a permission, and the manifest declares it by name
(`[resources.NAME] permission = "…"`, NAME the function's name or
`name=`). A read answers a `str` (text at the URI read, of the declared
`mime_type`), `bytes` (a blob), `Contents(uri, mime_type, text=…|blob=…)`,
or a list of `Contents`; it runs in a fresh sandbox that may not have side
effects (GET and HEAD backend requests only) but may ask the client.
`completes={"var": "kind"}` marks a template variable that names a thing
of an entity kind the plugin lists: the host completes it.

A tool call that changes a resource tells its subscribers, who read it
again (MCP `notifications/resources/updated`, to clients of the caller's
tenant that subscribed to the URI and may read it):

    resources.updated("db://orders/schema")

The host accepts only a URI the plugin's `resources` export lists or one
matching its templates, at most 16 a call, each told once, only from a
tool call (not a plan or a read); each counts against the host-call
budget. A refusal is `Failed` quoting the host's reason, never a trap.
Outside a component (native unit tests) updates go to stderr.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Callable, Mapping
from typing import Any

from . import _host
from .content import Embedded
from .ctx import Ctx
from .errors import Failed, NotFound
from ._declared import Declared

__all__ = ["Contents", "ResourceDef", "TemplateDef", "updated"]

#: What a read answers, one of: the contents at a URI, text or a blob (the
#: same record as an embedded resource's).
Contents = Embedded

#: A URI's scheme, as the host requires one.
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
#: One `{var}` of a level 1 template.
_VAR = re.compile(r"\{([A-Za-z0-9_]+)\}")


def updated(uri: str) -> None:
    """Tells the clients subscribed to `uri` that the resource changed. A
    refusal is `Failed` naming the URI and quoting the host's reason."""
    try:
        _host.current().resource_updated(uri)
    except _host.Refused as e:
        raise Failed(f"the update of resource {json.dumps(uri)} was refused: {e.why}") from None


class _Readable(Declared):
    """What a resource and a template share: a MIME type, and a function
    that takes the context (optional) and the template's variables."""

    kind = "resource"

    def __init__(self, fn: Callable[..., Any], *, mime_type: str | None, **declared: Any) -> None:
        """`declared`: `name`, `permission`, `description`, `title` (see `Declared`)."""
        super().__init__(fn, **declared)
        self.mime_type = mime_type
        params = list(inspect.signature(fn).parameters.values())
        try:
            hints = typing.get_type_hints(fn)
        except NameError as e:
            raise TypeError(f"{self.where}: {e}") from None
        self.wants_ctx = bool(params) and (hints.get(params[0].name) is Ctx or params[0].name == "ctx")
        self.params = [p.name for p in (params[1:] if self.wants_ctx else params)]

    def _answer(self, ctx: Ctx, uri: str, args: dict[str, str]) -> tuple[Contents, ...]:
        answer = self.fn(ctx, **args) if self.wants_ctx else self.fn(**args)
        return contents(self.where, uri, self.mime_type, answer)


class ResourceDef(_Readable):
    """A resource at a fixed URI, built by `@resource`."""

    def __init__(self, fn: Callable[..., Any], uri: str, **kw: Any) -> None:
        super().__init__(fn, **kw)
        if not _SCHEME.match(uri) or any(c.isspace() for c in uri):
            raise ValueError(f"{self.where}: URI {uri!r} has no scheme")
        self.uri = uri
        if self.params:
            raise TypeError(f"{self.where}: a resource's function takes only ctx, not {', '.join(self.params)}")

    def read(self, ctx: Ctx) -> tuple[Contents, ...]:
        """Its contents."""
        return self._answer(ctx, self.uri, {})


class TemplateDef(_Readable):
    """Resources at URIs of one shape, built by `@template`."""

    kind = "template"

    def __init__(self, fn: Callable[..., Any], uri_template: str, completes: Mapping[str, str] | None = None, **kw: Any) -> None:
        super().__init__(fn, **kw)
        self.uri_template = uri_template
        pattern, self.variables = _compile(self.where, uri_template)
        self._pattern = re.compile(pattern)
        if set(self.params) != set(self.variables):
            raise TypeError(
                f"{self.where}: the function must take exactly the template's variables "
                f"({', '.join(self.variables) or 'none'}), not {', '.join(self.params) or 'none'}"
            )
        self.completes: list[tuple[str, str]] = []
        for var, kind in (completes or {}).items():
            if var not in self.variables:
                raise ValueError(f"{self.where}: completes {var!r}, which is not one of its variables")
            if not isinstance(kind, str) or not kind:
                raise TypeError(f"{self.where}: variable {var!r} completes an entity kind, a non-empty str")
            self.completes.append((var, kind))

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables' values when `uri` has the template's shape."""
        m = self._pattern.fullmatch(uri)
        return None if m is None else dict(zip(self.variables, m.groups()))

    def read(self, ctx: Ctx, uri: str) -> tuple[Contents, ...]:
        """The contents at `uri`, which must match (else `NotFound`)."""
        variables = self.match(uri)
        if variables is None:
            raise NotFound(f"no resource at {uri}")
        return self._answer(ctx, uri, variables)


def _compile(where: str, template: str) -> tuple[str, list[str]]:
    """The regular expression a level 1 template matches, and its variables."""
    if not _SCHEME.match(template) or any(c.isspace() for c in template):
        raise ValueError(f"{where}: {template!r} has no scheme")
    pattern, variables, at = "", [], 0
    for m in _VAR.finditer(template):
        literal = template[at : m.start()]
        if "{" in literal or "}" in literal or (m.start() == at and variables):
            raise ValueError(f"{where}: {template!r} is not an RFC 6570 level 1 template (two variables need a literal between them)")
        if m.group(1) in variables:
            raise ValueError(f"{where}: {template!r} names {m.group(1)!r} twice")
        pattern += re.escape(literal) + "([^/?#]+?)"
        variables.append(m.group(1))
        at = m.end()
    rest = template[at:]
    if "{" in rest or "}" in rest:
        raise ValueError(f"{where}: {template!r} is not an RFC 6570 level 1 template")
    return pattern + re.escape(rest), variables


def contents(where: str, uri: str, mime_type: str | None, answer: Any) -> tuple[Contents, ...]:
    """A read's answer as contents: a `str` is text at `uri`, `bytes` a
    blob, `Contents` (or a list of them) as they are."""
    if isinstance(answer, str):
        return (Contents(uri, mime_type, text=answer),)
    if isinstance(answer, (bytes, bytearray)):
        return (Contents(uri, mime_type, blob=bytes(answer)),)
    items = answer if isinstance(answer, (list, tuple)) else [answer]
    for i, c in enumerate(items):
        if not isinstance(c, Contents):
            raise Failed(f"{where} answered {type(c).__name__} as contents {i}: answer a str, bytes, Contents or a list of Contents")
    return tuple(items)
