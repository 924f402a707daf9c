//! The testbench backend for end-to-end tests: served in the test's own
//! process (so tests read its request counters), and a server whose
//! `testbench` plugin reaches it; plus stateless `tools/call` helpers.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::oauth::{json, user_token};
use super::{Answer, DEMO_PASSWORD, Server, try_exchange};
use toolhost_fixtures::TESTBENCH;

/// The backend's credential. Nothing a client, a log or the audit trail
/// shows may contain it.
pub const BACKEND_TOKEN: &str = "tb-secret-7f3a9c2e51d04b8e9a6f0c1d2e3b4a59";

/// Flags turning every rate limit off: for load that must never be refused.
pub const UNLIMITED: [&str; 6] = [
    "--rate-limit-per-principal",
    "0",
    "--rate-limit-per-client",
    "0",
    "--rate-limit-writes",
    "0",
];

/// The testbench backend, serving on its own runtime for the test's life.
pub struct Backend {
    /// The running backend (its handle reads counters, loads seeds).
    pub running: testbench::Running,
    token_file: PathBuf,
    _dir: tempfile::TempDir,
    _rt: tokio::runtime::Runtime,
}

impl Backend {
    pub fn start() -> Backend {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let config = testbench::Config::new(BACKEND_TOKEN);
        let running = rt
            .block_on(testbench::start(
                "127.0.0.1:0".parse().expect("addr"),
                config,
            ))
            .expect("the backend starts");
        let dir = tempfile::tempdir().expect("temp");
        let token_file = dir.path().join("testbench.token");
        std::fs::write(&token_file, format!("{BACKEND_TOKEN}\n")).expect("write");
        Backend {
            running,
            token_file,
            _dir: dir,
            _rt: rt,
        }
    }

    pub fn flags(&self) -> [String; 4] {
        [
            "--backend".into(),
            format!("testbench={}", self.running.url()),
            "--backend-token-file".into(),
            format!("testbench={}", self.token_file.display()),
        ]
    }

    pub fn requests(&self, route: &str) -> u64 {
        self.running.handle.counters().requests_to(route)
    }

    pub fn writes(&self) -> u64 {
        self.running.handle.counters().writes
    }
}

/// A server with the testbench plugin reaching `backend`, and the demo
/// admin's token.
pub fn serve(backend: &Backend, extra: &[toolhost_fixtures::Fixture]) -> (Server, String) {
    serve_on(backend, extra, &[], None)
}

/// [`serve`] with extra flags, on the store at `database_url` if given.
pub fn serve_on(
    backend: &Backend,
    extra: &[toolhost_fixtures::Fixture],
    more_flags: &[&str],
    database_url: Option<&str>,
) -> (Server, String) {
    let flags = backend.flags();
    let mut flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    flags.extend_from_slice(more_flags);
    let mut plugins = vec![TESTBENCH];
    plugins.extend_from_slice(extra);
    let server = Server::start_on(&plugins, &flags, database_url);
    let token = user_token(&server, "demo", DEMO_PASSWORD);
    (server, token)
}

/// A stateless `tools/call` with `token`; the JSON-RPC answer.
pub fn call(server: &Server, token: &str, tool: &str, arguments: Value) -> Value {
    call_at(&server.url, token, tool, arguments)
}

/// [`call`] to the endpoint `url` (usable from other threads).
pub fn call_at(url: &str, token: &str, tool: &str, arguments: Value) -> Value {
    let params = json!({"name": tool, "arguments": arguments});
    request_at(url, token, "tools/call", tool, params)
}

/// A stateless 2026-07-28 request `method` (its `Mcp-Name` header `name`)
/// with `params` and `token`: the JSON-RPC answer (HTTP 200 asserted).
pub fn request_at(url: &str, token: &str, method: &str, name: &str, params: Value) -> Value {
    let answer = post_at(url, token, method, name, params);
    assert_eq!(answer.status, 200, "{method} {name}: {}", answer.body);
    json(&answer.body)
}

/// The prompts, resources and resource templates `token` lists at `url`,
/// in that order: how many of each (their first page).
pub fn listed_extras(url: &str, token: &str) -> [usize; 3] {
    [
        ("prompts/list", "prompts"),
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
    ]
    .map(|(method, field)| {
        let listed = request_at(url, token, method, "", json!({}));
        listed["result"][field].as_array().map_or(0, Vec::len)
    })
}

