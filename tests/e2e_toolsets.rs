//! Toolsets end to end: the real `toolhost serve` with catalog-300 (300
//! tools), a toolset defined with `toolhost toolset define`, and the
//! Python MCP SDK (tests/e2e/python_toolsets.py) holding a token allowed
//! every tool. Bound by the scope `toolset:NAME`, or reaching the
//! toolset's endpoint `/mcp/toolsets/NAME` with an unbound token, the
//! client lists only the toolset's tools, calls outside it are not found
//! (as a tool no catalog has), and no search or description names a tool
//! outside. A session opened at the endpoint is no session at `/mcp`; a
//! deleted toolset leaves its bound clients nothing.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::sessions::{open_session_at, tools_list_at};
use support::{Server, Tools, exchange_full};

const CATALOG_300: [toolhost_fixtures::Fixture; 2] = [
    toolhost_fixtures::CATALOG_300_A,
    toolhost_fixtures::CATALOG_300_B,
];

/// Every domain of catalog-300, read and write.
const SCOPES: &str = "mcp crm:* billing:* helpdesk:* hr:* inventory:* shipping:* calendar:* \
                      docs:* devops:* analytics:* marketing:* security:* finance:* legal:* projects:*";

/// Every tool tagged `billing`, and `crm_get_contact`, less one.
fn define_support_desk(server: &Server) {
    let out = server.admin(&[
        "toolset",
        "define",
        "support-desk",
        "--tenant",
        "demo",
        "--tag",
        "billing",
        "--tool",
        "crm_get_contact",
        "--exclude",
        "billing_delete_invoice",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_client_bound_by_scope_reaches_only_its_toolset_and_searches_name_nothing_outside() {
    let tools = Tools::require();
    let server = Server::start(&CATALOG_300);
    define_support_desk(&server);
    let token = server.service_token(&format!("{SCOPES} toolset:support-desk"));
    let cmd = tools.python("python_toolsets.py", &[&server.url]);
    server.run_client_as(
        "python toolsets (scope)",
        cmd,
        Duration::from_secs(120),
        &token,
    );
    // A call outside the toolset wrote its row, as every call does.
    let out = server.admin(&["audit", "search", "--tool", "crm_delete_contact"]);
    let rows = String::from_utf8_lossy(&out.stdout);
    assert!(rows.contains("TOOL_NOT_FOUND"), "{rows}");
}

#[test]
fn the_toolsets_endpoint_narrows_an_unbound_token_and_keeps_its_sessions() {
    let tools = Tools::require();
    let server = Server::start(&CATALOG_300);
    define_support_desk(&server);
    let token = server.service_token(SCOPES);
    let endpoint = format!("{}/toolsets/support-desk", server.url);
    let cmd = tools.python("python_toolsets.py", &[&endpoint]);
    server.run_client_as(
        "python toolsets (endpoint)",
        cmd,
        Duration::from_secs(120),
        &token,
    );

    // Its metadata names the endpoint as the resource (RFC 9728 §3.3).
    let base = server.url.trim_end_matches("/mcp");
    let meta = exchange_full(
        base,
        "GET",
        "/.well-known/oauth-protected-resource/mcp/toolsets/support-desk",
        &[],
        "",
    );
    let meta: Value = serde_json::from_str(&meta.body).expect("metadata is JSON");
    assert_eq!(meta["resource"], json!(endpoint));

    // A session opened at the endpoint is no session at /mcp, nor at
    // another toolset's endpoint.
    let bearer = format!("Bearer {token}");
    let session = open_session_at(base, "/mcp/toolsets/support-desk", &bearer).expect("a session");
    for elsewhere in ["/mcp", "/mcp/toolsets/other"] {
        let answer = tools_list_at(base, elsewhere, &bearer, &session);
        assert_eq!(answer.status, 404, "{elsewhere}: {}", answer.body);
    }
    let here = tools_list_at(base, "/mcp/toolsets/support-desk", &bearer, &session);
    assert_eq!(here.status, 200, "{}", here.body);
    assert!(here.body.contains("crm_get_contact") && !here.body.contains("crm_delete_contact"));

    // An endpoint of a toolset the tenant does not define reaches nothing.
    let nowhere = open_session_at(base, "/mcp/toolsets/nowhere", &bearer).expect("a session");
    let listed = tools_list_at(base, "/mcp/toolsets/nowhere", &bearer, &nowhere);
    assert!(
        !listed.body.contains("crm_") && !listed.body.contains("billing_"),
        "{}",
        listed.body
    );

    // A name no toolset can have is no endpoint, for any caller: 404
    // before the token is looked at.
    for malformed in [
        "/mcp/toolsets/Support",
        "/mcp/toolsets/a_b",
        "/mcp/toolsets/",
    ] {
        for bearer in [bearer.as_str(), "Bearer not-a-token"] {
            let answer = tools_list_at(base, malformed, bearer, &nowhere);
            assert_eq!(answer.status, 404, "{malformed}: {}", answer.body);
        }
    }
}

#[test]
fn a_deleted_toolset_leaves_its_bound_clients_nothing() {
    let server = Server::start(&CATALOG_300);
    define_support_desk(&server);
    let token = server.service_token(&format!("{SCOPES} toolset:support-desk"));
    let bearer = format!("Bearer {token}");
    let base = server.url.trim_end_matches("/mcp");
    let session = open_session_at(base, "/mcp", &bearer).expect("a session");
    assert!(
        tools_list_at(base, "/mcp", &bearer, &session)
            .body
            .contains("crm_get_contact")
    );
    let out = server.admin(&["toolset", "delete", "support-desk", "--tenant", "demo"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = tools_list_at(base, "/mcp", &bearer, &session);
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert!(
        !listed.body.contains("crm_") && !listed.body.contains("billing_"),
        "{}",
        listed.body
    );
}
