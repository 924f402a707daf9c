"""The 2026-07-28 Tasks extension from the Python MCP SDK: a small
client-side extension (mcp 2.3.0 has no tasks API, only the
`ClientExtension` / `ResultClaim` hooks) that claims `resultType: "task"`
on `tools/call` and drives the task with `tasks/get` and `tasks/cancel`.

    .venv/bin/python tests/e2e/python_tasks.py URL PROJECT

Steps, one line each, then `TASKS <json>` with the task ids; exits 1 with
the reason on the first failure:

1. the run tool `explore_environments`, task-augmented, polled to
   `completed`: the inlined result is the succeeded run;
2. the same with `pace_ms`, cancelled after its first poll: `cancelled`,
   and a second cancel of the finished task is still acknowledged;
3. `tasks/get` of an unknown id: -32602;
4. a 2025-11-25 session with the extension: never a task (the run is
   answered as a plain result).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any, Literal

from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, Implementation, TextContent
from mcp_types._types import Request, RequestParams, Result
from pydantic import ConfigDict

from checks import Failure, check, run

TASKS = "io.modelcontextprotocol/tasks"
CLIENT_INFO = Implementation(name="toolhost-e2e-python-tasks", version="0.1.0")
TERMINAL = {"completed", "failed", "cancelled"}


class TaskParams(RequestParams):
    task_id: str


class GetTask(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"


class CancelTask(Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param = "taskId"


class CreatedTask(Result):
    """`CreateTaskResult`: the flat task handle a `tools/call` answers with."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class DetailedTask(Result):
    """`GetTaskResult`: the task with its result (or error) inlined."""

    model_config = ConfigDict(extra="allow")
    task_id: str
    status: str
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class Ack(Result):
    model_config = ConfigDict(extra="allow")


class Tasks(ClientExtension):
    """Claims task handles on `tools/call` and polls them to the end;
    `cancel`: cancels each task after its first poll."""

    identifier = TASKS

    def __init__(self, cancel: bool = False) -> None:
        self.cancel = cancel
        self.created: list[CreatedTask] = []
        self.polls = 0

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self.resolve)]

    async def resolve(self, task: CreatedTask, ctx: ClaimContext) -> CallToolResult:
        self.created.append(task)
        check(task.ttl_ms is not None and task.ttl_ms > 0, f"ttlMs {task.ttl_ms!r}")
        check(task.poll_interval_ms is not None and task.poll_interval_ms > 0, f"pollIntervalMs {task.poll_interval_ms!r}")
        while True:
            got = await ctx.session.send_request(GetTask(params=TaskParams(task_id=task.task_id)), DetailedTask)
            self.polls += 1
            check(got.task_id == task.task_id, f"tasks/get answered for {got.task_id}")
            if got.status in TERMINAL:
                break
            if self.cancel and self.polls == 1:
                await ctx.session.send_request(CancelTask(params=TaskParams(task_id=task.task_id)), Ack)
            await asyncio.sleep((task.poll_interval_ms or 1000) / 1000)
        if got.status == "completed":
            check(got.result is not None, f"a completed task without its result: {got}")
            return CallToolResult.model_validate(got.result)
        return CallToolResult(content=[TextContent(type="text", text=got.status)], is_error=True,
                              structured_content={"task_status": got.status, "error": got.error})


def http() -> Any:
    return create_mcp_http_client(headers={"Authorization": f"Bearer {os.environ['TOOLHOST_E2E_TOKEN']}"})


async def main(url: str, project: str) -> None:
    ids: list[str] = []
    label = 'python mcp Client(mode="2026-07-28") + tasks extension'

    tasks = Tasks()
    client_http = http()
    async with client_http, Client(streamable_http_client(url, http_client=client_http), mode="2026-07-28",
                                   client_info=CLIENT_INFO, extensions=[tasks], read_timeout_seconds=60) as client:
        result = await client.call_tool("explore_environments", {"project": project})
        check(len(tasks.created) == 1, f"{label}: the call was not answered with a task")
        run = result.structured_content or {}
        check(not result.is_error and run.get("state") == "succeeded", f"{label}: task result {result}")
        check(run.get("run_id") == tasks.created[0].task_id, "the task id is the run id")
        check(bool(run.get("receipt_sha256")), f"{label}: no receipt: {run}")
        answer = (run.get("outcome") or {}).get("structured") or {}
        check(answer.get("project") == project, f"{label}: the tool's answer {answer}")
        ids.append(tasks.created[0].task_id)
        print(f"ok  {label}: task {tasks.created[0].task_id} polled {tasks.polls} times to completed")

        try:
            await client.session.send_request(GetTask(params=TaskParams(task_id="run_" + "0" * 32)), DetailedTask)
            raise Failure("tasks/get of an unknown task succeeded")
        except MCPError as e:
            check(e.error.code == -32602, f"unknown task: code {e.error.code}")
        print("ok  tasks/get of an unknown task: -32602")

    cancelling = Tasks(cancel=True)
    client_http = http()
    async with client_http, Client(streamable_http_client(url, http_client=client_http), mode="2026-07-28",
                                   client_info=CLIENT_INFO, extensions=[cancelling], read_timeout_seconds=60) as client:
        result = await client.call_tool("explore_environments", {"project": project, "pace_ms": 3000})
        status = (result.structured_content or {}).get("task_status")
        check(status == "cancelled", f"the cancelled task ended {status!r}: {result}")
        task_id = cancelling.created[0].task_id
        await client.session.send_request(CancelTask(params=TaskParams(task_id=task_id)), Ack)
        ids.append(task_id)
        print(f"ok  task {task_id} cancelled after its first poll; cancelling it again is acknowledged")

    legacy = Tasks()
    client_http = http()
    async with client_http, Client(streamable_http_client(url, http_client=client_http), mode="legacy",
                                   client_info=CLIENT_INFO, extensions=[legacy], read_timeout_seconds=60) as client:
        result = await client.call_tool("explore_environments", {"project": project})
        check(not legacy.created, "a 2025-11-25 session was answered with a task")
        check((result.structured_content or {}).get("state") == "queued", f"legacy answer {result}")
        print("ok  a 2025-11-25 session gets the run as a plain result, never a task")

    print("TASKS " + json.dumps(ids))


if __name__ == "__main__":
    run(main(sys.argv[1], sys.argv[2]))
