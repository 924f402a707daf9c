//! Nothing a caller writes establishes authority (seed 002, MCPX-FR-024):
//! a proposal carrying a file path, a URL, a cookie, a credential or a
//! digest of the caller's own making is refused before anything is
//! stored. Bytes reach a proposal only through an upload's handle, and
//! every digest the workspace keeps is one the host computed.
//!
//! The check is deliberately blunt: it refuses by the shape of a value or
//! the name of its key, not by guessing intent, so a proposal that needs
//! such a thing is a proposal the host does not take. Pure: table-tested
//! below.

use std::fmt;

use serde::Serialize;
use serde_json::Value;
use toolhost_secrets::{Scanner, SecretKind};

/// What was refused as authority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthorityKind {
    /// A filesystem path (`/etc/…`, `./x.wasm`, `C:\…`, a host path).
    Path,
    /// A URL (`https://…`, `file:…`, `data:…`).
    Url,
    /// An HTTP cookie.
    Cookie,
    /// A credential: a token, key, password or secret.
    Credential,
    /// A digest computed by the caller (`sha256:…`, 64 hex digits, a key
    /// named `digest`): the host computes digests, it never takes them.
    CallerDigest,
}

impl AuthorityKind {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthorityKind::Path => "path",
            AuthorityKind::Url => "url",
            AuthorityKind::Cookie => "cookie",
            AuthorityKind::Credential => "credential",
            AuthorityKind::CallerDigest => "caller_digest",
        }
    }
}

impl fmt::Display for AuthorityKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a proposal carried authority, and what kind. Holds no part of the
/// value, so printing it cannot leak a credential.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error(
    "the proposal carries a {kind} at {pointer}: paths, URLs, cookies, credentials and caller digests never establish authority (upload bytes and name their handle instead)"
)]
pub struct AuthorityRefusal {
    /// JSON pointer to the value (or the key) refused, e.g. `/tests/2/name`.
    pub pointer: String,
    /// What it looked like.
    pub kind: AuthorityKind,
}

/// Refuses `body` if any key or string in it carries authority; `scanner`
/// finds credentials (with the operator's own secrets and host paths).
pub fn refuse_authority(body: &Value, scanner: &Scanner) -> Result<(), AuthorityRefusal> {
    walk(body, &mut String::new(), scanner)
}

