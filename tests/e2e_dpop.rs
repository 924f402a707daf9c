//! DPoP (RFC 9449) against the real `toolhost serve`: a client that sends
//! a proof to the token endpoint gets a token bound to its key, and that
//! token is taken at `/mcp` only with a fresh proof by the same key for
//! that very request, in both protocol eras; a stolen copy alone is
//! refused, and so is a proof replayed, on this replica or another.
//!
//! The client's proofs are made as a client library makes them: a real
//! Ed25519 key, signed by jsonwebtoken (`toolhost_auth::dpop::client`).
//! One test drives a maintained OAuth client library instead, panva's
//! oauth4webapi (tests/e2e/dpop_client.mjs), with its own ES256 key.

mod support;

use serde_json::{Value, json};
use support::oauth::{REDIRECT, VERIFIER, code, encode, form, json, register};
use support::{Answer, PgSchema, Server, Tools, exchange_full};
use toolhost_auth::dpop::client::Prover;

/// A token request of `body` with `proofs` as its `DPoP` headers.
fn token_request(server: &Server, body: &str, proofs: &[&str]) -> (u16, Value) {
    let mut headers = vec![("Content-Type", "application/x-www-form-urlencoded")];
    headers.extend(proofs.iter().map(|p| ("DPoP", *p)));
    let answer = exchange_full(&server.url, "POST", "/oauth/token", &headers, body);
    (answer.status, json(&answer.body))
}

/// A proof by `prover` for a token request to `server`, made now.
fn token_proof(server: &Server, prover: &Prover) -> String {
    let url = format!("{}/oauth/token", server.issuer());
    prover.proof("POST", &url, now(), None)
}

/// A proof by `prover` for a request to `/mcp` of `server` carrying `token`.
fn mcp_proof(server: &Server, prover: &Prover, token: &str) -> String {
    let url = format!("{}/mcp", server.issuer());
    prover.proof("POST", &url, now(), Some(token))
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
        .try_into()
        .expect("fits")
}

/// A service client of tenant demo and a DPoP-bound token for it.
fn bound_service_token(server: &Server, prover: &Prover) -> String {
    let (id, secret) = server.add_service("demo", "mcp hello:read");
    let body = form(&[
        ("grant_type", "client_credentials"),
        ("client_id", &id),
        ("client_secret", &secret),
    ]);
    let (status, answer) = token_request(server, &body, &[&token_proof(server, prover)]);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["token_type"], "DPoP", "{answer}");
    let token = answer["access_token"].as_str().expect("an access token");
    assert_eq!(
        cnf_jkt(token),
        Some(prover.jkt()),
        "bound to the proof's key"
    );
    token.to_owned()
}

/// The `cnf.jkt` claim of an access token.
fn cnf_jkt(token: &str) -> Option<String> {
    use base64::Engine as _;
    let payload = token.split('.').nth(1).expect("a JWT");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .expect("base64url");
    let claims: Value = serde_json::from_slice(&bytes).expect("JSON claims");
    claims["cnf"]["jkt"].as_str().map(str::to_owned)
}

/// A stateless (2026-07-28) `tools/list` with `authorization` and `proofs`.
fn list_tools(server: &Server, authorization: &str, proofs: &[&str]) -> Answer {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
        ("Authorization", authorization),
    ];
    headers.extend(proofs.iter().map(|p| ("DPoP", *p)));
    exchange_full(&server.url, "POST", "/mcp", &headers, &body.to_string())
}

/// A legacy (2025-11-25) request in `session` (or opening one).
fn legacy(
    server: &Server,
    authorization: &str,
    proof: &str,
    session: Option<&str>,
    body: &Value,
) -> Answer {
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", authorization),
        ("DPoP", proof),
    ];
    if let Some(id) = session {
        headers.push(("Mcp-Session-Id", id));
        headers.push(("MCP-Protocol-Version", "2025-11-25"));
    }
    exchange_full(&server.url, "POST", "/mcp", &headers, &body.to_string())
}

/// Asserts a refusal at `/mcp` under the DPoP scheme with `error`.
fn assert_refused(answer: &Answer, error: &str, what: &str) {
    assert_eq!(answer.status, 401, "{what}: {}", answer.body);
    let challenge = answer.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.starts_with("DPoP ")
            && challenge.contains(&format!("error=\"{error}\""))
            && challenge.contains("algs=\"ES256 EdDSA\""),
        "{what}: {challenge}"
    );
}

