//! RBAC and tenancy end to end: one table of (principal, tool) decides both
//! what `tools/list` shows and how each call ends, so list and call can
//! never drift; roles change the next request with the same token; service
//! principals see their scopes' tools; denials are audited.

mod support;

use std::collections::BTreeSet;

use serde_json::{Value, json};
use support::oauth::{json, user_token};
use support::{Server, Tools, exchange};

/// The catalog: `hello:read` (greet, add, word_stats), `fixture:run` (now,
/// ping), `conformance:run` (test_simple_text and six more).
fn catalog() -> [toolhost_fixtures::Fixture; 3] {
    [
        toolhost_fixtures::HELLO,
        toolhost_fixtures::T_ESCAPE_CLOCK,
        toolhost_fixtures::CONFORMANCE,
    ]
}

/// Tools called in the matrix, with arguments, and the permission each needs.
const PROBES: &[(&str, &str, &str)] = &[
    ("greet", r#"{"name":"Ada"}"#, "hello:read"),
    ("ping", "{}", "fixture:run"),
    ("test_simple_text", "{}", "conformance:run"),
];

/// Who is who: (username, tenant, role). Roles per tenant: admin (an admin
/// role), analyst (hello:read, fixture:run), viewer (hello:read).
const PEOPLE: &[(&str, &str, &str)] = &[
    ("ann", "acme", "admin"),
    ("al", "acme", "analyst"),
    ("vic", "acme", "viewer"),
    ("gus", "globex", "analyst"),
    ("gwen", "globex", "viewer"),
    ("nora", "globex", ""),
];

/// The one table: may a holder of `role` use a tool needing `permission`?
/// (acme and globex are not the operator tenant: an admin role of theirs
/// allows everything but the catalog's decisions, which are demo's.)
fn permitted(role: &str, permission: &str) -> bool {
    match role {
        "admin" => !permission.starts_with("catalog:"),
        "analyst" => matches!(permission, "hello:read" | "fixture:run"),
        "viewer" => permission == "hello:read",
        _ => false,
    }
}

fn admin(server: &Server, args: &[&str]) -> String {
    let out = server.admin(args);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "toolhost {args:?}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// A stateless JSON-RPC request on /mcp with `bearer`.
fn rpc(server: &Server, bearer: &str, method: &str, name: Option<&str>, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let authorization = format!("Bearer {bearer}");
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
        ("Authorization", authorization.as_str()),
    ];
    if let Some(n) = name {
        headers.push(("Mcp-Name", n));
    }
    let (status, answer) = exchange(&server.url, "POST", "/mcp", &headers, &body);
    assert_eq!(status, 200, "{method}: {answer}");
    json(&answer)
}

fn listed(server: &Server, bearer: &str) -> BTreeSet<String> {
    let answer = rpc(server, bearer, "tools/list", None, json!({}));
    assert_eq!(answer["result"]["cacheScope"], "private", "{answer}");
    support::names_listed(&answer).into_iter().collect()
}

/// Calls `tool`; `None` if it ran, else the error code.
fn call(server: &Server, bearer: &str, tool: &str, args: &str) -> Option<String> {
    let arguments: Value = serde_json::from_str(args).expect("JSON arguments");
    let answer = rpc(
        server,
        bearer,
        "tools/call",
        Some(tool),
        json!({"name": tool, "arguments": arguments}),
    );
    let result = &answer["result"];
    if result["isError"] == json!(true) {
        let error = &result["structuredContent"]["error"];
        if error["code"] == "PERMISSION_DENIED" {
            assert!(
                error["hint"]
                    .as_str()
                    .is_some_and(|h| h.contains("tools/list")),
                "a denial hints at re-listing: {answer}"
            );
        }
        return Some(error["code"].as_str().unwrap_or("?").to_owned());
    }
    None
}

fn setup(server: &Server) -> Vec<(String, String, String)> {
    for tenant in ["acme", "globex"] {
        admin(server, &["tenant", "add", tenant]);
        admin(
            server,
            &["role", "add", "admin", "--tenant", tenant, "--admin"],
        );
        admin(server, &["role", "add", "analyst", "--tenant", tenant]);
        admin(
            server,
            &[
                "role",
                "permit",
                "analyst",
                "hello:read",
                "fixture:run",
                "--tenant",
                tenant,
            ],
        );
        admin(server, &["role", "add", "viewer", "--tenant", tenant]);
        admin(
            server,
            &["role", "permit", "viewer", "hello:read", "--tenant", tenant],
        );
    }
    PEOPLE
        .iter()
        .map(|(user, tenant, role)| {
            let out = admin(server, &["user", "add", user, "--tenant", tenant]);
            let password = out
                .lines()
                .find_map(|l| l.strip_prefix("password: "))
                .expect("a generated password")
                .to_owned();
            if !role.is_empty() {
                admin(server, &["grant", role, user, "--tenant", tenant]);
            }
            (
                user.to_string(),
                role.to_string(),
                user_token(server, user, &password),
            )
        })
        .collect()
}

#[test]
fn list_and_call_follow_one_table_for_every_principal_and_tool() {
    let _tools = Tools::require();
    let server = Server::start(&catalog());
    let people = setup(&server);
    let everything = listed(
        &server,
        &user_token(&server, "demo", support::DEMO_PASSWORD),
    );
    assert!(
        everything.len() >= 12,
        "the demo admin sees the whole catalog: {everything:?}"
    );
    let permission_of = |tool: &str| -> &'static str {
        match tool {
            "greet" | "add" | "word_stats" => "hello:read",
            "now" | "ping" => "fixture:run",
            "list_plugin_reviews" | "decide_plugin_review" | "rollback_plugin" | "pin_plugin" => {
                "catalog:review"
            }
            _ => "conformance:run",
        }
    };
    for (user, role, bearer) in &people {
        let want: BTreeSet<String> = everything
            .iter()
            .filter(|t| permitted(role, permission_of(t)))
            .cloned()
            .collect();
        assert_eq!(
            listed(&server, bearer),
            want,
            "{user} ({role}) lists exactly their tools"
        );
        for (tool, args, permission) in PROBES {
            let outcome = call(&server, bearer, tool, args);
            let expected = (!permitted(role, permission)).then(|| "PERMISSION_DENIED".to_owned());
            assert_eq!(outcome, expected, "{user} ({role}) calls {tool}");
        }
    }
}

