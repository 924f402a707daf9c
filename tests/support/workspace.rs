//! People and calls for the authoring workspace's end-to-end tests: roles
//! and users made with the `toolhost` CLI on a server's store, and
//! stateless `tools/call`s that must answer or must be refused.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
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

/// `bytes` uploaded as `kind` over MCP by `token` (`begin_upload`, then
/// `upload_chunk` in chunks of at most `chunk` bytes, the last with the
/// bytes' digest): the finished upload's answer.
pub fn mcp_upload(url: &str, token: &str, kind: &str, bytes: &[u8], chunk: usize) -> Value {
    let begun = ok(
        url,
        token,
        "begin_upload",
        json!({"kind": kind, "size": bytes.len()}),
    );
    let handle = begun["upload"].as_str().expect("a handle").to_owned();
    let digest = sha256_hex(bytes);
    let pieces: Vec<&[u8]> = bytes.chunks(chunk.max(1)).collect();
    let mut answer = Value::Null;
    for (n, piece) in pieces.iter().enumerate() {
        let offset = n * chunk.max(1);
        let last = n + 1 == pieces.len();
        let mut args = json!({"upload": handle, "offset": offset,
            "data": STANDARD.encode(piece), "last": last});
        if last {
            args["sha256"] = json!(digest);
        }
        answer = ok(url, token, "upload_chunk", args);
    }
    assert_eq!(answer["done"], json!(true), "{answer}");
    assert_eq!(answer["sha256"], json!(digest), "{answer}");
    answer
}

/// Lower-case hex SHA-256 of `bytes`, as the host computes it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("{:x}", sha2::Sha256::digest(bytes))
}
