"""The host's imports behind one object: the WIT imports inside a
component, stand-ins outside one (native unit tests), or a fake that a
test installs (`toolhost_sdk.testing`).

Outside a component, as in the Rust SDK outside wasm, log lines and
progress go to stderr, and resolving, backend requests, checkpoints and
artifacts fail with a `ToolError` instead of reaching a host. The
wrappers (`resolve`, `backend`, `checkpoint`, `artifacts`) turn the
bridge's refusals into the errors a caller reads.
"""

from __future__ import annotations

import sys

from ._records import (
    Answer,
    ArtifactInfo,
    Candidate,
    CheckpointInfo,
    Clarification,
    Query,
    Resolved,
)
from .errors import Failed, NeedsClarification

#: Whether this interpreter runs inside a component (componentize-py's
#: CPython is built for WASI; nothing else here is).
IN_COMPONENT = sys.platform == "wasi"

#: The log levels of the WIT `log` interface, lowest first.
LEVELS = ("trace", "debug", "info", "warn", "error")

#: The methods of the WIT `backend` interface.
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


class Refused(Exception):
    """The host refused a checkpoint or an artifact; `why` is its reason."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class TransportError(Exception):
    """A backend request failed before any answer: `kind` is the WIT
    `backend.error` case (`not-declared`, `refused`, `timeout`,
    `too-large`, `unavailable`), `detail` its text, if any."""

    def __init__(self, kind: str, detail: str | None = None) -> None:
        super().__init__(kind if detail is None else f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


class Host:
    """No host: what a tool meets in a native unit test."""

    def log(self, level: str, message: str) -> None:
        print(f"[{level}] {message}", file=sys.stderr)

    def report(self, progress: float, total: float | None, message: str | None) -> None:
        print(f"[progress] {progress}/{total} {message or ''}".rstrip(), file=sys.stderr)

    def resolve(self, query: Query) -> Resolved:
        raise Failed("the resolver is only available inside the toolhost")

    def send(
        self,
        backend: str,
        method: str,
        path: str,
        headers: list[tuple[str, str]],
        body: bytes | None,
    ) -> Answer:
        raise TransportError("unavailable", "backends are only reachable inside the toolhost")

    def open_checkpoint(self, subject: str, title: str, evidence: str) -> CheckpointInfo:
        raise Refused("checkpoints are only available inside the toolhost")

    def put_artifact(self, name: str, mime_type: str, body: bytes) -> ArtifactInfo:
        raise Refused("artifacts are only kept inside an exploration run on the toolhost")


class WitHost(Host):
    """The component's imports, as componentize-py binds them. Importing
    `wit_world` works only inside a component (and while componentize-py
    pre-initializes one), which is the only place this class is built."""

    def __init__(self) -> None:
        from componentize_py_types import Err
        from wit_world.imports import artifacts, backend, checkpoint, log, progress, resolver

        self._err = Err
        self._log, self._progress, self._resolver = log, progress, resolver
        self._backend, self._checkpoint, self._artifacts = backend, checkpoint, artifacts

    def log(self, level: str, message: str) -> None:
        self._log.log(self._log.Level[level.upper()], message)

    def report(self, progress: float, total: float | None, message: str | None) -> None:
        self._progress.report(progress, total, message)

    def resolve(self, query: Query) -> Resolved:
        w = self._resolver
        q = w.Query(
            kind=query.kind,
            field=query.field,
            value=query.value,
            pins=[w.Pin(kind=k, id=i) for k, i in query.pins],
            within=None if query.within is None else list(query.within),
            question=query.question,
        )
        try:
            r = w.resolve(q)
        except self._err as e:
            raise NeedsClarification(_clarification(e.value)) from None
        return Resolved(id=r.id, name=r.name)

    def send(self, backend, method, path, headers, body) -> Answer:
        w = self._backend
        req = w.Request(
            backend=backend,
            method=w.Method[method],
            path=path,
            headers=list(headers),
            body=body,
        )
        try:
            r = w.send(req)
        except self._err as e:
            raise _transport_error(e.value) from None
        return Answer(status=r.status, headers=tuple(r.headers), body=bytes(r.body))

    def open_checkpoint(self, subject: str, title: str, evidence: str) -> CheckpointInfo:
        try:
            c = self._checkpoint.open(subject, title, evidence)
        except self._err as e:
            raise Refused(str(e.value)) from None
        return CheckpointInfo(c.id, c.version, c.state, c.disposition, c.outcome)

    def put_artifact(self, name: str, mime_type: str, body: bytes) -> ArtifactInfo:
        try:
            a = self._artifacts.put(name, mime_type, body)
        except self._err as e:
            raise Refused(str(e.value)) from None
        return ArtifactInfo(uri=a.uri, sha256=a.sha256, size=a.size)


def _clarification(c) -> Clarification:
    """The WIT `clarification` as the SDK's record."""
    reason = c.reason.name.lower().replace("_", "-")
    return Clarification(
        reason=reason,
        ask_user=c.ask_user,
        field=c.field,
        candidates=tuple(Candidate(x.id, x.name, x.label) for x in c.candidates),
        scoped_by=tuple((k, n) for k, n in c.scoped_by),
    )


def _transport_error(e) -> TransportError:
    """The WIT `backend.error` case (`Error_NotDeclared`…) as a TransportError."""
    case = type(e).__name__.removeprefix("Error_")
    kind = "".join("-" + ch.lower() if ch.isupper() else ch for ch in case).lstrip("-")
    return TransportError(kind, getattr(e, "value", None))


_current: Host = WitHost() if IN_COMPONENT else Host()


def current() -> Host:
    """The host the SDK's wrappers talk to."""
    return _current


def install(host: Host) -> Host:
    """Makes `host` the current one and answers the previous one (for
    `toolhost_sdk.testing`)."""
    global _current
    previous, _current = _current, host
    return previous