/// `prompts/get` of prompt `name` without arguments as `token`: the body.
pub fn get_prompt(url: &str, token: &str, name: &str) -> String {
    let params = json!({"name": name, "arguments": {}});
    post_at(url, token, "prompts/get", name, params).body
}

/// `resources/read` of `uri` as `token`: the body.
pub fn read_resource(url: &str, token: &str, uri: &str) -> String {
    post_at(url, token, "resources/read", uri, json!({"uri": uri})).body
}

/// [`request_at`] without judging the answer: status, headers and body.
pub fn post_at(url: &str, token: &str, method: &str, name: &str, params: Value) -> Answer {
    try_post_at(url, token, method, name, params)
        .unwrap_or_else(|e| panic!("{method} {name} to {url}: {e}"))
}

/// [`post_at`] that says why no answer came (for load while replicas die).
pub fn try_post_at(
    url: &str,
    token: &str,
    method: &str,
    name: &str,
    params: Value,
) -> Result<Answer, String> {
    let request = Stateless::new(token, method, name, params);
    try_exchange(url, "POST", "/mcp", &request.headers(), &request.body)
}

/// A stateless 2026-07-28 request to `/mcp`: its body and headers (but
/// `Host` and `Content-Length`, which the connection adds).
pub struct Stateless<'a> {
    /// The JSON-RPC request, `params._meta` naming the protocol version.
    pub body: String,
    method: &'a str,
    name: &'a str,
    authorization: String,
}

impl<'a> Stateless<'a> {
    /// `method` (its `Mcp-Name` header `name`) with `params` and `token`.
    pub fn new(token: &str, method: &'a str, name: &'a str, mut params: Value) -> Self {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let body =
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
        let authorization = format!("Bearer {token}");
        Stateless {
            body,
            method,
            name,
            authorization,
        }
    }

    /// The request's headers.
    pub fn headers(&self) -> [(&str, &str); 6] {
        [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", self.method),
            ("Mcp-Name", self.name),
            ("Authorization", self.authorization.as_str()),
        ]
    }
}

/// The structured answer of a call that must not be an error.
pub fn answer(server: &Server, token: &str, tool: &str, arguments: Value) -> Value {
    let a = call(server, token, tool, arguments);
    let result = &a["result"];
    assert_eq!(result["isError"], json!(false), "{tool}: {a}");
    result["structuredContent"].clone()
}

/// A gate opened by calling `tool` with `arguments` as `requester` at
/// `open_at`, then confirmed (with a reason) by `approver` at `decide_at`:
/// its id.
pub fn confirmed_gate(
    open_at: &str,
    requester: &str,
    decide_at: &str,
    approver: &str,
    tool: &str,
    arguments: Value,
) -> String {
    let opened = call_at(open_at, requester, tool, arguments);
    let gate = opened["result"]["structuredContent"]["approval_required"]["gate_id"]
        .as_str()
        .unwrap_or_else(|| panic!("a gate: {opened}"))
        .to_owned();
    let decided = call_at(
        decide_at,
        approver,
        "decide_approval",
        json!({"gate_id": gate, "decision": "confirm", "reason": "release window"}),
    );
    assert_eq!(
        decided["result"]["structuredContent"]["state"], "confirmed",
        "{decided}"
    );
    gate
}

/// Every run in the caller's list at `url`, once all `count` are over
/// (at most `within`; `context` is shown if they are not).
pub fn all_runs_over(
    url: &str,
    token: &str,
    count: usize,
    within: std::time::Duration,
    context: impl Fn() -> String,
) -> Vec<Value> {
    let deadline = std::time::Instant::now() + within;
    loop {
        let listed = call_at(url, token, "list_explorations", json!({"limit": 100}));
        let runs = listed["result"]["structuredContent"]["runs"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let over = runs
            .iter()
            .filter(|r| !r["receipt_sha256"].is_null())
            .count();
        if runs.len() == count && over == count {
            return runs;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{over} of {count} runs over after {within:?}: {listed}\n{}",
            context()
        );
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
}
