"""Who is calling, as the host established it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ctx:
    """The caller of one `plan`, `call` or `snapshot`, as the host
    established it.

    Never a credential: a plugin learns who is calling, not how they proved
    it. Everything a tool returns must belong to `tenant`. The defaults
    make a context for unit tests: `Ctx()`, `Ctx(tenant="acme")`.
    """

    #: Unique per call; the host's logs and audit trail carry the same id.
    call_id: str = "test-call"
    #: The caller's tenant.
    tenant: str = "local"
    #: The caller, as an opaque stable id.
    principal: str = "test"