fn walk(v: &Value, pointer: &mut String, scanner: &Scanner) -> Result<(), AuthorityRefusal> {
    let refuse = |pointer: &str, kind| AuthorityRefusal {
        pointer: if pointer.is_empty() {
            "/".into()
        } else {
            pointer.into()
        },
        kind,
    };
    match v {
        Value::String(s) => match string_kind(s, scanner) {
            Some(kind) => Err(refuse(pointer, kind)),
            None => Ok(()),
        },
        Value::Array(items) => items.iter().enumerate().try_for_each(|(i, item)| {
            let len = pointer.len();
            pointer.push_str(&format!("/{i}"));
            let r = walk(item, pointer, scanner);
            pointer.truncate(len);
            r
        }),
        Value::Object(map) => map.iter().try_for_each(|(key, item)| {
            let len = pointer.len();
            pointer.push('/');
            pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
            let r = match key_kind(key).or_else(|| string_kind(key, scanner)) {
                Some(kind) => Err(refuse(pointer, kind)),
                None => walk(item, pointer, scanner),
            };
            pointer.truncate(len);
            r
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
    }
}

/// Key names that assert authority: whoever names a field `token` or
/// `sha256` means it to be trusted.
fn key_kind(key: &str) -> Option<AuthorityKind> {
    let k = key.to_ascii_lowercase().replace('-', "_");
    let is = |names: &[&str]| {
        names
            .iter()
            .any(|n| k == *n || k.ends_with(&format!("_{n}")))
    };
    if is(&["cookie", "cookies", "set_cookie"]) {
        Some(AuthorityKind::Cookie)
    } else if is(&[
        "password",
        "passwd",
        "secret",
        "token",
        "api_key",
        "apikey",
        "authorization",
        "credential",
        "credentials",
        "private_key",
        "bearer",
    ]) {
        Some(AuthorityKind::Credential)
    } else if is(&[
        "sha256",
        "sha512",
        "digest",
        "hash",
        "checksum",
        "content_hash",
    ]) {
        Some(AuthorityKind::CallerDigest)
    } else if is(&["path", "file", "filename", "dir", "directory"]) {
        Some(AuthorityKind::Path)
    } else if is(&["url", "uri", "href"]) {
        Some(AuthorityKind::Url)
    } else {
        None
    }
}

fn string_kind(s: &str, scanner: &Scanner) -> Option<AuthorityKind> {
    if let Some(found) = scanner.find(s) {
        return Some(match found.kind {
            SecretKind::Cookie => AuthorityKind::Cookie,
            SecretKind::HostPath => AuthorityKind::Path,
            _ => AuthorityKind::Credential,
        });
    }
    let t = s.trim();
    if is_url(t) {
        Some(AuthorityKind::Url)
    } else if is_path(t) {
        Some(AuthorityKind::Path)
    } else if is_digest(t) {
        Some(AuthorityKind::CallerDigest)
    } else if is_cookie(t) {
        Some(AuthorityKind::Cookie)
    } else {
        None
    }
}

/// `scheme://…` anywhere, or a scheme that needs no slashes at the start.
fn is_url(t: &str) -> bool {
    let lower = t.to_ascii_lowercase();
    let schemeless = ["file:", "data:", "blob:", "javascript:", "mailto:"];
    if schemeless.iter().any(|p| lower.starts_with(p)) {
        return true;
    }
    lower.match_indices("://").any(|(at, _)| {
        let scheme = lower[..at]
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
            .next()
            .unwrap_or("");
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
    })
}

/// An absolute, home-relative or dot-relative path, a Windows drive or
/// share, or a `..` step anywhere.
fn is_path(t: &str) -> bool {
    let b = t.as_bytes();
    let absolute = b.first() == Some(&b'/') && b.get(1).is_some_and(|c| !c.is_ascii_whitespace());
    let drive =
        b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/');
    absolute
        || drive
        || t.starts_with("~/")
        || t.starts_with("./")
        || t.starts_with(".\\")
        || t.starts_with("\\\\")
        || t == ".."
        || t.starts_with("../")
        || t.contains("/../")
        || t.contains("\\..\\")
}

/// `sha256:<hex>` (or another algorithm's name), or a bare run of 40 or
/// more hex digits: what a content digest looks like.
fn is_digest(t: &str) -> bool {
    let hex = |s: &str| s.len() >= 40 && s.bytes().all(|b| b.is_ascii_hexdigit());
    match t.split_once(':') {
        Some((algo, rest)) => {
            ["sha1", "sha256", "sha384", "sha512", "blake3"]
                .contains(&algo.to_ascii_lowercase().as_str())
                && hex(rest)
        }
        None => hex(t),
    }
}

fn is_cookie(t: &str) -> bool {
    let lower = t.to_ascii_lowercase();
    lower.starts_with("cookie:") || lower.starts_with("set-cookie:")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn refused(body: Value) -> Option<(String, AuthorityKind)> {
        refuse_authority(&body, &Scanner::new())
            .err()
            .map(|r| (r.pointer, r.kind))
    }

    #[test]
    fn ordinary_proposals_pass() {
        let plan = json!({
            "environment": "prod",
            "tests": [
                {"name": "Login / logout", "tags": ["smoke"]},
                {"name": "Refund: partial", "tags": ["regression", "money-back"]},
                {"name": "3.5 rounding", "tags": []}
            ],
            "summary": "smoke first; see run_0123 for evidence",
            "component": "upl_0123456789abcdef0123456789abcdef",
            "count": 3, "draft": true, "note": null
        });
        assert_eq!(refused(plan), None);
    }

    #[test]
    fn each_kind_of_authority_is_refused_where_it_is() {
        let sha = "a".repeat(64);
        let cases: Vec<(Value, &str, AuthorityKind)> = vec![
            (
                json!({"component": "/home/me/hello.wasm"}),
                "/component",
                AuthorityKind::Path,
            ),
            (
                json!({"component": "./target/hello.wasm"}),
                "/component",
                AuthorityKind::Path,
            ),
            (
                json!({"component": "C:\\build\\hello.wasm"}),
                "/component",
                AuthorityKind::Path,
            ),
            (
                json!({"tests": [{"name": "../../etc/passwd"}]}),
                "/tests/0/name",
                AuthorityKind::Path,
            ),
            (
                json!({"manifest_path": "toolhost.toml"}),
                "/manifest_path",
                AuthorityKind::Path,
            ),
            (
                json!({"component": "https://example.com/hello.wasm"}),
                "/component",
                AuthorityKind::Url,
            ),
            (
                json!({"component": "oci://registry/hello@sha256:00"}),
                "/component",
                AuthorityKind::Url,
            ),
            (
                json!({"component": "file:hello.wasm"}),
                "/component",
                AuthorityKind::Url,
            ),
            (
                json!({"source_url": "x"}),
                "/source_url",
                AuthorityKind::Url,
            ),
            (
                json!({"headers": ["Cookie: session=abc"]}),
                "/headers/0",
                AuthorityKind::Cookie,
            ),
            (
                json!({"session_cookie": "abc"}),
                "/session_cookie",
                AuthorityKind::Cookie,
            ),
            (
                json!({"api_token": "x"}),
                "/api_token",
                AuthorityKind::Credential,
            ),
            (
                json!({"auth": "Bearer abcdefghijklmnopqrstuvwxyz012345"}),
                "/auth",
                AuthorityKind::Credential,
            ),
            (
                json!({"password": "hunter2"}),
                "/password",
                AuthorityKind::Credential,
            ),
            (
                json!({"sha256": "ab"}),
                "/sha256",
                AuthorityKind::CallerDigest,
            ),
            (
                json!({"component_digest": "ab"}),
                "/component_digest",
                AuthorityKind::CallerDigest,
            ),
            (
                json!({"component": format!("sha256:{sha}")}),
                "/component",
                AuthorityKind::CallerDigest,
            ),
            (
                json!({"expect": [sha]}),
                "/expect/0",
                AuthorityKind::CallerDigest,
            ),
            (
                json!({"a/b": {"token": 1}}),
                "/a~1b/token",
                AuthorityKind::Credential,
            ),
        ];
        for (body, pointer, kind) in cases {
            assert_eq!(
                refused(body.clone()),
                Some((pointer.to_owned(), kind)),
                "{body}"
            );
        }
    }

    #[test]
    fn a_refusal_names_where_and_what_but_never_the_value() {
        let r = refuse_authority(&json!({"password": "hunter2"}), &Scanner::new())
            .expect_err("refused");
        let text = format!("{r} {r:?}");
        assert!(
            text.contains("/password") && text.contains("credential"),
            "{text}"
        );
        assert!(!text.contains("hunter2"), "{text}");
    }

    #[test]
    fn the_operators_own_secrets_are_credentials() {
        let scanner = Scanner::new().with_secret("tb-backend-token-0123456789");
        let body = json!({"note": "use tb-backend-token-0123456789 please"});
        let r = refuse_authority(&body, &scanner).expect_err("refused");
        assert_eq!(
            (r.pointer.as_str(), r.kind),
            ("/note", AuthorityKind::Credential)
        );
    }
}
