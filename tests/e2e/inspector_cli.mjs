// The MCP Inspector's CLI (@modelcontextprotocol/inspector 2.12.0) against a
// toolhost endpoint, in both protocol eras.
//
//   .tools/node/bin/node tests/e2e/inspector_cli.mjs http://127.0.0.1:PORT/mcp
//
// Runs, for --protocol-era legacy (initialize, session) and modern
// (server/discover, stateless 2026-07-28), exactly what a person would type:
//
//   mcp-inspector --cli URL --transport http --protocol-era ERA --format json --method tools/list
//   mcp-inspector --cli URL --transport http --protocol-era ERA --format json \
//     --method tools/call --tool-name greet --tool-arg name=Ada
//
// and checks that `greet` is listed and answers structuredContent
// {"message": "Hello, Ada!"} with a text block. The Inspector keeps a catalog
// and client state under $HOME/.mcp-inspector: run it with a throwaway HOME.
// Exits 1 with the reason on the first failure.

import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";

const EXPECTED = { message: "Hello, Ada!" };
const INSPECTOR = join(dirname(fileURLToPath(import.meta.url)), "node_modules", ".bin", "mcp-inspector");

class Failure extends Error {}

function check(cond, what) {
  if (!cond) throw new Failure(what);
}

/** Runs the Inspector CLI and returns its `result` (with --format json, one JSON object on stdout). */
function inspector(url, era, args) {
  const argv = [
    INSPECTOR, "--cli", url, "--transport", "http", "--protocol-era", era,
    "--format", "json", "--connect-timeout", "30000",
    "--header", `Authorization: Bearer ${process.env.TOOLHOST_E2E_TOKEN}`, ...args,
  ];
  const shown = `mcp-inspector ${argv.slice(1).join(" ")}`;
  let stdout;
  try {
    stdout = execFileSync(process.execPath, argv, { encoding: "utf8", timeout: 60_000, stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    throw new Failure(`${shown} exited ${error.status ?? error.signal}:\n${error.stdout ?? ""}${error.stderr ?? ""}`);
  }
  let parsed;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    throw new Failure(`${shown} printed no JSON:\n${stdout}`);
  }
  check(parsed && parsed.result, `${shown} answered no result: ${stdout}`);
  return [shown, parsed.result];
}

function exercise(url, era) {
  const label = `inspector cli (--protocol-era ${era})`;
  const [listCmd, listed] = inspector(url, era, ["--method", "tools/list"]);
  const names = (listed.tools ?? []).map((t) => t.name);
  check(names.includes("greet"), `${label}: ${listCmd}: no 'greet' (got ${JSON.stringify(names)})`);

  const [callCmd, result] = inspector(url, era, [
    "--method", "tools/call", "--tool-name", "greet", "--tool-arg", "name=Ada",
  ]);
  check(!result.isError, `${label}: ${callCmd}: isError: ${JSON.stringify(result)}`);
  check(
    isDeepStrictEqual(result.structuredContent, EXPECTED),
    `${label}: ${callCmd}: structuredContent is ${JSON.stringify(result.structuredContent)}, expected ${JSON.stringify(EXPECTED)}`,
  );
  const texts = (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text);
  check(texts.length > 0, `${label}: ${callCmd}: no text content block: ${JSON.stringify(result)}`);
  console.log(`ok  ${label}: ${names.length} tools, greet -> ${JSON.stringify(result.structuredContent)} / ${JSON.stringify(texts[0])}`);
}

const url = process.argv[2];
if (!url || process.argv.length !== 3) {
  console.error("usage: inspector_cli.mjs http://127.0.0.1:PORT/mcp");
  process.exit(2);
}
try {
  exercise(url, "legacy");
  exercise(url, "modern");
} catch (error) {
  console.error(error instanceof Failure ? `FAIL ${error.message}` : error);
  process.exit(1);
}
