"""Ending a call with a JSON-RPC error, through the host's `protocol`
import.

A tool's own failure is a `ToolError`: the client gets a result with
`isError`, which its model reads. `raise_error` is for the rarer answer
that belongs to the protocol: the request itself cannot be taken, and the
client (or the Tasks extension, which reports a task `failed` only for a
JSON-RPC error) must see an error response.

    from toolhost_sdk import protocol

    #: This plugin's "job not found" (an application-defined code).
    NO_SUCH_JOB = -30001

    protocol.raise_error(NO_SUCH_JOB, "no such job: 42")

The host's rules: `code` is the plugin's own, outside `-32768..=-31000`
(the range JSON-RPC reserves, then the block the host takes for its own
codes), or exactly `INVALID_PARAMS`; any other code of the host's fails
the call as `CONTRACT_VIOLATION`, so a plugin never passes for the host.
The message is cut at 1 KiB and any secret in it is redacted; raising
counts against the call's host-call budget. The call's audit row records
it as `PROTOCOL_ERROR`. The SDK checks none of this (a native test does
not see a reserved code refused): only that the arguments fit the WIT
signature, `raise: func(code: s32, message: string)`.

The WIT function is named `raise`, a Python keyword: componentize-py binds
it as `raise_`, and the SDK names it `raise_error`.
"""

from __future__ import annotations

from typing import NoReturn

from . import _host
from .errors import ProtocolError

__all__ = ["INVALID_PARAMS", "ProtocolError", "raise_error"]

#: JSON-RPC's "invalid params": the one reserved code a plugin may raise.
INVALID_PARAMS = -32602

#: The WIT `s32` range a code must fit in.
_S32 = range(-(2**31), 2**31)


def raise_error(code: int, message: str) -> NoReturn:
    """Ends the call with the JSON-RPC error `code`, `message`. Never
    returns: the host stops the instance at once (whatever the call did
    before stands, e.g. a backend write).

    Outside a component (native unit tests, a `FakeHost` too) it raises
    `ProtocolError` with `code` and `message`, so a test can expect it.
    A `code` that is not an `int` (a `bool` is not one here) or a `message`
    that is not a `str` is `TypeError`; a code outside the `s32` range is
    `ValueError`: those are plugin bugs, which trap inside a component.
    """
    if isinstance(code, bool) or not isinstance(code, int):
        raise TypeError(f"a JSON-RPC error code is an int, not {type(code).__name__}")
    if code not in _S32:
        raise ValueError(f"JSON-RPC error code {code} does not fit the WIT s32")
    if not isinstance(message, str):
        raise TypeError(f"a JSON-RPC error message is a str, not {type(message).__name__}")
    _host.current().raise_error(code, message)
