//! The authorization server's edge under abuse (issue 38): redirect URIs,
//! error pages, pending authorizations and the per-source limits, driven
//! over HTTP against the real router and a SQLite store. The source address
//! of each request is set by the test (the `x-test-source` header becomes
//! the request's [`ClientAddr`], as the host's trusted-proxy layer would).

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::{self, Next};
use reqwest::redirect::Policy;
use toolhost_auth::{AuthConfig, AuthServer, AuthStore, Client, ClientAddr, admin, pkce};
use toolhost_storage::Store;

const VERIFIER: &str = "a-verifier-that-is-long-enough-0123456789abcdef";
const SOURCE_HEADER: &str = "x-test-source";

/// One answer: status, `Location` and body.
struct Answer {
    status: u16,
    location: Option<String>,
    body: String,
}

/// An authorization server on a loopback port and a browser-like client
/// that keeps cookies and follows no redirect.
struct Site {
    base: String,
    auth: Arc<AuthServer>,
    http: reqwest::Client,
    cookies: BTreeMap<String, String>,
    source: IpAddr,
}

async fn serve() -> Site {
    serve_with(|_| {}).await
}

async fn serve_with(configure: impl FnOnce(&mut AuthConfig)) -> Site {
    let store = Arc::new(Store::connect("sqlite::memory:").await.expect("store"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let mut config = AuthConfig::new(base.clone());
    configure(&mut config);
    let auth = AuthServer::start(config, store).await.expect("auth server");
    let app = toolhost_auth::router(auth.clone()).layer(middleware::from_fn(source_from_header));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serves") });
    let http = reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .expect("client");
    Site {
        base,
        auth,
        http,
        cookies: BTreeMap::new(),
        source: "192.0.2.1".parse().expect("an address"),
    }
}

/// Turns the test's `x-test-source` header into the request's client address.
async fn source_from_header(mut req: Request, next: Next) -> axum::response::Response {
    let ip = req
        .headers()
        .get(SOURCE_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<IpAddr>().ok());
    if let Some(ip) = ip {
        req.extensions_mut().insert(ClientAddr(ip));
    }
    next.run(req).await
}

impl Site {
    async fn send(&mut self, req: reqwest::RequestBuilder) -> Answer {
        let cookie = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let resp = req
            .header("cookie", cookie)
            .header(SOURCE_HEADER, self.source.to_string())
            .send()
            .await
            .expect("a response");
        for v in resp.headers().get_all("set-cookie") {
            if let Some((k, v)) = v
                .to_str()
                .ok()
                .and_then(|c| c.split(';').next())
                .and_then(|c| c.split_once('='))
            {
                self.cookies.insert(k.into(), v.into());
            }
        }
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|l| l.to_str().ok())
                .map(str::to_owned)
        };
        let location = header("location");
        let status = resp.status().as_u16();
        let body = resp.text().await.unwrap_or_default();
        Answer {
            status,
            location,
            body,
        }
    }

    async fn get(&mut self, path: &str) -> Answer {
        let req = self.http.get(format!("{}{path}", self.base));
        self.send(req).await
    }

    async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Answer {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let req = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        self.send(req).await
    }

    fn store(&self) -> &dyn AuthStore {
        self.auth.store()
    }

    /// A client registered by the operator (trusted) with these redirect URIs.
    async fn admin_client(&self, id: &str, redirect_uris: &[&str]) {
        self.store().ensure_tenant("demo", 0).await.expect("tenant");
        let client = Client {
            client_id: id.into(),
            secret_hash: None,
            kind: toolhost_auth::ClientKind::Public,
            origin: toolhost_auth::ClientOrigin::Admin,
            name: id.into(),
            redirect_uris: redirect_uris.iter().map(|u| (*u).to_owned()).collect(),
            scope: "mcp".into(),
            tenant: None,
            owner: None,
            created_at: 0,
            last_used_at: None,
            revoked_at: None,
            refresh_at: None,
        };
        self.store().insert_client(&client).await.expect("client");
    }

    /// Signs `ada` in on the login page `page` and returns the next answer
    /// (the consent page's redirect).
    async fn sign_in(&mut self, page: &str) -> Answer {
        let answer = self
            .post(
                "/oauth/login",
                &[
                    ("pending", &field(page, "pending")),
                    ("csrf", &field(page, "csrf")),
                    ("username", "ada"),
                    ("password", "ada-password"),
                ],
            )
            .await;
        assert_eq!(answer.status, 303, "{}", answer.body);
        answer
    }
}

