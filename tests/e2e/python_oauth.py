"""The Python MCP SDK's own OAuth client against toolhost, headless.

    TOOLHOST_DEMO_PASSWORD=… .venv/bin/python tests/e2e/python_oauth.py http://127.0.0.1:PORT/mcp

The script knows the server URL and the demo user's credentials (the password
from $TOOLHOST_DEMO_PASSWORD, or the variable named by --password-env); no
token is handed to it. With `mcp.client.auth.OAuthClientProvider` (mcp 2.3.0)
it checks, in order:

1. session era (`mode="legacy"`): the first request is answered 401; the SDK
   discovers the protected-resource and authorization-server metadata,
   registers a client (RFC 7591), and sends the authorization request with
   PKCE. Its redirect handler signs in and consents through oauth_browser.py
   and hands `code`/`state`/`iss` to the callback handler. The code is
   exchanged, `tools/list` shows `greet`, and `greet` answers "Hello, Ada!";
2. refresh: the access token expires, so the next request first POSTs
   `grant_type=refresh_token`; it must be answered 200, yield a different
   access token, and the session goes on working. `--expiry forced` (the
   default) moves the SDK's expiry time into the past; `--expiry natural`
   waits out a short `expires_in` (serve with `--access-token-ttl 3s`) and
   first checks that the server itself now refuses the old token;
3. stateless era (`mode="2026-07-28"`): the same provider's tokens serve a
   new connection with no second authorization;
4. a rotated refresh token: if the refresh answered a new refresh token, the
   spent one must now be refused with `invalid_grant` (OAuth 2.1 §4.3.1).
   What that replay did to the live tokens is printed, not judged.

Every request the SDK sends is recorded by an httpx2 event hook, so each step
asserts what went over the wire (grant types, registrations, sign-ins).
Prints one line per step; exits 1 with the reason on the first failure.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from mcp.types import Implementation, TextContent

from checks import Failure, check
from oauth_browser import BrowserError, authorize
from token_storage import MemoryStorage

EXPECTED = {"message": "Hello, Ada!"}
CLIENT_INFO = Implementation(name="toolhost-e2e-python-oauth", version="0.1.0")
# Never contacted: the browser stops at the redirect and hands the code over.
REDIRECT_URI = "http://127.0.0.1:9/callback"
TIMEOUT_SECONDS = 30
# --expiry natural waits the token out: only for a server with a short TTL.
MAX_NATURAL_EXPIRY = 30


@dataclass
class Wire:
    """What the SDK sent: (method, path, form fields) per request, and the
    status of every answer to a form POST (the token endpoint's)."""

    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    token_statuses: list[tuple[str, int]] = field(default_factory=list)

    async def on_request(self, request: httpx2.Request) -> None:
        form: dict[str, str] = {}
        if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            form = {k: v[-1] for k, v in parse_qs(request.content.decode()).items()}
        self.requests.append((request.method, request.url.path, form))

    async def on_response(self, response: httpx2.Response) -> None:
        request = response.request
        if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            grant = parse_qs(request.content.decode()).get("grant_type", ["?"])[-1]
            self.token_statuses.append((grant, response.status_code))

    def grants(self) -> list[str]:
        """grant_type of every form POST, in order."""
        return [form["grant_type"] for method, _, form in self.requests if method == "POST" and "grant_type" in form]

    def count(self, method: str, path: str) -> int:
        return sum(1 for m, p, _ in self.requests if m == method and p == path)


class CodeCatcher:
    """The SDK's callback handler: it answers with the code of the final
    redirect its redirect handler (a subclass's) caught."""

    def __init__(self) -> None:
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None

    def expect(self) -> None:
        """A redirect handler begins: the callback waits for its code."""
        self._result = asyncio.get_running_loop().create_future()

    def caught(self, query: dict[str, list[str]]) -> None:
        """The final redirect's query, checked by the redirect handler."""
        assert self._result is not None
        code = AuthorizationCodeResult(code=query["code"][0], state=query["state"][0], iss=query["iss"][0])
        self._result.set_result(code)

    async def callback_handler(self) -> AuthorizationCodeResult:
        check(self._result is not None, "callback_handler called before redirect_handler")
        assert self._result is not None
        return await self._result


class HeadlessUser(CodeCatcher):
    """The SDK's redirect and callback handlers, played by oauth_browser."""

    def __init__(self, username: str, password: str) -> None:
        super().__init__()
        self.username = username
        self.password = password
        self.authorizations: list[str] = []  # authorization URLs visited

    async def redirect_handler(self, authorization_url: str) -> None:
        self.authorizations.append(authorization_url)
        self.expect()
        # A failure here ends the SDK's flow before it asks for the callback.
        final = await authorize(authorization_url, self.username, self.password)
        query = parse_qs(urlsplit(final).query)
        if "error" in query:
            raise Failure(f"the authorization server answered an error to the client: {final}")
        check(final.startswith(REDIRECT_URI + "?"), f"the final redirect {final} is not to {REDIRECT_URI}")
        for name in ("code", "state", "iss"):
            check(len(query.get(name, [])) == 1, f"the final redirect has no single {name!r}: {final}")
        self.caught(query)


async def call_greet(client: Client, label: str) -> list[str]:
    listed = await client.list_tools()
    names = [t.name for t in listed.tools]
    check("greet" in names, f"{label}: tools/list has no 'greet' (got {names})")
    result = await client.call_tool("greet", {"name": "Ada"})
    check(not result.is_error, f"{label}: greet answered isError: {result.model_dump_json(exclude_none=True)}")
    check(
        result.structured_content == EXPECTED,
        f"{label}: structuredContent is {result.structured_content!r}, expected {EXPECTED!r}",
    )
    check(
        any(isinstance(c, TextContent) for c in result.content),
        f"{label}: greet answered no text content block",
    )
    return names


def access_token(provider: OAuthClientProvider) -> str:
    tokens = provider.context.current_tokens
    check(tokens is not None and bool(tokens.access_token), "the provider holds no access token")
    assert tokens is not None
    return tokens.access_token


async def replay_refresh_token(provider: OAuthClientProvider, spent: str) -> None:
    """A spent (rotated) refresh token must be refused. Sent by a plain
    client: the provider's would add its bearer token to the request."""
    metadata = provider.context.oauth_metadata
    client_info = provider.context.client_info
    check(metadata is not None and client_info is not None, "no authorization server metadata or client info")
    assert metadata is not None and client_info is not None
    async with httpx2.AsyncClient(timeout=TIMEOUT_SECONDS) as plain:
        answer = await plain.post(
            str(metadata.token_endpoint),
            data={
                "grant_type": "refresh_token",
                "refresh_token": spent,
                "client_id": client_info.client_id,
                "resource": provider.context.get_resource_url(),
            },
        )
    body: Any = answer.json() if "json" in answer.headers.get("content-type", "") else answer.text
    check(
        answer.status_code == 400 and isinstance(body, dict) and body.get("error") == "invalid_grant",
        f"replaying the spent refresh token answered {answer.status_code} {body!r}, expected 400 invalid_grant",
    )


async def probe(url: str, access_token: str) -> int:
    """The status /mcp answers a session-era `initialize` with `access_token`
    (a plain client: no refresh, no re-authorization behind our back)."""
    async with httpx2.AsyncClient(timeout=TIMEOUT_SECONDS) as plain:
        answer = await plain.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "toolhost-e2e-probe", "version": "0"},
                },
            },
            headers={"Authorization": f"Bearer {access_token}", "Accept": "application/json, text/event-stream"},
        )
        return answer.status_code


