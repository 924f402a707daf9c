// An authenticating reverse proxy for clients that cannot send a bearer
// token (the conformance suite's `server` command has no header option):
// it forwards every request to TARGET unchanged, adding
// `Authorization: Bearer $TOOLHOST_E2E_TOKEN` when the request has none,
// and streams the answer back (SSE included).
//
//   node auth_proxy.mjs http://127.0.0.1:PORT   → prints `proxy: http://127.0.0.1:P`
import http from "node:http";

const target = new URL(process.argv[2]);
const token = process.env.TOOLHOST_E2E_TOKEN;
if (!token) {
  console.error("auth_proxy: TOOLHOST_E2E_TOKEN is not set");
  process.exit(2);
}

const server = http.createServer((req, res) => {
  const headers = { ...req.headers };
  if (!headers.authorization) headers.authorization = `Bearer ${token}`;
  const upstream = http.request(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
    },
  );
  upstream.on("error", (e) => {
    res.writeHead(502, { "content-type": "text/plain" });
    res.end(`auth_proxy: ${e.message}\n`);
  });
  req.pipe(upstream);
  res.on("close", () => upstream.destroy());
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  console.log(`proxy: http://127.0.0.1:${port}`);
});
