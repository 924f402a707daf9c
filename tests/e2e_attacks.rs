//! The attacker's test plan (docs/security/threat-model.md): one test per
//! attack on the real binary, each asserting a typed refusal and that
//! nothing changed. Attacks already proven elsewhere (a replayed refresh
//! token, forged and misplaced tokens, a hostile run's escapes…) are named
//! in the threat model by their own tests; these are the rest.

mod support;

/// The `flood` fixture's `import` values, as the runtime's tests know them.
#[path = "../host/runtime/tests/support/flood.rs"]
mod flood;

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::bench::{Backend, answer, call, request_at, serve, serve_on};
use support::console::{
    acme_admin, add_user, cli, code, open_gate, prod_run, signed_in, waiting_checkpoint,
};
use support::oauth::{
    self, Browser, REDIRECT, VERIFIER, authorize_path, bearer, encode, hidden_fields, list_tools,
    redeem, register, token, user_token,
};
use support::{Answer, DEMO_PASSWORD, Server, exchange, post_form};
use toolhost_fixtures::{HELLO, T_ESCAPE_BACKEND, T_FLOOD_IMPORTS};

const TOOLHOST: &str = env!("CARGO_BIN_EXE_toolhost");

/// The most checkpoints one call may open (`toolhost_runtime::
/// MAX_CHECKPOINTS_PER_CALL`).
const CHECKPOINTS_PER_CALL: usize = 16;

/// `host:port` of `server`.
fn authority(server: &Server) -> String {
    server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned()
}

/// A listener no request may reach: [`untouched`] proves it.
fn trap() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    (listener, port)
}

fn untouched(listener: &TcpListener, what: &str) {
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        Ok((_, peer)) => panic!("{what}: a connection reached the trap from {peer}"),
        Err(e) => panic!("{what}: {e}"),
    }
}

/// `error` of an OAuth answer.
fn oauth_error(answer: &(u16, Value)) -> (u16, Option<&str>) {
    (answer.0, answer.1["error"].as_str())
}

/// A refresh of `refresh_token` presented as `client_id`.
fn refresh(server: &Server, client_id: &str, refresh_token: &str) -> (u16, Value) {
    token(
        server,
        &format!(
            "grant_type=refresh_token&client_id={}&refresh_token={refresh_token}",
            encode(client_id)
        ),
    )
}

/// Token substitution: a code, a refresh token and a revocation work for
/// the client they were issued to and no other; an access token works on
/// the host that issued it and no other. Each refusal leaves the rightful
/// client's grant alive.
#[test]
fn a_code_or_refresh_token_serves_only_its_client_and_a_token_only_its_host() {
    let server = Server::start(&[HELLO]);
    let other = Server::start(&[HELLO]);
    let (a, b) = (
        register(&server, REDIRECT, "rightful"),
        register(&server, REDIRECT, "thief"),
    );

    // A's code redeemed by B: refused, no token minted.
    let stolen = oauth::code(&server, &a);
    let taken = redeem(&server, &b, &stolen, VERIFIER);
    assert_eq!(
        oauth_error(&taken),
        (400, Some("invalid_grant")),
        "{}",
        taken.1
    );
    assert!(taken.1.get("access_token").is_none(), "{}", taken.1);

    let (s, tokens) = redeem(&server, &a, &oauth::code(&server, &a), VERIFIER);
    assert_eq!(s, 200, "{tokens}");
    let rt = tokens["refresh_token"].as_str().expect("a refresh token");
    let at = tokens["access_token"].as_str().expect("an access token");

    // A's refresh token presented by B: unknown to B, and A's grant lives.
    let taken = refresh(&server, &b, rt);
    assert_eq!(
        oauth_error(&taken),
        (400, Some("invalid_grant")),
        "{}",
        taken.1
    );
    assert_eq!(list_tools(&server, &bearer(&tokens)).status, 200);

    // B revoking A's tokens: 200, as RFC 7009 answers any token, and
    // nothing is revoked.
    for presented in [rt, at] {
        let form = format!("token={presented}&client_id={}", encode(&b));
        assert_eq!(post_form(&server.url, "/oauth/revoke", &form).0, 200);
    }
    assert_eq!(list_tools(&server, &bearer(&tokens)).status, 200);
    let (s, rotated) = refresh(&server, &a, rt);
    assert_eq!(s, 200, "A's refresh token is still good: {rotated}");

    // Each host's tokens are its own: another host (its own keys and
    // issuer) refuses them, with the RFC 6750 error.
    for (host, foreign) in [
        (&other, bearer(&rotated)),
        (&server, other.bearer().to_owned()),
    ] {
        let refused = list_tools(host, &foreign);
        assert_eq!(refused.status, 401, "{}", refused.body);
        assert!(
            refused
                .header("www-authenticate")
                .is_some_and(|c| c.contains("invalid_token")),
            "{:?}",
            refused.headers
        );
    }
    assert_eq!(list_tools(&server, &bearer(&rotated)).status, 200);
}

