"""Names to ids, through the host's `resolver` import.

A tool argument that names a thing is typed `NameOrId` (a name or an
integer id; `NameOrId | None` when the caller may omit it). The tool
resolves it and gets the thing's id and name back, or, when the host
cannot tell which thing was meant, a `NeedsClarification` to let
propagate:

    project = resolve("project", "project", project)
    env = resolve("environment", "environment", environment,
                  pins={"project": project.id},
                  question="Which environment? Available: {names}.")
    log.info("running in %s of %s", env.name, project.name)

The host resolves over snapshots of this plugin's `entities` export, for
the kinds the tool's manifest entry declares in `resolves = [...]`: a kind
not declared there cannot be resolved. It never guesses: several
matches, none, or an absent value become a clarification (a question with
candidates), which replaces the call's answer whatever the tool returns
next, and after which the host refuses the call's side-effecting backend
requests. So do not catch `NeedsClarification` (nor `ToolError` broadly
around `resolve`): letting it propagate is the whole protocol.

Outside a component (native unit tests) there is no host: every query
fails with `Failed`, unless a test installs `toolhost_sdk.testing.FakeHost`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Union

from . import _host
from ._records import Candidate, Clarification, Query, Resolved

__all__ = ["NameOrId", "Query", "Resolved", "Clarification", "Candidate", "resolve"]

#: An argument that names a thing: a name (a string) or the thing's id (an
#: integer). Its JSON Schema is `anyOf [string, integer]`. Whether a
#: string of digits is an id or a name is the host resolver's decision:
#: `"12"` stays a string here and reaches the resolver as the same digits
#: as `12`. Pass it to `resolve` rather than interpreting it.
NameOrId = Union[str, int]

Pins = Union[Mapping[str, Union[int, None]], Iterable[tuple[str, Union[int, None]]]]


def resolve(
    kind: str,
    field: str,
    value: NameOrId | None,
    *,
    pins: Pins = (),
    within: Iterable[int] | None = None,
    question: str | None = None,
) -> Resolved:
    """The entity of `kind` that `value` (what the caller passed for the
    argument `field`) names: its id and name, as the caller's tenant sees it.

    - `value` None (the caller omitted it) becomes a `missing-required`
      clarification listing everything in scope, unless `within` names
      exactly one id, which is then the answer. An id given as digits is
      checked like a name: one outside the caller's tenant or the pins is
      answered exactly like one that exists nowhere.
    - `pins`: entities this call already chose, `{"project": 1}` (or
      pairs); an id of None is skipped, for an optional argument resolved
      only when given. Every candidate with a parent of that kind must have
      that parent (instance-shared entities stay candidates).
    - `within`: the plugin's own narrowing: only these ids would advance
      the call. With an absent value, one id is the answer and several are
      asked about as ambiguous.
    - `question`: the one-line question; `{names}` becomes the candidates'
      labels, which the host fills in. Default: the host's generic one.

    Raises `NeedsClarification` (a `Failed`) when the host asks instead:
    let it propagate.
    """
    return _host.current().resolve(query(kind, field, value, pins=pins, within=within, question=question))


def query(
    kind: str,
    field: str,
    value: NameOrId | None,
    *,
    pins: Pins = (),
    within: Iterable[int] | None = None,
    question: str | None = None,
) -> Query:
    """The `Query` record `resolve` sends (arguments as there)."""
    pairs = pins.items() if isinstance(pins, Mapping) else pins
    return Query(
        kind=kind,
        field=field,
        value=_value(field, value),
        pins=tuple((k, _id(f"pin {k}", i)) for k, i in pairs if i is not None),
        within=None if within is None else tuple(_id("within", i) for i in within),
        question=question,
    )


def _value(field: str, value: object) -> str | None:
    """The text the WIT `value` carries: the name as given, or the id's digits."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise TypeError(f"resolve: {field} must be a NameOrId (str or int) or None, not {type(value).__name__}")


def _id(what: str, value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TypeError(f"resolve: {what} must be an int id, not {type(value).__name__}")
