//! OAuth 2.1 happy paths with real clients against the real `toolhost serve`
//! (its own authorization server). Nobody pastes a token: each client starts
//! from the server URL and the demo user's credentials, and signs in and
//! consents through the server's pages with tests/e2e/oauth_browser.py.
//!
//! * the Python SDK's `OAuthClientProvider` (tests/e2e/python_oauth.py):
//!   discovery, dynamic registration, code + PKCE, a refresh (forced in the
//!   SDK, and for real against `--access-token-ttl 3s`), both protocol eras;
//! * the conformance suite's `authorization` scenarios (metadata and the
//!   authorization-code grant) against a client registered by DCR;
//! * the admin's view: `toolhost client list` shows a registered client, and
//!   `toolhost client revoke` stops it and its tokens at once;
//! * a headless workload with no secret: the Python SDK's
//!   `PrivateKeyJWTOAuthProvider` (tests/e2e/python_private_key_jwt.py)
//!   signs assertions with its own key, which the operator registered with
//!   `toolhost client add-service --jwks`; a replayed assertion is refused.
//!
//! The negative cases of the authorization server are in e2e_auth.rs.

mod support;

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::oauth::{client_line, form, query, register, stdout, token};
use support::{DEMO_PASSWORD, Server, TOKEN_ENV, Tools, exchange_full};

/// The environment variable the demo password reaches the scripts through
/// (never their command line).
const PASSWORD_ENV: &str = "TOOLHOST_DEMO_PASSWORD";
/// A redirect URI nobody listens on: the browser stops at the redirect.
const REDIRECT: &str = "http://127.0.0.1:9/callback";
/// RFC 7636 appendix B: a code verifier and its S256 challenge.
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
/// What the conformance suite prints on the line before the authorization URL.
const SUITE_URL_CUE: &str = "Access the following URL";

#[test]
fn python_sdk_oauth_client_connects_with_no_token_pasted() {
    let tools = Tools::require();
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let mut cmd = tools.python("python_oauth.py", &[&server.url]);
    cmd.env(PASSWORD_ENV, DEMO_PASSWORD).env_remove(TOKEN_ENV);
    let out = server.run_client("python SDK OAuth client", cmd, Duration::from_secs(180));
    assert!(
        out.contains("refresh token") && out.contains("2026-07-28"),
        "python_oauth.py left out a step:\n{out}"
    );

    // The SDK registered itself: the admin sees a public DCR client.
    let listed = stdout(&server.admin(&["client", "list"]), "client list");
    let line = listed
        .lines()
        .find(|l| l.contains("toolhost-e2e-python-oauth"))
        .unwrap_or_else(|| panic!("the SDK's client is not listed:\n{listed}"));
    assert!(line.contains("dcr") && line.contains("public"), "{line}");
}

#[test]
fn a_workload_authenticates_with_private_key_jwt_through_the_python_sdk() {
    let tools = Tools::require();
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let keys = server.scratch("workload-key");
    let keys = keys.to_str().expect("a UTF-8 path");
    let keygen = tools.python("python_private_key_jwt.py", &["keygen", keys]);
    server.run_client("workload keygen", keygen, Duration::from_secs(60));

    let jwks = format!("{keys}/jwk.json");
    let added = stdout(
        &server.admin(&[
            "client",
            "add-service",
            "ci-workload",
            "--tenant",
            "demo",
            "--scope",
            "mcp hello:read",
            "--jwks",
            &jwks,
        ]),
        "client add-service --jwks",
    );
    assert!(
        added.contains("private_key_jwt") && !added.contains("client_secret"),
        "{added}"
    );
    let client_id = added
        .lines()
        .find_map(|l| l.strip_prefix("client_id:"))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no client_id in: {added}"))
        .to_owned();

    let key = format!("{keys}/key.pem");
    let issuer = server.issuer();
    let cmd = tools.python(
        "python_private_key_jwt.py",
        &[&server.url, &issuer, &client_id, &key],
    );
    let out = server.run_client("python SDK private_key_jwt", cmd, Duration::from_secs(120));
    assert!(
        out.contains("greet answered Hello, Ada!") && out.contains("invalid_client (used before)"),
        "python_private_key_jwt.py left out a step:\n{out}"
    );
    let events = stdout(&server.admin(&["client", "events"]), "client events");
    assert!(
        events
            .lines()
            .any(|l| l.contains("client.assertion.refused") && l.contains(&client_id)),
        "the replay is not an event:\n{events}"
    );
}

