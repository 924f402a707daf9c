"""Progressive discovery through the Python MCP SDK, in both protocol eras.

    .venv/bin/python tests/e2e/python_discovery.py http://127.0.0.1:PORT/mcp discovery|full

Against catalog-300 (300 tools in two plugins) and a token allowed all of them:

* `discovery` (the host's default threshold): `tools/list` is the small
  set (find_tools, describe_tool, and the core tools the token may see),
  under LISTED_LIMIT bytes; `find_tools` finds a tool the list left out,
  `describe_tool` gives its definition, and the client calls it at once.
* `full` (a threshold above the catalog): every page of `tools/list`
  holds the 300 tools and no discovery tool.

Prints the bytes of the tool list (every page) in each mode; exits 1 with
the reason on the first failure.
"""

from __future__ import annotations

import os
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation

from checks import check, run

CLIENT_INFO = Implementation(name="toolhost-e2e-python-discovery", version="0.1.0")
# The most bytes the small list may take (its JSON as the SDK parsed it):
# two definitions and their schemas, against ~600 KB for the whole catalog.
LISTED_LIMIT = 8 * 1024
DOMAINS = {"crm", "billing", "helpdesk", "hr", "inventory", "shipping", "calendar", "docs",
           "devops", "analytics", "marketing", "security", "finance", "legal", "projects"}
NEED = "give a customer their money back for a damaged order"
WANTED = "billing_create_refund"


async def listed(client: Client) -> tuple[list[str], int]:
    """Every page of tools/list: the names and the bytes of the pages."""
    names: list[str] = []
    size = 0
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        size += len(page.model_dump_json(by_alias=True, exclude_none=True))
        names += [t.name for t in page.tools]
        cursor = page.next_cursor
        if not cursor:
            return names, size


async def exercise(url: str, mode: str, want: str) -> None:
    label = f"python discovery ({want}, {mode})"
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {os.environ['TOOLHOST_E2E_TOKEN']}"})
    transport = streamable_http_client(url, http_client=http)
    async with http, Client(transport, mode=mode, client_info=CLIENT_INFO, read_timeout_seconds=30) as client:
        names, size = await listed(client)
        if want == "full":
            catalog = [n for n in names if n.split("_")[0] in DOMAINS]
            check(len(catalog) == 300, f"{label}: {len(catalog)} catalog tools listed, expected 300")
            check("find_tools" not in names, f"{label}: a full list names find_tools")
            print(f"ok  {label}: tools/list {len(names)} tools, {size} bytes")
            return
        check({"find_tools", "describe_tool"} <= set(names), f"{label}: no discovery tools in {names}")
        check(len(names) <= 10, f"{label}: {len(names)} tools listed: {names}")
        check(size <= LISTED_LIMIT, f"{label}: tools/list is {size} bytes, over {LISTED_LIMIT}")
        check(WANTED not in names, f"{label}: {WANTED} is listed")

        found = await client.call_tool("find_tools", {"query": NEED})
        check(not found.is_error, f"{label}: find_tools failed: {found}")
        candidates = [c["name"] for c in found.structured_content["candidates"]]
        check(WANTED in candidates[:3], f"{label}: {WANTED} not in the top 3 of {candidates}")
        # The model's choice, not the host's: the host never picks.
        chosen = WANTED

        described = await client.call_tool("describe_tool", {"name": chosen})
        check(not described.is_error, f"{label}: describe_tool failed: {described}")
        tool = described.structured_content["tool"]
        schema = tool["inputSchema"]
        check("reason" in schema["properties"], f"{label}: {chosen}'s schema has no reason: {schema}")
        tags = tool["_meta"]["toolhost/tags"]
        check("money-back" in tags, f"{label}: {chosen}'s reviewed tags {tags} lack money-back")

        args = {"payment": "pay_42", "amount": "19.90", "reason": "damaged"}
        done = await client.call_tool(chosen, args)
        check(not done.is_error, f"{label}: {chosen} failed: {done}")
        check(done.structured_content["tool"] == chosen, f"{label}: {chosen} answered {done.structured_content}")
        check(done.structured_content["arguments"] == args, f"{label}: {chosen} got {done.structured_content}")
        print(f"ok  {label}: tools/list {len(names)} tools, {size} bytes; find_tools -> {candidates[:3]}; called {chosen}")


async def main(url: str, want: str) -> None:
    await exercise(url, "legacy", want)
    await exercise(url, "2026-07-28", want)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in ("discovery", "full"):
        sys.exit("usage: python_discovery.py http://127.0.0.1:PORT/mcp discovery|full")
    run(main(sys.argv[1], sys.argv[2]))