/// The confused deputy: a code is sent only to a redirect URI its client
/// registered, even to a person already signed in; a registration cannot
/// pick (and so take over) another client's id.
#[test]
fn a_code_goes_only_to_a_redirect_its_client_registered() {
    let server = Server::start(&[HELLO]);
    let victim = register(&server, REDIRECT, "victim");
    let attacker = "https://attacker.example/cb";

    let mut browser = Browser::default();
    // The person signs in once, through the victim client's real flow.
    oauth::approve(&server, &mut browser, &victim, "demo", DEMO_PASSWORD);
    // The attacker's link: the victim's client id, the attacker's redirect.
    let forged = authorize_path(&victim, "").replace(&encode(REDIRECT), &encode(attacker));
    let page = browser.send(&server, "GET", &forged, None);
    assert_eq!(
        (page.status, page.header("location")),
        (400, None),
        "{}",
        page.body
    );
    assert!(!page.body.contains("code="), "{}", page.body);

    // A registration naming the victim's id gets its own.
    let body = json!({"redirect_uris": [attacker], "client_id": victim, "client_name": "victim"});
    let (s, registered) = exchange(
        &server.url,
        "POST",
        "/oauth/register",
        &[("Content-Type", "application/json")],
        &body.to_string(),
    );
    assert_eq!(s, 201, "{registered}");
    let registered = oauth::json(&registered);
    assert_ne!(registered["client_id"], json!(victim), "{registered}");
    let listed = cli(&server, &["client", "list"]);
    let line = oauth::client_line(&listed, &victim);
    assert!(
        line.contains(REDIRECT) && !line.contains(attacker),
        "{line}"
    );
}

/// SSRF: a metadata document on a private address, a plugin submission
/// naming an address, and a plugin's backend request aimed anywhere but
/// its declared backend: each is refused and no connection is made.
#[test]
fn no_request_reaches_a_private_address_through_documents_submissions_or_backends() {
    let (internal, port) = trap();
    let (decoy, decoy_port) = trap();
    let dir = tempfile::tempdir().expect("temp");
    let token_file = dir.path().join("decoy.token");
    std::fs::write(&token_file, "decoy-secret\n").expect("write");
    let flags = [
        "--backend".to_owned(),
        format!("decoy=http://127.0.0.1:{decoy_port}/api/"),
        "--backend-token-file".to_owned(),
        format!("decoy={}", token_file.display()),
    ];
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let server = Server::start_with(&[T_ESCAPE_BACKEND], &flags);

    // Client metadata documents: names and literals of loopback, private
    // and link-local (cloud metadata) addresses.
    let mut browser = Browser::default();
    for client_id in [
        format!("https://localhost:{port}/client.json"),
        format!("https://127.0.0.1:{port}/client.json"),
        format!("https://[::1]:{port}/client.json"),
        "https://169.254.169.254/latest/meta-data.json".to_owned(),
        format!("https://user@localhost:{port}/client.json"),
    ] {
        let page = browser.send(&server, "GET", &authorize_path(&client_id, ""), None);
        assert_eq!(
            (page.status, page.header("location")),
            (400, None),
            "{client_id}: {}",
            page.body
        );
    }

    // A submission is bytes, never an address to fetch from.
    let author = server.service_token("mcp catalog:submit");
    let source = format!("oci://127.0.0.1:{port}/authors/hello:1.0.0");
    for body in [
        json!({"source": source}),
        json!({"manifest": "", "component": "", "source": source}),
        json!({"manifest": format!("[plugin]\nname = \"x\"\nversion = \"1.0.0\"\ncomponent = \"http://127.0.0.1:{port}/x.wasm\"\n"),
               "component": ""}),
    ] {
        let (s, answer) = submit(&server, &author, &body);
        assert!((400..500).contains(&s), "{body}: {s} {answer}");
    }

    // The plugin's backend requests: undeclared names, and paths that
    // would change the host, the scheme or the port.
    let fixture = server.service_token("mcp fixture:run");
    let target = format!("127.0.0.1:{port}");
    for (backend, path) in [
        ("internal", "/".to_owned()),
        ("testbench", "/".to_owned()),
        ("decoy", format!("http://{target}/")),
        ("decoy", format!("//{target}/")),
        ("decoy", format!("@{target}/")),
        ("decoy", format!("\\\\{target}/")),
        ("decoy", format!("/%2F%2F{target}/")),
        ("decoy", "file:///etc/passwd".to_owned()),
    ] {
        let args = json!({"backend": backend, "path": path});
        let got = answer(&server, &fixture, "reach", args);
        assert_eq!(got["ok"], json!(false), "{backend} {path}: {got}");
        assert!(got["error"].is_string(), "{backend} {path}: {got}");
    }
    untouched(&internal, "the private address");
    untouched(&decoy, "the declared backend");
    assert_eq!(
        answer(&server, &fixture, "ping", json!({}))["pong"],
        json!(true)
    );
}