async def after_replay(provider: OAuthClientProvider, url: str) -> str:
    """What the replay did to the live grant (reported, not judged)."""
    tokens = provider.context.current_tokens
    metadata = provider.context.oauth_metadata
    client_info = provider.context.client_info
    assert tokens is not None and metadata is not None and client_info is not None
    async with httpx2.AsyncClient(timeout=TIMEOUT_SECONDS) as plain:
        refresh = await plain.post(
            str(metadata.token_endpoint),
            data={
                "grant_type": "refresh_token",
                "refresh_token": tokens.refresh_token or "",
                "client_id": client_info.client_id,
                "resource": provider.context.get_resource_url(),
            },
        )
    return (
        f"afterwards the live refresh token answers {refresh.status_code}, "
        f"the live access token answers {await probe(url, tokens.access_token)} on /mcp"
    )


async def expire(provider: OAuthClientProvider, url: str, natural: bool) -> str:
    """Makes the held access token expire: in the SDK's eyes only (forced),
    or for real (natural: wait out the server's short `expires_in`, then
    check the server itself refuses the token). How, for the summary."""
    tokens = provider.context.current_tokens
    assert tokens is not None
    if not natural:
        provider.context.token_expiry_time = time.time() - 1
        return "expiry forced in the SDK"
    expires_in = tokens.expires_in
    check(
        expires_in is not None and 0 < expires_in <= MAX_NATURAL_EXPIRY,
        f"expires_in is {expires_in!r}: start the server with a short --access-token-ttl for --expiry natural",
    )
    # The host counts the lifetime from the next whole second and keeps a
    # token through its last second: under 2 s past the client's deadline.
    deadline = provider.context.token_expiry_time or time.time()
    await asyncio.sleep(max(0.0, deadline - time.time()) + 2.5)
    status = await probe(url, tokens.access_token)
    check(status == 401, f"the access token is past its expires_in ({expires_in} s) but /mcp answers {status}")
    return f"waited out expires_in={expires_in} s; the server then refused the old token (401)"


