"""The Python MCP SDK and a person's own connection to a backend (tests/e2e_connections.rs).

    .venv/bin/python tests/e2e/python_connect.py http://127.0.0.1:PORT/mcp STEP [STEP ...]

The person's bearer token at the host is in $TOOLHOST_E2E_BEARER; the
browser signs in to the host as $TOOLHOST_E2E_HOST_USER with
$TOOLHOST_E2E_HOST_PASSWORD and to the backend's authorization server as
$TOOLHOST_E2E_UPSTREAM_USER with $TOOLHOST_E2E_UPSTREAM_PASSWORD. The tool
called is `list_environments` of the testbench, whose backend is
`testbench` (or $TOOLHOST_E2E_BACKEND). Steps, in the order given, with one browser (cookie jar) for
all of them:

* `in-session`: `Client(mode="legacy")` with an `elicitation_callback`: the
  call is asked, as a URL elicitation, to open the host's connect page; the
  callback plays the person's browser there (host sign-in, the page's
  Connect link, the server's login, back to the host) and accepts; the same
  call then completes.
* `required`: `Client(mode="2026-07-28")` without a callback: the call is
  answered MCP's URLElicitationRequiredError (-32042) naming the connect
  page, `CONNECTION_REQUIRED` and the backend.
* `connect-on-error`: `required`, then the browser at the page it named,
  then the same call again, which completes.
* `connected`: a call completes and asks nothing.
* `revoke`: the browser revokes the person's connection on the console's
  Connections page.
* `revoke-other`: the same page of a tenant admin, who revokes the one
  other person's connection listed there.
* `connect`: the browser alone, at the connect page of
  $TOOLHOST_E2E_BACKEND (default `testbench`), as a person who opened it
  from the console would.

Prints `{"step": STEP, "structured": …}` per completed call and `ok  all`
at the end; exits 1 with the reason on the first failure.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx2
from checks import check, run
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError
from mcp.types import ElicitResult, Implementation
from oauth_browser import TIMEOUT_SECONDS, describe, origin, parse_page, submit

CLIENT_INFO = Implementation(name="toolhost-e2e-connect", version="0.1.0")
BACKEND = os.environ.get("TOOLHOST_E2E_BACKEND", "testbench")
TOOL = "list_environments"
# The host's sign-in, the confirmation, the server's login and the hops between.
MAX_STEPS = 16


def env(name: str) -> str:
    value = os.environ.get(name)
    check(bool(value), f"${name} is not set")
    return value or ""


def client(url: str, mode: str, callback: Any) -> tuple[Any, Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {env('TOOLHOST_E2E_BEARER')}"})
    kwargs: dict[str, Any] = {"mode": mode, "client_info": CLIENT_INFO, "read_timeout_seconds": 60}
    if callback is not None:
        kwargs["elicitation_callback"] = callback
    return http, Client(streamable_http_client(url, http_client=http), **kwargs)


async def connect(browser: httpx2.AsyncClient, url: str) -> None:
    """What the person does at the connect page `url`: signs in to the host
    if asked, follows the page's Connect link, signs in at the backend's
    server, and lands on the host's Connections page saying it is done."""
    host = origin(url)
    check(urlsplit(url).path == f"/admin/connections/{BACKEND}/connect", f"the connect page is {url}")
    response = await browser.get(url)
    signed_in: set[tuple[str, str]] = set()
    for _ in range(MAX_STEPS):
        here = str(response.request.url)
        if response.is_redirect:
            response = await browser.get(urljoin(here, response.headers["location"]))
            continue
        check(response.status_code == 200, f"connecting: {describe(response)}")
        parts = urlsplit(here)
        if origin(here) == host and parts.path == "/admin/connections":
            check("done=connected" in parts.query, f"the page after connecting: {describe(response)}")
            check(f"{BACKEND} is connected" in response.text, f"no notice: {describe(response)}")
            return
        page = parse_page(response.text)
        login = next((f for f in page.forms if {"username", "password"} <= f.names()), None)
        if login is not None:
            at = origin(here)
            check(at not in signed_in, f"the sign-in at {at} was refused: {describe(response)}")
            signed_in.add(at)
            who = "HOST" if at == host else "UPSTREAM"
            data = login.fields() | {
                "username": env(f"TOOLHOST_E2E_{who}_USER"),
                "password": env(f"TOOLHOST_E2E_{who}_PASSWORD"),
            }
            response = await submit(browser, response, login, data)
            continue
        link = next((href for href, text in page.links if text == f"Connect {BACKEND}"), None)
        check(link is not None, f"neither a sign-in form nor a Connect link: {describe(response)}")
        response = await browser.get(urljoin(here, link or ""))
    raise AssertionError(f"not connected after {MAX_STEPS} steps; last: {describe(response)}")


