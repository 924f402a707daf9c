"""The Python MCP SDK against a toolhost endpoint, in both protocol eras.

    .venv/bin/python tests/e2e/python_client.py http://127.0.0.1:PORT/mcp [TOOL]

Connects three ways with `mcp.Client` (mcp 2.3.0, tests/e2e/requirements.txt):

* `legacy`: the 2025-11-25 `initialize` handshake and a session;
* `auto`: probes `server/discover` and must land on the stateless
  2026-07-28 era (toolhost serves it on the same endpoint);
* `2026-07-28`: the version pinned, no probe, every request stateless.

Each lists the tools (`greet`, or the TOOL given, must be there), calls it with
{"name": "Ada"} and checks `structuredContent == {"message": "Hello, Ada!"}`
and that a text block came along. Prints one line per step; exits 1 with the
reason on the first failure.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation, TextContent

from checks import check, run

EXPECTED = {"message": "Hello, Ada!"}
SESSION_VERSION = "2025-11-25"
STATELESS_VERSION = "2026-07-28"
CLIENT_INFO = Implementation(name="toolhost-e2e-python", version="0.1.0")


async def exercise(url: str, mode: str, want_version: str) -> None:
    label = f"python mcp Client(mode={mode!r})"
    # The host's bearer token (a service client's, minted by the harness:
    # tests/e2e_oauth.rs drives the SDK's own OAuth flow).
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {os.environ['TOOLHOST_E2E_TOKEN']}"})
    transport = streamable_http_client(url, http_client=http)
    async with http, Client(transport, mode=mode, client_info=CLIENT_INFO, read_timeout_seconds=30) as client:
        version = client.protocol_version
        check(
            version == want_version,
            f"{label}: negotiated protocol version {version!r}, expected {want_version!r}",
        )
        if mode == "auto":
            check(
                client.session.discover_result is not None,
                f"{label}: no server/discover result although {want_version} was negotiated",
            )
        listed = await client.list_tools()
        names = [t.name for t in listed.tools]
        check(TOOL in names, f"{label}: tools/list has no {TOOL!r} (got {names})")

        result = await client.call_tool(TOOL, {"name": "Ada"})
        check(not result.is_error, f"{label}: {TOOL} answered isError: {dump(result)}")
        check(
            result.structured_content == EXPECTED,
            f"{label}: structuredContent is {result.structured_content!r}, expected {EXPECTED!r}",
        )
        texts = [c.text for c in result.content if isinstance(c, TextContent)]
        check(bool(texts), f"{label}: {TOOL} answered no text content block: {dump(result)}")
        print(f"ok  {label}: protocol {version}, {len(names)} tools, {TOOL} -> {result.structured_content} / {texts[0]!r}")


def dump(result: Any) -> str:
    try:
        return result.model_dump_json(by_alias=True, exclude_none=True)
    except Exception:  # pragma: no cover - diagnostics only
        return repr(result)


async def main(url: str) -> None:
    await exercise(url, "legacy", SESSION_VERSION)
    await exercise(url, "auto", STATELESS_VERSION)
    await exercise(url, STATELESS_VERSION, STATELESS_VERSION)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: python_client.py http://127.0.0.1:PORT/mcp [TOOL]")
    TOOL = sys.argv[2] if len(sys.argv) == 3 else "greet"
    run(main(sys.argv[1]))