async def run(url: str, username: str, password: str, natural: bool) -> None:
    wire = Wire()
    user = HeadlessUser(username, password)
    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(redirect_uris=[REDIRECT_URI], client_name="toolhost-e2e-python-oauth"),
        storage=storage,
        redirect_handler=user.redirect_handler,
        callback_handler=user.callback_handler,
    )
    hooks = {"request": [wire.on_request], "response": [wire.on_response]}
    async with httpx2.AsyncClient(auth=provider, timeout=TIMEOUT_SECONDS, event_hooks=hooks) as http:
        # 1. Discovery, registration, sign-in and consent, code + PKCE, session era.
        label = 'python mcp Client(mode="legacy") + OAuthClientProvider'
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="legacy", client_info=CLIENT_INFO, read_timeout_seconds=30) as client:
            names = await call_greet(client, label)
            check(len(user.authorizations) == 1, f"{label}: {len(user.authorizations)} authorizations, expected 1")
            check(storage.client_info is not None, f"{label}: no client was registered")
            assert storage.client_info is not None
            check(
                storage.client_info.token_endpoint_auth_method == "none",
                f"{label}: the registered client uses {storage.client_info.token_endpoint_auth_method!r}, "
                "expected a public client ('none')",
            )
            grants = wire.grants()
            # With a short natural expiry the SDK may already have refreshed.
            check(
                grants[:1] == ["authorization_code"] and (natural or len(grants) == 1)
                and set(grants[1:]) <= {"refresh_token"},
                f"{label}: token requests so far {grants}, expected ['authorization_code']",
            )
            auth_url = user.authorizations[0]
            params = parse_qs(urlsplit(auth_url).query)
            for name in ("code_challenge", "resource", "scope"):
                check(name in params, f"{label}: the authorization URL has no {name!r}: {auth_url}")
            first = access_token(provider)
            first_refresh = provider.context.current_tokens.refresh_token if provider.context.current_tokens else None
            check(bool(first_refresh), f"{label}: the code exchange gave no refresh_token")
            print(
                f"ok  {label}: protocol {client.protocol_version}, client {storage.client_info.client_id} "
                f"registered, scope {params['scope'][0]!r}, signed in as {username!r}, "
                f"{len(names)} tools, greet -> {EXPECTED}"
            )

            # 2. The access token expires: the next request refreshes first.
            label = "refresh_token grant"
            how = await expire(provider, url, natural)
            refreshes = wire.grants().count("refresh_token")
            await call_greet(client, label)
            grants = wire.grants()
            check(
                grants.count("refresh_token") > refreshes and "authorization_code" not in grants[1:],
                f"{label}: token requests {grants}, expected a refresh_token grant after the expiry",
            )
            check(
                ("refresh_token", 200) in wire.token_statuses
                and all(status == 200 for _, status in wire.token_statuses),
                f"{label}: token requests were answered {wire.token_statuses}, expected 200 each",
            )
            check(len(user.authorizations) == 1, f"{label}: the refresh fell back to a new authorization")
            second = access_token(provider)
            check(second != first, f"{label}: the refreshed access token equals the first one")
            second_refresh = provider.context.current_tokens.refresh_token if provider.context.current_tokens else None
            rotated = second_refresh != first_refresh
            print(
                f"ok  {label} ({how}): new access token, refresh token "
                f"{'rotated' if rotated else 'kept'}, same session lists and calls greet"
            )

        # 3. The same tokens serve a stateless-era connection: no new sign-in.
        label = 'python mcp Client(mode="2026-07-28") + same provider'
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="2026-07-28", client_info=CLIENT_INFO, read_timeout_seconds=30) as client:
            await call_greet(client, label)
            check(len(user.authorizations) == 1, f"{label}: a second authorization happened")
            # (A natural expiry may have refreshed again meanwhile.)
            check(natural or access_token(provider) == second, f"{label}: the access token changed")
            print(f"ok  {label}: protocol {client.protocol_version}, no new authorization, greet -> {EXPECTED}")

        # 4. Rotation means the spent refresh token is dead. Last: a replay
        # may (RFC 9700 §4.14.2) revoke the whole grant.
        if rotated:
            assert first_refresh is not None
            await replay_refresh_token(provider, first_refresh)
            print(f"ok  spent refresh token replayed: 400 invalid_grant; {await after_replay(provider, url)}")

    registrations = sum(1 for m, p, _ in wire.requests if m == "POST" and p.endswith("/register"))
    check(registrations == 1, f"{registrations} client registrations, expected 1")
    print(
        f"ok  {len(wire.requests)} HTTP requests: 1 registration, token grants {wire.grants()}, "
        f"{len(user.authorizations)} browser sign-in"
    )


