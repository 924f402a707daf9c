//! The edge under abuse (issue 38; docs/security/threat-model.md, the
//! sections on transport state, input kept for good and resources held by
//! unauthenticated peers): one test per finding, on the real binary.

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::bench::{Backend, serve};
use support::console::cli;
use support::oauth::json as parse;
use support::{Answer, Server, exchange_full, sessions};
use toolhost_fixtures::HELLO;

/// The address `server` listens on.
fn addr(server: &Server) -> SocketAddr {
    server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .expect("a socket address")
}

/// A connection to `server` from the loopback address `source` (any of
/// 127.0.0.0/8 is this machine).
fn connect_from(source: &str, server: &Server) -> TcpStream {
    let to = addr(server);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .expect("a runtime");
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket
            .bind(format!("{source}:0").parse().expect("an address"))
            .expect("bind the source");
        socket.connect(to).await.expect("connect")
    });
    let stream = stream.into_std().expect("a std stream");
    stream.set_nonblocking(false).expect("blocking");
    stream
}

/// One request over `stream` (closed after it): status, headers, body.
fn request_over(
    mut stream: TcpStream,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    stream.write_all(head.as_bytes()).expect("write the head");
    stream.write_all(body.as_bytes()).expect("write the body");
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    support::parse_answer(&String::from_utf8_lossy(&raw)).unwrap_or_else(|e| panic!("{e}"))
}

/// The head of a POST to `path` declaring a 100,000-byte body.
fn trickle_head(path: &str, bearer: Option<&str>) -> String {
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\
         Content-Type: application/x-www-form-urlencoded\r\n"
    );
    if let Some(bearer) = bearer {
        head.push_str(&format!(
            "Authorization: {bearer}\r\nAccept: application/json, text/event-stream\r\n"
        ));
    }
    head.push_str("\r\n");
    head
}

/// Trickles a body a byte every 250 ms over `stream` until the host
/// answers or closes: what it answered (empty when it closed) and when.
fn trickle_until_cut(mut stream: TcpStream, give_up: Duration) -> (String, Duration) {
    let started = Instant::now();
    stream
        .set_read_timeout(Some(Duration::from_millis(250)))
        .expect("timeout");
    let mut buf = [0u8; 1024];
    while started.elapsed() < give_up {
        // The host may have closed it already: a failed write is fine.
        let _ = stream.write_all(b"x");
        match stream.read(&mut buf) {
            Ok(n) => {
                return (
                    String::from_utf8_lossy(&buf[..n]).into_owned(),
                    started.elapsed(),
                );
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return (String::new(), started.elapsed()),
        }
    }
    panic!("the host still reads a trickled body after {give_up:?}")
}

/// A trickled body is cut when its deadline passes, on every route that
/// reads one (the OAuth endpoints an unauthenticated peer reaches, and
/// `/mcp`): `408`, and the connection closed.
#[test]
fn a_trickled_body_is_cut_within_its_deadline_on_every_route() {
    let server = Server::start_with(&[HELLO], &["--body-read-timeout", "2s"]);
    let routes = [
        ("/oauth/token", None),
        ("/oauth/register", None),
        ("/oauth/revoke", None),
        ("/mcp", Some(server.bearer().to_owned())),
    ];
    let trickles: Vec<_> = routes
        .iter()
        .map(|(path, bearer)| {
            let mut stream = TcpStream::connect(addr(&server)).expect("connect");
            stream
                .write_all(trickle_head(path, bearer.as_deref()).as_bytes())
                .expect("the head");
            std::thread::spawn(move || trickle_until_cut(stream, Duration::from_secs(8)))
        })
        .collect();
    for ((path, _), trickle) in routes.iter().zip(trickles) {
        let (answer, after) = trickle.join().expect("a trickle");
        assert!(
            answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
            "{path}: {answer}"
        );
        assert!(
            after < Duration::from_secs(5),
            "{path}: cut after {after:?}"
        );
    }
}

/// One source holds at most its share of connections; while it holds them
/// all with trickled bodies, one more from it is refused at once, and
/// another source is served: `/healthz` within a second and a tool call.
#[test]
fn a_source_past_its_connection_share_is_refused_while_another_source_is_served() {
    let server = Server::start_with(&[HELLO], &["--max-connections-per-source", "8"]);
    let held: Vec<TcpStream> = (0..8)
        .map(|_| {
            let mut s = connect_from("127.0.0.1", &server);
            s.write_all(trickle_head("/oauth/token", None).as_bytes())
                .expect("the head");
            s
        })
        .collect();
    for _ in 0..20 {
        let mut refused = connect_from("127.0.0.1", &server);
        refused
            .set_read_timeout(Some(Duration::from_secs(2)))
            .expect("timeout");
        let mut text = String::new();
        let _ = refused.read_to_string(&mut text);
        assert!(
            text.is_empty() || text.starts_with("HTTP/1.1 503"),
            "one past the share: {text}"
        );
    }
    let asked = Instant::now();
    let health = request_over(
        connect_from("127.0.0.2", &server),
        "GET",
        "/healthz",
        &[],
        "",
    );
    assert_eq!(health.status, 200, "{}", health.body);
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );
    let call = request_over(
        connect_from("127.0.0.2", &server),
        "POST",
        "/mcp",
        &stateless("tools/call", "greet", server.bearer()),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "greet", "arguments": {"name": "Ada"}, "_meta": meta()}})
        .to_string(),
    );
    assert_eq!(call.status, 200, "{}", call.body);
    assert_eq!(
        parse(&call.body)["result"]["isError"],
        json!(false),
        "{}",
        call.body
    );
    drop(held);
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}})
}

