//! Single sign-on end to end: a real OpenID provider (npm `oidc-provider`,
//! run by tests/e2e/oidc_provider.mjs under the Makefile's Node 22, RSA
//! keys, its own sign-in page) and the real `toolhost serve` configured
//! with `[sso.corp]`. The Python SDK's OAuth client starts from the server
//! URL alone: discovery, registration, then the sign-in, played through
//! both the host's pages and the provider's (tests/e2e/python_sso.py with
//! oauth_browser.py), and `tools/list`. No token is pasted.
//!
//! Then: the provider's group that maps to the `admin` role is removed, and
//! at the next sign-in the role (so every tool) is gone; the logins, the
//! account made on the first sign-in, the link and the role changes are in
//! `toolhost client events` and the audit trail; and with the provider
//! down, the password still signs a person in.
//!
//! Each refusal (audience, expiry, replay, nonce, state, issuer, a disabled
//! user, key rotation) is tested against a provider the test controls, in
//! host/sso/tests/oidc.rs.

mod support;

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use support::oauth::{Browser, REDIRECT, approve, query, register, stdout};
use support::openid::{Provider, account, corp_section};
use support::{DEMO_PASSWORD, Server, Tools};

/// alice's password at the provider; it reaches the script by environment.
const IDP_PASSWORD: &str = "alice-at-the-provider";

/// The provider's one account, alice, in `groups`.
fn accounts(groups: &[&str]) -> serde_json::Value {
    let alice = account(IDP_PASSWORD, "alice-sub-1", "alice@example.com", groups);
    json!({ "alice": alice })
}

/// The host's configuration: provider `corp` ([`corp_section`]).
fn host_config(dir: &std::path::Path, issuer: &str) -> PathBuf {
    let config = dir.join("toolhost.toml");
    fs::write(&config, corp_section(dir, issuer)).expect("write the host config");
    config
}

fn sign_in(tools: &Tools, server: &Server, what: &str, expect: &[&str]) -> String {
    let alice = ("alice", IDP_PASSWORD);
    support::openid::sign_in(tools, server, what, alice, expect)
}

#[test]
fn python_sdk_signs_in_through_the_organisations_openid_provider() {
    let tools = Tools::require();
    let dir = tempfile::tempdir().expect("a temp dir");
    let provider = Provider::start(
        &tools,
        dir.path(),
        &accounts(&["tool-admins", "staff"]),
        false,
    );
    let config = host_config(dir.path(), &provider.issuer);
    let server = Server::start_with(
        &[toolhost_fixtures::HELLO],
        &["--config", config.to_str().expect("utf-8")],
    );

    // First sign-in: alice gets an account in `demo` and, through her
    // group, the admin role: every tool.
    let out = sign_in(
        &tools,
        &server,
        "python SDK, SSO",
        &["--expect-tool", "greet"],
    );
    assert!(out.contains("sign-in through Corp as alice"), "{out}");

    // The group is removed at the provider: at her next sign-in the role goes.
    provider.set_accounts(&accounts(&["staff"]));
    sign_in(
        &tools,
        &server,
        "python SDK, SSO without the group",
        &["--expect-no-tools"],
    );

    // The security events and the audit trail have it all.
    let events = stdout(
        &server.admin(&["client", "events", "--limit", "50"]),
        "client events",
    );
    for kind in ["sso.user.created", "sso.linked", "sso.roles", "sso.login"] {
        assert!(events.contains(kind), "no {kind} in:\n{events}");
    }
    assert!(
        events.contains("+admin") && events.contains("-admin"),
        "{events}"
    );
    let audit = stdout(
        &server.admin(&["audit", "search", "--tool", "sso.login"]),
        "audit search",
    );
    assert_eq!(
        audit.lines().filter(|l| l.contains("sso.login")).count(),
        2,
        "{audit}"
    );
    let verify = server.admin(&["audit", "verify"]);
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );

    // The provider goes down: the password still signs a person in.
    drop(provider);
    let client = register(&server, REDIRECT, "password while the provider is down");
    let location = approve(
        &server,
        &mut Browser::default(),
        &client,
        "demo",
        DEMO_PASSWORD,
    );
    assert!(query(&location, "code").is_some(), "{location}");
}

/// The agent's secret at the provider, and at toolhost.
const AGENT_SECRET: &str = "agent-secret-at-the-provider";

#[test]
fn an_agent_trades_the_providers_identity_assertion_grant_for_a_persons_token() {
    let tools = Tools::require();
    let dir = tempfile::tempdir().expect("a temp dir");
    // The agent is a client of the provider that may use token exchange.
    let agent = json!({
        "client_id": "agent",
        "client_secret": AGENT_SECRET,
        "application_type": "native",
        "grant_types": ["authorization_code", support::openid::TOKEN_EXCHANGE],
        "redirect_uris": ["http://127.0.0.1/callback"],
    });
    let accounts = accounts(&["tool-admins"]);
    let provider = Provider::start_with_clients(&tools, dir.path(), &accounts, true, &[agent]);
    let config = dir.path().join("toolhost.toml");
    let section =
        support::openid::corp_section_with(dir.path(), &provider.issuer, "id_jag = true\n");
    fs::write(&config, section).expect("write the host config");
    let server = Server::start_with(
        &[toolhost_fixtures::HELLO],
        &["--config", config.to_str().expect("utf-8")],
    );
    // alice signed in once: her roles come from her groups at sign-in.
    sign_in(&tools, &server, "alice, SSO", &["--expect-tool", "greet"]);

    // The agent's confidential client at toolhost (RFC 7591).
    let body = json!({
        "redirect_uris": [REDIRECT],
        "client_name": "agent",
        "token_endpoint_auth_method": "client_secret_post",
    });
    let headers = [("Content-Type", "application/json")];
    let (status, answer) = support::exchange(
        &server.url,
        "POST",
        "/oauth/register",
        &headers,
        &body.to_string(),
    );
    assert_eq!(status, 201, "{answer}");
    let client: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
    let (client_id, secret) = (
        client["client_id"].as_str().expect("an id"),
        client["client_secret"].as_str().expect("a secret"),
    );
    provider.trust_host(&server.issuer(), &[]);
    provider.issue_id_jags(&server.issuer(), "agent", client_id);

    let args = [
        server.url.as_str(),
        "--idp",
        &provider.issuer,
        "--agent",
        "agent",
        "--host-client",
        client_id,
        "--username",
        "alice",
    ];
    let mut cmd = tools.python("python_id_jag.py", &args);
    cmd.env("IDP_PASSWORD", IDP_PASSWORD)
        .env("AGENT_SECRET", AGENT_SECRET)
        .env("HOST_CLIENT_SECRET", secret);
    let out = server.run_client("python SDK, ID-JAG", cmd, Duration::from_secs(120));
    assert!(out.contains("greet: Hello, Ada!"), "{out}");
    assert!(out.contains("refused invalid_grant"), "{out}");
    assert_eq!(
        provider
            .log()
            .matches("issued an ID-JAG of alice-sub-1")
            .count(),
        1
    );

    let events = stdout(
        &server.admin(&["client", "events", "--limit", "50"]),
        "client events",
    );
    assert!(events.contains("id_jag.granted"), "{events}");
    assert!(events.contains("id_jag.refused"), "the replay: {events}");
}
