"""Exploration runs from the Python MCP SDK, in both protocol eras.

    .venv/bin/python tests/e2e/python_run.py URL PROJECT PACE_MS

For each era (`legacy`, the 2025-11-25 session; `2026-07-28`, stateless) it
calls the run tool `explore_environments` twice with `mcp.Client`
(mcp 2.3.0):

* with a progress callback (and PACE_MS between its steps): the call waits
  for the run, hearing its progress, and answers with the finished run;
* without one (and no pace): the call answers at once with the queued run,
  which `get_exploration_result` (wait_seconds) follows to its end.

Each finished run must have succeeded with a receipt digest and artifacts.
Prints one line per step, then `RUNS <json>` with every run id; exits 1
with the reason on the first failure.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation

from checks import check, run

CLIENT_INFO = Implementation(name="toolhost-e2e-python-runs", version="0.1.0")
TERMINAL = {"succeeded", "failed", "cancelled", "timed_out"}


def finished(label: str, run: dict[str, Any]) -> None:
    check(run.get("state") == "succeeded", f"{label}: the run ended {run.get('state')!r}: {run}")
    check(bool(run.get("receipt_sha256")), f"{label}: no receipt digest: {run}")
    check(bool(run.get("artifacts")), f"{label}: no artifacts: {run}")
    outcome = run.get("outcome") or {}
    check(outcome.get("kind") == "answered", f"{label}: outcome {outcome}")


async def exercise(url: str, mode: str, project: str, pace_ms: int, runs: list[str]) -> None:
    label = f"python mcp Client(mode={mode!r})"
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {os.environ['TOOLHOST_E2E_TOKEN']}"})
    transport = streamable_http_client(url, http_client=http)
    args = {"project": project, "pace_ms": pace_ms}
    async with http, Client(transport, mode=mode, client_info=CLIENT_INFO, read_timeout_seconds=120) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        for name in ("explore_environments", "start_exploration", "get_exploration_result",
                     "cancel_exploration", "list_explorations"):
            check(name in tools, f"{label}: {name} is not listed")

        heard: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            heard.append((progress, total, message))

        result = await client.call_tool("explore_environments", args, progress_callback=on_progress)
        check(not result.is_error, f"{label}: the waiting call failed: {result}")
        run = result.structured_content or {}
        finished(f"{label} waiting", run)
        check(len(heard) >= 2, f"{label}: {len(heard)} progress notifications, expected several")
        runs.append(run["run_id"])
        print(f"ok  {label}: waited for run {run['run_id']}, {len(heard)} progress notifications, "
              f"{len(run['artifacts'])} artifacts")

        result = await client.call_tool("explore_environments", {"project": project})
        check(not result.is_error, f"{label}: the queuing call failed: {result}")
        run = result.structured_content or {}
        check(run.get("state") == "queued", f"{label}: expected a queued run, got {run}")
        run_id = run["run_id"]
        for _ in range(10):
            result = await client.call_tool("get_exploration_result", {"run_id": run_id, "wait_seconds": 30})
            check(not result.is_error, f"{label}: get_exploration_result failed: {result}")
            run = result.structured_content or {}
            if run.get("state") in TERMINAL:
                break
        finished(f"{label} polled", run)
        runs.append(run_id)
        print(f"ok  {label}: run {run_id} queued, followed with get_exploration_result to {run['state']}")


async def main(url: str, project: str, pace_ms: int) -> None:
    runs: list[str] = []
    for mode in ("legacy", "2026-07-28"):
        await exercise(url, mode, project, pace_ms, runs)
    print("RUNS " + json.dumps(runs))


if __name__ == "__main__":
    run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