/// Path traversal: every name that reaches a path (a backend path, an
/// artifact's address, a console address, a workspace subject, a plugin's
/// file names, a signer's key files) is refused or not found when it
/// climbs, and nothing outside its place is read or written.
#[test]
fn names_that_climb_out_of_their_place_are_refused_wherever_they_reach_a_path() {
    let (decoy, decoy_port) = trap();
    let dir = tempfile::tempdir().expect("temp");
    let token_file = dir.path().join("decoy.token");
    std::fs::write(&token_file, "decoy-secret\n").expect("write");
    let backend = Backend::start();
    let flags = [
        "--backend".to_owned(),
        format!("decoy=http://127.0.0.1:{decoy_port}/api/v1/"),
        "--backend-token-file".to_owned(),
        format!("decoy={}", token_file.display()),
    ];
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let (server, demo) = serve_on(&backend, &[T_ESCAPE_BACKEND], &flags, None);
    let before = server.verified_rows();

    // A backend path may not leave the base, however it is spelled.
    let fixture = server.service_token("mcp fixture:run");
    for path in [
        "../admin",
        "/../admin",
        "a/../../admin",
        "%2e%2e/admin",
        "%2E%2E%2Fadmin",
        "..%2fadmin",
        ".%2e/admin",
        "..\\admin",
    ] {
        let got = answer(
            &server,
            &fixture,
            "reach",
            json!({"backend": "decoy", "path": path}),
        );
        assert_eq!(got["ok"], json!(false), "{path}: {got}");
    }
    untouched(&decoy, "the backend outside its base");

    // Artifact addresses: a climbing id is no artifact.
    for uri in [
        "artifact://../../etc/passwd",
        "artifact://demo/../../etc/passwd",
        "artifact://%2e%2e/%2e%2e/etc/passwd",
    ] {
        let read = request_at(
            &server.url,
            &demo,
            "resources/read",
            uri,
            json!({"uri": uri}),
        );
        assert!(read["error"].is_object(), "{uri}: {read}");
    }

    // Workspace subjects and uploads.
    for subject in [
        "testbench/test_plan:../../payments",
        "../testbench/test_plan:payments",
        "testbench/../../test_plan:payments",
    ] {
        let got = call(
            &server,
            &demo,
            "create_authoring_session",
            json!({"subject": subject}),
        );
        let code = code(&got);
        assert!(code.starts_with("SUBJECT_"), "{subject}: {code} {got}");
    }

    // Console addresses: ids that climb are not found, assets are only
    // the three the console serves.
    let mut browser = Browser::console(&server, "demo", DEMO_PASSWORD);
    for path in [
        "/admin/runs/..%2F..%2Fetc%2Fpasswd",
        "/admin/authoring/..%2F..%2Fetc%2Fpasswd",
        "/admin/audit/calls/..%2F..%2Fetc%2Fpasswd",
        "/admin/static/..%2F..%2FCargo.toml",
        "/admin/static/../../Cargo.toml",
        "/admin/../oauth/jwks",
    ] {
        let page = browser.send(&server, "GET", path, None);
        assert!(
            [400, 404].contains(&page.status),
            "{path}: {} {}",
            page.status,
            page.body
        );
        assert!(!page.body.contains("[workspace]"), "{path}");
    }

    // A plugin's file names: a manifest naming a component or a plugin
    // outside its directory is refused before anything is stored.
    let author = server.service_token("mcp catalog:submit");
    for (name, component, says) in [
        ("../escape", "escape.wasm", "name"),
        ("escape", "../escape.wasm", "plugin.component"),
        ("escape", "/tmp/escape.wasm", "plugin.component"),
        ("escape", "sub/escape.wasm", "plugin.component"),
    ] {
        let manifest = format!(
            "[plugin]\nname = \"{name}\"\nversion = \"1.0.0\"\ndescription = \"x\"\ncomponent = \"{component}\"\n\n[tools.greet]\npermission = \"hello:read\"\n"
        );
        let body = json!({"manifest": manifest, "component": "AGFzbQ0AAQA="});
        let (s, answer) = submit(&server, &author, &body);
        assert!(
            (400..500).contains(&s) && answer.contains(says),
            "{name} {component}: {s} {answer}"
        );
    }
    let revisions = cli(&server, &["plugin", "review", "list"]);
    assert!(!revisions.contains("escape"), "{revisions}");

    // A signer's key files stay in the directory given.
    let keys = tempfile::tempdir().expect("temp");
    let inside = keys.path().join("inside");
    for name in ["../outside", "/tmp/outside", "a/b", "..", ".hidden", ""] {
        let out = toolhost_output(&["signer", "new", name, "--dir"], &inside);
        assert!(!out.status.success(), "signer new {name:?} was accepted");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("signer name"), "{name:?}: {said}");
    }
    assert_eq!(
        std::fs::read_dir(keys.path()).expect("dir").count(),
        0,
        "nothing was written"
    );
    // Refusals are audited as refusals; nothing else was written.
    assert!(server.verified_rows() >= before);
}

