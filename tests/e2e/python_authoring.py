"""A test plan and a tool authored through the workspace, from the Python
MCP SDK, as an agent would: nothing but MCP tool calls.

    .venv/bin/python tests/e2e/python_authoring.py URL COMPONENT MANIFEST SIGNATURE TOOL

With `mcp.Client` (mcp 2.3.0, the 2025-11-25 session) and the caller's
token (TOOLHOST_E2E_TOKEN), it first authors a test plan in the testbench
plugin's domain (`testbench/test_plan:payments`): a plan whose declared
location (a test's `start_url`) points at an internal address is refused
`AUTHORITY_REFUSED` (kind `location`); one whose steps mention URLs, an
API path and a commit hash is accepted, kept as written; the session is
closed. Then it walks the tool chain of a plugin subject:

1. `create_authoring_session {"subject": "plugin:<name>"}` (version 1);
2. uploads COMPONENT and MANIFEST over MCP (`begin_upload`, then
   `upload_chunk` in 64 KiB chunks, the last with the bytes' SHA-256; a
   chunk sent twice is refused `UPLOAD_OFFSET_MISMATCH` and changes
   nothing): handles;
3. `propose_revision` with the handles, unsigned (a draft), at version 1;
4. `start_exploration` of TOOL of that proposal's draft, bound to the
   session, and `get_exploration_result` until it succeeds with a receipt;
5. `get_authoring_session`: the run is there with its receipt digest;
6. `get_revision_diff`: the capability diff names TOOL as added;
7. `promote_revision` of the unsigned draft: refused `UNSIGNED`, nothing
   written (the version stays);
8. uploads SIGNATURE, proposes the signed revision, promotes it: a
   pending review, the session promoted; a replay of the promotion's key
   answers the same; the tool is not listed.

Then, in the stateless 2026-07-28 era, `get_authoring_session` reads the
same session. Prints one line per step, then `AUTHORED <json>` with the
session and revision ids; exits 1 with the reason on the first failure.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation

from checks import check, run

CLIENT_INFO = Implementation(name="toolhost-e2e-python-authoring", version="0.1.0")
TERMINAL = {"succeeded", "failed", "cancelled", "timed_out"}


def bearer() -> dict[str, str]:
    return {"Authorization": f"Bearer {os.environ['TOOLHOST_E2E_TOKEN']}"}


# Smaller than the host's chunk_bytes, so a component takes several calls.
CHUNK = 64 * 1024


async def upload(client: Client, kind: str, path: str) -> str:
    data = Path(path).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    begun = await call(client, "begin_upload", {"kind": kind, "size": len(data)})
    handle, step = begun["upload"], min(CHUNK, begun["chunk_bytes"])
    offset, calls = 0, 0
    while True:
        piece = data[offset:offset + step]
        last = offset + len(piece) >= len(data)
        args = {"upload": handle, "offset": offset, "data": base64.b64encode(piece).decode(), "last": last}
        if last:
            args["sha256"] = digest
        answer = await call(client, "upload_chunk", args)
        calls += 1
        if offset == 0 and not last:
            again = await call(client, "upload_chunk", args, error="UPLOAD_OFFSET_MISMATCH")
            check(again["error"]["received"] == len(piece), f"a chunk sent twice: {again}")
        offset += len(piece)
        if last:
            break
    check(answer["done"] and answer["sha256"] == digest and answer["size"] == len(data),
          f"upload {kind}: {answer}")
    check(answer["handle"] == handle and handle.startswith("upl_"), f"upload {kind}: {answer}")
    print(f"ok  uploaded the {kind} over MCP in {calls} chunks: {handle} ({len(data)} bytes, sha256 {digest[:12]}…)")
    return handle


async def plan(client: Client) -> str:
    s = await call(client, "create_authoring_session", {"subject": "testbench/test_plan:payments"})
    sid = s["session_id"]
    commit = "9fceb02d0ae598e95dc970b74767f19372d61af8"
    steps = ["open https://shop.example/login", "POST /api/login with the shopper's name",
             f"expect the build of commit {commit}"]

    def proposal(start_url: str) -> dict[str, Any]:
        return {"object": {"environment": "dev", "tests": [
            {"name": "Login flow", "tags": ["smoke"], "steps": steps, "start_url": start_url}]},
            "summary": "see /api/login and https://shop.example"}

    inside = await call(client, "propose_revision", {"session_id": sid, "proposal": proposal("http://10.0.0.7/login"),
                        "expected_version": 1, "idempotency_key": "plan-inside"}, error="AUTHORITY_REFUSED")
    refusal = inside["error"]
    check(refusal["pointer"] == "/object/tests/0/start_url" and refusal["kind"] == "location",
          f"an internal start_url is refused where it is: {refusal}")
    print(f"ok  a plan whose start_url is internal is refused: {refusal['code']} at {refusal['pointer']}")
    p = await call(client, "propose_revision", {"session_id": sid, "proposal": proposal("https://shop.example/login"),
                   "expected_version": 1, "idempotency_key": "plan-public"})
    after = p["diff"]["changes"][0]["after"]
    after = json.loads(after) if isinstance(after, str) else after
    check(after["steps"] == steps and after["start_url"] == "https://shop.example/login",
          f"the plan is kept as written: {p}")
    print("ok  a plan whose steps mention URLs, an API path and a commit is accepted as written")
    closed = await call(client, "close_authoring_session", {"session_id": sid, "expected_version": 2,
                        "idempotency_key": "plan-close"})
    check(closed["state"] == "closed" and closed["version"] == 3, f"the plan's session closes: {closed}")
    print(f"ok  the plan's session {sid} is closed")
    return sid


async def call(client: Client, tool: str, args: dict[str, Any], *, error: str | None = None) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    content = result.structured_content or {}
    if error is None:
        check(not result.is_error, f"{tool} failed: {result}")
    else:
        check(result.is_error, f"{tool} should have been refused {error}: {content}")
        code = (content.get("error") or {}).get("code")
        check(code == error, f"{tool}: refused {code!r}, expected {error!r}: {content}")
    return content


async def chain(url: str, component: str, manifest: str, signature: str, tool: str) -> dict[str, str]:
    http = create_mcp_http_client(headers=bearer())
    transport = streamable_http_client(url, http_client=http)
    async with http, Client(transport, mode="legacy", client_info=CLIENT_INFO, read_timeout_seconds=120) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        for name in ("create_authoring_session", "get_authoring_session", "list_authoring_sessions",
                     "propose_revision", "get_revision_diff", "promote_revision", "start_exploration",
                     "get_exploration_result", "begin_upload", "upload_chunk", "close_authoring_session",
                     "abandon_authoring_session", "rebind_authoring_session"):
            check(name in listed, f"{name} is not listed")
        check(tool not in listed, f"{tool} is listed before anything was authored")
        plan_id = await plan(client)

        s = await call(client, "create_authoring_session", {"subject": "plugin:hello"})
        sid = s["session_id"]
        check(s["version"] == 1 and s["state"] == "open", f"a new session: {s}")
        print(f"ok  session {sid} bound to {s['subject_version']}")

        draft = {"component": await upload(client, "component", component),
                 "manifest": await upload(client, "manifest", manifest)}
        p = await call(client, "propose_revision", {"session_id": sid, "proposal": {"revision": draft,
                       "summary": "adds " + tool}, "expected_version": 1, "idempotency_key": "draft-1"})
        check(p["version"] == 2, f"proposing moves the version: {p}")
        check(p["proposal"]["validation"]["signed"] is False, f"a draft is unsigned: {p}")
        draft_id = p["proposal"]["proposal_id"]
        print(f"ok  proposed draft {draft_id}, digest {p['proposal']['digest'][:12]}…")

        run = await call(client, "start_exploration", {"session_id": sid, "proposal_id": draft_id,
                         "tool": tool, "arguments": {"text": "workspace"}, "expected_version": 2,
                         "idempotency_key": "explore-1"})
        check(run["session"]["version"] == 3, f"the run joins the session: {run}")
        for _ in range(10):
            run = await call(client, "get_exploration_result", {"run_id": run["run_id"], "wait_seconds": 30})
            if run.get("state") in TERMINAL:
                break
        check(run.get("state") == "succeeded" and run.get("receipt_sha256"), f"the exploration: {run}")
        print(f"ok  explored {tool} of the draft: run {run['run_id']}, receipt {run['receipt_sha256'][:12]}…")
        budget = run["receipt"]["budget"]["call"]
        check(budget["timeout_ms"] <= 120_000, f"a draft run has the draft's shorter limits: {budget}")

        view = await call(client, "get_authoring_session", {"session_id": sid})
        runs = view["runs"]
        check(len(runs) == 1 and runs[0]["run_id"] == run["run_id"], f"the session's runs: {view}")
        check(runs[0]["receipt_sha256"] == run["receipt_sha256"], f"the receipt joins the session: {runs}")
        check(runs[0]["proposal_id"] == draft_id, f"the run names its draft: {runs}")

        diff = await call(client, "get_revision_diff", {"session_id": sid, "proposal_id": draft_id})
        added = [c for c in diff["diff"]["changes"] if c.get("kind") == "tool_added"]
        check([c["tool"] for c in added] == [tool], f"the diff adds exactly {tool}: {diff}")
        print(f"ok  the diff adds {tool}: {added}")

        await call(client, "promote_revision", {"session_id": sid, "proposal_id": draft_id,
                   "expected_version": 3, "idempotency_key": "promote-draft"}, error="UNSIGNED")
        view = await call(client, "get_authoring_session", {"session_id": sid})
        check(view["version"] == 3 and view["promotions"] == [], f"a refused promotion wrote nothing: {view}")
        print("ok  an unsigned draft is not promoted")

        signed = dict(draft, signature=await upload(client, "signature", signature))
        p = await call(client, "propose_revision", {"session_id": sid, "proposal": {"revision": signed,
                       "evidence": [run["run_id"]]}, "expected_version": 3, "idempotency_key": "signed-1"})
        check(p["proposal"]["validation"]["signed"] is True, f"a signed revision: {p}")
        signed_id = p["proposal"]["proposal_id"]
        promote = {"session_id": sid, "proposal_id": signed_id, "expected_version": 4,
                   "idempotency_key": "promote-signed"}
        done = await call(client, "promote_revision", promote)
        promotion = done["promotion"]
        check(promotion["state"] == "pending_review" and promotion["revision_id"],
              f"promotion submits for review: {done}")
        check(done["state"] == "promoted" and done["version"] == 5, f"the session is promoted: {done}")
        again = await call(client, "promote_revision", promote)
        check(again == done, f"a replayed key answers the first result: {again} != {done}")
        listed = {t.name for t in (await client.list_tools()).tools}
        check(tool not in listed, f"{tool} is listed before a reviewer approved it")
        print(f"ok  promoted: revision {promotion['revision_id']} waits for review; {tool} is not listed")

    http = create_mcp_http_client(headers=bearer())
    transport = streamable_http_client(url, http_client=http)
    async with http, Client(transport, mode="2026-07-28", client_info=CLIENT_INFO) as client:
        view = await call(client, "get_authoring_session", {"session_id": sid})
        check(view["state"] == "promoted" and len(view["proposals"]) == 2, f"2026-07-28 reads it: {view}")
        review = view["promotions"][0]["review_state"]
        check(review == "pending_review", f"the review's state: {view['promotions']}")
        print("ok  the 2026-07-28 era reads the same session")
    return {"session_id": sid, "revision_id": promotion["revision_id"], "run_id": run["run_id"],
            "proposal_id": signed_id, "plan_session_id": plan_id}


if __name__ == "__main__":
    ids = run(chain(*sys.argv[1:6]))
    print("AUTHORED " + json.dumps(ids))
