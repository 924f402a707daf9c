// A DPoP client built from a maintained OAuth library (panva's oauth4webapi),
// not from hand-made JWTs, against the real `toolhost serve`:
//
//   node tests/e2e/dpop_client.mjs ISSUER CLIENT_ID CLIENT_SECRET
//
// 1. discovers the authorization server (RFC 8414) and checks it advertises
//    DPoP (`dpop_signing_alg_values_supported`);
// 2. makes an ES256 key and gets a client-credentials token with a DPoP
//    proof: `token_type` DPoP;
// 3. lists tools and calls `greet` at ISSUER/mcp (2026-07-28, stateless)
//    with the library's proofs (`Authorization: DPoP`, a fresh proof per
//    request carrying `ath`);
// 4. the same token without a proof, as a thief would send it, is 401.
//
// Prints one line per step; exits 1 with the reason on the first failure.

import * as oauth from "oauth4webapi";

const [issuerArg, clientId, clientSecret] = process.argv.slice(2);
const insecure = { [oauth.allowInsecureRequests]: true };

function check(ok, what) {
  if (!ok) {
    throw new Error(what);
  }
}

/// The JSON-RPC answer of a response: JSON, or the last SSE `data:` event.
async function answerOf(response) {
  const text = await response.text();
  if ((response.headers.get("content-type") ?? "").includes("text/event-stream")) {
    const data = text
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trim())
      .filter((line) => line.length > 0);
    check(data.length > 0, `an event stream with no data: ${text}`);
    return JSON.parse(data[data.length - 1]);
  }
  return JSON.parse(text);
}

function stateless(id, method, params = {}) {
  const headers = new Headers({
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
  });
  if (params.name) {
    headers.set("mcp-name", params.name);
  }
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  });
  return { headers, body };
}

async function main() {
  const issuer = new URL(issuerArg);
  const discovered = await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure });
  const as = await oauth.processDiscoveryResponse(issuer, discovered);
  check(
    (as.dpop_signing_alg_values_supported ?? []).includes("ES256"),
    `the metadata advertises no ES256 for DPoP: ${JSON.stringify(as)}`,
  );
  console.log(`discovery: ${as.issuer} advertises DPoP (${as.dpop_signing_alg_values_supported.join(" ")})`);

  const client = { client_id: clientId };
  const keys = await oauth.generateKeyPair("ES256");
  const DPoP = oauth.DPoP(client, keys);
  const granted = await oauth.clientCredentialsGrantRequest(
    as,
    client,
    oauth.ClientSecretPost(clientSecret),
    new URLSearchParams(),
    { DPoP, ...insecure },
  );
  const tokens = await oauth.processClientCredentialsResponse(as, client, granted);
  check(String(tokens.token_type).toLowerCase() === "dpop", `token_type ${tokens.token_type}, not DPoP`);
  console.log("token: a DPoP-bound access token by client credentials");

  const mcp = new URL("/mcp", issuer);
  const list = stateless(1, "tools/list");
  const listed = await oauth.protectedResourceRequest(
    tokens.access_token,
    "POST",
    mcp,
    list.headers,
    list.body,
    { DPoP, ...insecure },
  );
  check(listed.status === 200, `tools/list: ${listed.status} ${await listed.clone().text()}`);
  const names = ((await answerOf(listed)).result?.tools ?? []).map((t) => t.name);
  check(names.includes("greet"), `tools/list has no greet: ${names}`);

  const call = stateless(2, "tools/call", { name: "greet", arguments: { name: "Ada" } });
  const called = await oauth.protectedResourceRequest(
    tokens.access_token,
    "POST",
    mcp,
    call.headers,
    call.body,
    { DPoP, ...insecure },
  );
  check(called.status === 200, `tools/call: ${called.status} ${await called.clone().text()}`);
  const result = (await answerOf(called)).result;
  check(
    result?.structuredContent?.message === "Hello, Ada!",
    `greet answered ${JSON.stringify(result)}`,
  );
  console.log("mcp: tools/list and greet with the library's proofs: Hello, Ada!");

  const stolen = stateless(3, "tools/list");
  stolen.headers.set("authorization", `Bearer ${tokens.access_token}`);
  const refused = await fetch(mcp, { method: "POST", headers: stolen.headers, body: stolen.body });
  check(refused.status === 401, `the bound token as Bearer: ${refused.status}`);
  console.log("stolen: the bound token without a proof is 401");
}

main().catch((e) => {
  console.log(`FAIL: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