/// `body` posted to `/catalog/revisions` as `author`: status and body.
fn submit(server: &Server, author: &str, body: &Value) -> (u16, String) {
    let auth = format!("Bearer {author}");
    exchange(
        &server.url,
        "POST",
        "/catalog/revisions",
        &[
            ("Content-Type", "application/json"),
            ("Authorization", &auth),
        ],
        &body.to_string(),
    )
}

/// `toolhost ARGS… PATH`, however it ends.
fn toolhost_output(args: &[&str], path: &std::path::Path) -> Output {
    Command::new(TOOLHOST)
        .args(args)
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {TOOLHOST} {args:?}: {e}"))
}

/// One raw exchange on a fresh connection: everything the host sent
/// before it closed the connection (or `wait` passed).
fn raw(server: &Server, request: &[u8], wait: Duration) -> String {
    let mut stream = TcpStream::connect(authority(server)).expect("connect");
    stream.set_read_timeout(Some(wait)).expect("timeout");
    stream.write_all(request).expect("write");
    let mut got = Vec::new();
    let _ = stream.read_to_end(&mut got);
    String::from_utf8_lossy(&got).into_owned()
}

/// How many HTTP responses `text` holds.
fn responses(text: &str) -> usize {
    text.matches("HTTP/1.1 ").count()
}

/// A stateless `tools/call` of `greet` as raw bytes, with `framing`
/// (the length headers) and `body` as given.
fn greet_request(server: &Server, bearer: &str, framing: &str, body: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: {bearer}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: greet\r\n\
         {framing}\r\n{body}",
        authority(server)
    )
}

fn greet_body(name: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "greet", "arguments": {"name": name},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string()
}

/// Request smuggling and oversized heads: ambiguous framing is refused or
/// read one way and the connection closed, so a request hidden in a body
/// never runs; a head over the limit is 431; the host serves on.
#[test]
fn smuggled_requests_never_run_and_oversized_heads_are_refused() {
    let server = Server::start(&[HELLO]);
    let bearer = server.bearer().to_owned();
    let before = server.verified_rows();
    let smuggled = greet_request(
        &server,
        &bearer,
        &format!("Content-Length: {}\r\n", greet_body("smuggled").len()),
        &greet_body("smuggled"),
    );

    // Chunked wins over a length, and the connection closes after the
    // answer: the request after the empty chunked body is never read.
    let te_and_cl = format!(
        "{}{smuggled}",
        greet_request(
            &server,
            &bearer,
            &format!(
                "Content-Length: {}\r\nTransfer-Encoding: chunked\r\n",
                5 + smuggled.len()
            ),
            "0\r\n\r\n"
        )
    );
    let got = raw(&server, te_and_cl.as_bytes(), Duration::from_secs(10));
    assert_eq!(responses(&got), 1, "{got}");
    // Two lengths that disagree, and a transfer coding that is not
    // chunked: 400, nothing read as a request.
    for framing in [
        "Content-Length: 4\r\nContent-Length: 5\r\n".to_owned(),
        "Transfer-Encoding: gzip\r\n".to_owned(),
        "Transfer-Encoding: chunked, identity\r\n".to_owned(),
        "Content-Length: -1\r\n".to_owned(),
        "Content-Length: 1e3\r\n".to_owned(),
    ] {
        let request = format!(
            "{}{smuggled}",
            greet_request(&server, &bearer, &framing, "")
        );
        let got = raw(&server, request.as_bytes(), Duration::from_secs(10));
        assert!(got.starts_with("HTTP/1.1 400"), "{framing:?}: {got}");
        assert_eq!(responses(&got), 1, "{framing:?}: {got}");
    }
    // A line folded into a header (obsolete, a classic smuggling vector).
    let folded = greet_request(
        &server,
        &bearer,
        "Content-Length: 0\r\n X-Folded: yes\r\n",
        "",
    );
    let got = raw(&server, folded.as_bytes(), Duration::from_secs(10));
    assert!(got.starts_with("HTTP/1.1 400"), "{got}");
    assert_eq!(server.verified_rows(), before, "no call ran");

    // Oversized heads: one huge header, and too many headers.
    let huge = format!("X-Filler: {}\r\n", "a".repeat(64 * 1024));
    let many: String = (0..200).map(|i| format!("X-Many-{i}: {i}\r\n")).collect();
    for (what, extra) in [("a 64 KiB header", huge), ("200 headers", many)] {
        let request = greet_request(
            &server,
            &bearer,
            &format!("{extra}Content-Length: 0\r\n"),
            "",
        );
        let got = raw(&server, request.as_bytes(), Duration::from_secs(10));
        assert!(got.starts_with("HTTP/1.1 431"), "{what}: {got}");
    }
    assert_eq!(server.verified_rows(), before, "no call ran");

    // The host serves on.
    let served = call(&server, server.token(), "greet", json!({"name": "after"}));
    assert_eq!(served["result"]["isError"], json!(false), "{served}");
}

