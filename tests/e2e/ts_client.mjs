// The TypeScript MCP SDKs against a toolhost endpoint, in both protocol eras.
//
//   .tools/node/bin/node tests/e2e/ts_client.mjs http://127.0.0.1:PORT/mcp
//
// * @modelcontextprotocol/sdk (v1, 1.32.2): Client + StreamableHTTPClientTransport,
//   the 2025-11-25 `initialize` handshake and a session (what most deployed
//   clients speak);
// * @modelcontextprotocol/client (v2, 2.4.0): the same Client/transport pair with
//   `versionNegotiation` `auto` (must pick the stateless 2026-07-28 era after
//   `server/discover`) and pinned to 2026-07-28.
//
// Each lists the tools (`greet` must be there), calls `greet` with
// {"name": "Ada"} and checks structuredContent == {"message": "Hello, Ada!"}
// and that a text block came along. Prints one line per step; exits 1 with the
// reason on the first failure.

import { isDeepStrictEqual } from "node:util";

import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";

const EXPECTED = { message: "Hello, Ada!" };
const CLIENT_INFO = { name: "toolhost-e2e-typescript", version: "0.1.0" };
// The host's bearer token, minted by the harness for a service client
// (tests/e2e_oauth.rs drives the full OAuth flow with the Python SDK).
const AUTH = { Authorization: `Bearer ${process.env.TOOLHOST_E2E_TOKEN}` };

class Failure extends Error {}

function check(cond, what) {
  if (!cond) throw new Failure(what);
}

async function listAndCall(label, client) {
  const listed = await client.listTools();
  const names = listed.tools.map((t) => t.name);
  check(names.includes("greet"), `${label}: tools/list has no 'greet' (got ${JSON.stringify(names)})`);

  const result = await client.callTool({ name: "greet", arguments: { name: "Ada" } });
  check(!result.isError, `${label}: greet answered isError: ${JSON.stringify(result)}`);
  check(
    isDeepStrictEqual(result.structuredContent, EXPECTED),
    `${label}: structuredContent is ${JSON.stringify(result.structuredContent)}, expected ${JSON.stringify(EXPECTED)}`,
  );
  const texts = (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text);
  check(texts.length > 0, `${label}: greet answered no text content block: ${JSON.stringify(result)}`);
  return `${names.length} tools, greet -> ${JSON.stringify(result.structuredContent)} / ${JSON.stringify(texts[0])}`;
}

async function sessionV1(url) {
  const label = "typescript sdk v1 (initialize, session)";
  const client = new ClientV1(CLIENT_INFO);
  const transport = new TransportV1(new URL(url), { requestInit: { headers: AUTH } });
  await client.connect(transport);
  try {
    check(transport.sessionId, `${label}: the server issued no Mcp-Session-Id`);
    const version = transport.protocolVersion;
    check(version === "2025-11-25", `${label}: negotiated protocol version ${version}, expected 2025-11-25`);
    console.log(`ok  ${label}: protocol ${version}, ${await listAndCall(label, client)}`);
  } finally {
    await client.close();
  }
}

async function statelessV2(url, mode) {
  const label = `typescript client v2 (versionNegotiation ${JSON.stringify(mode)})`;
  const client = new ClientV2(CLIENT_INFO, { versionNegotiation: { mode } });
  await client.connect(new TransportV2(new URL(url), { requestInit: { headers: AUTH } }));
  try {
    const era = client.getProtocolEra();
    const version = client.getNegotiatedProtocolVersion();
    check(
      era === "modern" && version === "2026-07-28",
      `${label}: negotiated ${era} era at ${version}, expected modern at 2026-07-28`,
    );
    console.log(`ok  ${label}: protocol ${version}, ${await listAndCall(label, client)}`);
  } finally {
    await client.close();
  }
}

async function main() {
  const url = process.argv[2];
  if (!url || process.argv.length !== 3) {
    console.error("usage: ts_client.mjs http://127.0.0.1:PORT/mcp");
    process.exit(2);
  }
  await sessionV1(url);
  await statelessV2(url, "auto");
  await statelessV2(url, { pin: "2026-07-28" });
}

main().catch((error) => {
  if (error instanceof Failure) {
    console.error(`FAIL ${error.message}`);
  } else {
    console.error(error);
    console.error(`FAIL typescript client: ${error?.name ?? "Error"}: ${error?.message ?? error}`);
  }
  process.exit(1);
});
