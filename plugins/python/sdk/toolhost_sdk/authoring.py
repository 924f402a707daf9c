"""The `authoring` export: the objects a plugin authors in its domain (a
project's test plan…), each kind implemented by one class registered with
`@author`.

The host owns authoring: sessions, proposals, their diffs, reviews and
promotion. A plugin says what its objects mean: a subject's `Current`
state, whether a proposal is valid (the normalized proposal, or every
`Problem`), and what promoting it would `Change`. Promotion is a call of
the kind's `promoted_by` tool with the normalized proposal as its
arguments; the SDK checks every normalized proposal against that tool's
arguments before the host sees it, so the two cannot drift apart (the Rust
SDK gets the same from its types).

    @author("note_book", subject_kind="book", promoted_by="write_notes")
    class NoteBooks:
        \"""A book's notes: propose {lines}; promoting writes the new ones.\"""

        def current(self, ctx: Ctx, subject: int) -> Current[Notes]:
            notes = backend.get("nb", f"/books/{subject}").ok().json(Notes)
            return Current(str(len(notes.lines)), notes)

        def validate(self, ctx: Ctx, current: Notes, proposal: Any) -> WriteNotes:
            lines = proposal.get("lines") if isinstance(proposal, dict) else None
            if not isinstance(lines, list) or not lines:
                raise Problems([Problem("/lines", "expected a list of lines")])
            return WriteNotes(book=current.book, lines=lines)

        def diff(self, ctx: Ctx, current: Notes, normalized: WriteNotes) -> list[Change]:
            return [Change.added(line, line) for line in normalized.lines if line not in current.lines]

The hints carry the types, as a tool's do (`toolhost_sdk.schema`):
`current`'s `Current[T]` names the state, which the host keeps as JSON and
hands back to `validate` and `diff` converted to `T`; `validate`'s return
hint names the normalized proposal, handed to `diff` the same way. Without
a hint they are plain JSON values. The proposal itself is plain JSON
(dicts, lists, str…): reporting each thing wrong with it, at its JSON
pointer, is `validate`'s work.

The host runs each method in a fresh sandbox: `current` with GET and HEAD
backend requests only, `validate` and `diff` with no backend at all (keep
them pure). It refuses a version that is not 1–256 bytes, and bounds how
many problems and changes it accepts (1000 each).

In unit tests `PLUGIN.current/validate/diff(kind, …)` answer what the host
would get, and `toolhost_sdk.testing.AuthoringSession` runs a whole
session (current, propose, promote) with the host's grants.
"""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from . import schema
from .ctx import Ctx
from .errors import InvalidArguments, ToolError

__all__ = ["AuthorDef", "Change", "ChangeOp", "Current", "Problem", "Problems", "escape", "pointer", "to_text"]

T = TypeVar("T")

#: Authoring kind and entity kind names: 1–64 of `[a-z0-9_]`, as the host
#: requires.
KIND_NAME = re.compile(r"^[a-z0-9_]{1,64}$")

#: What one entry of a diff does.
ChangeOp = Literal["added", "changed", "removed"]


@dataclass(frozen=True)
class Current(Generic[T]):
    """A subject's current state: a `version` that changes whenever the
    state does (the host compares it to tell whether the subject moved
    under a proposal; opaque, 1–256 bytes) and the state itself, which the
    host hands back to `validate` and `diff`."""

    version: str
    body: T


@dataclass(frozen=True)
class Problem:
    """One reason a proposal is invalid: `path` is a JSON pointer into the
    proposal (`/tests/3/name`, build it with `pointer`), empty for the
    proposal as a whole; `message` one line a person can act on."""

    path: str
    message: str

    @classmethod
    def whole(cls, message: str) -> Problem:
        """A problem of the proposal as a whole (the empty pointer)."""
        return cls("", message)