/// The path of an authorization request.
fn authorize(client_id: &str, redirect_uri: &str, extra: &[(&str, &str)]) -> String {
    let challenge = pkce::s256(VERIFIER);
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    query.extend_pairs([
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", redirect_uri),
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
        ("state", "st"),
    ]);
    query.extend_pairs(extra);
    format!("/oauth/authorize?{}", query.finish())
}

/// The value of the hidden form field `name`.
fn field(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html.find(&marker).expect("the field") + marker.len();
    html[start..start + html[start..].find('"').expect("a quote")].to_owned()
}

/// The query parameter `name` of `url`.
fn query_param(url: &str, name: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()?
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

#[tokio::test]
async fn a_native_client_gets_its_code_on_whatever_loopback_port_it_listens() {
    let mut site = serve().await;
    admin::add_user(site.store(), "demo", "ada", "ada-password")
        .await
        .expect("ada");
    site.admin_client("cli", &["http://127.0.0.1:9/cb", "http://[::1]/cb"])
        .await;

    // Another port on the same loopback literal, same path: accepted, and
    // the code goes to that port and is redeemed with that redirect URI.
    let redirect = "http://127.0.0.1:50123/cb";
    let login = site.get(&authorize("cli", redirect, &[])).await;
    assert_eq!(login.status, 200, "{}", login.body);
    let consent = site.sign_in(&login.body).await;
    let location = consent.location.expect("to consent");
    let page = site.get(&location).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let back = site
        .post(
            "/oauth/consent",
            &[
                ("pending", &field(&page.body, "pending")),
                ("csrf", &field(&page.body, "csrf")),
                ("decision", "allow"),
            ],
        )
        .await;
    assert_eq!(back.status, 302, "{}", back.body);
    let location = back.location.expect("back to the client");
    assert!(
        location.starts_with("http://127.0.0.1:50123/cb?code="),
        "{location}"
    );
    let code = query_param(&location, "code").expect("a code");
    let token = site
        .post(
            "/oauth/token",
            &[
                ("grant_type", "authorization_code"),
                ("client_id", "cli"),
                ("code", &code),
                ("redirect_uri", redirect),
                ("code_verifier", VERIFIER),
            ],
        )
        .await;
    assert_eq!(token.status, 200, "{}", token.body);

    // IPv6 loopback too (the browser is signed in and consented: straight
    // back with a code); but the path, the query and the host still match
    // exactly, and nothing else is redirected.
    let v6 = site
        .get(&authorize("cli", "http://[::1]:61000/cb", &[]))
        .await;
    assert_eq!(v6.status, 302, "{}", v6.body);
    let location = v6.location.expect("back to the client");
    assert!(
        location.starts_with("http://[::1]:61000/cb?code="),
        "{location}"
    );
    for other in [
        "http://127.0.0.1:50123/elsewhere",
        "http://127.0.0.1:50123/cb?x=1",
        "http://127.0.0.2:9/cb",
        "http://localhost:9/cb",
        "https://127.0.0.1:9/cb",
    ] {
        let refused = site.get(&authorize("cli", other, &[])).await;
        assert_eq!(refused.status, 400, "{other}: {}", refused.body);
        assert_eq!(refused.location, None, "{other}");
        assert!(
            refused.body.contains("redirect_uri is not registered"),
            "{other}"
        );
    }
}