/// The headers of a stateless (2026-07-28) request.
fn stateless<'a>(method: &'a str, name: &'a str, bearer: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
        ("Mcp-Name", name),
        ("Authorization", bearer),
    ]
}

/// A legacy (2025-11-25) request of `bearer` at `/mcp`, in `session` if
/// given.
fn legacy(
    server: &Server,
    bearer: &str,
    session: Option<&str>,
    method: &str,
    body: &str,
) -> Answer {
    sessions::legacy_at(&server.url, "/mcp", bearer, session, method, body)
}

/// A new legacy session of `bearer` at `/mcp`: its id (the handshake
/// done), or the refusal.
fn open_session(server: &Server, bearer: &str) -> Result<String, Answer> {
    sessions::open_session_at(&server.url, "/mcp", bearer)
}

fn list_tools(server: &Server, bearer: &str, session: &str) -> Answer {
    sessions::tools_list_at(&server.url, "/mcp", bearer, session)
}

/// A session answers only the principal that opened it: another tenant's
/// principal holding its id gets 404 on POST (so it cannot answer the
/// elicitations the host sends the owner), GET and DELETE, and the owner's
/// session is untouched.
#[test]
fn a_session_answers_only_the_principal_that_opened_it() {
    let server = Server::start(&[HELLO]);
    cli(&server, &["tenant", "add", "acme"]);
    let (_, other) = server.service_client_in("acme", "mcp hello:read");
    let other = format!("Bearer {other}");
    let session = open_session(&server, server.bearer()).expect("a session");
    assert_eq!(list_tools(&server, server.bearer(), &session).status, 200);

    assert_eq!(list_tools(&server, &other, &session).status, 404);
    let elicited =
        json!({"jsonrpc": "2.0", "id": 0, "result": {"action": "accept", "content": {}}});
    let answered = legacy(
        &server,
        &other,
        Some(&session),
        "POST",
        &elicited.to_string(),
    );
    assert_eq!(
        answered.status, 404,
        "an answer to the owner's elicitation: {}",
        answered.body
    );
    let mut get = vec![
        ("Accept", "text/event-stream"),
        ("Authorization", other.as_str()),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    assert_eq!(
        exchange_full(&server.url, "GET", "/mcp", &get, "").status,
        404
    );
    get[0] = ("Accept", "application/json, text/event-stream");
    assert_eq!(
        exchange_full(&server.url, "DELETE", "/mcp", &get, "").status,
        404
    );

    let listed = list_tools(&server, server.bearer(), &session);
    assert_eq!(
        listed.status, 200,
        "the owner's session lives on: {}",
        listed.body
    );
    assert!(listed.body.contains("greet"), "{}", listed.body);
}

/// Sessions per principal are capped (a typed 429), and a session closed
/// gives its place back; another principal's sessions are their own.
#[test]
fn sessions_per_principal_are_capped_and_a_closed_one_gives_its_place_back() {
    let server = Server::start_with(&[HELLO], &["--max-sessions-per-principal", "2"]);
    let first = open_session(&server, server.bearer()).expect("a first session");
    open_session(&server, server.bearer()).expect("a second session");
    let refused = open_session(&server, server.bearer()).expect_err("a third is refused");
    assert_eq!(refused.status, 429, "{}", refused.body);
    let error = &parse(&refused.body)["error"];
    assert_eq!(
        error["data"]["limit"],
        json!("sessions_per_principal"),
        "{error}"
    );
    assert!(refused.header("retry-after").is_some());

    let (_, other) = server.service_client("mcp hello:read");
    open_session(&server, &format!("Bearer {other}")).expect("another principal's own");

    let close = [
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", server.bearer()),
        ("Mcp-Session-Id", first.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let closed = exchange_full(&server.url, "DELETE", "/mcp", &close, "");
    assert!(closed.status < 300, "{}: {}", closed.status, closed.body);
    open_session(&server, server.bearer()).expect("a place given back");
}

/// Standalone GET streams of a session are capped, and GETs count against
/// the rate limits like POSTs.
#[test]
fn get_streams_are_capped_per_session_and_count_against_the_rate_limits() {
    let server = Server::start_with(
        &[HELLO],
        &[
            "--max-streams-per-session",
            "2",
            "--rate-limit-per-principal",
            "12",
        ],
    );
    let session = open_session(&server, server.bearer()).expect("a session");
    let head = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\
         Authorization: {}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n",
        server.bearer()
    );
    let open_stream = || {
        let mut s = TcpStream::connect(addr(&server)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        s.write_all(head.as_bytes()).expect("the head");
        let mut buf = [0u8; 512];
        let n = s.read(&mut buf).expect("an answer");
        (String::from_utf8_lossy(&buf[..n]).into_owned(), s)
    };
    let (first, _a) = open_stream();
    let (second, _b) = open_stream();
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    assert!(second.starts_with("HTTP/1.1 200"), "{second}");
    let (third, _c) = open_stream();
    assert!(third.starts_with("HTTP/1.1 429"), "{third}");
    assert!(third.contains("streams_per_session"), "{third}");

    // Four requests so far (initialize, initialized, three GETs counted);
    // GETs go on counting until the limit refuses one.
    let refused = (0..30).find_map(|_| {
        let (answer, _s) = open_stream();
        answer
            .starts_with("HTTP/1.1 429")
            .then_some(answer)
            .filter(|a| a.contains("RATE_LIMITED"))
    });
    assert!(
        refused.is_some(),
        "a GET past the principal's limit is refused"
    );
}

/// In the stateless era an `Mcp-Session-Id` is no session: requests that
/// each send another value stay one conversation of the principal's
/// client, so the resolver's snapshot is listed once, not once per value.
#[test]
fn a_stateless_request_cannot_start_a_conversation_per_session_id_it_sends() {
    let backend = Backend::start();
    let (server, token) = serve(&backend, &[]);
    let bearer = format!("Bearer {token}");
    for n in 0..5 {
        let session = format!("made-up-{n}");
        let mut headers = stateless("tools/call", "list_environments", &bearer);
        headers.push(("Mcp-Session-Id", session.as_str()));
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "list_environments", "arguments": {"project": "payments"}, "_meta": meta()}});
        let answer = exchange_full(&server.url, "POST", "/mcp", &headers, &body.to_string());
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert_eq!(
            parse(&answer.body)["result"]["isError"],
            json!(false),
            "{}",
            answer.body
        );
    }
    assert_eq!(backend.requests("GET /api/projects"), 1);
}

