"""A client that loses its response stream mid-call gets the rest with
`Last-Event-ID`, in both eras, over plain HTTP (httpx2, the MCP SDK's HTTP client).

    .venv/bin/python tests/e2e/python_resume.py http://127.0.0.1:PORT/mcp

Calls the conformance plugin's `test_reconnection` (about 1.5 s of work,
reporting progress), reads the response stream only up to its first event
id, and hangs up. Then it polls `GET /mcp` with `Last-Event-ID` (the last id
it has seen each time) until the call's result arrives: the call ran on
without its client, and each replay is the rest of that stream only.

* 2026-07-28: a stateless POST (`_meta` with the protocol version), resumed
  without a session;
* 2025-11-25: a session (`initialize`, `Mcp-Session-Id`), resumed in it.

Also checks that an unknown event id replays nothing, and that a stream
replays to nobody but its own: not to another tenant's principal
(`TOOLHOST_E2E_OTHER_TOKEN`) holding its event id, nor to another session
of the same principal. Prints one line per era; exits 1 with the reason on
the first failure.
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


def resume(client: httpx.Client, url: str, headers: dict, last: str) -> tuple[dict, int]:
    """Polls GET with Last-Event-ID until the call's result: it and the polls made."""
    for poll in range(1, 40):
        with client.stream("GET", url, headers={**headers, "Accept": "text/event-stream", "Last-Event-ID": last}) as r:
            check(r.status_code == 200, f"GET with Last-Event-ID answered HTTP {r.status_code}")
            for event_id, data in events(r):
                last = event_id or last
                result = result_of(data)
                if result is not None:
                    return result, poll
        time.sleep(0.25)
    raise Failure("the call's result never came back on a resumed stream")


def replays_nothing(client: httpx.Client, url: str, headers: dict, last: str, who: str) -> None:
    """A GET with Last-Event-ID `last` as `headers` gets an empty stream."""
    with client.stream("GET", url, headers={**headers, "Accept": "text/event-stream", "Last-Event-ID": last}) as r:
        check(r.status_code in (200, 404), f"{who}: a foreign replay answered HTTP {r.status_code}")
        check(list(events(r)) == [], f"{who}: replayed another's stream")


def other_auth() -> dict:
    return {"Authorization": f"Bearer {os.environ['TOOLHOST_E2E_OTHER_TOKEN']}"}


def call_and_hang_up(client: httpx.Client, url: str, headers: dict, params: dict) -> str:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    post = {**headers, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    with client.stream("POST", url, headers=post, json=body) as r:
        check(r.status_code == 200, f"tools/call answered HTTP {r.status_code}")
        check("text/event-stream" in r.headers.get("content-type", ""), f"not a stream: {r.headers}")
        for event_id, data in events(r, stop_after_first_id=True):
            check(result_of(data) is None, "the result came before the first event id")
            return event_id
    raise Failure("the stream had no event id")


def stateless(client: httpx.Client, url: str, auth: dict) -> None:
    headers = {**auth, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": TOOL}
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "progressToken": "resume-1",
    }
    first = call_and_hang_up(client, url, headers, {"name": TOOL, "arguments": {}, "_meta": meta})
    replays_nothing(client, url, {**other_auth(), "MCP-Protocol-Version": "2026-07-28"}, first, "another tenant")
    result, polls = resume(client, url, {**auth, "MCP-Protocol-Version": "2026-07-28"}, first)
    check(result["content"][0]["text"] == ANSWER, f"2026-07-28: resumed result {result}")
    with client.stream(
        "GET",
        url,
        headers={**auth, "MCP-Protocol-Version": "2026-07-28", "Accept": "text/event-stream", "Last-Event-ID": "0" * 32},
    ) as r:
        check(list(events(r)) == [], "an unknown event id replays nothing")
    print(f"ok  2026-07-28: hung up after event {first[:8]}…, the result came back after {polls} poll(s)")


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
    replays_nothing(client, url, second, first, "another session of the same principal")
    result, polls = resume(client, url, headers, first)
    check(result["content"][0]["text"] == ANSWER, f"2025-11-25: resumed result {result}")
    print(f"ok  2025-11-25: hung up after event {first[:8]}…, the result came back after {polls} poll(s)")


def main(url: str) -> None:
    auth = {"Authorization": f"Bearer {os.environ['TOOLHOST_E2E_TOKEN']}"}
    with httpx.Client(timeout=30) as client:
        stateless(client, url, auth)
        session(client, url, auth)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python_resume.py http://127.0.0.1:PORT/mcp")
    try:
        main(sys.argv[1])
    except Failure as failure:
        sys.exit(f"FAIL {failure}")
