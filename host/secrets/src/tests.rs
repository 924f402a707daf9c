//! Whole-scanner tables through the public surface.
//!
//! Credential-shaped fixtures are assembled at run time (`format!`,
//! `concat!`), so this file itself does not trip secret scanners.

use std::path::Path;

use serde_json::{Value, json};

use crate::{Finding, Scanner, SecretKind};

const B64URL_43: &str = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdE";

/// One example of each built-in kind, with the part a hit must cover.
fn examples() -> Vec<(SecretKind, String)> {
    let jwt = format!(
        "{}.{}.{}",
        "eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiJhZGEifQ", "c2lnbmF0dXJl"
    );
    vec![
        (SecretKind::Bearer, "Bearer mF_9.B5f-4.1JqM0123".into()),
        (SecretKind::Bearer, "BEARER abcdefghijklmnop0123==".into()),
        (
            SecretKind::Bearer,
            "Authorization: Basic dXNlcjpwYXNzd29yZA==".into(),
        ),
        (SecretKind::Jwt, jwt.clone()),
        (
            SecretKind::Jwt,
            format!("{}.{}.", "eyJhbGciOiJub25lIn0", "eyJzdWIiOiJhZGEifQ"),
        ),
        (SecretKind::HostToken, format!("thrt_{B64URL_43}")),
        (SecretKind::HostToken, format!("thac_{B64URL_43}")),
        (SecretKind::HostToken, format!("thcs_{B64URL_43}")),
        (SecretKind::HostToken, format!("thss_{B64URL_43}")),
        (
            SecretKind::PrivateKey,
            concat!("-----BEGIN ", "PRIVATE KEY-----").into(),
        ),
        (
            SecretKind::PrivateKey,
            concat!("-----BEGIN RSA ", "PRIVATE KEY-----").into(),
        ),
        (
            SecretKind::PrivateKey,
            concat!("-----BEGIN EC ", "PRIVATE KEY-----").into(),
        ),
        (
            SecretKind::PrivateKey,
            concat!("-----BEGIN OPENSSH ", "PRIVATE KEY-----").into(),
        ),
        (
            SecretKind::PrivateKey,
            concat!("-----BEGIN ENCRYPTED ", "PRIVATE KEY-----").into(),
        ),
        (
            SecretKind::PrivateKey,
            concat!("PuTTY-User-", "Key-File-3").into(),
        ),
        (
            SecretKind::Cookie,
            "Cookie: lang=en; sid=0123456789abcdef".into(),
        ),
        (
            SecretKind::Cookie,
            "set-cookie: id=a3fWa9zKq2; Path=/".into(),
        ),
        (SecretKind::Cookie, "toolhost_session=Zm9vYmFyYmF6".into()),
        (SecretKind::Cookie, "toolhost_browser=Zm9vYmFyYmF6".into()),
        (SecretKind::CloudKey, format!("{}IOSFODNN7EXAMPLE", "AKIA")),
        (SecretKind::CloudKey, format!("{}IOSFODNN7EXAMPLE", "ASIA")),
        (
            SecretKind::CloudKey,
            format!("gh{}_{}", "p", "a1B2".repeat(9)),
        ),
        (
            SecretKind::CloudKey,
            format!("github_{}_{}", "pat", "11ABCDEFG0_abcdefghijklmnop"),
        ),
        (
            SecretKind::CloudKey,
            format!("xo{}-1234567890-abcdefABCDEF", "xb"),
        ),
        (
            SecretKind::CloudKey,
            format!("AI{}{}", "za", "SyA-1234567890abcdefghijklmnopqrstu"),
        ),
        (
            SecretKind::CloudKey,
            format!("sk_{}_{}", "live", "0123456789abcdefABCDEF"),
        ),
        (
            SecretKind::CloudKey,
            format!("rk_{}_{}", "live", "0123456789abcdefABCDEF"),
        ),
    ]
}

fn configured() -> Scanner {
    Scanner::new()
        .with_secret("backend-token-0123")
        .with_host_path(Path::new("/srv/toolhost/"))
        .with_host_path(Path::new("/home/ada"))
}

#[test]
fn each_kind_is_found_alone_and_amid_text() {
    let mut table = examples();
    table.push((SecretKind::BackendSecret, "backend-token-0123".into()));
    table.push((SecretKind::HostPath, "/srv/toolhost".into()));
    let scanner = configured();
    for (kind, secret) in table {
        let alone = scanner.find(&secret);
        assert_eq!(
            alone,
            Some(Finding {
                kind,
                range: 0..secret.len()
            }),
            "{secret}"
        );
        let amid = format!("before «{secret}» after");
        let hit = scanner.find(&amid).expect(&secret);
        assert_eq!(hit.kind, kind, "{secret}");
        assert_eq!(
            hit.range,
            "before «".len().."before «".len() + secret.len(),
            "{secret}"
        );
    }
}

