"""Python MCP SDK clients that are told the catalog changed, in both eras.

    .venv/bin/python tests/e2e/python_list_changed.py URL READY_FILE

With the host's bearer token ($TOOLHOST_E2E_TOKEN) it opens, side by side:

* a 2025-11-25 session (`mode="legacy"`: `initialize`, a session id), which
  lists the tools and waits for `notifications/tools/list_changed` and
  `notifications/prompts/list_changed` (plugins bring prompts too);
* a 2026-07-28 client (the version pinned, stateless) holding a
  `subscriptions/listen` stream with `tools_list_changed=True` and
  `prompts_list_changed=True`, which must hear both.

It prints `before: a,b,c`, writes READY_FILE once both are open and
acknowledged, then waits (at most 60 s each) for the change on both, lists
the tools again over the same clients (no reconnect) and prints
`legacy after: …` and `stateless after: …`. Exits 1 with the reason if
either is not told.
"""

from __future__ import annotations

import asyncio
import os
import sys

import anyio
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation

WAIT_SECONDS = 60
INFO = Implementation(name="toolhost-e2e-list-changed", version="0.1.0")


async def names(client: Client) -> str:
    listed = await client.list_tools()
    return ",".join(sorted(t.name for t in listed.tools))


def client(url: str, mode: str, **kw) -> tuple:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {os.environ['TOOLHOST_E2E_TOKEN']}"})
    transport = streamable_http_client(url, http_client=http)
    return http, Client(transport, mode=mode, client_info=INFO, read_timeout_seconds=30, **kw)


async def main(url: str, ready: str) -> int:
    changed = anyio.Event()
    prompts_changed = anyio.Event()

    async def on_message(message) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()
        if isinstance(message, types.PromptListChangedNotification):
            prompts_changed.set()
        await anyio.lowlevel.checkpoint()

    legacy_http, legacy = client(url, "legacy", message_handler=on_message)
    modern_http, modern = client(url, "2026-07-28")
    async with legacy_http, legacy, modern_http, modern:
        print("before: " + await names(legacy), flush=True)
        async with modern.listen(tools_list_changed=True, prompts_list_changed=True) as sub:
            with open(ready, "w") as f:
                f.write("open\n")
            with anyio.move_on_after(WAIT_SECONDS) as waited:
                await changed.wait()
            if waited.cancelled_caught:
                print(f"legacy: no notifications/tools/list_changed within {WAIT_SECONDS}s", file=sys.stderr)
                return 1
            with anyio.move_on_after(WAIT_SECONDS) as waited:
                await prompts_changed.wait()
            if waited.cancelled_caught:
                print(f"legacy: no notifications/prompts/list_changed within {WAIT_SECONDS}s", file=sys.stderr)
                return 1
            print("legacy after: " + await names(legacy), flush=True)
            events = []
            with anyio.move_on_after(WAIT_SECONDS):
                async for event in sub:
                    events.append(type(event).__name__)
                    if len(events) == 2:
                        break
            if len(events) < 2:
                print(f"stateless: heard {events} on the listen stream within {WAIT_SECONDS}s", file=sys.stderr)
                return 1
            print(f"stateless events: {', '.join(events)}", flush=True)
            print("stateless after: " + await names(modern), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2])))