#[test]
fn python_sdk_oauth_client_refreshes_when_the_server_expires_its_token() {
    let tools = Tools::require();
    let server = Server::start_with(&[toolhost_fixtures::HELLO], &["--access-token-ttl", "3s"]);
    let mut cmd = tools.python("python_oauth.py", &[&server.url, "--expiry", "natural"]);
    cmd.env(PASSWORD_ENV, DEMO_PASSWORD).env_remove(TOKEN_ENV);
    let out = server.run_client(
        "python SDK OAuth client, natural expiry",
        cmd,
        Duration::from_secs(180),
    );
    assert!(
        out.contains("the server then refused the old token"),
        "python_oauth.py did not wait the token out:\n{out}"
    );
}

#[test]
fn conformance_authorization_server_scenarios_pass() {
    let tools = Tools::require();
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let issuer = server.issuer();
    let port = free_port();
    let client_id = register(
        &server,
        &format!("http://127.0.0.1:{port}/callback"),
        "conformance suite",
    );
    let out_dir = server.scratch("conformance-authorization");
    let port_arg = port.to_string();
    let resource = format!("{issuer}/mcp");
    let mut cmd = tools.node(
        "node_modules/@modelcontextprotocol/conformance/dist/index.js",
        &[
            "authorization",
            "--url",
            &issuer,
            "--client-id",
            &client_id,
            "--resource",
            &resource,
            "-p",
            &port_arg,
            "-o",
        ],
    );
    cmd.arg(&out_dir);
    let mut suite = Suite::spawn(cmd);

    // The suite prints the authorization URL, then waits for its callback.
    let url = suite.line_after(SUITE_URL_CUE, Duration::from_secs(120));
    let Some(url) = url else {
        suite.fail(&server, "printed no authorization URL");
    };
    if !wait_listening(port, Duration::from_secs(30)) {
        suite.fail(&server, &format!("never listened on 127.0.0.1:{port}"));
    }
    let mut browser = tools.python(
        "oauth_browser.py",
        &[
            "--url",
            url.trim(),
            "--username",
            "demo",
            "--password-env",
            PASSWORD_ENV,
            "--follow-final",
        ],
    );
    browser.env(PASSWORD_ENV, DEMO_PASSWORD);
    let signed_in = support::run(&mut browser, Duration::from_secs(60));
    if !signed_in.ok() {
        suite.fail(
            &server,
            &format!(
                "could not be signed in to: oauth_browser.py {}\n{}{}",
                signed_in.verdict(),
                signed_in.stdout,
                signed_in.stderr
            ),
        );
    }

    let Some(status) = suite.wait(Duration::from_secs(120)) else {
        suite.fail(&server, "did not finish within 120 s of the callback");
    };
    let output = suite.output();
    if !status.success() {
        suite.fail(&server, &format!("exited {status}"));
    }
    // Exit 0 also covers SKIPPED: both scenarios must have passed checks.
    for scenario in [
        "authorization-server-metadata-endpoint",
        "authorization-code-grant",
    ] {
        let line = output
            .lines()
            .find(|l| l.contains(&format!("{scenario}:")) && l.contains("passed"));
        let passed = line.is_some_and(|l| l.contains(" 0 failed") && !l.contains(" 0 passed"));
        if !passed {
            suite.fail(&server, &format!("did not pass {scenario}: {line:?}"));
        }
    }
    println!("conformance authorization ({issuer}):\n{output}");
}

#[test]
fn registered_clients_are_listed_for_admins() {
    let tools = Tools::require();
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let client_id = register(&server, REDIRECT, "e2e admin listing");

    let listed = stdout(&server.admin(&["client", "list"]), "client list");
    let line = client_line(&listed, &client_id);
    for want in ["dcr", "public", REDIRECT, "active"] {
        assert!(
            line.contains(want),
            "`client list` shows no {want:?} for {client_id}:\n{listed}"
        );
    }

    // A grant for it: signed in and consented in the "browser".
    let tokens = sign_in_and_redeem(&tools, &server, &client_id);
    let access = tokens["access_token"].as_str().expect("an access_token");
    let refresh = tokens["refresh_token"].as_str().expect("a refresh_token");
    assert_eq!(initialize(&server, access).status, 200, "the fresh token");

    let revoked = stdout(
        &server.admin(&["client", "revoke", &client_id]),
        "client revoke",
    );
    println!("client revoke: {}", revoked.trim());
    let listed = stdout(&server.admin(&["client", "list"]), "client list");
    assert!(
        client_line(&listed, &client_id).contains("revoked"),
        "`client list` does not show {client_id} revoked:\n{listed}"
    );

    // The client can get nothing more, and what it has stops working.
    let (status, body) = token(
        &server,
        &form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
            ("client_id", &client_id),
        ]),
    );
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client")),
        "refresh for a revoked client: {body}"
    );
    let (status, body) = token(
        &server,
        &form(&[
            ("grant_type", "authorization_code"),
            ("code", "no-such-code"),
            ("redirect_uri", REDIRECT),
            ("client_id", &client_id),
            ("code_verifier", VERIFIER),
        ]),
    );
    assert_eq!(
        body["error"].as_str(),
        Some("invalid_client"),
        "a code grant for a revoked client ({status}): {body}"
    );
    support::eventually("the revoked client's access token refused at /mcp", || {
        initialize(&server, access).status == 401
    });
    let refused = initialize(&server, access);
    assert_eq!(
        refused.status, 401,
        "the revoked client's access token still opens /mcp: {}",
        refused.body
    );
    let challenge = refused.header("www-authenticate").unwrap_or_default();
    assert!(challenge.contains("invalid_token"), "{challenge}");
}

