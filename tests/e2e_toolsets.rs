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

/// Prompts and resources follow their plugin into or out of a toolset: a
/// client bound to a toolset of `hello`'s `greet` lists none of the
/// conformance plugin's, and getting or reading one answers as for one
/// that does not exist; bound to a toolset taking that plugin whole, the
/// same client lists and gets them.
#[test]
fn prompts_and_resources_follow_their_plugin_into_and_out_of_a_toolset() {
    use support::bench::{get_prompt, listed_extras, read_resource};
    let server = Server::start(&[toolhost_fixtures::HELLO, toolhost_fixtures::CONFORMANCE]);
    for (name, flag, value) in [
        ("greeting", "--tool", "greet"),
        ("conformance", "--plugin", "conformance"),
    ] {
        let out = server.admin(&["toolset", "define", name, "--tenant", "demo", flag, value]);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{said}");
    }
    let url = server.url.as_str();
    let scopes = "mcp hello:read conformance:run";
    let outside = server.service_token(&format!("{scopes} toolset:greeting"));
    let inside = server.service_token(&format!("{scopes} toolset:conformance"));
    let [prompts, resources, _] = listed_extras(url, &inside);
    assert!(prompts >= 5 && resources >= 2, "{prompts} {resources}");
    assert_eq!(listed_extras(url, &outside), [0, 0, 0]);

    let hidden = get_prompt(url, &outside, "test_simple_prompt");
    let missing = get_prompt(url, &outside, "no_such_prompt");
    assert!(hidden.contains("PROMPT_NOT_FOUND"), "{hidden}");
    assert_eq!(
        hidden.replace("test_simple_prompt", "X"),
        missing.replace("no_such_prompt", "X"),
        "a prompt outside the toolset gets a missing one's words"
    );
    assert!(get_prompt(url, &inside, "test_simple_prompt").contains("simple prompt for testing"));

    let hidden = read_resource(url, &outside, "test://static-text");
    let missing = read_resource(url, &outside, "test://no-such-resource");
    assert_eq!(
        hidden.replace("static-text", "X"),
        missing.replace("no-such-resource", "X"),
        "a resource outside the toolset reads as a missing one"
    );
    assert!(!read_resource(url, &inside, "test://static-text").contains("not found"));
}