/// Slowloris: connections that trickle their request head are closed at
/// the header read timeout, and meanwhile everybody else is served.
#[test]
fn a_client_trickling_its_request_head_is_cut_off_and_others_are_served() {
    let server = Server::start_with(&[HELLO], &["--header-read-timeout", "2s"]);
    let mut slow: Vec<TcpStream> = (0..64)
        .map(|_| {
            let mut s = TcpStream::connect(authority(&server)).expect("connect");
            s.write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\n")
                .expect("write");
            s
        })
        .collect();
    // Every 500 ms one more header byte each, for twice the timeout, while
    // real calls go on.
    let started = Instant::now();
    let mut served = 0;
    while started.elapsed() < Duration::from_secs(4) {
        for s in &mut slow {
            // The host may have closed it already: a failed write is fine.
            let _ = s.write_all(b"X");
        }
        let answer = call(&server, server.token(), "greet", json!({"name": "busy"}));
        assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
        served += 1;
        std::thread::sleep(Duration::from_millis(500));
    }
    for (i, s) in slow.iter_mut().enumerate() {
        s.set_read_timeout(Some(Duration::from_secs(3)))
            .expect("timeout");
        let mut buf = [0u8; 512];
        match s.read(&mut buf) {
            Ok(0) => {}
            Ok(n) => {
                let text = String::from_utf8_lossy(&buf[..n]);
                assert!(text.starts_with("HTTP/1.1 408"), "connection {i}: {text}");
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                panic!("connection {i} is still open after {:?}", started.elapsed())
            }
            Err(_) => {} // reset by the host: closed
        }
    }
    assert!(served >= 4, "calls were served meanwhile: {served}");
}

/// Self-approval through a second client: the person who raised a gate
/// cannot confirm it through another OAuth client of theirs, nor the
/// console; another person can, once.
#[test]
fn a_requester_cannot_decide_their_own_gate_through_a_second_client() {
    let backend = Backend::start();
    let (server, _) = serve(&backend, &[]);
    let (first_client, first) = signed_in(&server, "demo", DEMO_PASSWORD);
    let gate = open_gate(&server, &first, &prod_run(&["smoke"]));
    let (second_client, second) = signed_in(&server, "demo", DEMO_PASSWORD);
    assert_ne!(first_client, second_client);
    let decide = json!({"gate_id": gate, "decision": "confirm", "reason": "it is mine"});
    for token in [&first, &second] {
        let refused = call(&server, token, "decide_approval", decide.clone());
        assert_eq!(code(&refused), "SELF_APPROVAL", "{refused}");
    }
    // The console is a third client of the same person.
    let mut browser = Browser::console(&server, "demo", DEMO_PASSWORD);
    let page = browser.send(&server, "GET", "/admin/approvals", None);
    let csrf = hidden_fields(&page.body)
        .into_iter()
        .find(|(k, _)| k == "csrf")
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("a csrf field: {}", page.body));
    let form = format!("csrf={}&decision=confirm&reason=mine", encode(&csrf));
    let refused = browser.send(
        &server,
        "POST",
        &format!("/admin/approvals/{gate}"),
        Some(&form),
    );
    assert!(refused.body.contains("SELF_APPROVAL"), "{}", refused.body);
    let pending = answer(&server, &second, "list_pending_approvals", json!({}));
    assert!(
        pending["gates"]
            .as_array()
            .expect("gates")
            .iter()
            .any(|g| g["gate_id"] == json!(gate)),
        "still pending: {pending}"
    );
}

