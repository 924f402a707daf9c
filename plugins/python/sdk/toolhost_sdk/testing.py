"""A host for native unit tests of tool functions, and authoring sessions
run natively.

Outside a component the SDK's imports have no host: log lines, progress
and resource updates go to stderr, the client answers nothing,
`resolve`, backend requests, checkpoints and artifacts fail with a
`ToolError`, and `protocol.raise_error` raises `ProtocolError` (under a
`FakeHost` too: there is nothing to fake). A test that wants the others to
answer installs a `FakeHost` for a block:

    from toolhost_sdk.testing import FakeHost

    with FakeHost(entities={"project": [(1, "payments"), (2, "search")]},
                  backend={"GET /api/projects": [{"id": 1, "name": "payments", "tenant": "local"}]}) as host:
        out = PLUGIN.call("describe_project", {"project": "payments"})
    assert host.logs == [("info", "describing payments")]

The fake resolver is an approximation of the host's: an integer (or
digits) matches an id, a string matches names exactly, ignoring case;
one match resolves, several are `ambiguous`, none `not-found`, nothing
given `missing-required` (unless `within` names one id). Pins and parents
are honoured. The host's own tree does more; `toolhost call --entities`
runs it on a built component.

The fake client answers each request from `answers`, by key, in one
round: a key without an answer is `ClientError` `failed` (the real host
would end the call and run it again once the client answered).

`AuthoringSession` runs an authoring kind's whole session natively, as
the host runs one (current, propose, promote), with the host's grants:

    with FakeHost(backend={"GET /api/projects/1/tests": TESTS}):
        session = AuthoringSession("scenarios", 1)
        proposed = session.propose({"scenarios": [{"name": "Checkout"}]})
        assert [(c.op, c.item) for c in proposed.changes] == [("added", "Checkout")]
        out = session.promote(proposed)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from . import _host
from ._records import Answer, ArtifactInfo, Candidate, CheckpointInfo, Clarification, Elicitation, Form, Input
from ._records import Query, Resolved, Root, Sampled, Support
from .authoring import Change
from .ctx import Ctx
from .entity import Entity
from .errors import ClientError, Failed, NeedsClarification
from .plugin import PLUGIN, Plugin
from .tool import ToolOutput

__all__ = ["AuthoringSession", "FakeHost", "Proposed"]

Route = Any  # a JSON value (answered 200), `(status, JSON value)`, an `Answer`, or fn(method, path, body) -> one of those
Rows = Iterable[Entity | tuple[int, str]]


class FakeHost(_host.Host):
    """Answers the SDK's imports from what the test gave, and records
    what the tool did: `logs` (level, line), `reports` (progress, total,
    message), `requests` (backend, method, path, body), `queries`
    (`Query`), `checkpoints` (by subject), `artifacts` (name, mime, bytes),
    `asked` (each `client.ask`'s `Input`s), `updated` (URIs told of).

    - `entities`: per kind, the rows the fake resolver matches over
      (`Entity`s, or `(id, name)` pairs); a kind not given is not-found.
      `resolver` replaces the fake resolver with `fn(Query) -> Resolved`.
    - `backend`: routes `"GET /api/projects"` (any backend), or
      `"testbench GET /api/projects"`; an unrouted request answers 404.
    - `tenant`: the tenant whose rows the resolver sees (others dropped).
    - `client`: what the fake client declares (default: everything); a
      request it did not declare is `unsupported`, as on the host.
    - `answers`: the client's answers by request key: an `Elicitation`, a
      `Sampled`, a list of `Root`s, or a `ClientError` to raise.
    - `resources`: the URIs the fake accepts updates of (default: any);
      others are refused.
    """

    def __init__(
        self,
        *,
        entities: Mapping[str, Rows] | None = None,
        resolver: Callable[[Query], Resolved] | None = None,
        backend: Mapping[str, Route] | None = None,
        tenant: str = "local",
        client: Support = Support(elicitation=True, sampling=True, roots=True),
        answers: Mapping[str, Elicitation | Sampled | Iterable[Root] | ClientError] | None = None,
        resources: Collection[str] | None = None,
    ) -> None:
        self.rows = {k: [_entity(r, tenant) for r in rows] for k, rows in (entities or {}).items()}
        self.resolver, self.routes, self.tenant = resolver, dict(backend or {}), tenant
        self.logs: list[tuple[str, str]] = []
        self.reports: list[tuple[float, float | None, str | None]] = []
        self.requests: list[tuple[str, str, str, bytes | None]] = []
        self.queries: list[Query] = []
        self.checkpoints: dict[str, CheckpointInfo] = {}
        self.artifacts: list[tuple[str, str, bytes]] = []
        self.client, self.answers, self.resources = client, dict(answers or {}), resources
        self.asked: list[list[Input]] = []
        self.updated: list[str] = []
        self._previous: _host.Host | None = None

    def __enter__(self) -> FakeHost:
        self._previous = _host.install(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _host.install(self._previous or _host.Host())

    def log(self, level: str, message: str) -> None:
        self.logs.append((level, message))

    def report(self, progress: float, total: float | None, message: str | None) -> None:
        self.reports.append((progress, total, message))

    def resolve(self, query: Query) -> Resolved:
        self.queries.append(query)
        if self.resolver is not None:
            return self.resolver(query)
        rows = [e for e in self.rows.get(query.kind, []) if e.tenant == self.tenant and _pinned(e, query.pins)]
        if query.within is not None:
            rows = [e for e in rows if e.id in query.within]
        if query.value is None:
            if query.within is not None and len(rows) == 1:
                return Resolved(rows[0].id, rows[0].name)
            reason = "ambiguous" if query.within is not None else "missing-required"
            raise _ask(query, reason, rows)
        v = query.value
        hits = [e for e in rows if str(e.id) == v or e.name.casefold() == v.casefold()]
        if len(hits) == 1:
            return Resolved(hits[0].id, hits[0].name)
        raise _ask(query, "ambiguous" if hits else "not-found", hits or rows)

    def send(self, backend, method, path, headers, body) -> Answer:
        self.requests.append((backend, method, path, body))
        route = self.routes.get(f"{backend} {method} {path}", self.routes.get(f"{method} {path}"))
        if route is None:
            return Answer(404, (), f"no fake route for {method} {path}".encode())
        if callable(route):
            route = route(method, path, body)
        if isinstance(route, Answer):
            return route
        status, value = route if isinstance(route, tuple) else (200, route)
        return Answer(status, (("content-type", "application/json"),), json.dumps(value).encode())

    def open_checkpoint(self, subject: str, title: str, evidence: str) -> CheckpointInfo:
        if not subject or len(subject.encode()) > 200:
            raise _host.Refused("the subject must be 1-200 bytes")
        n = len(self.checkpoints) + 1
        return self.checkpoints.setdefault(subject, CheckpointInfo(f"chk_{n}", 1, "waiting"))

    def decide(self, subject: str, disposition: str) -> None:
        """Decides the checkpoint of `subject` as a person would."""
        c = self.checkpoints[subject]
        outcome = "passed" if disposition == "confirm" else "inconclusive"
        self.checkpoints[subject] = CheckpointInfo(c.id, c.version + 1, "decided", disposition, outcome)

    def put_artifact(self, name: str, mime_type: str, body: bytes) -> ArtifactInfo:
        self.artifacts.append((name, mime_type, body))
        uri = f"toolhost://artifacts/art_{len(self.artifacts)}"
        return ArtifactInfo(uri, hashlib.sha256(body).hexdigest(), len(body))

    def supports(self) -> Support:
        return self.client

    def ask(self, requests: list[Input]) -> list[Elicitation | Sampled | tuple[Root, ...]]:
        self.asked.append(list(requests))
        out: list[Elicitation | Sampled | tuple[Root, ...]] = []
        for i in requests:
            kind = "elicitation" if isinstance(i.request, Form) else "roots" if i.request is None else "sampling"
            if not getattr(self.client, kind):
                raise ClientError("unsupported", f"the client did not declare the {kind} capability")
            answer = self.answers.get(i.key)
            if isinstance(answer, ClientError):
                raise answer
            if answer is None:
                raise ClientError("failed", f"the fake client has no answer for {i.key!r}")
            out.append(answer if isinstance(answer, (Elicitation, Sampled)) else tuple(answer))
        return out

    def resource_updated(self, uri: str) -> None:
        if self.resources is not None and uri not in self.resources:
            raise _host.Refused(f"{uri!r} is not a resource this plugin exports")
        if uri not in self.updated:
            self.updated.append(uri)


@dataclass(frozen=True)
class Proposed:
    """A proposal the kind accepted: `normalized`, the arguments its
    promoting tool will get (JSON values), and the `changes` a person
    would review."""

    normalized: dict[str, Any]
    changes: list[Change]


class AuthoringSession:
    """An authoring session on `subject` (an entity id of the kind's
    subject kind), run natively as the host runs one, against whatever host
    is installed (a `FakeHost`, usually) with the host's grants:

    - opening reads `current` once (GET and HEAD backend requests only;
      others are `refused`, as on the host) and keeps its `version` and
      `body` (JSON values, as the host keeps them);
    - `propose(proposal)` reads `current` again (`Failed` if the version
      moved: the host's `SUBJECT_CHANGED`), then validates and diffs with
      no backend, resolver, checkpoint or artifact (a backend request is
      `not-declared`): a `Proposed`, or the kind's `Problems`; a
      normalized proposal the promoting tool would not take is `TypeError`;
    - `promote(proposed)` checks the version again and calls the promoting
      tool with the normalized arguments, as the host's promotion does:
      the tool's `ToolOutput`, or its `ToolError`.

    Everything crosses as JSON text, as between the host and a component.
    """

    def __init__(self, kind: str, subject: int, *, ctx: Ctx | None = None, plugin: Plugin = PLUGIN) -> None:
        self.kind, self.subject, self.ctx, self.plugin = kind, subject, ctx or Ctx(), plugin
        self.author = next((a for a in plugin.authoring_kinds() if a.name == kind), None)
        if self.author is None:
            raise ValueError(f"this plugin authors no kind {kind!r} (it authors {list(plugin.authors)})")
        self.version, self.body = self._now()

    def _now(self) -> tuple[str, Any]:
        """The subject's version and body now, read as `current` is."""
        with _granted(("GET", "HEAD")):
            state = self.plugin.current(self.kind, self.subject, self.ctx)
        return state.version, json.loads(state.body)

    def _unmoved(self) -> None:
        version, _ = self._now()
        if version != self.version:
            raise Failed(f"SUBJECT_CHANGED: the session is bound to version {self.version!r}, the subject is at {version!r}")

    def propose(self, proposal: Any) -> Proposed:
        """`proposal` (JSON values or text) validated and diffed."""
        self._unmoved()
        current = json.dumps(self.body)
        with _granted(()):
            normalized = self.plugin.validate(self.kind, current, proposal, self.ctx)
            changes = self.plugin.diff(self.kind, current, normalized, self.ctx)
        return Proposed(json.loads(normalized), changes)

    def promote(self, proposed: Proposed) -> ToolOutput:
        """A call of the promoting tool with `proposed.normalized`."""
        self._unmoved()
        return self.plugin.call(self.author.promoted_by, proposed.normalized, self.ctx)


class _Granting:
    """The installed host with only `methods` of backend requests allowed,
    as the host grants `current` (GET and HEAD) and `validate` and `diff`
    (nothing, and no resolver, checkpoint or artifact either)."""

    def __init__(self, inner: _host.Host, methods: tuple[str, ...]) -> None:
        self.inner, self.methods = inner, methods

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def send(self, backend, method, path, headers, body) -> Answer:
        if not self.methods:
            raise _host.TransportError("not-declared", backend)
        if method not in self.methods:
            raise _host.TransportError("refused", f"{method} while reading a current state (only GET and HEAD)")
        return self.inner.send(backend, method, path, headers, body)

    def resolve(self, query: Query) -> Resolved:
        if not self.methods:
            raise Failed("validate and diff have no resolver")
        return self.inner.resolve(query)

    def open_checkpoint(self, subject: str, title: str, evidence: str) -> CheckpointInfo:
        raise _host.Refused("authoring opens no checkpoint")

    def put_artifact(self, name: str, mime_type: str, body: bytes) -> ArtifactInfo:
        raise _host.Refused("authoring keeps no artifact")


@contextmanager
def _granted(methods: tuple[str, ...]) -> Iterator[None]:
    """The installed host, granting only `methods`, for a block."""
    previous = _host.install(_Granting(_host.current(), methods))  # type: ignore[arg-type]
    try:
        yield
    finally:
        _host.install(previous)


def _entity(row: Entity | tuple[int, str], tenant: str) -> Entity:
    return row if isinstance(row, Entity) else Entity(row[0], row[1], tenant)


def _pinned(e: Entity, pins: tuple[tuple[str, int], ...]) -> bool:
    """Whether `e` survives the pins: a parent of a pinned kind must be the pinned one."""
    return all(p.id == i for k, i in pins for p in e.parents if p.kind == k)


def _ask(query: Query, reason: str, rows: list[Entity]) -> NeedsClarification:
    rows = sorted(rows, key=lambda e: e.id)[:25]
    names = ", ".join(e.name for e in rows) or "none"
    ask = (query.question or f"Which {query.kind}? Available: {{names}}.").replace("{names}", names)
    candidates = tuple(Candidate(e.id, e.name, e.name) for e in rows)
    return NeedsClarification(Clarification(reason, ask, query.field, candidates))