class Problems(Exception):
    """Raised by `validate`: the proposal is invalid, for every reason in
    `problems` (at least one: the host refuses an empty refusal). A
    `ToolError` raised there becomes one whole-proposal problem."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = tuple(problems)
        if not self.problems or not all(isinstance(p, Problem) for p in self.problems):
            raise TypeError("Problems needs at least one Problem")
        super().__init__("; ".join(f"{p.path or '/'}: {p.message}" for p in self.problems))


@dataclass(frozen=True)
class Change:
    """One entry of a structured diff: what `op` does to `item` (named as
    people name it: a test's name), with the item's JSON `before` (absent
    when added) and `after` (absent when removed). Build one with `added`,
    `changed` or `removed`, which convert dataclasses to JSON values."""

    op: ChangeOp
    item: str
    before: Any = None
    after: Any = None

    @classmethod
    def added(cls, item: str, after: Any) -> Change:
        """`item` is new; `after` is what it will be."""
        return cls("added", item, None, _json_value(after))

    @classmethod
    def changed(cls, item: str, before: Any, after: Any) -> Change:
        """`item` changes from `before` to `after`."""
        return cls("changed", item, _json_value(before), _json_value(after))

    @classmethod
    def removed(cls, item: str, before: Any) -> Change:
        """`item` goes away; `before` is what it was."""
        return cls("removed", item, _json_value(before), None)


def escape(token: str) -> str:
    """One JSON-pointer reference token (RFC 6901): `~` as `~0`, `/` as
    `~1`, so an object key such as `a/b` becomes the segment `a~1b`."""
    return token.replace("~", "~0").replace("/", "~1")


def pointer(*tokens: str | int) -> str:
    """The JSON pointer of `tokens`, each escaped: `pointer("tests", 3,
    "name")` is `/tests/3/name`; no tokens, the whole proposal (empty)."""
    return "".join("/" + escape(str(t)) for t in tokens)


def to_text(value: Any) -> str:
    """`value` (JSON values or dataclasses) as compact JSON text, as the
    WIT carries it. `TypeError` for what JSON cannot hold."""
    try:
        return json.dumps(schema.to_json(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError as e:  # NaN or Infinity
        raise TypeError(str(e)) from None


def _json_value(value: Any) -> Any:
    """`value` as plain JSON values, checked to serialize."""
    plain = schema.to_json(value)
    to_text(plain)
    return plain


class AuthorDef:
    """One kind of authored object, as `@author` registered it: its name,
    description, subject kind and promoting tool, and the author instance
    whose `current`, `validate` and `diff` the host's asks run. A bad
    declaration is `ValueError` or `TypeError` naming the kind, at import
    (so componentize-py's build fails with it)."""

    def __init__(self, author: Any, name: str, *, subject_kind: str, promoted_by: str, description: str | None) -> None:
        self.where = f"authoring kind {name!r}"
        self.author, self.name, self.subject_kind, self.promoted_by = author, name, subject_kind, promoted_by
        for what, value in (("a name", name), ("a subject kind", subject_kind)):
            if not isinstance(value, str) or not KIND_NAME.match(value):
                raise ValueError(f"{self.where}: {what} is 1-64 of [a-z0-9_], not {value!r}")
        if not isinstance(promoted_by, str) or not promoted_by:
            raise ValueError(f"{self.where}: name the tool that promotes it (promoted_by=...)")
        for method in ("current", "validate", "diff"):
            if not callable(getattr(author, method, None)):
                raise TypeError(f"{self.where}: the author must have a method {method}(ctx, ...)")
        self.description = description or schema.own_doc(type(author)) or ""
        if not self.description:
            raise ValueError(f"{self.where}: give a description (or a docstring on the class)")
        self.state, self.normalized = self._shapes()

    def _shapes(self) -> tuple[schema.Shape, schema.Shape]:
        """The shapes of the current state (`Current[T]`'s `T`) and the
        normalized proposal (`validate`'s return hint); `Any` unhinted."""
        try:
            current = typing.get_type_hints(self.author.current).get("return", Any)
            normalized = typing.get_type_hints(self.author.validate).get("return", Any)
            args = typing.get_args(current) if typing.get_origin(current) is Current else ()
            if current is not Any and current is not Current and typing.get_origin(current) is not Current:
                raise TypeError(f"current must answer a Current[T], not {current!r}")
            return schema.shape_of(args[0] if args else Any), schema.shape_of(normalized)
        except (TypeError, NameError) as e:
            raise TypeError(f"{self.where}: {e}") from None

    def run_current(self, ctx: Ctx, subject: int) -> Current[str]:
        """`current`, its body as JSON text."""
        answer = self.author.current(ctx, subject)
        if not isinstance(answer, Current) or not isinstance(answer.version, str):
            raise TypeError(f"{self.where}: current must answer a Current(version: str, body), not {answer!r}")
        return Current(answer.version, to_text(answer.body))

    def run_validate(self, ctx: Ctx, current: str, proposal: str) -> Any:
        """`validate` on the JSON texts: the normalized proposal as JSON
        values (an object), or `Problems`."""
        state = self._parse(self.state, current, "the current state", Problems)
        try:
            value = json.loads(proposal)
        except ValueError as e:
            raise Problems([Problem.whole(f"the proposal is not JSON: {e}")]) from None
        try:
            normalized = schema.to_json(self.author.validate(ctx, state, value))
        except ToolError as e:
            raise Problems([Problem.whole(e.message)]) from None
        if not isinstance(normalized, dict):
            raise TypeError(f"{self.where}: validate must answer the promoting tool's arguments (an object), not {normalized!r}")
        return normalized

    def run_diff(self, ctx: Ctx, current: str, normalized: str) -> list[Change]:
        """`diff` on the JSON texts; a text that does not parse as its type
        is `InvalidArguments`, as the Rust SDK answers."""
        state = self._parse(self.state, current, "the current state", InvalidArguments)
        value = self._parse(self.normalized, normalized, "the normalized proposal", InvalidArguments)
        changes = self.author.diff(ctx, state, value)
        if not isinstance(changes, list) or not all(isinstance(c, Change) for c in changes):
            raise TypeError(f"{self.where}: diff must answer a list of Change, not {changes!r}")
        return changes

    def _parse(self, shape: schema.Shape, text: str, what: str, error: type[Exception]) -> Any:
        """`text` parsed and converted to `shape`; `error` (`Problems` or
        `InvalidArguments`) saying `what` does not parse otherwise."""
        try:
            return shape.convert(json.loads(text), "")
        except (ValueError, InvalidArguments) as e:
            message = f"{what} does not parse: {e.message if isinstance(e, InvalidArguments) else e}"
        raise Problems([Problem.whole(message)]) if error is Problems else InvalidArguments(message)

    def __repr__(self) -> str:
        return f"<{self.where}>"
