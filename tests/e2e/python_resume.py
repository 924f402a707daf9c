"""A client that loses its response stream mid-call gets the rest with
`Last-Event-ID`, in both eras, over plain HTTP (httpx2, the MCP SDK's HTTP client).

    .venv/bin/python tests/e2e/python_resume.py http://127.0.0.1:PORT/mcp [ROUNDS]

Calls the conformance plugin's `test_reconnection` (about 1.5 s of work,
reporting progress), reads the response stream only up to its first event
id, and hangs up. Then it reconnects once, `GET /mcp` with `Last-Event-ID`:
the call ran on without its client, and that one replay is the rest of the
stream, live, up to and with the call's result. The stateless era does
this ROUNDS times (default 1): through a balancer, every reconnect must
reach the replica that keeps the stream (the origin its event ids and its
`X-Toolhost-Events` header name).

* 2026-07-28: a stateless POST (`_meta` with the protocol version), resumed
  without a session;
* 2025-11-25: a session (`initialize`, `Mcp-Session-Id`), resumed in it.

Also checks that an unknown event id is refused (404, JSON-RPC error
`STREAM_NOT_FOUND`), and that a stream replays to nobody but its own: not
to another tenant's principal (`TOOLHOST_E2E_OTHER_TOKEN`) holding its
event id, nor to another session of the same principal (refused alike).
Prints one line per era; exits 1 with the reason on the first failure.
"""

from __future__ import annotations

import json
import os
import sys
import time

import httpx2 as httpx  # the HTTP client the MCP Python SDK brings

TOOL = "test_reconnection"
ANSWER = "Reconnection test completed"


class Failure(Exception):
    """An expectation the server did not meet."""


def check(cond: bool, what: str) -> None:
    if not cond:
        raise Failure(what)


def events(response: httpx.Response, stop_after_first_id: bool = False):
    """The SSE events of `response` as (id, data) pairs, in order."""
    event_id, data = None, []
    for line in response.iter_lines():
        if line == "":
            if event_id is not None or data:
                yield event_id, "\n".join(data)
                if stop_after_first_id and event_id is not None:
                    return
            event_id, data = None, []
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())


def result_of(data: str):
    try:
        message = json.loads(data)
    except ValueError:
        return None
    return message.get("result") if message.get("id") == 1 else None


def resume(client: httpx.Client, url: str, headers: dict, last: str) -> dict:
    """One GET with Last-Event-ID: the rest of the stream, the result last."""
    with client.stream("GET", url, headers={**headers, "Accept": "text/event-stream", "Last-Event-ID": last}) as r:
        check(r.status_code == 200, f"GET with Last-Event-ID answered HTTP {r.status_code}: {r.read()!r}")
        seen = []
        for event_id, data in events(r):
            seen.append(event_id)
            result = result_of(data)
            if result is not None:
                check(last not in seen, "the replay repeated the event it resumed after")
                return result
    raise Failure(f"the first reconnect ended without the call's result (events {seen})")


def refused(client: httpx.Client, url: str, headers: dict, last: str, who: str) -> None:
    """A GET with Last-Event-ID `last` as `headers` is refused: 404, STREAM_NOT_FOUND."""
    with client.stream("GET", url, headers={**headers, "Accept": "text/event-stream", "Last-Event-ID": last}) as r:
        body = r.read()
        check(r.status_code == 404, f"{who}: a replay it may not have answered HTTP {r.status_code}: {body!r}")
        error = json.loads(body).get("error", {})
        check(error.get("code") == -31003, f"{who}: {error}")
        check(error.get("data", {}).get("code") == "STREAM_NOT_FOUND", f"{who}: {error}")


def other_auth() -> dict:
    return {"Authorization": f"Bearer {os.environ['TOOLHOST_E2E_OTHER_TOKEN']}"}


def call_and_hang_up(client: httpx.Client, url: str, headers: dict, params: dict) -> str:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    post = {**headers, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    with client.stream("POST", url, headers=post, json=body) as r:
        check(r.status_code == 200, f"tools/call answered HTTP {r.status_code}")
        check("text/event-stream" in r.headers.get("content-type", ""), f"not a stream: {r.headers}")
        origin = r.headers.get("x-toolhost-events", "")
        check(len(origin) == 16, f"no X-Toolhost-Events origin: {r.headers}")
        for event_id, data in events(r, stop_after_first_id=True):
            check(result_of(data) is None, "the result came before the first event id")
            check(event_id.startswith(origin + "."), f"event id {event_id} is not of origin {origin}")
            return event_id
    raise Failure("the stream had no event id")


def stateless(client: httpx.Client, url: str, auth: dict, rounds: int) -> None:
    headers = {**auth, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": TOOL}
    plain = {**auth, "MCP-Protocol-Version": "2026-07-28"}
    for n in range(rounds):
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "progressToken": f"resume-{n}",
        }
        first = call_and_hang_up(client, url, headers, {"name": TOOL, "arguments": {}, "_meta": meta})
        if n == 0:
            refused(client, url, {**other_auth(), "MCP-Protocol-Version": "2026-07-28"}, first, "another tenant")
        result = resume(client, url, plain, first)
        check(result["content"][0]["text"] == ANSWER, f"2026-07-28: resumed result {result}")
    refused(client, url, plain, "0" * 32, "an unknown event id")
    print(f"ok  2026-07-28: hung up after the first event and got the rest on the first reconnect, {rounds} of {rounds}")


def session(client: httpx.Client, url: str, auth: dict) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "toolhost-e2e-resume", "version": "0.1.0"},
        },
    }
    accept = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}

    def open_session() -> dict:
        r = client.post(url, headers={**auth, **accept}, json=init)
        check(r.status_code == 200, f"initialize answered HTTP {r.status_code}")
        sid = r.headers.get("mcp-session-id")
        check(bool(sid), "no Mcp-Session-Id")
        headers = {**auth, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
        client.post(url, headers={**headers, **accept}, json=note)
        return headers

    headers, second = open_session(), open_session()
    first = call_and_hang_up(client, url, headers, {"name": TOOL, "arguments": {}, "_meta": {"progressToken": "resume-2"}})
    refused(client, url, second, first, "another session of the same principal")
    result = resume(client, url, headers, first)
    check(result["content"][0]["text"] == ANSWER, f"2025-11-25: resumed result {result}")
    print("ok  2025-11-25: hung up after the first event and got the rest on the first reconnect")


def main(url: str, rounds: int) -> None:
    auth = {"Authorization": f"Bearer {os.environ['TOOLHOST_E2E_TOKEN']}"}
    with httpx.Client(timeout=30) as client:
        stateless(client, url, auth, rounds)
        session(client, url, auth)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: python_resume.py http://127.0.0.1:PORT/mcp [ROUNDS]")
    try:
        main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 1)
    except Failure as failure:
        sys.exit(f"FAIL {failure}")
