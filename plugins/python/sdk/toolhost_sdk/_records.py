"""Plain records that cross the host boundary, shared by the wrappers and
the host bridge (`_host`). Each is re-exported by the module it belongs
to: `resolve.Resolved`, `checkpoint.CheckpointInfo`…"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Query:
    """One argument to resolve, as `resolve` builds it (see there)."""

    kind: str
    field: str
    #: What the caller passed: absent, a name, or an id as digits.
    value: str | None
    #: (kind, id) of entities this call already chose.
    pins: tuple[tuple[str, int], ...] = ()
    #: The plugin's own narrowing: only these ids would advance the call.
    within: tuple[int, ...] | None = None
    #: The question; `{names}` becomes the candidates' labels.
    question: str | None = None


@dataclass(frozen=True)
class Resolved:
    """What a name or id resolved to: the entity's id and its name as the
    caller's tenant sees it, from the same snapshot the host matched
    against. Answer with `name` rather than asking the backend again."""

    id: int
    name: str


@dataclass(frozen=True)
class Candidate:
    """One choice a clarification offers the person."""

    id: int
    name: str
    #: The name, told apart from same-named candidates.
    label: str


@dataclass(frozen=True)
class Clarification:
    """The question the host's resolver asks instead of answering."""

    #: `ambiguous`, `not-found` or `missing-required`.
    reason: str
    #: One literal line a client relays to the person verbatim.
    ask_user: str
    #: The argument asked about.
    field: str
    #: At most 25, in id order, every pin applied.
    candidates: tuple[Candidate, ...] = ()
    #: What was pinned: (kind, the pinned entity's name).
    scoped_by: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CheckpointInfo:
    """A checkpoint as the host holds it."""

    #: The host's id (`chk_…`): what a person names in `decide_checkpoint`.
    id: str
    #: Bumped by every change (1 when opened).
    version: int
    #: `waiting` or `decided`.
    state: str
    #: Once decided: `confirm`, `false_positive` or `inconclusive`.
    disposition: str | None = None
    #: Once decided: `passed` (for `confirm`) or `inconclusive`; what to
    #: carry to the backend.
    outcome: str | None = None

    @property
    def is_decided(self) -> bool:
        """Whether a person has decided it (it has an `outcome`)."""
        return self.outcome is not None


@dataclass(frozen=True)
class ArtifactInfo:
    """An artifact the host kept."""

    #: `toolhost://artifacts/<id>`: where the run's principal reads it back.
    uri: str
    #: Lower-case hex SHA-256 of the bytes.
    sha256: str
    #: Length of the bytes.
    size: int


@dataclass(frozen=True)
class Answer:
    """A backend's raw answer, as the host bridge hands it over."""

    status: int
    headers: tuple[tuple[str, str], ...] = field(default=())
    body: bytes = b""


@dataclass(frozen=True)
class Support:
    """What the MCP client can answer (`sampling`: also whether the
    plugin's reviewed manifest grants it)."""

    elicitation: bool = False
    sampling: bool = False
    roots: bool = False


@dataclass(frozen=True)
class Form:
    """A question for the person: a message and MCP's flat elicitation
    schema, as JSON text."""

    message: str
    requested_schema: str


@dataclass(frozen=True)
class SamplingMessage:
    """One message of a sampling conversation (text only)."""

    #: `user` or `assistant`.
    role: str
    text: str


@dataclass(frozen=True)
class SamplingRequest:
    """A request for the client's model."""

    messages: tuple[SamplingMessage, ...]
    max_tokens: int
    system_prompt: str | None = None
    temperature: float | None = None
    #: A model name the client may prefer.
    model_hint: str | None = None


@dataclass(frozen=True)
class Input:
    """One request of `client.ask`, named by `key` (1–64 of
    `[A-Za-z0-9_.-]`, unique in one ask, the same on every run of the
    call): a `Form` for the person, a `SamplingRequest` for the client's
    model, or None for the client's roots. Build it with `client.Input.elicit`,
    `.sample` or `.roots`."""

    key: str
    request: Form | SamplingRequest | None

    @classmethod
    def elicit(cls, key: str, message: str, schema: Any) -> Input:
        """A form for the person: `schema` is MCP's flat elicitation schema
        (a dict, or JSON text): an object whose properties are strings,
        numbers, integers, booleans or string enums."""
        text = schema if isinstance(schema, str) else json.dumps(schema)
        return cls(key, Form(message, text))

    @classmethod
    def sample(cls, key: str, request: SamplingRequest) -> Input:
        """A request for the client's model."""
        return cls(key, request)

    @classmethod
    def roots(cls, key: str) -> Input:
        """The client's roots."""
        return cls(key, None)


@dataclass(frozen=True)
class Elicitation:
    """What the person did with a form: `accept` (with `content`, the
    submitted object, which the host checked against the form), `decline`
    or `cancel`."""

    action: str
    content: dict[str, Any] | None = None

    @property
    def accepted(self) -> bool:
        """Whether the person submitted the form."""
        return self.action == "accept"


@dataclass(frozen=True)
class Sampled:
    """The client's model's answer."""

    #: `user` or `assistant`.
    role: str
    text: str
    model: str
    stop_reason: str | None = None


@dataclass(frozen=True)
class Root:
    """One of the client's roots."""

    uri: str
    name: str | None = None