/// Cross-tenant reads: a tenant admin of `acme` finds none of `demo`'s
/// gates, checkpoints, artifacts, runs, workspaces or audit rows, by list
/// or by id, over MCP or in the console; and acts on none of them.
#[test]
fn another_tenants_gates_checkpoints_artifacts_runs_workspaces_and_audit_are_not_found() {
    let backend = Backend::start();
    let flags = ["--exploration-backend", "testbench"];
    let (server, demo) = serve_on(&backend, &[], &flags, None);
    let gate = open_gate(&server, &demo, &prod_run(&["smoke"]));
    let (_, checkpoint) = waiting_checkpoint(&server, &demo);
    let session = answer(
        &server,
        &demo,
        "create_authoring_session",
        json!({"subject": "testbench/test_plan:payments"}),
    );
    let session_id = session["session_id"]
        .as_str()
        .expect("a session")
        .to_owned();
    let started = answer(
        &server,
        &demo,
        "start_exploration",
        json!({"tool": "explore_environments", "arguments": {"project": "payments"}}),
    );
    let run_id = started["run_id"].as_str().expect("a run").to_owned();
    let run = support::console::run_until(&server, &demo, &run_id, Duration::from_secs(60), |r| {
        r["state"] == "succeeded"
    });
    let artifact = run["artifacts"][0]["uri"]
        .as_str()
        .unwrap_or_else(|| panic!("an artifact: {run}"))
        .to_owned();
    // One of demo's calls, as demo's own console shows it.
    let mut own = Browser::console(&server, "demo", DEMO_PASSWORD);
    let audit = own.send(&server, "GET", "/admin/audit?tool=run_by_tag", None);
    let call_id = audit
        .body
        .split("id=\"call-")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("a call row: {}", audit.body))
        .to_owned();

    let password = acme_admin(&server);
    let ada = user_token(&server, "ada", &password);
    let before = server.verified_rows();

    // Lists show none of it.
    for (tool, args, key) in [
        (
            "list_pending_approvals",
            json!({"filter": {"state": "all"}}),
            "gates",
        ),
        (
            "list_checkpoints",
            json!({"filter": {"state": "all"}}),
            "checkpoints",
        ),
        ("list_explorations", json!({}), "runs"),
        ("list_authoring_sessions", json!({}), "sessions"),
    ] {
        let listed = answer(&server, &ada, tool, args);
        assert_eq!(listed[key], json!([]), "{tool}: {listed}");
    }
    // By id: not found, and nothing decided, cancelled or proposed.
    for (tool, args) in [
        (
            "decide_approval",
            json!({"gate_id": gate, "decision": "deny", "reason": "x"}),
        ),
        (
            "decide_checkpoint",
            json!({"checkpoint_id": checkpoint, "disposition": "confirm",
                                     "expected_version": 1, "reason": "x"}),
        ),
        ("get_exploration_result", json!({"run_id": run_id})),
        ("cancel_exploration", json!({"run_id": run_id})),
        ("get_authoring_session", json!({"session_id": session_id})),
    ] {
        let refused = call(&server, &ada, tool, args);
        let code = code(&refused);
        assert!(code.ends_with("NOT_FOUND"), "{tool}: {code} {refused}");
    }
    let read = request_at(
        &server.url,
        &ada,
        "resources/read",
        &artifact,
        json!({"uri": artifact}),
    );
    assert!(read["error"].is_object(), "{read}");
    // The gate's own call, retried by acme with demo's gate: it does not
    // run (acme's names do not even resolve to demo's project).
    let mut retried = prod_run(&["smoke"]);
    retried["gate_id"] = json!(gate);
    let retry = call(&server, &ada, "run_by_tag", retried);
    let said = &retry["result"]["structuredContent"];
    assert!(
        said["ask_user"].is_string()
            || said["error"]["code"]
                .as_str()
                .is_some_and(|c| c.starts_with("GATE_")),
        "{retry}"
    );

    // The console: pages list none of it, addresses of it are not found.
    let mut browser = Browser::console(&server, "ada", &password);
    for page in [
        "/admin",
        "/admin/approvals",
        "/admin/checkpoints",
        "/admin/runs",
        "/admin/authoring",
        "/admin/audit",
    ] {
        let shown = browser.send(&server, "GET", page, None);
        assert_eq!(shown.status, 200, "{page}: {}", shown.body);
        for id in [&gate, &checkpoint, &run_id, &session_id, &call_id] {
            assert!(!shown.body.contains(id.as_str()), "{page} shows {id}");
        }
    }
    for page in [
        format!("/admin/runs/{run_id}"),
        format!("/admin/authoring/{session_id}"),
        format!("/admin/audit/calls/{call_id}"),
    ] {
        let shown = browser.send(&server, "GET", &page, None);
        assert_eq!(shown.status, 404, "{page}: {}", shown.body);
    }

    // demo's objects are as they were.
    let pending = answer(&server, &demo, "list_pending_approvals", json!({}));
    assert!(pending.to_string().contains(&gate), "{pending}");
    let got = answer(
        &server,
        &demo,
        "get_exploration_result",
        json!({"run_id": run_id}),
    );
    assert_eq!(got["state"], json!("succeeded"), "{got}");
    assert!(
        server.verified_rows() > before,
        "acme's refused calls are audited"
    );
}

