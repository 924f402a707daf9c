//! Nothing a caller writes establishes authority (seed 002, MCPX-FR-024):
//! raw code, URLs, cookies, secrets, paths and caller digests never become
//! something the host reaches, runs or trusts on a caller's word. They may
//! still be *data*: a test step that says "open https://shop.example/login"
//! or names the API path `/api/login` or a commit hash is kept as written,
//! bounded by the request and escaped wherever it is shown.
//!
//! So a proposal is refused only where a value would carry authority:
//!
//! - **anywhere**, a credential: what the host's secret scanner finds (a
//!   bearer token, a private key, an operator's secret, one of the host's
//!   own paths), a `Cookie:` header, or a non-empty value under a key that
//!   names a credential (`password`, `api_key`, `access_token`…):
//!   [`refuse_authority`];
//! - **a plugin revision's files**, which the host will run: each must be
//!   an upload's handle, never a path, URL or digest:
//!   [`refuse_unhandled_files`];
//! - **the fields a domain object's schema declares** (the promoting tool's
//!   input schema, which the reviewed plugin ships): a location must be a
//!   public `http(s)` address, and a credential, digest or code is never
//!   taken from a proposal: [`refuse_declared`].
//!
//! A refusal names where and what, never the value. Pure: table-tested
//! below.

use std::fmt;

use serde::Serialize;
use serde_json::Value;
use toolhost_secrets::{Scanner, SecretKind};

use crate::UploadHandle;

/// What was refused as authority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthorityKind {
    /// A filesystem path where the host would read a file (a revision's
    /// file), or one of the host's own paths anywhere.
    Path,
    /// A URL where the host would fetch a file (a revision's file).
    Url,
    /// An HTTP cookie.
    Cookie,
    /// A credential: a token, key, password or secret.
    Credential,
    /// A digest computed by the caller where the host would trust it (a
    /// revision's file, a field declared a digest): the host computes
    /// digests, it never takes them.
    CallerDigest,
    /// A field declared a location whose value the host would not reach:
    /// not an absolute `http(s)` URL or host name, or an internal address
    /// (loopback, private, link-local, `localhost`, `*.internal`…).
    Location,
    /// A field declared code (a script, an expression to run).
    Executable,
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
            AuthorityKind::Location => "location",
            AuthorityKind::Executable => "executable",
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
    "the proposal carries a {kind} at {pointer}: credentials, cookies, caller digests and code never reach the host through a proposal, a revision's files are upload handles, and a declared location must be a public http(s) address (URLs, paths and hashes elsewhere are kept as data)"
)]
pub struct AuthorityRefusal {
    /// JSON pointer to the value (or the key) refused, e.g. `/tests/2/name`.
    pub pointer: String,
    /// What it looked like.
    pub kind: AuthorityKind,
}

/// The schema keyword a plugin declares a field's authority with:
/// `"x-toolhost-authority": "location" | "credential" | "digest" | "executable"`.
pub const AUTHORITY_KEYWORD: &str = "x-toolhost-authority";

/// The JSON Schema `format`s that make a field a location.
const LOCATION_FORMATS: &[&str] = &[
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uri-template",
    "url",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
];

/// Most `$ref`s and combinators followed to find one value's schemas: a
/// schema that refers to itself ends here.
const MAX_SCHEMA_STEPS: usize = 64;

/// Refuses `body` if any key or string in it is a credential or cookie;
/// `scanner` finds credentials (with the operator's own secrets and host
/// paths). Everything else in it is data.
pub fn refuse_authority(body: &Value, scanner: &Scanner) -> Result<(), AuthorityRefusal> {
    walk_data(body, &mut String::new(), scanner)
}

/// Refuses a plugin revision's `component`, `manifest` or `signature` if it
/// is not an upload's handle but a path, URL or digest (something else is
/// the revision's parse error to report).
pub fn refuse_unhandled_files(revision: &Value, at: &str) -> Result<(), AuthorityRefusal> {
    for field in ["component", "manifest", "signature"] {
        let Some(value) = revision.get(field).and_then(Value::as_str) else {
            continue;
        };
        if UploadHandle::parse(value).is_some() {
            continue;
        }
        if let Some(kind) = file_kind(value.trim()) {
            return Err(refusal(&format!("{at}/{field}"), kind));
        }
    }
    Ok(())
}