#[test]
fn a_bound_token_works_only_with_a_fresh_proof_by_its_key_in_both_eras() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let prover = Prover::generate();
    let token = bound_service_token(&server, &prover);
    let dpop = format!("DPoP {token}");

    // The stateless era: one proof per request.
    let ok = list_tools(&server, &dpop, &[&mcp_proof(&server, &prover, &token)]);
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert!(ok.body.contains("greet"), "{}", ok.body);

    // The legacy era: the handshake and the listing, each with its own proof.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "e2e-dpop", "version": "1"}}});
    let opened = legacy(
        &server,
        &dpop,
        &mcp_proof(&server, &prover, &token),
        None,
        &init,
    );
    let session = opened
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("a session: {} {}", opened.status, opened.body))
        .to_owned();
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let proof = mcp_proof(&server, &prover, &token);
    assert_eq!(
        legacy(&server, &dpop, &proof, Some(&session), &done).status,
        202
    );
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let proof = mcp_proof(&server, &prover, &token);
    let listed = legacy(&server, &dpop, &proof, Some(&session), &list);
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert!(listed.body.contains("greet"), "{}", listed.body);

    // A proof is good once: the legacy era's spent one, replayed, is refused.
    let again = legacy(&server, &dpop, &proof, Some(&session), &list);
    assert_refused(&again, "invalid_dpop_proof", "a replayed proof");

    // An unbound token keeps working as Bearer beside it.
    let bearer = list_tools(&server, server.bearer(), &[]);
    assert_eq!(bearer.status, 200, "{}", bearer.body);
}

#[test]
fn a_stolen_bound_token_is_refused_without_the_right_proof() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let prover = Prover::generate();
    let token = bound_service_token(&server, &prover);
    let dpop = format!("DPoP {token}");
    let thief = Prover::generate();
    let issuer = server.issuer();

    let cases: Vec<(&str, String, Vec<String>, &str)> = vec![
        ("no proof", dpop.clone(), vec![], "invalid_dpop_proof"),
        (
            "as Bearer",
            format!("Bearer {token}"),
            vec![],
            "invalid_token",
        ),
        (
            "as Bearer, with a proof",
            format!("Bearer {token}"),
            vec![mcp_proof(&server, &prover, &token)],
            "invalid_token",
        ),
        (
            "another key's proof",
            dpop.clone(),
            vec![mcp_proof(&server, &thief, &token)],
            "invalid_dpop_proof",
        ),
        (
            "a proof for another URL",
            dpop.clone(),
            vec![prover.proof(
                "POST",
                &format!("{issuer}/oauth/token"),
                now(),
                Some(&token),
            )],
            "invalid_dpop_proof",
        ),
        (
            "a proof for another method",
            dpop.clone(),
            vec![prover.proof("GET", &format!("{issuer}/mcp"), now(), Some(&token))],
            "invalid_dpop_proof",
        ),
        (
            "a proof for another token",
            dpop.clone(),
            vec![mcp_proof(&server, &prover, "another.access.token")],
            "invalid_dpop_proof",
        ),
        (
            "two proofs",
            dpop.clone(),
            vec![
                mcp_proof(&server, &prover, &token),
                mcp_proof(&server, &prover, &token),
            ],
            "invalid_dpop_proof",
        ),
    ];
    for (what, authorization, proofs, error) in cases {
        let proofs: Vec<&str> = proofs.iter().map(String::as_str).collect();
        assert_refused(&list_tools(&server, &authorization, &proofs), error, what);
    }
    // The owner, with a fresh proof, is still served.
    let ok = list_tools(&server, &dpop, &[&mcp_proof(&server, &prover, &token)]);
    assert_eq!(ok.status, 200, "{}", ok.body);
}