/// CSRF and clickjacking: no page may be framed, and every form that
/// changes something needs the token of the session that sent it; a
/// forged one is refused and changes nothing.
#[test]
fn every_form_needs_its_sessions_csrf_token_and_no_page_can_be_framed() {
    let backend = Backend::start();
    let (server, demo) = serve(&backend, &[]);
    let gate = open_gate(&server, &demo, &prod_run(&["smoke"]));
    let vic = add_user(&server, "vic", "demo");
    let ann_password = oauth::add_ann(&server);
    let client = register(&server, REDIRECT, "e2e");

    let mut ann = Browser::console(&server, "ann", &ann_password);
    let mut other = Browser::console(&server, "vic", &vic);
    let page = other.send(&server, "GET", "/admin", None);
    let foreign_csrf = hidden_fields(&page.body)
        .into_iter()
        .find(|(k, _)| k == "csrf")
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("vic's csrf: {}", page.body));

    // Every page: never framed.
    let pages: Vec<String> = [
        "/admin",
        "/admin/approvals",
        "/admin/checkpoints",
        "/admin/reviews",
        "/admin/runs",
        "/admin/authoring",
        "/admin/people",
        "/admin/people/clients",
        "/admin/audit",
        "/admin/audit/verify",
        "/admin/runs/run_missing",
        "/admin/nowhere",
    ]
    .iter()
    .map(|p| p.to_string())
    .collect();
    for path in &pages {
        let shown = ann.send(&server, "GET", path, None);
        framed_never(&shown, path);
    }
    // The sign-in, login and consent pages, in a browser signed in nowhere.
    let mut fresh = Browser::default();
    let signin = fresh.send(&server, "GET", "/oauth/signin?return_to=%2Fadmin", None);
    framed_never(&signin, "the sign-in page");
    let login = fresh.send(&server, "GET", &authorize_path(&client, ""), None);
    framed_never(&login, "the login page");
    let signed = fresh.submit(
        &server,
        &login,
        &[("username", "ann"), ("password", &ann_password)],
    );
    let consent_path = signed
        .header("location")
        .filter(|l| l.starts_with("/oauth/consent"))
        .unwrap_or_else(|| panic!("to the consent page: {:?}", signed.headers))
        .to_owned();
    let consent = fresh.send(&server, "GET", &consent_path, None);
    assert_eq!(consent.status, 200, "{}", consent.body);
    framed_never(&consent, "the consent page");

    // Every form, without its token and with another session's.
    let before = acts(&server);
    let forms = [
        format!("/admin/approvals/{gate}"),
        "/admin/checkpoints/cp_1".to_owned(),
        "/admin/reviews/rev_1".to_owned(),
        "/admin/reviews/rollback/testbench".to_owned(),
        "/admin/runs/run_1/cancel".to_owned(),
        "/admin/people/users/vic/disable".to_owned(),
        "/admin/people/roles/admin/forbid".to_owned(),
        format!("/admin/people/clients/{client}/revoke"),
        "/admin/audit/verify".to_owned(),
        "/admin/signout".to_owned(),
    ];
    for action in &forms {
        for csrf in [None, Some(foreign_csrf.as_str())] {
            let mut body = "decision=deny&reason=forged&disposition=confirmed&version=1\
                            &permission=testbench%3Aread&role=admin"
                .to_owned();
            if let Some(c) = csrf {
                body.push_str(&format!("&csrf={}", encode(c)));
            }
            let refused = ann.send(&server, "POST", action, Some(&body));
            assert!(
                refused.status == 403
                    || refused.status == 422
                    || refused.status == 400
                    || (action == "/admin/signout" && refused.status == 303),
                "{action} with {csrf:?}: {} {}",
                refused.status,
                refused.body
            );
        }
    }
    assert_eq!(acts(&server), before, "no forged form acted");
    // Nothing changed: the gate waits, vic and ann are still signed in,
    // the client is active, the admin role still permits.
    let pending = answer(&server, &demo, "list_pending_approvals", json!({}));
    assert!(pending.to_string().contains(&gate), "{pending}");
    assert_eq!(ann.send(&server, "GET", "/admin", None).status, 200);
    assert_eq!(other.send(&server, "GET", "/admin", None).status, 200);
    let clients = cli(&server, &["client", "list"]);
    assert!(
        oauth::client_line(&clients, &client).contains("active"),
        "{clients}"
    );
    assert_eq!(list_tools(&server, &format!("Bearer {demo}")).status, 200);

    // The sign-in, login and consent forms: each needs its own browser's
    // pending row and token.
    let mut thief = Browser::default();
    let page = thief.send(&server, "GET", "/oauth/signin?return_to=%2Fadmin", None);
    let fields = hidden_fields(&page.body);
    let mut victim = Browser::default();
    let mut form: Vec<(String, String)> = fields.clone();
    form.push(("username".into(), "ann".into()));
    form.push(("password".into(), ann_password.clone()));
    let body = form
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&");
    // The thief's form posted from the victim's browser (no pending cookie).
    let forged = victim.send(&server, "POST", "/oauth/signin", Some(&body));
    assert!(forged.status >= 400, "{} {}", forged.status, forged.body);
    assert!(
        forged.headers.iter().all(|(k, v)| k != "set-cookie"
            || !v.contains("toolhost_session") && !v.contains("toolhost_console")),
        "{:?}",
        forged.headers
    );
    assert_eq!(
        victim.send(&server, "GET", "/admin", None).status,
        303,
        "the victim is not signed in"
    );
}