/// Refuses `object` (found at `at` in the proposal) where a field `schema`
/// declares (by [`AUTHORITY_KEYWORD`], or a location `format` such as
/// `uri`) carries authority: a location that is not a public `http(s)`
/// address, or any credential, digest or code.
pub fn refuse_declared(object: &Value, schema: &Value, at: &str) -> Result<(), AuthorityRefusal> {
    let mut pointer = at.to_owned();
    walk_declared(object, &schemas_of(schema, schema), schema, &mut pointer)
}

fn refusal(pointer: &str, kind: AuthorityKind) -> AuthorityRefusal {
    AuthorityRefusal {
        pointer: if pointer.is_empty() {
            "/".into()
        } else {
            pointer.into()
        },
        kind,
    }
}

/// `pointer` with `key` appended, escaped as RFC 6901 asks.
fn push_key(pointer: &mut String, key: &str) {
    pointer.push('/');
    pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
}

fn walk_data(v: &Value, pointer: &mut String, scanner: &Scanner) -> Result<(), AuthorityRefusal> {
    match v {
        Value::String(s) => match credential_kind(s, scanner) {
            Some(kind) => Err(refusal(pointer, kind)),
            None => Ok(()),
        },
        Value::Array(items) => items.iter().enumerate().try_for_each(|(i, item)| {
            let len = pointer.len();
            pointer.push_str(&format!("/{i}"));
            let r = walk_data(item, pointer, scanner);
            pointer.truncate(len);
            r
        }),
        Value::Object(map) => map.iter().try_for_each(|(key, item)| {
            let len = pointer.len();
            push_key(pointer, key);
            let named = key_kind(key).filter(|_| !is_empty(item));
            let r = match named.or_else(|| credential_kind(key, scanner)) {
                Some(kind) => Err(refusal(pointer, kind)),
                None => walk_data(item, pointer, scanner),
            };
            pointer.truncate(len);
            r
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
    }
}

/// Whether a value carries nothing: a key naming a credential with no
/// value (`"password": ""`, `null`) holds none.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(_) | Value::Number(_) => false,
    }
}

/// Key names that hold a credential or a cookie: whoever names a field
/// `password` or `api_key` means it to be one.
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
        "client_secret",
        "api_key",
        "apikey",
        "access_token",
        "refresh_token",
        "auth_token",
        "api_token",
        "bearer_token",
        "authorization",
        "credential",
        "credentials",
        "private_key",
    ]) {
        Some(AuthorityKind::Credential)
    } else {
        None
    }
}

/// What the scanner finds in `s`, or a cookie header.
fn credential_kind(s: &str, scanner: &Scanner) -> Option<AuthorityKind> {
    if let Some(found) = scanner.find(s) {
        return Some(match found.kind {
            SecretKind::Cookie => AuthorityKind::Cookie,
            SecretKind::HostPath => AuthorityKind::Path,
            _ => AuthorityKind::Credential,
        });
    }
    let lower = s.trim().to_ascii_lowercase();
    (lower.starts_with("cookie:") || lower.starts_with("set-cookie:"))
        .then_some(AuthorityKind::Cookie)
}

/// What a revision file named by something other than a handle looks like.
fn file_kind(t: &str) -> Option<AuthorityKind> {
    if is_url(t) {
        Some(AuthorityKind::Url)
    } else if is_path(t) {
        Some(AuthorityKind::Path)
    } else if is_digest(t) {
        Some(AuthorityKind::CallerDigest)
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
/// share, a `..` step anywhere, or a file name with an extension.
fn is_path(t: &str) -> bool {
    let b = t.as_bytes();
    let absolute = b.first() == Some(&b'/') && b.get(1).is_some_and(|c| !c.is_ascii_whitespace());
    let drive =
        b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/');
    let file_name = !t.contains(char::is_whitespace)
        && t.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && (1..=8).contains(&ext.len())
                && ext.bytes().all(|c| c.is_ascii_alphanumeric())
        });
    absolute
        || drive
        || file_name
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

/// What a field declares it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Location,
    Credential,
    Digest,
    Executable,
}