/// Names past their bounds (a 4 MiB tool name in a session, a 1 MB
/// method, prompt name and resource URI) are refused before dispatch with
/// a typed error that echoes none of them; the audit trail keeps no row
/// for them and the operator log grows by a bounded excerpt at most.
#[test]
fn names_past_their_bounds_are_refused_before_dispatch_and_kept_nowhere() {
    let server = Server::start(&[HELLO]);
    let session = open_session(&server, server.bearer()).expect("a session");
    let rows = server.verified_rows();
    let log_before = server.log().len();
    let huge = "n".repeat((4 << 20) - 256);
    let mega = "m".repeat(1 << 20);
    let cases = [
        (
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": huge, "arguments": {}}}),
            "name_bytes",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 4, "method": mega, "params": {}}),
            "method_bytes",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 5, "method": "prompts/get", "params": {"name": mega}}),
            "name_bytes",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 6, "method": "resources/read", "params": {"uri": format!("hello://{mega}")}}),
            "uri_bytes",
        ),
    ];
    for (message, limit) in cases {
        let answer = legacy(
            &server,
            server.bearer(),
            Some(&session),
            "POST",
            &message.to_string(),
        );
        assert_eq!(
            answer.status,
            400,
            "{limit}: {}",
            &answer.body[..answer.body.len().min(300)]
        );
        assert!(
            answer.body.len() < 512,
            "{limit}: an answer of {} bytes",
            answer.body.len()
        );
        let error = &parse(&answer.body)["error"];
        assert_eq!(error["data"]["code"], json!("LIMIT_EXCEEDED"), "{error}");
        assert_eq!(error["data"]["limit"], json!(limit), "{error}");
    }
    assert_eq!(
        server.verified_rows(),
        rows,
        "no audit row for a refused name"
    );
    let log = server.log();
    let grown = log.len() - log_before;
    assert!(grown < 64 * 1024, "the log grew by {grown} bytes");
    assert!(
        log.lines().all(|l| l.len() <= 8 * 1024 + 64),
        "a log line past the cap"
    );
    assert_eq!(list_tools(&server, server.bearer(), &session).status, 200);
}

