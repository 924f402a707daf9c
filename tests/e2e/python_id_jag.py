"""MCP's enterprise-managed authorization end to end, as an agent does it:
the person signs in once at the organisation's provider, the provider issues
an identity assertion grant (ID-JAG) for toolhost, and the Python MCP SDK
(mcp 2.3.0's `IdentityAssertionOAuthProvider`) trades it for a toolhost
token with no consent page.

    IDP_PASSWORD=… AGENT_SECRET=… HOST_CLIENT_SECRET=… \\
      .venv/bin/python tests/e2e/python_id_jag.py http://127.0.0.1:PORT/mcp \\
        --idp ISSUER --agent agent --host-client CLIENT_ID --username alice

1. Leg 0: the agent signs the person in at the provider with the
   authorization code flow and PKCE (oauth_browser.py plays the provider's
   sign-in page), and redeems the code for an ID token.
2. Leg 1: RFC 8693 token exchange at the provider: the ID token for an
   ID-JAG (`requested_token_type` id-jag) naming toolhost's issuer
   (`audience`) and its MCP endpoint (`resource`).
3. Leg 2: the SDK's provider, configured with toolhost's issuer and the
   agent's confidential client there, presents the ID-JAG with the
   JWT-bearer grant; `tools/list` shows `greet` and `greet` answers.
4. The same ID-JAG presented again is refused (`invalid_grant`): it is
   spent once.

Prints one line per step; exits 1 with the reason on the first failure.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import secrets
import sys
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

import checks
from checks import Failure, check
from oauth_browser import authorize
from token_storage import MemoryStorage

CLIENT_INFO = Implementation(name="toolhost-e2e-python-id-jag", version="0.1.0")
# The agent's redirect URI at the provider: never contacted, the browser
# stops at the redirect and hands the code over.
REDIRECT_URI = "http://127.0.0.1:9/callback"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TIMEOUT_SECONDS = 30


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise Failure(f"${name} is not set")
    return value


async def id_token(http: httpx2.AsyncClient, idp: str, agent: str, username: str) -> str:
    """Leg 0: the person signs in at the provider; the agent gets an ID token."""
    meta = (await http.get(f"{idp}/.well-known/openid-configuration")).json()
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    query = urlencode({
        "response_type": "code",
        "client_id": agent,
        "redirect_uri": REDIRECT_URI,
        "scope": "openid email profile",
        "state": secrets.token_urlsafe(16),
        "nonce": secrets.token_urlsafe(16),
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    })
    final = await authorize(f"{meta['authorization_endpoint']}?{query}", username, env("IDP_PASSWORD"))
    check(final.startswith(REDIRECT_URI + "?"), f"the provider did not send the code back: {final}")
    code = parse_qs(urlsplit(final).query).get("code", [""])[0]
    check(bool(code), f"no code in {final}")
    answer = await http.post(
        meta["token_endpoint"],
        data={"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI, "code_verifier": verifier},
        auth=(agent, env("AGENT_SECRET")),
    )
    check(answer.status_code == 200, f"the code was refused: {answer.status_code} {answer.text}")
    return answer.json()["id_token"]


async def id_jag(http: httpx2.AsyncClient, idp: str, agent: str, token: str, audience: str, resource: str) -> str:
    """Leg 1: the ID token for an ID-JAG for toolhost, by token exchange."""
    meta = (await http.get(f"{idp}/.well-known/openid-configuration")).json()
    answer = await http.post(
        meta["token_endpoint"],
        data={
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG,
            "subject_token": token,
            "subject_token_type": ID_TOKEN,
            "audience": audience,
            "resource": resource,
            "scope": "mcp",
        },
        auth=(agent, env("AGENT_SECRET")),
    )
    check(answer.status_code == 200, f"the provider issued no ID-JAG: {answer.status_code} {answer.text}")
    body = answer.json()
    check(body.get("issued_token_type") == ID_JAG, f"not an ID-JAG: {body.get('issued_token_type')}")
    return body["access_token"]


async def run(url: str, opts: argparse.Namespace) -> None:
    issuer = f"{urlsplit(url).scheme}://{urlsplit(url).netloc}"
    async with httpx2.AsyncClient(timeout=TIMEOUT_SECONDS) as http:
        token = await id_token(http, opts.idp, opts.agent, opts.username)
        print(f"ok: {opts.username} signed in at the provider; the agent holds an ID token", flush=True)
        issued: list[str] = []

        async def assertion(audience: str, resource: str) -> str:
            check(audience == issuer, f"the SDK asks for audience {audience}, not {issuer}")
            grant = await id_jag(http, opts.idp, opts.agent, token, audience, resource)
            issued.append(grant)
            return grant

        provider = IdentityAssertionOAuthProvider(
            server_url=url,
            storage=MemoryStorage(),
            client_id=opts.host_client,
            client_secret=env("HOST_CLIENT_SECRET"),
            issuer=issuer,
            assertion_provider=assertion,
            scope="mcp",
        )
        async with httpx2.AsyncClient(auth=provider, timeout=TIMEOUT_SECONDS) as authed:
            transport = streamable_http_client(url, http_client=authed)
            async with Client(transport, mode="legacy", client_info=CLIENT_INFO, read_timeout_seconds=30) as client:
                listed = await client.list_tools()
                names = sorted(t.name for t in listed.tools)
                check("greet" in names, f"tools/list has no greet: {names}")
                greeted = await client.call_tool("greet", {"name": "Ada"})
                text = " ".join(getattr(c, "text", "") for c in greeted.content)
                check("Hello, Ada!" in text, f"greet answered {text!r}")
        check(len(issued) == 1, f"{len(issued)} ID-JAGs asked for, expected 1")
        print(f"ok: the SDK traded the ID-JAG for a token; tools/list {names}; greet: {text}", flush=True)

        meta = (await http.get(f"{issuer}/.well-known/oauth-authorization-server")).json()
        again = await http.post(
            meta["token_endpoint"],
            data={"grant_type": JWT_BEARER, "assertion": issued[0]},
            auth=(opts.host_client, env("HOST_CLIENT_SECRET")),
        )
        check(again.status_code == 400, f"a spent ID-JAG was answered {again.status_code}: {again.text}")
        check(again.json().get("error") == "invalid_grant", f"a spent ID-JAG: {again.text}")
        print("ok: the same ID-JAG again is refused invalid_grant", flush=True)


def main() -> int:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("url", help="the /mcp endpoint")
    args.add_argument("--idp", required=True, help="the provider's issuer")
    args.add_argument("--agent", required=True, help="the agent's client id at the provider")
    args.add_argument("--host-client", required=True, help="the agent's client id at toolhost")
    args.add_argument("--username", required=True, help="the person at the provider")
    opts = args.parse_args()
    checks.run(run(opts.url, opts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
