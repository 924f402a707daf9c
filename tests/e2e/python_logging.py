"""The Python MCP SDK hears a plugin's log lines, at the level it asked for,
in both eras.

    .venv/bin/python tests/e2e/python_logging.py http://127.0.0.1:PORT/mcp

Calls `test_tool_with_logging` (the conformance plugin: three lines at
info) and counts the `notifications/message` its `logging_callback` hears:

* 2025-11-25: none before `logging/setLevel`, none at `warning`, the three
  lines in order at `info`, each from logger `conformance`;
* 2026-07-28: none without a level (the request carries no
  `io.modelcontextprotocol/logLevel`), the three with `log_level="debug"`,
  none with `log_level="error"`.

Prints one line per step; exits 1 with the reason on the first failure.
"""

from __future__ import annotations

import asyncio
import os
import sys
import traceback

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation, LoggingMessageNotificationParams

TOOL = "test_tool_with_logging"
LINES = ["Tool execution started", "Tool processing data", "Tool execution completed"]
CLIENT_INFO = Implementation(name="toolhost-e2e-python-logging", version="0.1.0")


class Failure(Exception):
    """An expectation the server did not meet."""


def check(cond: bool, what: str) -> None:
    if not cond:
        raise Failure(what)


def connect(url: str, mode: str, heard: list[LoggingMessageNotificationParams], log_level=None) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {os.environ['TOOLHOST_E2E_TOKEN']}"})

    async def hear(params: LoggingMessageNotificationParams) -> None:
        heard.append(params)

    transport = streamable_http_client(url, http_client=http)
    client = Client(
        transport,
        mode=mode,
        client_info=CLIENT_INFO,
        read_timeout_seconds=30,
        logging_callback=hear,
        log_level=log_level,
    )
    return http, client


async def call(client: Client, label: str) -> None:
    result = await client.call_tool(TOOL, {})
    check(not result.is_error, f"{label}: {TOOL} answered isError: {result}")


def texts(heard: list[LoggingMessageNotificationParams]) -> list[str]:
    return [str(p.data) for p in heard]


async def legacy(url: str) -> None:
    heard: list[LoggingMessageNotificationParams] = []
    http, client = connect(url, "legacy", heard)
    async with http, client:
        await call(client, "legacy, no level")
        check(heard == [], f"legacy: lines before any logging/setLevel: {texts(heard)}")
        await client.set_logging_level("warning")
        await call(client, "legacy, warning")
        check(heard == [], f"legacy: info lines at level warning: {texts(heard)}")
        await client.set_logging_level("info")
        await call(client, "legacy, info")
        check(texts(heard) == LINES, f"legacy: at info heard {texts(heard)}, expected {LINES}")
        check(
            all(p.level == "info" and p.logger == "conformance" for p in heard),
            f"legacy: levels and loggers {[(p.level, p.logger) for p in heard]}",
        )
    print(f"ok  legacy: none before setLevel or at warning, {len(heard)} lines at info from 'conformance'")


async def stateless(url: str, log_level, want: list[str]) -> None:
    heard: list[LoggingMessageNotificationParams] = []
    http, client = connect(url, "2026-07-28", heard, log_level)
    async with http, client:
        await call(client, f"2026-07-28, log_level={log_level!r}")
    check(texts(heard) == want, f"2026-07-28 log_level={log_level!r}: heard {texts(heard)}, expected {want}")
    print(f"ok  2026-07-28 log_level={log_level!r}: {len(heard)} lines")


async def main(url: str) -> None:
    await legacy(url)
    await stateless(url, None, [])
    await stateless(url, "debug", LINES)
    await stateless(url, "error", [])


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python_logging.py http://127.0.0.1:PORT/mcp")
    try:
        asyncio.run(main(sys.argv[1]))
    except Failure as failure:
        sys.exit(f"FAIL {failure}")
    except BaseException as error:  # noqa: BLE001 - any SDK error fails the run, with its trace
        traceback.print_exc()
        sys.exit(f"FAIL python mcp client: {type(error).__name__}: {error}")
