"""HTTP to the plugin's declared backends, through the host's `backend` import.

A plugin names a backend (a `[backends.<name>]` of its manifest) and a
path, never a host: the operator's configuration holds the base URL and
the credential, which the host adds together with the caller's tenant
(`X-Tenant`). The plugin never sees either.

    rows = backend.get("testbench", "/api/projects").ok().json(list[ProjectRow])
    made = backend.post("testbench", "/api/scenarios", {"name": name}).ok().json()

Limits, all the host's: every request counts against the call's host-call
budget and time limit; while a `plan` or an entities snapshot runs, and
after a clarification, only GET and HEAD are allowed (others fail with a
"refused" `Failed`); the host caps the answer's size, drops credential,
cookie, `Host`, `X-Tenant` and hop-by-hop request headers, and
`Set-Cookie` from answers.

Outside a component (native unit tests) there is no host: every request
fails with `Failed`, unless a test installs `toolhost_sdk.testing.FakeHost`.
"""

from __future__ import annotations

import json as _json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from . import _host, schema
from .errors import Failed, InvalidArguments, NotFound, ToolError

__all__ = ["Response", "send", "get", "head", "post", "put", "patch", "delete", "escape"]

#: How many characters of an error answer's body an error quotes: enough
#: for a backend's one-line reason, short of a page of HTML.
EXCERPT_CHARS = 200

#: `send(..., json=...)` unset, as opposed to a JSON `null` body.
_UNSET: Any = object()


@dataclass
class Response:
    """A backend's answer, whatever its status: check it with `ok()`."""

    status: int
    #: The answer's headers, as the host passed them on.
    headers: list[tuple[str, str]] = field(default_factory=list)
    #: The answer's body, at most the host's size limit.
    body: bytes = b""
    #: The request (`GET /path on backend NAME`), for error messages.
    origin: str = "request"

    @property
    def is_success(self) -> bool:
        """Whether the status is 2xx."""
        return 200 <= self.status < 300

    def ok(self) -> Response:
        """This answer if its status is 2xx. Otherwise raises `NotFound`
        for 404 and `Failed` for any other status, naming the request and
        the status and quoting the start of the body (the backend's reason)."""
        if self.is_success:
            return self
        message = f"{self.origin} answered {self.status}{_excerpt(self.body)}"
        raise NotFound(message) if self.status == 404 else Failed(message)

    def json(self, into: Any = None) -> Any:
        """The body parsed as JSON and, given a type hint `into`
        (`list[ProjectRow]`, see `toolhost_sdk.schema`), checked and
        converted to it; fields the hint does not name are ignored. A body
        that is not JSON, or does not fit, is `Failed` naming the request
        and the field (the backend broke its API, not the caller's
        arguments). Does not look at the status."""
        try:
            value = _json.loads(self.body)
        except ValueError as e:
            raise Failed(f"{self.origin} answered a body that is not JSON: {e}") from None
        if into is None:
            return value
        try:
            return schema.shape_of(into).convert(value, "", strict=False)
        except InvalidArguments as e:
            raise Failed(f"{self.origin} answered JSON of an unexpected shape: {_root(e.message)}") from None

    def text(self) -> str:
        """The body as UTF-8 text (undecodable bytes replaced)."""
        return self.body.decode("utf-8", errors="replace")

    def header(self, name: str) -> str | None:
        """The first header named `name` (case-insensitive)."""
        return next((v for n, v in self.headers if n.lower() == name.lower()), None)


def send(
    backend: str,
    method: str,
    path: str,
    *,
    headers: Iterable[tuple[str, str]] = (),
    body: bytes | None = None,
    json: Any = _UNSET,
) -> Response:
    """`method` (`GET`, `HEAD`, `POST`, `PUT`, `PATCH`, `DELETE`) `path`
    on the manifest-declared `backend`. `path` starts with one `/` and may
    carry a query string (escape what callers passed with `escape`); the
    host refuses `//`, `..` segments and anything that would change the
    host. `json` sets a JSON body with `Content-Type: application/json`.

    Only the transport fails here (`Failed`, saying which backend and
    why): a 4xx or 5xx answer is a `Response` until `ok()` checks it.
    """
    method = method.upper()
    if method not in _host.METHODS:
        raise ValueError(f"method {method!r} is not one of {', '.join(_host.METHODS)}")
    headers = list(headers)
    if json is not _UNSET:
        body = _json_body(json)
        headers.append(("content-type", "application/json"))
    origin = f"{method} {path} on backend {backend}"
    try:
        answer = _host.current().send(backend, method, path, headers, body)
    except _host.TransportError as e:
        raise transport_error(backend, e) from None
    return Response(answer.status, list(answer.headers), bytes(answer.body), origin)


def get(backend: str, path: str) -> Response:
    """`GET path` on `backend`, asking for JSON."""
    return send(backend, "GET", path, headers=[("accept", "application/json")])


def head(backend: str, path: str) -> Response:
    """`HEAD path` on `backend`."""
    return send(backend, "HEAD", path)


def post(backend: str, path: str, body: Any = None) -> Response:
    """`POST path` on `backend` with `body` as JSON (none for None),
    asking for JSON. Refused by the host while planning and after a clarification."""
    return send(backend, "POST", path, headers=[("accept", "application/json")], json=_body(body))


def put(backend: str, path: str, body: Any = None) -> Response:
    """`PUT path` with `body` as JSON, as `post`."""
    return send(backend, "PUT", path, headers=[("accept", "application/json")], json=_body(body))


def patch(backend: str, path: str, body: Any = None) -> Response:
    """`PATCH path` with `body` as JSON, as `post`."""
    return send(backend, "PATCH", path, headers=[("accept", "application/json")], json=_body(body))


def delete(backend: str, path: str) -> Response:
    """`DELETE path` on `backend`, asking for JSON, as `post`."""
    return send(backend, "DELETE", path, headers=[("accept", "application/json")])


def _body(body: Any) -> Any:
    """No body for None, else `body` as JSON."""
    return _UNSET if body is None else body


def escape(text: str) -> str:
    """Percent-encodes `text` for a path segment or a query value: every
    byte but ASCII letters, digits and `-._~`."""
    safe = b"-._~"
    return "".join(
        chr(b) if (chr(b).isascii() and chr(b).isalnum()) or b in safe else f"%{b:02X}"
        for b in text.encode("utf-8")
    )


def transport_error(backend: str, e: _host.TransportError) -> ToolError:
    """The host's transport failure as the text a caller can act on."""
    why = {
        "not-declared": f"backend {_json.dumps(e.detail or backend)} is not declared in the plugin's "
        "manifest or not configured by the operator",
        "refused": f"the host refused the request to backend {backend}: {e.detail}",
        "timeout": f"backend {backend} did not answer in time",
        "too-large": f"backend {backend} answered more than the host accepts",
        "unavailable": f"backend {backend} is unavailable: {e.detail}",
    }
    return Failed(why.get(e.kind, f"backend {backend} failed: {e}"))


def _root(message: str) -> str:
    """A converter's message about the whole body (`: expected …`) as `the body: …`."""
    return f"the body{message}" if message.startswith(":") else message


def _json_body(value: Any) -> bytes:
    try:
        return _json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
    except (TypeError, ValueError) as e:
        raise Failed(f"request body does not serialize to JSON: {e}") from None


def _excerpt(body: bytes) -> str:
    """`": <start of body>"`, one line, or nothing for an empty body."""
    line = " ".join(body.decode("utf-8", errors="replace").split())
    if not line:
        return ""
    cut = line[:EXCERPT_CHARS]
    return f": {cut}…" if len(cut) < len(line) else f": {cut}"
