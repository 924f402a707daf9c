"""The host's imports behind one object: the WIT imports inside a
component, stand-ins outside one (native unit tests), or a fake that a
test installs (`toolhost_sdk.testing`).

Outside a component, as in the Rust SDK outside wasm, log lines,
progress and resource updates go to stderr, the client can answer
nothing, resolving, backend requests, checkpoints and artifacts fail
with a `ToolError` instead of reaching a host, and raising a JSON-RPC
error raises `ProtocolError`. The wrappers (`resolve`, `backend`,
`checkpoint`, `artifacts`, `client`, `resources`, `protocol`) turn the
bridge's refusals into the errors a caller reads.
"""

from __future__ import annotations

import json
import os
import sys
from typing import NoReturn

from ._records import (
    Answer,
    ArtifactInfo,
    Candidate,
    CheckpointInfo,
    Clarification,
    Elicitation,
    Form,
    Input,
    Query,
    Resolved,
    Root,
    Sampled,
    Support,
)
from .errors import ClientError, Failed, NeedsClarification, ProtocolError

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

    def supports(self) -> Support:
        return Support()

    def ask(self, requests: list[Input]) -> list[Elicitation | Sampled | tuple[Root, ...]]:
        """The answers in the order asked, or `ClientError`."""
        raise ClientError("unsupported", "outside a component")

    def resource_updated(self, uri: str) -> None:
        print(f"[resource updated] {uri}", file=sys.stderr)

    def raise_error(self, code: int, message: str) -> NoReturn:
        """No host ends the call: the error is raised for a test to expect."""
        raise ProtocolError(code, message)


class WitHost(Host):
    """The component's imports, as componentize-py binds them. Importing
    `wit_world` works only inside a component (and while componentize-py
    pre-initializes one), which is the only place this class is built."""

    def __init__(self) -> None:
        from componentize_py_types import Err
        from wit_world.imports import artifacts, backend, checkpoint, client, log, notify, progress, protocol, resolver

        self._err = Err
        self._log, self._progress, self._resolver = log, progress, resolver
        self._backend, self._checkpoint, self._artifacts = backend, checkpoint, artifacts
        self._client, self._notify, self._protocol = client, notify, protocol

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

    def supports(self) -> Support:
        s = self._client.supports()
        return Support(elicitation=s.elicitation, sampling=s.sampling, roots=s.roots)

    def ask(self, requests: list[Input]) -> list[Elicitation | Sampled | tuple[Root, ...]]:
        # An input-required round never returns here: the host ends the
        # call inside `ask` (a trap) and runs it again with the answers.
        try:
            answers = self._client.ask([self._input(i) for i in requests])
        except self._err as e:
            case = type(e.value).__name__.removeprefix("Error_").lower()
            raise ClientError(case, getattr(e.value, "value", None)) from None
        return [_response(self._client, r) for r in answers]

    def _input(self, i: Input):
        w = self._client
        if isinstance(i.request, Form):
            request = w.Request_Elicit(w.Form(message=i.request.message, requested_schema=i.request.requested_schema))
        elif i.request is None:
            request = w.Request_ListRoots()
        else:
            s = i.request
            request = w.Request_Sample(
                w.SamplingRequest(
                    messages=[w.SamplingMessage(role=w.Role[m.role.upper()], text=m.text) for m in s.messages],
                    system_prompt=s.system_prompt,
                    max_tokens=s.max_tokens,
                    temperature=s.temperature,
                    model_hint=s.model_hint,
                )
            )
        return w.InputRequest(key=i.key, request=request)

    def resource_updated(self, uri: str) -> None:
        try:
            self._notify.resource_updated(uri)
        except self._err as e:
            raise Refused(str(e.value)) from None

    def raise_error(self, code: int, message: str) -> NoReturn:
        # componentize-py binds the WIT `raise` (a keyword) as `raise_`.
        self._protocol.raise_(code, message)
        # The host never returns from `raise`; if one did, the call must
        # still end here (a trap, as the Rust SDK aborts) rather than go on
        # as if it had not raised, whatever the tool catches.
        os.abort()


def _response(w, r) -> Elicitation | Sampled | tuple[Root, ...]:
    """A WIT `client.response` as the SDK's record."""
    if isinstance(r, w.Response_Roots):
        return tuple(Root(x.uri, x.name) for x in r.value)
    if isinstance(r, w.Response_Sampled):
        s = r.value
        return Sampled(s.role.name.lower(), s.text, s.model, s.stop_reason)
    e = r.value
    if not isinstance(e, w.Elicitation_Accept):
        return Elicitation("decline" if isinstance(e, w.Elicitation_Decline) else "cancel")
    try:
        content = json.loads(e.value)
    except ValueError as err:
        raise ClientError("failed", f"the host's answer is not JSON: {err}") from None
    return Elicitation("accept", content)


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
