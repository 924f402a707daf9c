"""A toolset through the Python MCP SDK, in both protocol eras.

    .venv/bin/python tests/e2e/python_toolsets.py URL TOOLSET

Against catalog-300 (300 tools) and a token allowed all of them, reaching
toolset support-desk (every tool tagged `billing` and `crm_get_contact`,
less `billing_delete_invoice`) either bound by its scope (URL is /mcp) or
through the toolset's endpoint (URL is /mcp/toolsets/support-desk):

* `tools/list` is exactly the toolset's tools (under the discovery
  threshold, so whole, with no discovery tool);
* a call of a tool outside it is TOOL_NOT_FOUND with the re-list hint,
  the same answer as a tool no catalog has;
* `find_tools` (callable, though unlisted) names only tools inside it,
  even asked for an outside tool by its exact name, and `describe_tool`
  of an outside tool answers as of a tool no catalog has.

Exits 1 with the reason on the first failure.
"""

from __future__ import annotations

import os
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation

from checks import check, run

CLIENT_INFO = Implementation(name="toolhost-e2e-python-toolsets", version="0.1.0")
OUTSIDE = "crm_delete_contact"
NOWHERE = "no_such_tool_anywhere"


def inside(name: str) -> bool:
    return (name.startswith("billing_") and name != "billing_delete_invoice") or name == "crm_get_contact"


def error_of(result, name: str) -> dict:
    """The error a failed call answered, its tool name masked."""
    check(result.is_error, f"{name}: the call did not fail: {result}")
    error = dict(result.structured_content["error"])
    error["message"] = error["message"].replace(name, "TOOL")
    return error


async def exercise(url: str, mode: str) -> None:
    label = f"python toolsets ({url.rsplit('/', 2)[-1]}, {mode})"
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {os.environ['TOOLHOST_E2E_TOKEN']}"})
    transport = streamable_http_client(url, http_client=http)
    async with http, Client(transport, mode=mode, client_info=CLIENT_INFO, read_timeout_seconds=30) as client:
        names = []
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor)
            names += [t.name for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                break
        outside = [n for n in names if not inside(n)]
        check(not outside, f"{label}: listed outside the toolset: {outside}")
        check("crm_get_contact" in names, f"{label}: crm_get_contact not listed: {names}")
        check(len(names) >= 15, f"{label}: only {len(names)} tools listed: {names}")

        outside_call = await client.call_tool(OUTSIDE, {"id": "c1"})
        nowhere_call = await client.call_tool(NOWHERE, {"id": "c1"})
        outside_error = error_of(outside_call, OUTSIDE)
        check(outside_error["code"] == "TOOL_NOT_FOUND", f"{label}: {OUTSIDE} answered {outside_error}")
        check("hint" in outside_error, f"{label}: no re-list hint in {outside_error}")
        check(outside_error == error_of(nowhere_call, NOWHERE),
              f"{label}: an outside tool's answer differs from a missing one's: {outside_error}")

        for query in (OUTSIDE, "delete a contact from the crm", "open a helpdesk ticket"):
            found = await client.call_tool("find_tools", {"query": query, "limit": 25})
            check(not found.is_error, f"{label}: find_tools {query!r} failed: {found}")
            candidates = [c["name"] for c in found.structured_content["candidates"]]
            leaked = [c for c in candidates if not inside(c)]
            check(not leaked, f"{label}: find_tools {query!r} named {leaked}")
            answer = {k: v for k, v in found.structured_content.items() if k != "query"}  # the query is the caller's own
            check(OUTSIDE not in str(answer), f"{label}: {OUTSIDE} named in {found}")

        described = await client.call_tool("describe_tool", {"name": OUTSIDE})
        missing = await client.call_tool("describe_tool", {"name": NOWHERE})
        check(described.is_error and missing.is_error, f"{label}: describe_tool described {described}")
        masked = [str(r.structured_content).replace(n, "TOOL") for r, n in ((described, OUTSIDE), (missing, NOWHERE))]
        check(masked[0] == masked[1], f"{label}: describe_tool answers differ: {masked}")

        done = await client.call_tool("crm_get_contact", {"id": "c1"})
        check(not done.is_error, f"{label}: crm_get_contact failed: {done}")
        print(f"ok  {label}: {len(names)} tools listed, outside calls not found, searches name none outside")


async def main(url: str) -> None:
    await exercise(url, "legacy")
    await exercise(url, "2026-07-28")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python_toolsets.py URL")
    run(main(sys.argv[1]))