#[test]
fn a_proof_spent_at_one_replica_is_refused_at_the_other() {
    let schema = PgSchema::create("dpop_replay");
    // Two replicas of one host, as behind a balancer: one public URL (the
    // issuer, and the URL proofs name), one store.
    let public = ["--public-url", "http://127.0.0.1:9"];
    let a = Server::start_on(&[toolhost_fixtures::HELLO], &public, Some(&schema.url));
    let b = Server::start_on(&[toolhost_fixtures::HELLO], &public, Some(&schema.url));
    assert_eq!(a.issuer(), b.issuer());
    let prover = Prover::generate();
    let token = bound_service_token(&a, &prover);
    let dpop = format!("DPoP {token}");
    let proof = mcp_proof(&a, &prover, &token);
    let at_a = list_tools(&a, &dpop, &[&proof]);
    assert_eq!(at_a.status, 200, "{}", at_a.body);
    assert_refused(
        &list_tools(&b, &dpop, &[&proof]),
        "invalid_dpop_proof",
        "replayed at b",
    );
    assert_refused(
        &list_tools(&a, &dpop, &[&proof]),
        "invalid_dpop_proof",
        "replayed at a",
    );
    // A fresh proof is served by either.
    let fresh = list_tools(&b, &dpop, &[&mcp_proof(&b, &prover, &token)]);
    assert_eq!(fresh.status, 200, "{}", fresh.body);
}

#[test]
fn a_public_clients_refresh_token_is_bound_to_its_dpop_key() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let prover = Prover::generate();
    let client = register(&server, REDIRECT, "e2e-dpop");
    let code = code(&server, &client);
    let redeem = format!(
        "grant_type=authorization_code&client_id={}&code={code}&redirect_uri={}&code_verifier={VERIFIER}",
        encode(&client),
        encode(REDIRECT)
    );
    let (status, tokens) = token_request(&server, &redeem, &[&token_proof(&server, &prover)]);
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["token_type"], "DPoP");
    let refresh_token = tokens["refresh_token"].as_str().expect("a refresh token");
    let refresh = form(&[
        ("grant_type", "refresh_token"),
        ("client_id", &client),
        ("refresh_token", refresh_token),
    ]);

    // Without a proof, or with another key's, the refresh token is refused
    // (and not spent).
    let (status, answer) = token_request(&server, &refresh, &[]);
    assert_eq!(
        (status, &answer["error"]),
        (400, &json!("invalid_dpop_proof")),
        "{answer}"
    );
    let thief = Prover::generate();
    let (status, answer) = token_request(&server, &refresh, &[&token_proof(&server, &thief)]);
    assert_eq!(
        (status, &answer["error"]),
        (400, &json!("invalid_dpop_proof")),
        "{answer}"
    );

    // With a proof by its key: a new bound pair.
    let (status, next) = token_request(&server, &refresh, &[&token_proof(&server, &prover)]);
    assert_eq!(status, 200, "{next}");
    assert_eq!(next["token_type"], "DPoP");
    let access = next["access_token"].as_str().expect("an access token");
    assert_eq!(cnf_jkt(access), Some(prover.jkt()));
}

#[test]
fn a_code_bound_to_a_dpop_key_is_redeemed_only_with_a_proof_by_it() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let prover = Prover::generate();
    let client = register(&server, REDIRECT, "e2e-dpop-jkt");
    // RFC 9449 §10: the authorization request names the key's thumbprint.
    let bound_code = || {
        let extra = format!("&dpop_jkt={}", prover.jkt());
        let demo = ("demo", support::DEMO_PASSWORD);
        let mut browser = support::oauth::Browser::default();
        let location = support::oauth::approve_with(&server, &mut browser, &client, demo, &extra);
        support::oauth::query(&location, "code").unwrap_or_else(|| panic!("a code: {location}"))
    };
    let redeem = |code: &str| {
        format!(
            "grant_type=authorization_code&client_id={}&code={code}&redirect_uri={}&code_verifier={VERIFIER}",
            encode(&client),
            encode(REDIRECT)
        )
    };
    // No proof, or another key's: refused, and the code is spent.
    let thief = Prover::generate();
    for proofs in [vec![], vec![token_proof(&server, &thief)]] {
        let code = bound_code();
        let proofs: Vec<&str> = proofs.iter().map(String::as_str).collect();
        let (status, answer) = token_request(&server, &redeem(&code), &proofs);
        assert_eq!(
            (status, &answer["error"]),
            (400, &json!("invalid_dpop_proof")),
            "{answer}"
        );
        let mine = token_request(&server, &redeem(&code), &[&token_proof(&server, &prover)]);
        assert_eq!(
            (mine.0, &mine.1["error"]),
            (400, &json!("invalid_grant")),
            "spent: {}",
            mine.1
        );
    }
    // A proof by the named key: a token bound to it.
    let code = bound_code();
    let (status, tokens) =
        token_request(&server, &redeem(&code), &[&token_proof(&server, &prover)]);
    assert_eq!(status, 200, "{tokens}");
    let access = tokens["access_token"].as_str().expect("an access token");
    assert_eq!(cnf_jkt(access), Some(prover.jkt()));
    // A thumbprint that is none is refused at the authorization endpoint.
    let path = support::oauth::authorize_path(&client, "&dpop_jkt=not-a-thumbprint");
    let page = support::oauth::Browser::default().send(&server, "GET", &path, None);
    let location = page.header("location").unwrap_or_default().to_owned();
    assert!(
        location.contains("error=invalid_request") || page.status == 400,
        "{} {location} {}",
        page.status,
        page.body
    );
}