def find_failure(e: BaseException) -> Failure | BrowserError | None:
    """Our own Failure (or the browser's), also from inside the task groups
    the SDK raises."""
    if isinstance(e, (Failure, BrowserError)):
        return e
    if isinstance(e, BaseExceptionGroup):
        for inner in e.exceptions:
            found = find_failure(inner)
            if found is not None:
                return found
    return None


def main() -> int:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("url", help="the MCP endpoint, http://127.0.0.1:PORT/mcp")
    args.add_argument("--username", default="demo")
    args.add_argument("--password-env", default="TOOLHOST_DEMO_PASSWORD")
    args.add_argument(
        "--expiry",
        choices=["forced", "natural"],
        default="forced",
        help="forced: move the SDK's expiry time into the past; natural: wait out the server's "
        f"short expires_in (at most {MAX_NATURAL_EXPIRY} s, from --access-token-ttl)",
    )
    opts = args.parse_args()
    password = os.environ.get(opts.password_env)
    if not password:
        print(f"FAIL: ${opts.password_env} is not set (the demo user's password)", file=sys.stderr)
        return 1
    try:
        asyncio.run(run(opts.url, opts.username, password, opts.expiry == "natural"))
    except BaseException as e:
        failure = find_failure(e)
        if failure is not None:
            print(f"FAIL: {failure}", file=sys.stderr)
            return 1
        # The SDK's own errors: name them and show where.
        print(f"FAIL: {type(e).__name__}: {e}", file=sys.stderr)
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
