"""The Python MCP SDK answering the resolver's questions (tests/e2e_resolver.rs).

    .venv/bin/python tests/e2e/python_elicit.py http://127.0.0.1:PORT/mcp

With the bearer token in $TOOLHOST_E2E_BEARER (a service client of tenant
`demo` allowed the testbench tools), against the contract seed:

* `mode="legacy"` (2025-11-25, a session) and `mode="2026-07-28"`
  (stateless, MRTR), each with an `elicitation_callback`: `run_by_tag`
  with only `tags=["smoke"]` must ask for the environment (the contract's
  sentence) and then the project, as forms the callback answers with
  staging (12) and payments (1); the call then completes with the two
  payments scenarios queued.
* the same two modes without a callback: the call answers with the
  structured clarification (`missing_required`, environment), not an error.

Prints one line per step and `ok  all` at the end; exits 1 with the reason
on the first failure.
"""

from __future__ import annotations

import asyncio
import os
import sys
import traceback
from typing import Any

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import ElicitResult, Implementation

CLIENT_INFO = Implementation(name="toolhost-e2e-elicit", version="0.1.0")
FIRST_QUESTION = "Which environment do you want to run these tests in? Available: dev, staging, prod."
CHOICES = {"environment": "12", "project": "1"}


class Failure(Exception):
    """An expectation the server did not meet."""


def check(cond: bool, what: str) -> None:
    if not cond:
        raise Failure(what)


def client(url: str, mode: str, callback: Any) -> tuple[Any, Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {os.environ['TOOLHOST_E2E_BEARER']}"})
    transport = streamable_http_client(url, http_client=http)
    kwargs: dict[str, Any] = {"mode": mode, "client_info": CLIENT_INFO, "read_timeout_seconds": 60}
    if callback is not None:
        kwargs["elicitation_callback"] = callback
    return http, Client(transport, **kwargs)


async def answered(url: str, mode: str) -> None:
    label = f"python Client(mode={mode!r}) with elicitation"
    asked: list[tuple[str, str, list[str]]] = []

    async def on_elicit(context: Any, params: Any) -> ElicitResult:
        schema = params.requested_schema
        (field,) = schema["properties"].keys()
        options = [o["const"] for o in schema["properties"][field]["oneOf"]]
        asked.append((field, params.message, options))
        return ElicitResult(action="accept", content={field: CHOICES[field]})

    http, c = client(url, mode, on_elicit)
    async with http, c:
        result = await c.call_tool("run_by_tag", {"tags": ["smoke"]})
        check(not result.is_error, f"{label}: isError: {dump(result)}")
        fields = [a[0] for a in asked]
        check(fields == ["environment", "project"], f"{label}: asked about {fields}, expected environment then project")
        check(asked[0][1] == FIRST_QUESTION, f"{label}: first question {asked[0][1]!r}")
        check(asked[0][2] == ["11", "12", "13"], f"{label}: environment options {asked[0][2]}")
        check(asked[1][2] == ["1", "2"], f"{label}: project options {asked[1][2]}")
        s = result.structured_content or {}
        names = [q.get("name") for q in s.get("queued", [])]
        check(s.get("environment") == "staging" and s.get("project") == "payments", f"{label}: {s}")
        check(names == ["Login flow", "Cart"], f"{label}: queued {names}")
        print(f"ok  {label}: asked {fields}, queued {names}")


async def structured(url: str, mode: str) -> None:
    label = f"python Client(mode={mode!r}) without elicitation"
    http, c = client(url, mode, None)
    async with http, c:
        result = await c.call_tool("run_by_tag", {"tags": ["smoke"]})
        check(not result.is_error, f"{label}: isError: {dump(result)}")
        s = result.structured_content or {}
        check(s.get("reason") == "missing_required", f"{label}: {s}")
        check(s.get("field") == "environment", f"{label}: {s}")
        check(s.get("ask_user") == FIRST_QUESTION, f"{label}: {s}")
        print(f"ok  {label}: {s.get('reason')} {s.get('field')}")


def dump(result: Any) -> str:
    try:
        return result.model_dump_json(by_alias=True, exclude_none=True)
    except Exception:  # noqa: BLE001 - diagnostics only
        return repr(result)


async def main(url: str) -> int:
    try:
        for mode in ("legacy", "2026-07-28"):
            await answered(url, mode)
            await structured(url, mode)
    except Failure as f:
        print(f"FAIL {f}", file=sys.stderr)
        return 1
    except Exception:  # noqa: BLE001 - report anything else with its trace
        traceback.print_exc()
        return 1
    print("ok  all")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
