//! What the authorization server's integration tests share: a server on a
//! loopback port, a browser's cookie jar, the operator's client and the
//! form posts of its endpoints. The SSO adapter's tests
//! (`host/sso/tests/oidc.rs`) drive the same server and include this file
//! by its path.

// Each test binary compiles this module and uses a different part of it.
#![allow(dead_code)]

use std::collections::BTreeMap;

use reqwest::redirect::Policy;
use toolhost_auth::{Client, ClientKind, ClientOrigin};

/// Unix seconds now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
        .try_into()
        .expect("fits")
}

/// A listener on a free loopback port, and its base URL.
pub async fn bind() -> (tokio::net::TcpListener, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    (listener, base)
}

/// Serves `app` on `listener` until the test's runtime ends.
pub fn serve(listener: tokio::net::TcpListener, app: axum::Router) {
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serves") });
}

/// Serves `auth`'s routes on a free loopback port: the base URL.
pub async fn serve_auth(auth: std::sync::Arc<toolhost_auth::AuthServer>) -> String {
    let (listener, base) = bind().await;
    serve(listener, toolhost_auth::router(auth));
    base
}

/// A client-credentials token request at `base` for service `client_id`
/// with `secret`, form `body`, and a `DPoP` proof if given: the token
/// endpoint's JSON answer.
pub async fn service_token(
    base: &str,
    client_id: &str,
    secret: &str,
    body: &str,
    dpop: Option<&str>,
) -> serde_json::Value {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/oauth/token"))
        .basic_auth(client_id, Some(secret))
        .header("content-type", "application/x-www-form-urlencoded");
    if let Some(proof) = dpop {
        request = request.header("dpop", proof);
    }
    let text = request.body(body.to_owned()).send().await.expect("token");
    let text = text.text().await.expect("a body");
    serde_json::from_str(&text).expect("json")
}

/// An HTTP client that follows no redirect, so a test sees each one.
pub fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .expect("client")
}

/// A public client `id` the operator registered, for scope `mcp`, that
/// may be sent back to `redirect_uris`.
pub fn admin_client(id: &str, redirect_uris: &[&str]) -> Client {
    Client {
        client_id: id.into(),
        secret_hash: None,
        kind: ClientKind::Public,
        origin: ClientOrigin::Admin,
        name: id.into(),
        redirect_uris: redirect_uris.iter().map(|u| (*u).to_owned()).collect(),
        scope: "mcp".into(),
        tenant: None,
        owner: None,
        created_at: 0,
        last_used_at: None,
        revoked_at: None,
        refresh_at: None,
    }
}

/// The value of the hidden input `name` in `html`.
pub fn field(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html.find(&marker).expect("the field") + marker.len();
    html[start..start + html[start..].find('"').expect("a quote")].to_owned()
}

/// `application/x-www-form-urlencoded` of `pairs`.
pub fn encode<V: AsRef<str>>(pairs: &[(&str, V)]) -> String {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        form.append_pair(k, v.as_ref());
    }
    form.finish()
}

/// A POST of the form `pairs` to `url`, ready to send.
pub fn post_form<V: AsRef<str>>(
    http: &reqwest::Client,
    url: String,
    pairs: &[(&str, V)],
) -> reqwest::RequestBuilder {
    http.post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(encode(pairs))
}

/// The cookies a browser keeps for the site under test.
#[derive(Default)]
pub struct Jar(pub BTreeMap<String, String>);

impl Jar {
    /// The `Cookie` header to send.
    pub fn header(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Keeps each cookie `resp` sets (name and value; attributes dropped).
    pub fn keep(&mut self, resp: &reqwest::Response) {
        for v in resp.headers().get_all("set-cookie") {
            if let Some((k, v)) = v
                .to_str()
                .ok()
                .and_then(|c| c.split(';').next())
                .and_then(|c| c.split_once('='))
            {
                self.0.insert(k.into(), v.into());
            }
        }
    }

    /// Sends `req` with the jar's cookies, and keeps those the answer sets.
    pub async fn send(&mut self, req: reqwest::RequestBuilder) -> reqwest::Response {
        let resp = req
            .header("cookie", self.header())
            .send()
            .await
            .expect("a response");
        self.keep(&resp);
        resp
    }

    /// Forgets every cookie (a browser whose session ended).
    pub fn clear(&mut self) {
        self.0.clear();
    }
}
