"""A headless workload authenticating to toolhost with private_key_jwt, as the
Python MCP SDK does it (mcp 2.3.0's `PrivateKeyJWTOAuthProvider`, assertions
signed by `SignedJWTParameters` with PyJWT), no secret anywhere.

    .venv/bin/python tests/e2e/python_private_key_jwt.py keygen DIR
    .venv/bin/python tests/e2e/python_private_key_jwt.py http://127.0.0.1:PORT/mcp ISSUER CLIENT_ID DIR/key.pem

1. `keygen`: the workload makes its own P-256 key (cryptography): DIR/key.pem
   (PKCS#8, kept by the workload) and DIR/jwk.json (public, for the operator
   to register with `toolhost client add-service --jwks DIR/jwk.json`).
2. The SDK's provider discovers the metadata, signs an assertion for the
   authorization server's issuer and gets a token with client_credentials;
   `tools/list` shows `greet`, and `greet` answers "Hello, Ada!". What went
   over the wire is checked: a client_assertion, never a client_secret.
3. Replay: one assertion the SDK's parameters signed is posted twice to the
   token endpoint; the first gets a token, the second `invalid_client`.

Prints one line per step; exits 1 with the reason on the first failure.
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from urllib.parse import parse_qs

import httpx2
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm
from mcp import Client
from mcp.client.auth.extensions.client_credentials import PrivateKeyJWTOAuthProvider, SignedJWTParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

from checks import Failure, check
from token_storage import MemoryStorage

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
CLIENT_INFO = Implementation(name="toolhost-e2e-private-key-jwt", version="0.1.0")
TIMEOUT_SECONDS = 30


def workload_key() -> tuple[str, str]:
    """A new P-256 key: its PKCS#8 PEM and its public JWK (JSON)."""
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return pem, ECAlgorithm.to_jwk(key.public_key())


def keygen(directory: str) -> None:
    pem, jwk = workload_key()
    with open(f"{directory}/key.pem", "w") as f:
        f.write(pem)
    with open(f"{directory}/jwk.json", "w") as f:
        f.write(jwk)
    print(f"keygen: {directory}/key.pem and its public {directory}/jwk.json")


async def main(url: str, issuer: str, client_id: str, key_file: str) -> None:
    with open(key_file) as f:
        pem = f.read()
    params = SignedJWTParameters(issuer=client_id, subject=client_id, signing_key=pem, signing_algorithm="ES256")
    provider = PrivateKeyJWTOAuthProvider(
        server_url=url,
        storage=MemoryStorage(),
        client_id=client_id,
        assertion_provider=params.create_assertion_provider(),
        scope="mcp hello:read",
        issuer=issuer,
    )
    forms: list[dict[str, str]] = []

    async def on_request(request: httpx2.Request) -> None:
        if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            forms.append({k: v[-1] for k, v in parse_qs(request.content.decode()).items()})

    hooks = {"request": [on_request]}
    async with httpx2.AsyncClient(auth=provider, timeout=TIMEOUT_SECONDS, event_hooks=hooks) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="legacy", client_info=CLIENT_INFO, read_timeout_seconds=30) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            tokens = provider.context.current_tokens
            granted = tokens.scope if tokens else None
            check("greet" in names, f"tools/list has no 'greet' (got {names}; the token's scope {granted!r})")
            result = await client.call_tool("greet", {"name": "Ada"})
            check(not result.is_error, f"greet answered isError: {result.model_dump_json(exclude_none=True)}")
            check(
                result.structured_content == {"message": "Hello, Ada!"},
                f"greet answered {result.structured_content!r}",
            )
    token_forms = [f for f in forms if f.get("grant_type") == "client_credentials"]
    check(len(token_forms) == 1, f"one client_credentials request, not {len(token_forms)}: {forms}")
    sent = token_forms[0]
    check(sent.get("client_assertion_type") == ASSERTION_TYPE, f"no jwt-bearer client_assertion_type: {sent}")
    check(sent.get("client_assertion", "").count(".") == 2, f"no JWT client_assertion: {sent}")
    check("client_secret" not in sent, f"a client_secret was sent: {sent}")
    print("private_key_jwt: the SDK got a token with an assertion and greet answered Hello, Ada!")

    assertion = await params.create_assertion_provider()(issuer)
    form = {
        "grant_type": "client_credentials",
        "client_assertion_type": ASSERTION_TYPE,
        "client_assertion": assertion,
    }
    async with httpx2.AsyncClient(timeout=TIMEOUT_SECONDS) as plain:
        first = await plain.post(f"{issuer}/oauth/token", data=form)
        check(first.status_code == 200, f"a fresh assertion: {first.status_code} {first.text}")
        again = await plain.post(f"{issuer}/oauth/token", data=form)
        check(again.status_code == 401, f"the replayed assertion: {again.status_code} {again.text}")
        answer = again.json()
        check(answer.get("error") == "invalid_client", f"the replay's answer: {answer}")
        check("used before" in answer.get("error_description", ""), f"the replay's answer: {answer}")
    print("replay: the same assertion again is invalid_client (used before)")


if __name__ == "__main__":
    try:
        if sys.argv[1] == "keygen":
            keygen(sys.argv[2])
        else:
            asyncio.run(main(*sys.argv[1:5]))
    except Failure as e:
        print(f"FAIL: {e}")
        sys.exit(1)
    except Exception:
        traceback.print_exc()
        sys.exit(1)