/// The role `schema` (one schema object, its references followed) declares.
fn declared_role(schema: &Value) -> Option<Role> {
    match schema.get(AUTHORITY_KEYWORD).and_then(Value::as_str) {
        Some("location") => return Some(Role::Location),
        Some("credential") => return Some(Role::Credential),
        Some("digest") => return Some(Role::Digest),
        // An unknown word is a kind of authority the host does not know
        // how to check: code is the strictest reading.
        Some(_) => return Some(Role::Executable),
        None => {}
    }
    match schema.get("format").and_then(Value::as_str) {
        Some(f) if LOCATION_FORMATS.contains(&f) => Some(Role::Location),
        Some("password") => Some(Role::Credential),
        _ => None,
    }
}

/// The schema objects that describe a value whose schema is `schema`:
/// itself, and what its `$ref` (local to `root`) and its `allOf`, `anyOf`
/// and `oneOf` branches lead to, at most [`MAX_SCHEMA_STEPS`] of them.
fn schemas_of<'a>(schema: &'a Value, root: &'a Value) -> Vec<&'a Value> {
    let mut found = Vec::new();
    let mut todo = vec![schema];
    let mut steps = 0;
    while let Some(s) = todo.pop() {
        steps += 1;
        if steps > MAX_SCHEMA_STEPS {
            break;
        }
        if !s.is_object() {
            continue;
        }
        found.push(s);
        if let Some(target) = s
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|p| root.pointer(p))
        {
            todo.push(target);
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            if let Some(branches) = s.get(key).and_then(Value::as_array) {
                todo.extend(branches.iter());
            }
        }
    }
    found
}

fn walk_declared(
    v: &Value,
    schemas: &[&Value],
    root: &Value,
    pointer: &mut String,
) -> Result<(), AuthorityRefusal> {
    if let Some(role) = schemas.iter().find_map(|s| declared_role(s))
        && let Some(kind) = role_refusal(role, v)
    {
        return Err(refusal(pointer, kind));
    }
    // Each member is walked with the schemas its parents give it (a
    // property, `additionalProperties`, an item): none, and it is data.
    let child = |pick: &dyn Fn(&Value) -> Option<&Value>| -> Vec<&Value> {
        schemas
            .iter()
            .filter_map(|s| pick(s))
            .flat_map(|s| schemas_of(s, root))
            .collect()
    };
    let mut descend = |item: &Value, below: Vec<&Value>, segment: &str| {
        if below.is_empty() {
            return Ok(());
        }
        let len = pointer.len();
        push_key(pointer, segment);
        let r = walk_declared(item, &below, root, pointer);
        pointer.truncate(len);
        r
    };
    match v {
        Value::Object(map) => map.iter().try_for_each(|(key, item)| {
            let below = child(&|s| {
                s.get("properties")
                    .and_then(|p| p.get(key))
                    .or_else(|| s.get("additionalProperties").filter(|a| a.is_object()))
            });
            descend(item, below, key)
        }),
        Value::Array(items) => items.iter().enumerate().try_for_each(|(i, item)| {
            let below = child(&|s| {
                s.get("prefixItems")
                    .and_then(|p| p.get(i))
                    .or_else(|| s.get("items").filter(|a| a.is_object()))
            });
            descend(item, below, &i.to_string())
        }),
        _ => Ok(()),
    }
}

/// Why `v`, in a field declared `role`, is refused, if it is.
fn role_refusal(role: Role, v: &Value) -> Option<AuthorityKind> {
    if is_empty(v) {
        return None;
    }
    match role {
        Role::Location => match v {
            Value::String(s) => location_refusal(s.trim()),
            _ => Some(AuthorityKind::Location),
        },
        Role::Credential => Some(AuthorityKind::Credential),
        Role::Digest => Some(AuthorityKind::CallerDigest),
        Role::Executable => Some(AuthorityKind::Executable),
    }
}

