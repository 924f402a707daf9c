"""A resource update told on one replica reaches a subscriber on another.

    .venv/bin/python tests/e2e/python_replica_updates.py URL_A URL_B

A 2025-11-25 session on replica A subscribes to `test://watched-resource`;
a 2026-07-28 client on replica B calls `test_touch_watched_resource`; the
session on A must hear `notifications/resources/updated` within 30 s, and
a 2026-07-28 listen stream on A must hear it too. Prints one line per
step; exits 1 with the reason on the first failure.
"""

from __future__ import annotations

import asyncio
import os
import sys

import anyio
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourceUpdated
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation

WATCHED = "test://watched-resource"
WAIT_SECONDS = 30
INFO = Implementation(name="toolhost-e2e-replica-updates", version="0.1.0")


def client(url: str, mode: str, **kw) -> tuple:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {os.environ['TOOLHOST_E2E_TOKEN']}"})
    transport = streamable_http_client(url, http_client=http)
    return http, Client(transport, mode=mode, client_info=INFO, read_timeout_seconds=30, **kw)


async def main(url_a: str, url_b: str) -> int:
    heard = anyio.Event()

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and str(message.params.uri) == WATCHED:
            heard.set()
        await anyio.lowlevel.checkpoint()

    a_http, a = client(url_a, "legacy", message_handler=on_message)
    l_http, listening = client(url_a, "2026-07-28")
    b_http, b = client(url_b, "2026-07-28")
    async with a_http, a, l_http, listening, b_http, b:
        await a.subscribe_resource(WATCHED)
        async with listening.listen(resource_subscriptions=[WATCHED]) as sub:
            touched = await b.call_tool("test_touch_watched_resource", {})
            if touched.is_error:
                print(f"the touch on replica B failed: {touched}", file=sys.stderr)
                return 1
            with anyio.move_on_after(WAIT_SECONDS) as waited:
                await heard.wait()
            if waited.cancelled_caught:
                print(f"the session on replica A heard nothing within {WAIT_SECONDS}s", file=sys.stderr)
                return 1
            print("ok  a session on replica A heard an update told on replica B", flush=True)
            event = None
            with anyio.move_on_after(WAIT_SECONDS):
                async for e in sub:
                    if isinstance(e, ResourceUpdated):
                        event = e
                        break
            if event is None or event.uri != WATCHED:
                print(f"the listen stream on replica A heard {event}", file=sys.stderr)
                return 1
            print("ok  a listen stream on replica A heard it too", flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python_replica_updates.py URL_A URL_B")
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2])))