/// A port nobody listens on now (bound, then released).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("a local address").port()
}

/// Whether something accepts connections on 127.0.0.1:`port` within `timeout`.
fn wait_listening(port: u16, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        thread::sleep(Duration::from_millis(100));
    }
    false
}

/// Signs the demo user in for `client_id` with oauth_browser.py and redeems
/// the code; the token response.
fn sign_in_and_redeem(tools: &Tools, server: &Server, client_id: &str) -> Value {
    let issuer = server.issuer();
    let resource = format!("{issuer}/mcp");
    let url = format!(
        "{issuer}/oauth/authorize?{}",
        form(&[
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", REDIRECT),
            ("state", "e2e-state"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
            ("resource", &resource),
        ])
    );
    let mut browser = tools.python(
        "oauth_browser.py",
        &[
            "--url",
            &url,
            "--username",
            "demo",
            "--password-env",
            PASSWORD_ENV,
        ],
    );
    browser.env(PASSWORD_ENV, DEMO_PASSWORD);
    let location = server.run_client("oauth_browser.py", browser, Duration::from_secs(60));
    let location = location.trim();
    assert!(
        location.starts_with(&format!("{REDIRECT}?")),
        "not redirected to {REDIRECT}: {location}"
    );
    assert_eq!(query(location, "state").as_deref(), Some("e2e-state"));
    assert_eq!(query(location, "iss"), Some(issuer));
    let code = query(location, "code").expect("a code in the redirect");
    let (status, tokens) = token(
        server,
        &form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", client_id),
            ("code_verifier", VERIFIER),
            ("resource", &resource),
        ]),
    );
    assert_eq!(status, 200, "code exchange: {tokens}");
    tokens
}

/// A session-era `initialize` on /mcp with `access_token`.
fn initialize(server: &Server, access_token: &str) -> support::Answer {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e-oauth","version":"0"}}}"#;
    let authorization = format!("Bearer {access_token}");
    exchange_full(
        &server.url,
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Authorization", &authorization),
        ],
        body,
    )
}

/// The conformance suite running as a child: stdout read line by line on a
/// thread (so it can be watched for the URL), stderr into a file. Killed
/// when dropped.
struct Suite {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    stderr: tempfile::NamedTempFile,
}

impl Suite {
    fn spawn(mut cmd: std::process::Command) -> Suite {
        let stderr = tempfile::NamedTempFile::new().expect("a temp file");
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr.reopen().expect("reopen the temp file"))
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Suite {
            child,
            lines,
            seen: Vec::new(),
            stderr,
        }
    }

    /// The line after the first one containing `cue`, within `timeout`.
    fn line_after(&mut self, cue: &str, timeout: Duration) -> Option<String> {
        let deadline = Instant::now() + timeout;
        let mut cued = false;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).ok()?;
            self.seen.push(line.clone());
            if cued && !line.trim().is_empty() {
                return Some(line);
            }
            cued |= line.contains(cue);
        }
    }

    /// Its exit status, if it ends within `timeout`; its stdout is read to
    /// the end first.
    fn wait(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => return None,
            }
        }
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// Its stdout so far.
    fn output(&self) -> String {
        self.seen.join("\n")
    }

    /// Panics with the suite's output and the server's log.
    fn fail(&mut self, server: &Server, why: &str) -> ! {
        let _ = self.child.kill();
        let _ = self.child.wait();
        while let Ok(line) = self.lines.try_recv() {
            self.seen.push(line);
        }
        let stderr = std::fs::read_to_string(self.stderr.path()).unwrap_or_default();
        panic!(
            "the conformance suite (authorization) {why}.\n--- stdout\n{}\n--- stderr\n{stderr}\n\
             --- toolhost serve ({}) log\n{}",
            self.output(),
            server.state(),
            server.log()
        );
    }
}

impl Drop for Suite {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