#[test]
fn a_revoked_permission_hides_and_denies_within_the_live_bound_and_granting_it_back_restores_with_the_same_token()
 {
    let tools = Tools::require();
    let server = Server::start(&catalog());
    let people = setup(&server);
    let (_, _, al) = people.iter().find(|(u, ..)| u == "al").expect("al");
    assert!(listed(&server, al).contains("ping"));
    assert_eq!(call(&server, al, "ping", "{}"), None);

    admin(
        &server,
        &[
            "role",
            "forbid",
            "analyst",
            "fixture:run",
            "--tenant",
            "acme",
        ],
    );
    support::eventually("ping hidden on the next list", || {
        !listed(&server, al).contains("ping")
    });
    assert_eq!(
        call(&server, al, "ping", "{}").as_deref(),
        Some("PERMISSION_DENIED"),
        "a cached catalog is denied"
    );
    // The other tenant's analysts are untouched.
    let (_, _, gus) = people.iter().find(|(u, ..)| u == "gus").expect("gus");
    assert_eq!(call(&server, gus, "ping", "{}"), None);

    admin(
        &server,
        &[
            "role",
            "permit",
            "analyst",
            "fixture:run",
            "--tenant",
            "acme",
        ],
    );
    support::eventually("ping listed again", || listed(&server, al).contains("ping"));
    assert_eq!(
        call(&server, al, "ping", "{}"),
        None,
        "same token, works again"
    );

    // Taking the role away entirely, and giving it back.
    admin(&server, &["revoke", "analyst", "al", "--tenant", "acme"]);
    support::eventually("nothing listed without the role", || {
        listed(&server, al).is_empty()
    });
    admin(&server, &["grant", "analyst", "al", "--tenant", "acme"]);
    support::eventually("greet listed with the role back", || {
        listed(&server, al).contains("greet")
    });

    // Each denial wrote its audit row, outcome denied.
    let database = server.database_path();
    let query = "SELECT COUNT(*) FROM audit WHERE outcome = 'denied' AND error_code = 'PERMISSION_DENIED' AND tool = 'ping'";
    let mut count = std::process::Command::new(&tools.python);
    count
        .args(["-c", &format!("import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute({query:?}).fetchone()[0])")])
        .arg(&database);
    let out = count.output().expect("python runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "1",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_service_principal_lists_only_its_live_scopes_tools_and_cannot_hold_roles() {
    let server = Server::start(&catalog());
    let (client, service) = server.service_client("mcp hello:read");
    assert_eq!(
        listed(&server, &service),
        ["add", "greet", "word_stats"]
            .map(String::from)
            .into_iter()
            .collect()
    );
    assert_eq!(call(&server, &service, "greet", r#"{"name":"Ada"}"#), None);
    assert_eq!(
        call(&server, &service, "ping", "{}").as_deref(),
        Some("PERMISSION_DENIED")
    );
    // Narrowing the client's scope set applies to its live token, from
    // another process (the CLI) within the live views' bound.
    admin(&server, &["client", "scope", &client, "mcp"]);
    support::eventually("nothing listed for the narrowed client", || {
        listed(&server, &service).is_empty()
    });
    assert_eq!(
        call(&server, &service, "greet", r#"{"name":"Ada"}"#).as_deref(),
        Some("PERMISSION_DENIED")
    );
    admin(&server, &["client", "scope", &client, "mcp hello:read"]);
    support::eventually("greet listed for the widened client", || {
        listed(&server, &service).contains("greet")
    });
    assert_eq!(call(&server, &service, "greet", r#"{"name":"Ada"}"#), None);
    // A role is for people: a service client cannot be given one.
    admin(&server, &["role", "add", "analyst", "--tenant", "demo"]);
    let out = server.admin(&["grant", "analyst", "e2e", "--tenant", "demo"]);
    assert!(!out.status.success(), "a service cannot hold a role");
}
