//! Helpers shared by the OAuth end-to-end tests: registering clients,
//! token requests, forms, query strings, admin output.

use std::collections::BTreeMap;

use serde_json::Value;
use toolhost_auth::pkce;

use super::{Answer, DEMO_PASSWORD, Server, exchange, exchange_full, post_form};

/// A redirect URI nobody listens on: the browser stops at the redirect.
pub const REDIRECT: &str = "http://127.0.0.1:9/callback";
/// The PKCE verifier the Rust-driven flows use.
pub const VERIFIER: &str = "e2e-verifier-0123456789-abcdefghijklmnopqrstuvwxyz";

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
    let (status, answer) = post_form(&server.url, "/oauth/token", body);
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

/// A cookie-holding HTTP client for the login and consent pages.
#[derive(Default)]
pub struct Browser {
    cookies: BTreeMap<String, String>,
}

impl Browser {
    pub fn send(
        &mut self,
        server: &Server,
        method: &str,
        path: &str,
        form: Option<&str>,
    ) -> Answer {
        let cookie = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let mut headers = vec![("Cookie", cookie.as_str())];
        if form.is_some() {
            headers.push(("Content-Type", "application/x-www-form-urlencoded"));
        }
        let answer = exchange_full(&server.url, method, path, &headers, form.unwrap_or(""));
        for (name, value) in &answer.headers {
            if name == "set-cookie"
                && let Some((k, v)) = value.split(';').next().and_then(|c| c.split_once('='))
            {
                self.cookies.insert(k.trim().into(), v.trim().into());
            }
        }
        answer
    }

    /// A browser signed in to the console as `user`.
    pub fn console(server: &Server, user: &str, password: &str) -> Browser {
        let mut browser = Browser::default();
        let login = browser.send(server, "GET", "/oauth/signin?return_to=%2Fadmin", None);
        browser.sign_in(server, &login, user, password);
        browser
    }

    /// Signs in as `user` on the sign-in page `login`, which must have been
    /// shown (200); the redirect it answers with (303).
    pub fn sign_in(
        &mut self,
        server: &Server,
        login: &Answer,
        user: &str,
        password: &str,
    ) -> Answer {
        assert_eq!(login.status, 200, "{}", login.body);
        let back = self.submit(server, login, &[("username", user), ("password", password)]);
        assert_eq!(back.status, 303, "{}", back.body);
        back
    }

    /// Submits the page's form (its hidden fields plus `fields`).
    pub fn submit(&mut self, server: &Server, page: &Answer, fields: &[(&str, &str)]) -> Answer {
        let action = attribute(&page.body, "action=\"").expect("a form");
        let mut form: Vec<(String, String)> = hidden_fields(&page.body);
        form.extend(fields.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let body = form
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        self.send(server, "POST", &action, Some(&body))
    }
}

pub fn attribute(html: &str, prefix: &str) -> Option<String> {
    let start = html.find(prefix)? + prefix.len();
    let end = html[start..].find('"')? + start;
    Some(html[start..end].replace("&amp;", "&"))
}

pub fn hidden_fields(html: &str) -> Vec<(String, String)> {
    html.split("<input type=\"hidden\" ")
        .skip(1)
        .filter_map(|chunk| Some((attribute(chunk, "name=\"")?, attribute(chunk, "value=\"")?)))
        .collect()
}

pub fn authorize_path(client_id: &str, extra: &str) -> String {
    format!(
        "/oauth/authorize?response_type=code&client_id={}&redirect_uri={}&state=s1&code_challenge={}&code_challenge_method=S256{extra}",
        encode(client_id),
        encode(REDIRECT),
        pkce::s256(VERIFIER)
    )
}

/// Logs in as `user` and approves; returns the redirect's `Location`.
pub fn approve(
    server: &Server,
    browser: &mut Browser,
    client_id: &str,
    user: &str,
    password: &str,
) -> String {
    approve_with(server, browser, client_id, (user, password), "")
}

/// [`approve`] of an authorization request with `extra` query parameters
/// (`&name=value…`).
pub fn approve_with(
    server: &Server,
    browser: &mut Browser,
    client_id: &str,
    (user, password): (&str, &str),
    extra: &str,
) -> String {
    let page = browser.send(server, "GET", &authorize_path(client_id, extra), None);
    if page.status == 302 {
        return page.header("location").expect("a location").to_owned();
    }
    assert_eq!(page.status, 200, "login page: {}", page.body);
    let after = browser.submit(server, &page, &[("username", user), ("password", password)]);
    assert_eq!(after.status, 303, "login: {}", after.body);
    let consent_path = after.header("location").expect("to consent").to_owned();
    let consent = browser.send(server, "GET", &consent_path, None);
    if consent.status == 302 {
        return consent.header("location").expect("a location").to_owned();
    }
    assert_eq!(consent.status, 200, "consent page: {}", consent.body);
    let done = browser.submit(server, &consent, &[("decision", "allow")]);
    assert_eq!(done.status, 302, "consent: {}", done.body);
    done.header("location").expect("a location").to_owned()
}

/// A fresh code for the demo user.
pub fn code(server: &Server, client_id: &str) -> String {
    let location = approve(
        server,
        &mut Browser::default(),
        client_id,
        "demo",
        DEMO_PASSWORD,
    );
    assert!(location.starts_with(REDIRECT), "{location}");
    query(&location, "code").expect("a code")
}

pub fn redeem(server: &Server, client_id: &str, code: &str, verifier: &str) -> (u16, Value) {
    token(
        server,
        &format!(
            "grant_type=authorization_code&client_id={}&code={code}&redirect_uri={}&code_verifier={verifier}",
            encode(client_id),
            encode(REDIRECT)
        ),
    )
}

/// A stateless `tools/list` with `authorization`; its status and answer.
pub fn list_tools(server: &Server, authorization: &str) -> Answer {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ];
    if !authorization.is_empty() {
        headers.push(("Authorization", authorization));
    }
    exchange_full(&server.url, "POST", "/mcp", &headers, body)
}

pub fn bearer(t: &Value) -> String {
    format!(
        "Bearer {}",
        t["access_token"].as_str().expect("an access token")
    )
}

/// A bearer token of `username` (tenant of their account), through a new
/// registered client, the login and consent pages, and the code exchange.
pub fn user_token(server: &Server, username: &str, password: &str) -> String {
    let client = register(server, REDIRECT, "e2e");
    let location = approve(server, &mut Browser::default(), &client, username, password);
    let code = query(&location, "code").unwrap_or_else(|| panic!("no code in {location}"));
    let (status, tokens) = redeem(server, &client, &code, VERIFIER);
    assert_eq!(status, 200, "{tokens}");
    tokens["access_token"]
        .as_str()
        .expect("an access token")
        .to_owned()
}

/// Adds `ann`, a second person of tenant `demo` holding its admin role (an
/// approver); her generated password.
pub fn add_ann(server: &Server) -> String {
    let out = server.admin(&["user", "add", "ann", "--tenant", "demo"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let password = text
        .lines()
        .find_map(|l| l.strip_prefix("password: "))
        .unwrap_or_else(|| panic!("a generated password: {text}"))
        .to_owned();
    let granted = server.admin(&["grant", "admin", "ann", "--tenant", "demo"]);
    assert!(granted.status.success(), "{granted:?}");
    password
}

/// [`add_ann`], signed in: her access token.
pub fn approver(server: &Server) -> String {
    let password = add_ann(server);
    user_token(server, "ann", &password)
}
