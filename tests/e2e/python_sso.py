"""The Python MCP SDK's OAuth client against toolhost, signing in through
the organisation's OpenID provider (single sign-on), headless.

    IDP_PASSWORD=… .venv/bin/python tests/e2e/python_sso.py http://127.0.0.1:PORT/mcp \
        --sso-label Corp --sso-username alice --sso-password-env IDP_PASSWORD \
        (--expect-tool greet | --expect-no-tools)

The script knows only the server URL and the person's credentials at the
provider; no token is handed to it. With `mcp.client.auth.OAuthClientProvider`
(mcp 2.3.0) the SDK discovers toolhost's metadata, registers itself (RFC
7591) and sends the authorization request with PKCE. Its redirect handler is
oauth_browser.py playing the person: on toolhost's sign-in page it follows
"Sign in with {label}", signs in on the provider's own page, comes back to
toolhost (which checks the ID token and links the person to a local user),
consents, and hands the code to the SDK. The SDK then lists the tools.

`--expect-tool NAME` (repeatable) requires each NAME in `tools/list`;
`--expect-no-tools` requires an empty list (the person's roles allow none).
`--print-token` ends with a line `access_token: …`, the token the SDK got,
for a test that then calls as this person over plain HTTP.
Prints one line per step; exits 1 with the reason on the first failure.
"""

from __future__ import annotations

import argparse
import os
import sys
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from mcp.types import Implementation

import checks
from oauth_browser import SsoLogin, authorize
from checks import check
from python_oauth import CodeCatcher, MemoryStorage

CLIENT_INFO = Implementation(name="toolhost-e2e-python-sso", version="0.1.0")
# Never contacted: the browser stops at the redirect and hands the code over.
REDIRECT_URI = "http://127.0.0.1:9/callback"
TIMEOUT_SECONDS = 30


class SsoUser(CodeCatcher):
    """The SDK's redirect and callback handlers, played through the provider."""

    def __init__(self, sso: SsoLogin) -> None:
        super().__init__()
        self.sso = sso
        self.authorizations = 0

    async def redirect_handler(self, authorization_url: str) -> None:
        self.authorizations += 1
        self.expect()
        # No toolhost password: the username and password go to the provider only.
        final = await authorize(authorization_url, "", "", sso=self.sso)
        query = parse_qs(urlsplit(final).query)
        check("error" not in query, f"the authorization server answered an error: {final}")
        check(final.startswith(REDIRECT_URI + "?"), f"the final redirect {final} is not to {REDIRECT_URI}")
        self.caught(query)


async def run(url: str, sso: SsoLogin, expect: list[str], expect_none: bool, print_token: bool) -> None:
    user = SsoUser(sso)
    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(redirect_uris=[REDIRECT_URI], client_name="toolhost-e2e-python-sso"),
        storage=storage,
        redirect_handler=user.redirect_handler,
        callback_handler=user.callback_handler,
    )
    async with httpx2.AsyncClient(auth=provider, timeout=TIMEOUT_SECONDS) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="legacy", client_info=CLIENT_INFO, read_timeout_seconds=30) as client:
            listed = await client.list_tools()
    names = sorted(t.name for t in listed.tools)
    check(user.authorizations == 1, f"{user.authorizations} authorizations, expected 1")
    check(storage.client_info is not None, "the SDK registered no client")
    print(f"ok: discovery, registration, sign-in through {sso.label} as {sso.username}, tools/list: {names}", flush=True)
    for name in expect:
        check(name in names, f"tools/list has no {name!r} (got {names})")
    if expect_none:
        check(names == [], f"tools/list should be empty for this person, got {names}")
    if print_token:
        check(storage.tokens is not None, "the SDK kept no token")
        print(f"access_token: {storage.tokens.access_token}", flush=True)


def main() -> int:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("url", help="the /mcp endpoint")
    args.add_argument("--sso-label", required=True)
    args.add_argument("--sso-username", required=True)
    args.add_argument("--sso-password-env", required=True, help="environment variable holding the provider password")
    args.add_argument("--expect-tool", action="append", default=[])
    args.add_argument("--expect-no-tools", action="store_true")
    args.add_argument("--print-token", action="store_true")
    opts = args.parse_args()
    password = os.environ.get(opts.sso_password_env)
    if not password:
        print(f"python_sso: ${opts.sso_password_env} is not set", file=sys.stderr)
        return 1
    sso = SsoLogin(label=opts.sso_label, username=opts.sso_username, password=password)
    checks.run(run(opts.url, sso, opts.expect_tool, opts.expect_no_tools, opts.print_token))
    return 0


if __name__ == "__main__":
    sys.exit(main())