#[test]
fn the_token_endpoint_refuses_a_bad_proof_and_metadata_names_the_algorithms() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let (id, secret) = server.add_service("demo", "mcp");
    let body = form(&[
        ("grant_type", "client_credentials"),
        ("client_id", &id),
        ("client_secret", &secret),
    ]);
    let prover = Prover::generate();
    let elsewhere = prover.proof("POST", &format!("{}/mcp", server.issuer()), now(), None);
    let stale = prover.proof(
        "POST",
        &format!("{}/oauth/token", server.issuer()),
        now() - 3600,
        None,
    );
    for (what, proof) in [
        ("another URL", elsewhere),
        ("stale", stale),
        ("not a JWT", "x".into()),
    ] {
        let (status, answer) = token_request(&server, &body, &[&proof]);
        assert_eq!(
            (status, &answer["error"]),
            (400, &json!("invalid_dpop_proof")),
            "{what}: {answer}"
        );
    }
    // Without a proof, a bearer token as before.
    let (status, answer) = token_request(&server, &body, &[]);
    assert_eq!(
        (status, &answer["token_type"]),
        (200, &json!("Bearer")),
        "{answer}"
    );

    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let answer = exchange_full(&server.url, "GET", path, &[], "");
        assert_eq!(answer.status, 200, "{path}");
        assert_eq!(
            json(&answer.body)["dpop_signing_alg_values_supported"],
            json!(["ES256", "EdDSA"]),
            "{path}"
        );
    }
}

#[test]
fn a_tenant_that_requires_dpop_gets_no_token_without_a_proof() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let (id, secret) = server.add_service("demo", "mcp");
    let out = server.admin(&["tenant", "dpop", "demo", "required"]);
    assert!(out.status.success(), "{out:?}");
    let body = form(&[
        ("grant_type", "client_credentials"),
        ("client_id", &id),
        ("client_secret", &secret),
    ]);
    let (status, answer) = token_request(&server, &body, &[]);
    assert_eq!(
        (status, &answer["error"]),
        (400, &json!("invalid_dpop_proof")),
        "{answer}"
    );
    let prover = Prover::generate();
    let (status, answer) = token_request(&server, &body, &[&token_proof(&server, &prover)]);
    assert_eq!(
        (status, &answer["token_type"]),
        (200, &json!("DPoP")),
        "{answer}"
    );

    // Back to optional: a bearer token again.
    let out = server.admin(&["tenant", "dpop", "demo", "optional"]);
    assert!(out.status.success(), "{out:?}");
    let (status, answer) = token_request(&server, &body, &[]);
    assert_eq!(
        (status, &answer["token_type"]),
        (200, &json!("Bearer")),
        "{answer}"
    );
    let unknown = server.admin(&["tenant", "dpop", "nobody", "required"]);
    assert!(!unknown.status.success(), "an unknown tenant is refused");
}

#[test]
fn a_maintained_oauth_library_gets_and_uses_a_dpop_bound_token() {
    let tools = Tools::require();
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    let (id, secret) = server.add_service("demo", "mcp hello:read");
    let cmd = tools.node("dpop_client.mjs", &[&server.issuer(), &id, &secret]);
    let out = server.run_client(
        "oauth4webapi DPoP client",
        cmd,
        std::time::Duration::from_secs(60),
    );
    assert!(
        out.contains("Hello, Ada!") && out.contains("without a proof is 401"),
        "dpop_client.mjs left out a step:\n{out}"
    );
}