#[test]
fn each_kind_is_found_in_serialized_json_and_in_the_value() {
    let mut table = examples();
    table.push((SecretKind::BackendSecret, "backend-token-0123".into()));
    table.push((SecretKind::HostPath, "/home/ada".into()));
    let scanner = configured();
    for (kind, secret) in table {
        // A key block arrives with its body, line breaks escaped.
        let value = json!({"ok": true, "out": format!("{secret}\nMIIBVQIBADANBg\n")});
        let text = serde_json::to_string(&value).expect("serializes");
        assert_eq!(scanner.find(&text).map(|f| f.kind), Some(kind), "{text}");
        assert_eq!(scanner.find_in_json(&value), Some(kind), "{text}");
    }
}

#[test]
fn ordinary_tool_output_is_clean() {
    let sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    let table = [
        "Hello, Ada!".to_string(),
        "123e4567-e89b-12d3-a456-426614174000".into(),
        sha.into(),
        format!("sha256:{sha}"),
        "https://example.com/api/v1/projects/12".into(),
        "he was the bearer of bad news".into(),
        "Bearer responsibilities are shared.".into(),
        "eyJhbGciOi".into(),
        "eyJhbGciOiJIUzI1NiJ9.payload".into(),
        "Accept the cookie: it keeps you signed in.".into(),
        "Cookie: lang=en".into(),
        "/api/v1/x".into(),
        "/srv/toolhost".into(),
        B64URL_43.into(),
        format!("xthrt_{B64URL_43}"),
        "AKIAIOSFODNN7EXAMPL".into(),
        "Authorization: Basic realm".into(),
        "-----BEGIN PUBLIC KEY-----".into(),
        "dGhpcyBpcyBzbWFsbA==".into(),
    ];
    let scanner = Scanner::new();
    for text in table {
        assert_eq!(scanner.find(&text), None, "{text}");
        assert!(scanner.is_clean(&text), "{text}");
        assert!(matches!(
            scanner.redact(&text),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}

#[test]
fn redact_replaces_every_hit_and_keeps_the_rest() {
    let scanner = configured();
    let token = format!("thss_{B64URL_43}");
    let key = concat!(
        "-----BEGIN RSA ",
        "PRIVATE KEY-----\\nMIIBOg==\\n-----END RSA ",
        "PRIVATE KEY-----"
    );
    let text = format!(
        "a Bearer abcdefghijklmnop0123 b toolhost_session={token}; c backend-token-0123 \
         d /home/ada/x.txt e {key}\" f"
    );
    assert_eq!(
        scanner.redact(&text),
        "a [redacted:bearer] b [redacted:cookie]; c [redacted:backend_secret] \
         d [redacted:host_path]/x.txt e [redacted:private_key]\" f"
    );
    assert!(scanner.is_clean(&scanner.redact(&text)));
}

#[test]
fn a_finding_made_by_a_replacement_is_redacted_too() {
    // `make fuzz` found it: the host path is no finding while a name goes
    // on past it, but once the bearer token after it is replaced it is.
    let scanner = Scanner::new().with_host_path(Path::new("/srv/toolhost"));
    let text = "at /srv/toolhostBearer abcdefghijklmnopqrstuvwxyz0123456789 end";
    let redacted = scanner.redact(text);
    assert!(scanner.is_clean(&redacted), "{redacted}");
    assert!(
        redacted.starts_with("at [redacted:host_path]"),
        "{redacted}"
    );
    assert!(!redacted.contains("abcdefghij"), "{redacted}");
}

#[test]
fn overlapping_hits_are_redacted_as_one() {
    let scanner = Scanner::new().with_secret("0123456789abcdef");
    let text = "x Bearer 0123456789abcdef y";
    assert_eq!(scanner.redact(text), "x [redacted:bearer] y");
    let scanner = Scanner::new().with_secret("mnop0123 tail");
    assert_eq!(
        scanner.redact("Bearer abcdefghijklmnop0123 tail!"),
        "[redacted:bearer]!"
    );
    assert_eq!(
        scanner.redact("Bearer abcdefghijklmnop0123 mnop0123 tail!"),
        "[redacted:bearer] [redacted:backend_secret]!"
    );
}

#[test]
fn find_gives_the_earliest_hit_of_either_source() {
    let scanner = configured();
    let text = format!("/home/ada then thrt_{B64URL_43} then backend-token-0123");
    assert_eq!(
        scanner.find(&text).map(|f| f.kind),
        Some(SecretKind::HostPath)
    );
    let text = format!("thrt_{B64URL_43} then /home/ada");
    assert_eq!(
        scanner.find(&text).map(|f| f.kind),
        Some(SecretKind::HostToken)
    );
}

#[test]
fn short_secrets_and_paths_are_ignored() {
    let scanner = Scanner::new()
        .with_secret("hunter2")
        .with_secret("")
        .with_host_path(Path::new("/"))
        .with_host_path(Path::new("/tmp"))
        .with_host_path(Path::new("/tmp/"))
        .with_host_path(Path::new("relative/dir"))
        .with_host_path(Path::new(""));
    assert_eq!(format!("{scanner:?}"), "Scanner { secrets: 0, paths: 0 }");
    assert!(scanner.is_clean("hunter2 in /tmp/x and relative/dir/y"));
    let scanner = Scanner::new().with_secret("hunter22");
    assert_eq!(
        scanner.find("pw=hunter22").map(|f| f.kind),
        Some(SecretKind::BackendSecret)
    );
}

#[test]
fn a_host_path_is_found_only_where_its_last_name_ends() {
    let scanner = Scanner::new()
        .with_host_path(Path::new("/srv/toolhost"))
        .with_host_path(Path::new("/srv/toolhost/cache"));
    let table = [
        ("/srv/toolhost", Some(0..13)),
        ("/srv/toolhost/plugins/a.wasm", Some(0..13)),
        ("file:///srv/toolhost/db", Some(7..20)),
        ("\"/srv/toolhost\"", Some(1..14)),
        ("kept in /srv/toolhost.", Some(8..21)),
        ("/srv/toolhost/cachex", Some(0..13)),
        ("/srv/toolhost/cache", Some(0..13)),
        ("/srv/toolhostile", None),
        ("/srv/toolhost-old/x", None),
        ("/srv/toolhost.db", None),
        ("/srv/toolhost_2", None),
        ("/srv/toolhosté", None),
    ];
    for (text, range) in table {
        assert_eq!(scanner.find(text).map(|f| f.range), range, "{text}");
    }
    assert_eq!(
        scanner.redact("/srv/toolhost/cache/x"),
        "[redacted:host_path]/x"
    );
}

#[test]
fn find_in_json_reaches_keys_and_nested_arrays() {
    let scanner = configured();
    let token = format!("thcs_{B64URL_43}");
    let table: [(Value, Option<SecretKind>); 5] = [
        (json!({"a": [1, [true, null, ["ok", {"b": "fine"}]]]}), None),
        (
            json!({"a": [1, [true, null, ["ok", {"b": token}]]]}),
            Some(SecretKind::HostToken),
        ),
        (json!({ token.clone(): 1 }), Some(SecretKind::HostToken)),
        (
            json!([[[["/home/ada/.cache"]]]]),
            Some(SecretKind::HostPath),
        ),
        (
            json!({"first": "backend-token-0123", "second": token}),
            Some(SecretKind::BackendSecret),
        ),
    ];
    for (value, kind) in table {
        assert_eq!(scanner.find_in_json(&value), kind, "{value}");
    }
}

#[test]
fn find_in_json_walks_deep_values_without_recursing() {
    let mut value = json!("backend-token-0123");
    for _ in 0..100_000 {
        value = Value::Array(vec![value]);
    }
    assert_eq!(
        configured().find_in_json(&value),
        Some(SecretKind::BackendSecret)
    );
    // Dropping a Value recurses: take it apart from the outside in.
    while let Value::Array(mut items) = value {
        value = items.pop().unwrap_or(Value::Null);
    }
}

#[test]
fn debug_output_never_holds_a_secret() {
    let secret = "backend-token-0123";
    let scanner = configured();
    let shown = format!("{scanner:?}");
    assert_eq!(shown, "Scanner { secrets: 1, paths: 2 }");
    let finding = scanner.find(&format!("x {secret}")).expect("found");
    let shown = format!("{shown} {finding:?} {:?}", scanner.clone());
    assert!(
        !shown.contains(secret) && !shown.contains("/home/ada"),
        "{shown}"
    );
}

#[test]
fn five_mebibytes_scan_in_one_pass() {
    let scanner = configured();
    let big = "x".repeat(5 << 20);
    let value = json!({ "out": big });
    let text = serde_json::to_string(&value).expect("serializes");
    assert!(scanner.is_clean(&text));
    assert_eq!(scanner.find_in_json(&value), None);
    let dirty = format!("{text}thrt_{B64URL_43}");
    assert_eq!(
        scanner.find(&dirty).map(|f| f.range.start),
        Some(text.len())
    );
    assert!(scanner.redact(&dirty).ends_with("}[redacted:host_token]"));
}

#[test]
fn the_scanner_is_shareable() {
    fn shareable<T: Clone + Send + Sync + 'static>() {}
    shareable::<Scanner>();
}
