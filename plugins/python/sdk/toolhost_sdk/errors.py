"""The errors a tool reports, one class per WIT `tool-error` variant.

Raise them from a tool (or let the SDK's helpers raise them): the SDK turns
each into the WIT variant of the same name, which the host relays to the
caller as a tool error (MCP `isError`) with a stable code. The message is
shown to the caller, so it must not leak secrets or another tenant's data.

Any other exception is a bug in the plugin: the SDK logs its traceback
(cut to fit the log budget) and lets it trap, so the host discards the
instance and reports the call as trapped, as a Rust plugin's panic does.

`ProtocolError` is not a tool error: it is what `protocol.raise_error`
raises outside a component, where no host ends the call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._records import Clarification


class ToolError(Exception):
    """A failure the tool reports to its caller. Use a subclass."""

    #: The WIT `tool-error` case this class becomes.
    variant = "failed"
    #: How `str()` prefixes the message, as the Rust SDK displays it.
    label = "failed"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"{self.label}: {self.message}"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.message == self.message  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self.message))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class InvalidArguments(ToolError):
    """The arguments do not fit the tool's input schema or meaning. The SDK
    raises it, naming the field, for arguments that do not fit the
    function's type hints."""

    variant = "invalid-arguments"
    label = "invalid arguments"


class NotFound(ToolError):
    """A named thing does not exist (or is not the caller's tenant's)."""

    variant = "not-found"
    label = "not found"


class Failed(ToolError):
    """The tool ran and failed; the message is safe to show the caller."""

    variant = "failed"
    label = "failed"


class UnknownTool(ToolError):
    """The host asked for a tool this plugin does not export. The SDK raises
    it; a tool has no reason to."""

    variant = "unknown-tool"
    label = "unknown tool"


class NeedsClarification(Failed):
    """The host's resolver asked a question instead of answering (several
    matches, none, or nothing given): raised by `resolve`.

    Let it propagate and do nothing else: the host has already recorded the
    question and answers the call with it (the reason, the question, the
    candidates) whatever the tool returns, and refuses the call's
    side-effecting backend requests from then on. Its message,
    `needs clarification: <the question>`, is what a host that did not
    intercept it would show. `clarification` holds the question itself,
    for unit tests.
    """

    def __init__(self, clarification: Clarification) -> None:
        super().__init__(f"needs clarification: {clarification.ask_user}")
        self.clarification = clarification


class ClientError(Failed):
    """The MCP client answered nothing: raised by `client.ask` and its
    shortcuts. `kind` is the WIT `client.error` case, `detail` its text:

    - `unsupported`: nobody can be asked this here (the client did not
      declare the capability; a plan, a listing or a run; outside a
      component);
    - `refused`: the host refused the request (sampling not granted or
      over budget, a secret in it, a malformed key or form, asked after
      acting, too many rounds);
    - `timeout`: the client did not answer in time (no `detail`);
    - `failed`: the client answered with an error or something that does
      not fit the request.

    Let it propagate and the call fails with the Rust SDK's words
    (`cannot ask: …`), or catch it to go on without the answer.
    """

    #: How each kind reads, as the Rust SDK's `ClientError` displays it.
    WORDS = {
        "unsupported": "cannot ask: {}",
        "refused": "the host refused the request: {}",
        "timeout": "the client did not answer in time",
        "failed": "the client failed: {}",
    }

    def __init__(self, kind: str, detail: str | None = None) -> None:
        super().__init__(self.WORDS[kind].format(detail))
        self.kind = kind
        self.detail = detail


class ProtocolError(BaseException):
    """The JSON-RPC error `protocol.raise_error` ended the call with, raised
    outside a component (native unit tests), where there is no host to end
    it: `code` and `message` as the tool gave them, before the host's checks,
    cut and redaction. Inside a component it is never raised: the host stops
    the instance inside the import.

    Not a `ToolError`, and not even an `Exception` (as `SystemExit` is
    not): inside a component nothing in the tool can catch a raise, so an
    `except Exception` in a tool must not catch it natively either. A test
    expects it with `assertRaises(ProtocolError)` or
    `pytest.raises(ProtocolError)`; its text reads like the Rust SDK's panic
    (`JSON-RPC error -30001: no such job: 42`).
    """

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"JSON-RPC error {code}: {message}")
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"ProtocolError({self.code!r}, {self.message!r})"
