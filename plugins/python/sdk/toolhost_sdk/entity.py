"""The records of the `entities` export: the things a plugin's tools take names of,
listed so the host's resolver can narrow over them.

A plugin whose tools resolve names registers one function per kind:

    @entities("project")
    def projects(ctx: Ctx, kind: str) -> list[Entity]:
        rows = backend.get("testbench", "/api/projects").ok().json()
        return [Entity(r["id"], r["name"], r["tenant"]) for r in rows]

(One function may serve several kinds: `@entities("project", "team")`;
it receives the kind asked for.) A plugin that registers none lists no
kinds, as every plugin whose tools take no names.

The host calls `snapshot` once per conversation, tenant and kind (for the
kinds a tool's manifest entry declares in `resolves`), in its own sandbox
that allows only GET and HEAD backend requests; it drops every entity
whose `tenant` is not the caller's, so report the tenant the backend said,
never `ctx.tenant` in its place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Entity", "Parent", "check"]

#: The range of the WIT `entity-id` (`s64`).
_S64 = range(-(2**63), 2**63)


@dataclass(frozen=True)
class Parent:
    """A parent link: the entity belongs to `kind` `id`."""

    kind: str
    id: int


@dataclass
class Entity:
    """One thing the entities export lists (the WIT `entity` record)."""

    #: Its id, as the backend mints it.
    id: int
    #: Its display name.
    name: str
    #: The tenant the backend says it belongs to.
    tenant: str
    #: Its ancestors (a scenario: its project); none: instance-shared.
    parents: list[Parent] = field(default_factory=list)
    #: What tells it apart from same-named entities in the host's labels
    #: (`Login flow · payments`): a parent's name, an email, a code.
    detail: str | None = None

    def child_of(self, kind: str, id: int) -> Entity:  # noqa: A002 (the WIT field's name)
        """Adds a parent (pinning that parent narrows to this entity);
        answers the entity, for chaining."""
        self.parents.append(Parent(kind, id))
        return self


def check(kind: str, rows: object) -> list[Entity]:
    """`rows` if it is a list of well-typed `Entity`s; `TypeError` (a
    plugin bug: the call traps) naming the first bad one otherwise."""
    if not isinstance(rows, list):
        raise TypeError(f"the snapshot of {kind!r} must be a list of Entity, not {type(rows).__name__}")
    for i, e in enumerate(rows):
        where = f"the snapshot of {kind!r}, row {i}"
        if not isinstance(e, Entity):
            raise TypeError(f"{where}: expected an Entity, got {type(e).__name__}")
        if not _is_id(e.id) or not isinstance(e.name, str) or not isinstance(e.tenant, str):
            raise TypeError(f"{where}: id must be an int, name and tenant strings: {e!r}")
        if e.detail is not None and not isinstance(e.detail, str):
            raise TypeError(f"{where}: detail must be a string or None: {e!r}")
        if not all(isinstance(p, Parent) and isinstance(p.kind, str) and _is_id(p.id) for p in e.parents):
            raise TypeError(f"{where}: parents must be Parent(kind: str, id: int): {e!r}")
    return rows


def _is_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value in _S64

