//! People and calls for the authoring workspace's end-to-end tests: roles
//! and users made with the `toolhost` CLI on a server's store, and
//! stateless `tools/call`s that must answer or must be refused.

use serde_json::{Value, json};

use super::bench::call_at;
use super::toolhost;

/// `toolhost ARGS… --database-url URL`, which must succeed: its stdout.
pub fn admin(url: &str, args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["--database-url", url]);
    toolhost(&all)
}

/// A role `role` in `tenant` with `permissions`.
pub fn role(url: &str, tenant: &str, role: &str, permissions: &[&str]) {
    admin(url, &["role", "add", role, "--tenant", tenant]);
    for p in permissions {
        admin(url, &["role", "permit", role, p, "--tenant", tenant]);
    }
}

/// Adds `user` to `tenant` with `roles`: their password.
pub fn person(url: &str, tenant: &str, user: &str, roles: &[&str]) -> String {
    let out = admin(url, &["user", "add", user, "--tenant", tenant]);
    let password = out
        .lines()
        .find_map(|l| l.strip_prefix("password: "))
        .expect("a generated password")
        .to_owned();
    for r in roles {
        admin(url, &["grant", r, user, "--tenant", tenant]);
    }
    password
}

/// A call's `structuredContent`, which must not be an error.
pub fn ok(url: &str, token: &str, tool: &str, args: Value) -> Value {
    let a = call_at(url, token, tool, args);
    assert_eq!(a["result"]["isError"], json!(false), "{tool}: {a}");
    a["result"]["structuredContent"].clone()
}

/// A call that must be refused with `code`: its error object.
pub fn refused(url: &str, token: &str, tool: &str, args: Value, code: &str) -> Value {
    let a = call_at(url, token, tool, args);
    let error = a["result"]["structuredContent"]["error"].clone();
    assert_eq!(
        a["result"]["isError"],
        json!(true),
        "{tool} should be refused: {a}"
    );
    assert_eq!(error["code"], json!(code), "{tool}: {a}");
    error
}