/// A batch and JSON that is no JSON-RPC message get the spec's 400 with a
/// JSON-RPC error; every answer says `nosniff`, and tool output is not to
/// be stored by any cache.
#[test]
fn a_batch_is_a_json_rpc_400_and_answers_carry_nosniff_and_no_store() {
    let server = Server::start(&[HELLO]);
    let headers = stateless("tools/list", "", server.bearer());
    let batch =
        json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}}]);
    for body in [
        batch.to_string(),
        "\"tools/list\"".to_owned(),
        "42".to_owned(),
    ] {
        let answer = exchange_full(&server.url, "POST", "/mcp", &headers, &body);
        assert_eq!(answer.status, 400, "{body}: {}", answer.body);
        assert_eq!(
            parse(&answer.body)["error"]["code"],
            json!(-32600),
            "{}",
            answer.body
        );
        assert_eq!(answer.header("content-type"), Some("application/json"));
    }
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "greet", "arguments": {"name": "Ada"}, "_meta": meta()}});
    let answer = exchange_full(
        &server.url,
        "POST",
        "/mcp",
        &stateless("tools/call", "greet", server.bearer()),
        &call.to_string(),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(answer.header("cache-control"), Some("no-store"));
    for path in ["/.well-known/oauth-authorization-server", "/healthz"] {
        let answer = exchange_full(&server.url, "GET", path, &[], "");
        assert_eq!(
            answer.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
    }
}

/// Uploads are counted per principal before their body is read: past the
/// limit, 429 with `Retry-After`, whoever the principal is.
#[test]
fn uploads_are_rate_limited_per_principal_before_their_body_is_read() {
    let server = Server::start_with(&[HELLO], &["--rate-limit-uploads", "2"]);
    support::fresh_minute();
    let headers = [
        ("Authorization", server.bearer()),
        ("Content-Type", "application/octet-stream"),
    ];
    let upload = || {
        exchange_full(
            &server.url,
            "POST",
            "/workspace/uploads?kind=manifest",
            &headers,
            "name = \"x\"",
        )
    };
    for _ in 0..2 {
        let admitted = upload();
        assert_ne!(admitted.status, 429, "{}", admitted.body);
    }
    let refused = upload();
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert_eq!(parse(&refused.body)["error"]["code"], json!("RATE_LIMITED"));
    assert!(refused.header("retry-after").is_some());
    let (_, other) = server.service_client("mcp");
    let other = format!("Bearer {other}");
    let theirs = exchange_full(
        &server.url,
        "POST",
        "/workspace/uploads?kind=manifest",
        &[("Authorization", other.as_str())],
        "name = \"x\"",
    );
    assert_ne!(
        theirs.status, 429,
        "another principal's own count: {}",
        theirs.body
    );
}

/// `(uploads, parts)`: the rows of `workspace_uploads` and
/// `workspace_upload_parts` in `server`'s store.
fn upload_rows(server: &Server) -> (i64, i64) {
    let script = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); \
                  print(*c.execute('SELECT (SELECT COUNT(*) FROM workspace_uploads), \
                  (SELECT COUNT(*) FROM workspace_upload_parts)').fetchone())";
    let db = server.database_path();
    let out = support::python3(script, &[&db.to_string_lossy()]);
    let mut n = out.split(' ').map(|n| n.parse().expect("a count"));
    (n.next().expect("uploads"), n.next().expect("parts"))
}