/// What the console's forms do, as audit rows: (tool, rows).
fn acts(server: &Server) -> Vec<(&'static str, usize)> {
    [
        "decide_approval",
        "decide_checkpoint",
        "decide_plugin_review",
        "rollback_plugin",
        "cancel_exploration",
        "disable_user",
        "forbid_role",
        "revoke_client",
    ]
    .into_iter()
    .map(|tool| {
        let rows = cli(
            server,
            &["audit", "search", "--tool", tool, "--limit", "1000"],
        );
        (tool, rows.lines().skip(1).count())
    })
    .collect()
}

/// X-Frame-Options DENY and a CSP forbidding any frame ancestor.
fn framed_never(page: &Answer, what: &str) {
    assert_eq!(
        page.header("x-frame-options"),
        Some("DENY"),
        "{what}: {:?}",
        page.headers
    );
    assert!(
        page.header("content-security-policy")
            .is_some_and(|c| c.contains("frame-ancestors 'none'")),
        "{what}: {:?}",
        page.headers
    );
}

/// A hostile plugin flooding every host import: each call ends with the
/// typed host-call limit, is audited once, leaves at most its per-call
/// share of checkpoints, and the plugin and the host serve on.
#[test]
fn a_plugin_flooding_each_host_import_is_stopped_and_the_host_serves_on() {
    let server = Server::start(&[T_FLOOD_IMPORTS]);
    let fixture = server.service_token("mcp fixture:run");
    let before = server.verified_rows();
    for import in flood::IMPORTS {
        let started = Instant::now();
        let flooded = call(&server, &fixture, "flood", json!({"import": import}));
        assert_eq!(code(&flooded), "HOST_CALL_LIMIT", "{import}: {flooded}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{import} took {:?}",
            started.elapsed()
        );
        let pong = answer(&server, &fixture, "ping", json!({}));
        assert_eq!(pong["pong"], json!(true), "{import}: {pong}");
    }
    // One row per call (each flood and each ping), and the chain holds.
    assert_eq!(
        server.verified_rows(),
        before + 2 * flood::IMPORTS.len() as u64
    );
    let (health, _) = exchange(&server.url, "GET", "/healthz", &[], "");
    assert_eq!(health, 200);
    // The checkpoint flood opened at most one call's share.
    let demo = user_token(&server, "demo", DEMO_PASSWORD);
    let listed = answer(
        &server,
        &demo,
        "list_checkpoints",
        json!({"filter": {"state": "all"}}),
    );
    let opened = listed["checkpoints"].as_array().map_or(0, Vec::len);
    assert_eq!(opened, CHECKPOINTS_PER_CALL, "{listed}");
}

/// Every test docs/security/threat-model.md names exists: an `e2e_*` one in
/// its file under `tests/`, a crate's anywhere under `host/`.
#[test]
fn the_threat_model_names_only_tests_that_exist() {
    let repo = support::repo();
    let plan = std::fs::read_to_string(repo.join("docs/security/threat-model.md"))
        .expect("the threat model");
    let mut sources = Vec::new();
    let mut dirs = vec![repo.join("host")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a directory").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                sources.push(std::fs::read_to_string(&path).expect("a source file"));
            }
        }
    }
    let names: Vec<&str> = plan
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|n| {
            n.contains("::")
                && n.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == ':')
        })
        .collect();
    assert!(names.len() > 40, "the plan names its tests: {names:?}");
    for name in names {
        let function = name.rsplit("::").next().expect("a function");
        let defined = format!("fn {function}(");
        let found = match name.split("::").next() {
            Some(file) if file.starts_with("e2e_") => {
                let path = repo.join("tests").join(format!("{file}.rs"));
                std::fs::read_to_string(&path).is_ok_and(|s| s.contains(&defined))
            }
            _ => sources.iter().any(|s| s.contains(&defined)),
        };
        assert!(
            found,
            "{name} is named in the threat model but no such test exists"
        );
    }
}
