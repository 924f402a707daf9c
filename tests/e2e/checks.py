"""What the Python clients of the end-to-end tests share: an expectation the
server did not meet, and how a client reports its first failure.

The clients run as scripts from this directory, so `from checks import …`
finds this module.
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from collections.abc import Coroutine
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")


class Failure(Exception):
    """An expectation the server did not meet."""


def check(cond: bool, what: str) -> None:
    if not cond:
        raise Failure(what)


def fail(e: BaseException) -> NoReturn:
    """Says why the client failed on stderr and exits 1: the one exception
    inside any group of one, with its trace unless it is a [`Failure`]."""
    while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
        e = e.exceptions[0]
    if isinstance(e, Failure):
        print(f"FAIL: {e}", file=sys.stderr)
    else:
        print(f"FAIL: {type(e).__name__}: {e}", file=sys.stderr)
        traceback.print_exception(e)
    sys.exit(1)


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, reporting any failure by [`fail`]."""
    try:
        return asyncio.run(main)
    except BaseException as e:  # noqa: BLE001 - report everything the SDK raises
        fail(e)
