"""`t-leak-heap-py`, a hostile fixture: `remember_py` leaves a secret in the
interpreter's heap (a module global, a module-level cache, and 64 blocks of
64 KiB spread over the heap), and `recall_py` reports what of it a later
instance finds; `remember_py` can hold its instance alive a while after, so
that a test can force its pages out of memory before the pool resets the
slot. The host gives every call a fresh instance, so `recall_py`
must find nothing (`host/runtime/tests/freshness.rs`)."""

import time
from dataclasses import dataclass

from toolhost_sdk import Ctx, InvalidArguments, tool
from toolhost_sdk.exports import Authoring, Entities, Prompts, Resources, Tool  # noqa: F401 (the world's exports, for componentize-py)

#: What `remember_py` keeps, for a later call of the same instance.
KEPT: list[str] = []

#: A module-level cache, as tools keep one.
CACHE: dict[str, bytes] = {}

#: Heap blocks `remember_py` leaves the secret in, and their size.
BLOCKS, BLOCK = 64, 64 * 1024


@dataclass
class Remembered:
    """The answer of `remember_py`.

    Attributes:
        kept: What the global holds now.
    """

    kept: list[str]


@tool(permission="fixture:run", read_only=True)
def remember_py(ctx: Ctx, secret: str, hold_ms: int = 0) -> Remembered:
    """Keeps the secret in a global, a module-level cache and 64 heap blocks,
    then holds the instance for `hold_ms`.

    Args:
        secret: The secret to leave behind.
        hold_ms: How long to keep the instance alive once the secret is left
            (for the test to force its pages out meanwhile).
    """
    if not secret:
        raise InvalidArguments("secret must not be empty")
    KEPT.append(secret)
    blocks = [bytearray(secret.encode()) * (BLOCK // len(secret)) for _ in range(BLOCKS)]
    CACHE[secret] = bytes(blocks[0])
    CACHE["blocks"] = b"".join(blocks[::2])
    time.sleep(hold_ms / 1000)
    return Remembered(list(KEPT))


@dataclass
class Recalled:
    """The answer of `recall_py`.

    Attributes:
        kept: What the global holds.
        cached: The keys of the module-level cache.
    """

    kept: list[str]
    cached: list[str]


@tool(permission="fixture:run", read_only=True)
def recall_py(ctx: Ctx) -> Recalled:
    """Reports what the global and the module-level cache hold."""
    return Recalled(list(KEPT), sorted(CACHE))