async def revoke(browser: httpx2.AsyncClient, mcp_url: str, others: bool = False) -> None:
    """Revokes the person's connection on the Connections page (with
    `others`, a tenant admin's: every other person's listed there)."""
    page_url = urljoin(mcp_url, "/admin/connections")
    response = await browser.get(page_url)
    signed_in = False
    while response.is_redirect or "/oauth/signin" in str(response.request.url):
        if response.is_redirect:
            response = await browser.get(urljoin(str(response.request.url), response.headers["location"]))
            continue
        # The host's sign-in page, once: it returns to the Connections page.
        check(not signed_in, f"the sign-in was refused: {describe(response)}")
        form = next((f for f in parse_page(response.text).forms if {"username", "password"} <= f.names()), None)
        check(form is not None, f"no sign-in form: {describe(response)}")
        data = form.fields() | {"username": env("TOOLHOST_E2E_HOST_USER"), "password": env("TOOLHOST_E2E_HOST_PASSWORD")}  # type: ignore[union-attr]
        response = await submit(browser, response, form, data)  # type: ignore[arg-type]
        signed_in = True
    check(response.status_code == 200, f"the Connections page: {describe(response)}")
    page = parse_page(response.text)
    action = f"/admin/connections/{BACKEND}/revoke"
    # The person's own (a tenant admin's page also lists others', each
    # naming whose it is in a user_id field).
    forms = [f for f in page.forms if f.action == action and ("user_id" in f.names()) == others]
    check(len(forms) == 1, f"{len(forms)} revoke forms for {BACKEND} (others: {others}): {describe(response)}")
    response = await submit(browser, response, forms[0], forms[0].fields())
    check(response.is_redirect, f"revoking: {describe(response)}")
    location = response.headers["location"]
    check("done=revoked" in location, f"revoking led to {location}")


def structured(step: str, result: Any) -> Any:
    check(not result.is_error, f"{step}: the call failed: {result.model_dump_json()}")
    text = result.model_dump_json()
    check("eyJ" not in text, f"{step}: a token-like string in the answer: {text}")
    print(json.dumps({"step": step, "structured": result.structured_content}), flush=True)
    return result.structured_content


async def required(url: str) -> str:
    """The call refused with -32042; the connect page it names."""
    http, c = client(url, "2026-07-28", None)
    async with http, c:
        try:
            result = await c.call_tool(TOOL, {})
        except MCPError as e:
            check(e.code == -32042, f"required: error {e.code} {e.message}")
            data = e.data or {}
            check(data.get("code") == "CONNECTION_REQUIRED", f"required: {data}")
            check(data.get("backend") == BACKEND, f"required: {data}")
            check("eyJ" not in json.dumps(data), f"required: a token-like string in {data}")
            (asked,) = UrlElicitationRequiredError.from_error(e.error).elicitations
            check(asked.mode == "url" and bool(asked.elicitation_id), f"required: {asked}")
            return asked.url
        raise AssertionError(f"required: the call completed: {result.model_dump_json()}")


async def main() -> None:
    url, steps = sys.argv[1], sys.argv[2:]
    check(bool(steps), "no step given")
    async with httpx2.AsyncClient(timeout=TIMEOUT_SECONDS, follow_redirects=False) as browser:
        for step in steps:
            if step == "in-session":
                asked: list[str] = []

                async def on_elicit(_context: Any, params: Any) -> ElicitResult:
                    check(getattr(params, "mode", None) == "url", f"in-session: asked {params}")
                    asked.append(params.url)
                    await connect(browser, params.url)
                    return ElicitResult(action="accept")

                http, c = client(url, "legacy", on_elicit)
                async with http, c:
                    result = await c.call_tool(TOOL, {})
                check(len(asked) == 1, f"in-session: asked {asked}")
                structured(step, result)
            elif step == "required":
                await required(url)
            elif step == "connect-on-error":
                await connect(browser, await required(url))
                http, c = client(url, "2026-07-28", None)
                async with http, c:
                    structured(step, await c.call_tool(TOOL, {}))
            elif step == "connected":
                http, c = client(url, "2026-07-28", None)
                async with http, c:
                    structured(step, await c.call_tool(TOOL, {}))
            elif step == "revoke":
                await revoke(browser, url)
            elif step == "revoke-other":
                await revoke(browser, url, others=True)
            elif step == "connect":
                await connect(browser, urljoin(url, f"/admin/connections/{BACKEND}/connect"))
            else:
                raise AssertionError(f"unknown step {step!r}")
            print(f"ok  {step}", file=sys.stderr, flush=True)
    print("ok  all", flush=True)


if __name__ == "__main__":
    run(main())