/// Why `s`, declared a location, is refused: it is not an absolute
/// `http(s)` URL (or a host name) of a public host, or it carries a user's
/// credentials.
fn location_refusal(s: &str) -> Option<AuthorityKind> {
    let host = match url::Url::parse(s) {
        Ok(url) => {
            if !matches!(url.scheme(), "http" | "https") {
                return Some(AuthorityKind::Location);
            }
            if !url.username().is_empty() || url.password().is_some() {
                return Some(AuthorityKind::Credential);
            }
            match url.host() {
                Some(h) => h.to_owned(),
                None => return Some(AuthorityKind::Location),
            }
        }
        Err(_) if s.contains("://") => return Some(AuthorityKind::Location),
        // No scheme: a host name or address alone.
        Err(_) => match url::Host::parse(s) {
            Ok(h) => h,
            Err(_) => return Some(AuthorityKind::Location),
        },
    };
    (!is_public_host(&host)).then_some(AuthorityKind::Location)
}

/// Whether `host` names a public host: a public address, or a dotted DNS
/// name outside the names kept for local and internal use.
fn is_public_host(host: &url::Host<String>) -> bool {
    match host {
        url::Host::Ipv4(ip) => toolhost_types::is_public_address((*ip).into()),
        url::Host::Ipv6(ip) => toolhost_types::is_public_address((*ip).into()),
        url::Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            let internal = [
                ".localhost",
                ".local",
                ".internal",
                ".intranet",
                ".lan",
                ".home.arpa",
                ".corp",
                ".localdomain",
            ];
            name.contains('.')
                && name != "localhost"
                && !internal.iter().any(|suffix| name.ends_with(suffix))
        }
    }
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
    fn urls_paths_and_hashes_in_a_proposal_are_data() {
        let sha = "3f2a9c".repeat(7);
        let plan = json!({
            "environment": "prod",
            "tests": [
                {"name": "Login / logout", "tags": ["smoke"],
                 "steps": ["open https://shop.example/login", "POST /api/login",
                           format!("at commit {sha}"), "read ./fixtures/user.json",
                           format!("sha256:{}", "a".repeat(64))]},
                {"name": "Refund: partial", "path": "/api/refunds", "url": "https://x.example",
                 "hash": sha, "token_count": 3, "file": "report.pdf"}
            ],
            "summary": "smoke first; see run_0123 for evidence",
            "count": 3, "draft": true, "note": null, "password": ""
        });
        assert_eq!(refused(plan), None);
    }

    #[test]
    fn credentials_and_cookies_are_refused_anywhere() {
        let cases: Vec<(Value, &str, AuthorityKind)> = vec![
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
                json!({"a/b": {"client_secret": 1}}),
                "/a~1b/client_secret",
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
    fn a_revision_names_its_files_by_handle_only() {
        let handle = "upl_0123456789abcdef0123456789abcdef";
        let sha = "a".repeat(64);
        let cases = [
            ("/home/me/hello.wasm", AuthorityKind::Path),
            ("./target/hello.wasm", AuthorityKind::Path),
            ("C:\\build\\hello.wasm", AuthorityKind::Path),
            ("hello.wasm", AuthorityKind::Path),
            ("https://example.com/hello.wasm", AuthorityKind::Url),
            ("oci://registry/hello@sha256:00", AuthorityKind::Url),
            ("file:hello.wasm", AuthorityKind::Url),
            (&*format!("sha256:{sha}"), AuthorityKind::CallerDigest),
        ];
        for (file, kind) in cases {
            let revision = json!({"component": file, "manifest": handle});
            let r = refuse_unhandled_files(&revision, "/revision").expect_err(file);
            assert_eq!((r.pointer.as_str(), r.kind), ("/revision/component", kind));
        }
        let fine = json!({"component": handle, "manifest": handle, "signature": null});
        assert_eq!(refuse_unhandled_files(&fine, "/revision"), Ok(()));
        let not_a_file = json!({"component": "hello", "manifest": handle});
        assert_eq!(
            refuse_unhandled_files(&not_a_file, "/revision"),
            Ok(()),
            "the revision's own parse refuses it"
        );
    }

    /// A promoting tool's schema as schemars writes it: references to
    /// `$defs`, optional fields as `anyOf` with null.
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "environment": {"type": "string"},
                "tests": {"type": "array", "items": {"$ref": "#/$defs/Test"}},
                "callback": {"anyOf": [{"type": "string", "format": "uri"}, {"type": "null"}]},
                "signing_key": {"type": "string", AUTHORITY_KEYWORD: "credential"},
                "expected": {"type": "string", AUTHORITY_KEYWORD: "digest"},
                "hook": {"type": "string", AUTHORITY_KEYWORD: "executable"},
                "admin": {"type": "string", "format": "password"},
                "loop": {"$ref": "#/$defs/Loop"}
            },
            "$defs": {
                "Test": {"type": "object", "properties": {
                    "name": {"type": "string"},
                    "steps": {"type": "array", "items": {"type": "string"}},
                    "start_url": {"type": ["string", "null"], "format": "uri"},
                    "host": {"type": "string", "format": "hostname"}
                }},
                "Loop": {"$ref": "#/$defs/Loop"}
            }
        })
    }

    fn declared(object: Value) -> Option<(String, AuthorityKind)> {
        refuse_declared(&object, &schema(), "/object")
            .err()
            .map(|r| (r.pointer, r.kind))
    }

    #[test]
    fn a_declared_location_must_be_a_public_http_address() {
        let test = |url: &str| {
            json!({"tests": [{"name": "a", "steps": ["open http://127.0.0.1/"]},
                             {"name": "b", "start_url": url}]})
        };
        for fine in [
            "https://shop.example/login",
            "http://203.0.114.7/",
            "https://[2a00:1450::1]/x",
        ] {
            assert_eq!(declared(test(fine)), None, "{fine}");
        }
        let at = "/object/tests/1/start_url";
        for internal in [
            "http://127.0.0.1:8080/admin",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://10.1.2.3/",
            "http://169.254.169.254/latest/meta-data",
            "http://[::1]/",
            "http://[::ffff:10.0.0.1]/",
            "http://localhost/",
            "https://db.internal/",
            "https://printer.local/",
            "https://intranet/",
            "file:///etc/passwd",
            "gopher://shop.example/",
            "/api/login",
            "not a url",
        ] {
            assert_eq!(
                declared(test(internal)),
                Some((at.to_owned(), AuthorityKind::Location)),
                "{internal}"
            );
        }
        assert_eq!(
            declared(test("https://me:pw@shop.example/")),
            Some((at.to_owned(), AuthorityKind::Credential))
        );
        let host = json!({"tests": [{"name": "a", "host": "10.0.0.9"}]});
        assert_eq!(
            declared(host),
            Some(("/object/tests/0/host".into(), AuthorityKind::Location))
        );
        let callback = json!({"callback": "http://192.168.1.1/"});
        assert_eq!(
            declared(callback),
            Some(("/object/callback".into(), AuthorityKind::Location)),
            "through anyOf"
        );
        assert_eq!(declared(json!({"callback": null})), None, "nothing given");
    }

    #[test]
    fn declared_credentials_digests_and_code_are_never_taken() {
        let cases = [
            ("signing_key", AuthorityKind::Credential),
            ("admin", AuthorityKind::Credential),
            ("expected", AuthorityKind::CallerDigest),
            ("hook", AuthorityKind::Executable),
        ];
        for (field, kind) in cases {
            let object = json!({field: "anything"});
            assert_eq!(
                declared(object),
                Some((format!("/object/{field}"), kind)),
                "{field}"
            );
        }
        assert_eq!(
            declared(json!({"hook": ""})),
            None,
            "an empty field is fine"
        );
        assert_eq!(
            declared(json!({"loop": {"x": 1}, "environment": "https://x.example"})),
            None,
            "a schema referring to itself ends; an undeclared field is data"
        );
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