/// `upload`'s parts in `server`'s store: how many, the largest, and the
/// SHA-256 of them joined in order.
fn stored_parts(server: &Server, upload: &str) -> (usize, usize, String) {
    let script = "import sqlite3, sys, hashlib; c = sqlite3.connect(sys.argv[1]); \
                  rows = c.execute('SELECT bytes FROM workspace_upload_parts \
                  WHERE handle = ? ORDER BY seq', (sys.argv[2],)).fetchall(); \
                  print(len(rows), max(len(r[0]) for r in rows), \
                  hashlib.sha256(b''.join(r[0] for r in rows)).hexdigest())";
    let db = server.database_path();
    let out = support::python3(script, &[&db.to_string_lossy(), upload]);
    let parts: Vec<&str> = out.split(' ').collect();
    let n = |i: usize| parts[i].parse().expect("a number");
    (n(0), n(1), parts[2].to_owned())
}

/// An upload's body sent chunked, declaring no length: the host learns
/// its size only as it arrives.
fn chunked_upload(server: &Server, bearer: &str, kind: &str, body: &str) -> Answer {
    let mut stream = TcpStream::connect(addr(server)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let head = format!(
        "POST /workspace/uploads?kind={kind} HTTP/1.1\r\nHost: 127.0.0.1\r\n\
         Connection: close\r\nAuthorization: {bearer}\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).expect("write the head");
    for chunk in body.as_bytes().chunks(64 * 1024) {
        // The host may answer and close before the last chunk.
        let _ = stream.write_all(format!("{:x}\r\n", chunk.len()).as_bytes());
        let _ = stream.write_all(chunk);
        let _ = stream.write_all(b"\r\n");
    }
    let _ = stream.write_all(b"0\r\n\r\n");
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    support::parse_answer(&String::from_utf8_lossy(&raw)).unwrap_or_else(|e| panic!("{e}"))
}

/// The quota an upload refusal names: its code and `data.quota`.
fn quota_named(answer: &Answer) -> (u16, Value, Value) {
    let body = parse(&answer.body);
    (
        answer.status,
        body["error"]["code"].clone(),
        body["error"]["data"]["quota"].clone(),
    )
}

/// A principal holds at most `max_uploads_per_principal` uploads and
/// `max_upload_bytes_per_principal` bytes no proposal names. Past either
/// (by the declared length before the body is read, or as an undeclared
/// body arrives) it is refused 413 `QUOTA_EXCEEDED` naming the quota, and
/// nothing of that upload is stored; another principal still uploads. An
/// upload larger than one part is stored in 1 MiB parts that join back to
/// the digest it was answered with.
#[test]
fn uploads_past_a_principals_quota_are_refused_and_kept_nowhere_while_large_ones_arrive_in_parts() {
    const QUOTA: &str = "3MiB";
    let server = Server::start_with(
        &[HELLO],
        &[
            "--max-uploads-per-principal",
            "2",
            "--max-upload-bytes-per-principal",
            QUOTA,
        ],
    );
    let author = || format!("Bearer {}", server.service_token("mcp workspace:author"));
    let (alice, bob) = (author(), author());
    let upload = |bearer: &str, kind: &str, body: &str| {
        exchange_full(
            &server.url,
            "POST",
            &format!("/workspace/uploads?kind={kind}"),
            &[("Authorization", bearer)],
            body,
        )
    };

    // Two and a half parts: stored in three, joined back to its digest.
    let pattern = "0123456789abcdef";
    let big = pattern.repeat(5 * 1024 * 1024 / 2 / pattern.len());
    let stored = upload(&alice, "component", &big);
    assert_eq!(stored.status, 201, "{}", stored.body);
    let stored = parse(&stored.body);
    let repeats = (big.len() / pattern.len()).to_string();
    let sent = support::python3(
        "import hashlib, sys; \
         print(hashlib.sha256(sys.argv[1].encode() * int(sys.argv[2])).hexdigest())",
        &[pattern, &repeats],
    );
    assert_eq!(stored["sha256"], json!(sent));
    assert_eq!(stored["size"], json!(big.len()));
    let handle = stored["handle"].as_str().expect("a handle");
    assert_eq!(
        stored_parts(&server, handle),
        (3, 1024 * 1024, sent),
        "three parts of at most 1 MiB, joined in order"
    );
    assert_eq!(upload_rows(&server), (1, 3));

    // Over the bytes by its declared length: refused before the body.
    let headers = [("Authorization", alice.as_str())];
    let path = "/workspace/uploads?kind=component";
    let (status, body) = support::declare_body_at(&server.url, path, &headers, 1024 * 1024);
    let bytes_quota = (
        413,
        json!("QUOTA_EXCEEDED"),
        json!("max_upload_bytes_per_principal"),
    );
    let declared = Answer {
        status,
        headers: Vec::new(),
        body,
    };
    assert_eq!(quota_named(&declared), bytes_quota, "{}", declared.body);
    // Over the bytes as an undeclared body arrives: its stored parts go.
    let over = chunked_upload(&server, &alice, "component", &"x".repeat(1024 * 1024));
    assert_eq!(quota_named(&over), bytes_quota, "{}", over.body);
    assert_eq!(upload_rows(&server), (1, 3), "nothing of either is kept");

    // Past the count.
    let manifest = "name = \"x\"";
    assert_eq!(upload(&alice, "manifest", manifest).status, 201);
    let third = upload(&alice, "manifest", manifest);
    let count_quota = (
        413,
        json!("QUOTA_EXCEEDED"),
        json!("max_uploads_per_principal"),
    );
    assert_eq!(quota_named(&third), count_quota, "{}", third.body);
    assert_eq!(upload_rows(&server), (2, 4), "the third is kept nowhere");

    // Another principal has its own quota.
    let theirs = upload(&bob, "manifest", manifest);
    assert_eq!(theirs.status, 201, "{}", theirs.body);
    assert_eq!(upload_rows(&server), (3, 5));
}
