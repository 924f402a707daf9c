"""A replica killed with a run-backed call in flight: the Python MCP SDK
client, in both eras, still gets the run's outcome, from another replica.

    .venv/bin/python tests/e2e/python_replica_death.py BALANCER_URL REPLICA_URL=PID...

For each era (`legacy`, a 2025-11-25 session; `2026-07-28`, stateless)
`mcp.Client` (mcp 2.3.0) calls the run tool `explore_environments` through
the balancer with a progress callback, so the call waits for the run. The
host's first progress message names the run before it waits. On hearing
it, this client finds the replica holding the call's stream (the origin of
its event ids, `X-Toolhost-Events`, is the one a replica does not call
another's) and kills it with SIGKILL. The call must then fail, not hang
(the reconnect reaches another replica, which refuses the stream, typed),
and the run, followed with `get_exploration_result` through the balancer
on a new connection, must succeed: its worker was on a live replica, or it
was taken over after its lease.

Prints one line per era; exits 1 with the reason on the first failure.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import time

import anyio
import httpx2 as httpx
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation

from checks import check, run

CLIENT_INFO = Implementation(name="toolhost-e2e-replica-death", version="0.1.0")
TERMINAL = {"succeeded", "failed", "cancelled", "timed_out"}
RUN_ID = re.compile(r"run_[0-9a-f]{32}")


def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {os.environ['TOOLHOST_E2E_TOKEN']}"}


def holder(replicas: dict[str, int], origin: str) -> tuple[str, int]:
    """The replica whose event ids have `origin`: asked for a stream of that
    origin it does not know, it refuses it as unknown; every other replica
    refuses it as another origin's."""
    fake = f"{origin}.{'0' * 32}"
    headers = {**auth(), "Accept": "text/event-stream", "Last-Event-ID": fake,
               "MCP-Protocol-Version": "2026-07-28"}
    for url, pid in replicas.items():
        r = httpx.get(url, headers=headers, timeout=10)
        check(r.status_code == 404, f"{url}: a stream nobody has answered HTTP {r.status_code}")
        data = r.json()["error"]["data"]
        check(data["code"] == "STREAM_NOT_FOUND", f"{url}: {data}")
        if "origin" not in data:
            return url, pid
    raise AssertionError(f"no replica has origin {origin}")


async def follow(url: str, mode: str, run_id: str) -> dict:
    """The run, followed through the balancer on a new connection to its end."""
    http = create_mcp_http_client(headers=auth())
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode,
                            client_info=CLIENT_INFO, read_timeout_seconds=60) as client:
        for _ in range(20):
            result = await client.call_tool("get_exploration_result", {"run_id": run_id, "wait_seconds": 10})
            check(not result.is_error, f"get_exploration_result failed: {result}")
            found = result.structured_content or {}
            if found.get("state") in TERMINAL:
                return found
    raise AssertionError(f"run {run_id} never ended")


async def era(url: str, mode: str, replicas: dict[str, int]) -> None:
    label = f"python mcp Client(mode={mode!r})"
    origins: list[str] = []

    async def seen(response: httpx.Response) -> None:
        streamed = "text/event-stream" in response.headers.get("content-type", "")
        if response.request.method == "POST" and streamed:
            origins.append(response.headers.get("x-toolhost-events", ""))

    run_id: str | None = None
    killed: str | None = None

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        nonlocal run_id, killed
        found = RUN_ID.search(message or "")
        if run_id is not None or found is None:
            return
        run_id = found.group(0)
        check(bool(origins) and len(origins[-1]) == 16, f"{label}: the call's stream names no origin: {origins}")
        replica, pid = await anyio.to_thread.run_sync(holder, replicas, origins[-1])
        os.kill(pid, signal.SIGKILL)
        killed = replica

    http = create_mcp_http_client(headers=auth())
    http.event_hooks = {"response": [seen]}
    transport = streamable_http_client(url, http_client=http)
    started = time.monotonic()
    failed: BaseException | None = None
    async with http, Client(transport, mode=mode, client_info=CLIENT_INFO, read_timeout_seconds=60) as client:
        result = None
        try:
            with anyio.fail_after(90):
                result = await client.call_tool(
                    "explore_environments", {"project": "payments", "pace_ms": 1500}, progress_callback=on_progress
                )
        except anyio.get_cancelled_exc_class():
            raise
        except TimeoutError as e:
            raise AssertionError(f"{label}: the call hung after its replica was killed") from e
        except Exception as e:  # the SDK's error for the lost stream
            failed = e
        check(result is None, f"{label}: the call answered though its replica was killed: {result}")
    check(run_id is not None and killed is not None, f"{label}: no progress named the run: {failed!r}")
    gave_up = time.monotonic() - started
    outcome = await follow(url, mode, run_id)
    check(outcome.get("state") == "succeeded", f"{label}: run {run_id} ended {outcome.get('state')}: {outcome}")
    del replicas[killed]
    print(f"ok  {label}: killed {killed} under run {run_id}; the call failed after {gave_up:.1f} s "
          f"({type(failed).__name__}); the run succeeded, followed through the balancer")


async def main(url: str, pairs: list[str]) -> None:
    replicas = {u: int(p) for u, p in (pair.rsplit("=", 1) for pair in pairs)}
    for mode in ("legacy", "2026-07-28"):
        await era(url, mode, replicas)


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit("usage: python_replica_death.py BALANCER_URL REPLICA_URL=PID REPLICA_URL=PID...")
    run(main(sys.argv[1], sys.argv[2:]))
