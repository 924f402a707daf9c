//! Helpers shared by the OAuth end-to-end tests: registering clients,
//! token requests, forms, query strings, admin output.

use serde_json::Value;

use super::{Server, exchange};

/// Registers a public client by DCR (RFC 7591); returns its id.
pub fn register(server: &Server, redirect_uri: &str, name: &str) -> String {
    let body =
        serde_json::json!({"redirect_uris": [redirect_uri], "client_name": name}).to_string();
    let (status, answer) = exchange(
        &server.url,
        "POST",
        "/oauth/register",
        &[("Content-Type", "application/json")],
        &body,
    );
    let client = json(&answer);
    assert!(
        status == 201 && client["token_endpoint_auth_method"] == "none",
        "DCR of a public client answered {status}: {answer}"
    );
    client["client_id"]
        .as_str()
        .expect("a client_id")
        .to_owned()
}

/// A form POST to /oauth/token; the status and the JSON answer.
pub fn token(server: &Server, body: &str) -> (u16, Value) {
    let (status, answer) = exchange(
        &server.url,
        "POST",
        "/oauth/token",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        body,
    );
    (status, json(&answer))
}

pub fn json(body: &str) -> Value {
    serde_json::from_str(body.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

/// `application/x-www-form-urlencoded` (also a query string).
pub fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

pub fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The decoded value of `name` in `url`'s query, if it occurs once.
pub fn query(url: &str, name: &str) -> Option<String> {
    let (_, query) = url.split_once('?')?;
    let mut values = query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .filter(|(k, _)| *k == name)
        .map(|(_, v)| decode(v));
    let first = values.next()?;
    values.next().is_none().then_some(first)
}

pub fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An admin command's stdout; panics with its output if it failed.
pub fn stdout(out: &std::process::Output, what: &str) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "toolhost {what} failed ({}):\n{text}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The `client list` row of `client_id`.
pub fn client_line<'a>(listed: &'a str, client_id: &str) -> &'a str {
    listed
        .lines()
        .find(|l| l.split_whitespace().next() == Some(client_id))
        .unwrap_or_else(|| panic!("`client list` has no row for {client_id}:\n{listed}"))
}
