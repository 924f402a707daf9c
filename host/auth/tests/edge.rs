//! The authorization server's edge under abuse (issue 38): redirect URIs,
//! error pages, pending authorizations and the per-source limits, driven
//! over HTTP against the real router and a SQLite store. The source address
//! of each request is set by the test (the `x-test-source` header becomes
//! the request's [`ClientAddr`], as the host's trusted-proxy layer would).

mod common;

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::{self, Next};
use toolhost_auth::{
    AuthCode, AuthConfig, AuthEvent, AuthServer, AuthStore, AuthStoreError, Client, ClientAddr,
    CodeRedemption, ConnectionAttempt, Family, KeyPurpose, LiveGrant, PendingAuthorization,
    PersonConnection, RefreshToken, SigningKey, SsoAttempt, SsoLink, StoreFuture, User, WebSession,
    admin, pkce,
};
use toolhost_storage::Store;

const VERIFIER: &str = "a-verifier-that-is-long-enough-0123456789abcdef";
const SOURCE_HEADER: &str = "x-test-source";

/// One answer: status, `Location`, `Retry-After` and body.
struct Answer {
    status: u16,
    location: Option<String>,
    retry_after: Option<String>,
    body: String,
}

/// An authorization server on a loopback port and a browser-like client
/// that keeps cookies and follows no redirect.
struct Site {
    base: String,
    auth: Arc<AuthServer>,
    http: reqwest::Client,
    cookies: common::Jar,
    source: IpAddr,
}

async fn serve() -> Site {
    serve_with(|_| {}).await
}

async fn serve_with(configure: impl FnOnce(&mut AuthConfig)) -> Site {
    let store = Arc::new(Store::connect("sqlite::memory:").await.expect("store"));
    serve_on(store, configure).await
}

async fn serve_on(store: Arc<dyn AuthStore>, configure: impl FnOnce(&mut AuthConfig)) -> Site {
    let (listener, base) = common::bind().await;
    let mut config = AuthConfig::new(base.clone());
    configure(&mut config);
    let auth = AuthServer::start(config, store).await.expect("auth server");
    let app = toolhost_auth::router(auth.clone()).layer(middleware::from_fn(source_from_header));
    common::serve(listener, app);
    Site {
        base,
        auth,
        http: common::browser(),
        cookies: common::Jar::default(),
        source: "192.0.2.1".parse().expect("an address"),
    }
}

/// A store that fails `insert_pending` the way a driver would, with a
/// message naming its table and file, while `broken` is set.
struct Faulty {
    inner: Store,
    broken: std::sync::atomic::AtomicBool,
}

/// What [`Faulty`] fails with: everything a caller must never see.
const DRIVER_MESSAGE: &str = "insert pending: error returned from database: (code: 13) \
     database or disk is full: oauth_pending at /var/lib/toolhost/toolhost.db (10.1.2.3:5432)";

/// Forwards each named method of [`AuthStore`] to the inner store.
macro_rules! forward {
    ($($name:ident(&self $(, $arg:ident: $ty:ty)*) -> $out:ty;)*) => {
        $(fn $name<'a>(&'a self $(, $arg: $ty)*) -> StoreFuture<'a, $out> {
            self.inner.$name($($arg),*)
        })*
    };
}

impl AuthStore for Faulty {
    fn insert_pending<'a>(&'a self, p: &'a PendingAuthorization) -> StoreFuture<'a, ()> {
        if self.broken.load(std::sync::atomic::Ordering::SeqCst) {
            return Box::pin(async { Err(AuthStoreError::Database(DRIVER_MESSAGE.into())) });
        }
        self.inner.insert_pending(p)
    }
    forward! {
        person_connection(&self, tenant: &'a str, user_id: &'a str, backend: &'a str) -> Option<PersonConnection>;
        put_person_connection(&self, c: &'a PersonConnection) -> ();
        refresh_person_connection(&self, sealed: &'a str, c: &'a PersonConnection) -> bool;
        delete_person_connection(&self, tenant: &'a str, user_id: &'a str, backend: &'a str) -> bool;
        person_connections(&self, tenant: &'a str, user_id: Option<&'a str>, limit: u32) -> Vec<PersonConnection>;
        insert_connection_attempt(&self, a: &'a ConnectionAttempt) -> ();
        take_connection_attempt(&self, state_hash: &'a str) -> Option<ConnectionAttempt>;
        ensure_tenant(&self, id: &'a str, now: i64) -> ();
        insert_user(&self, user: &'a User) -> ();
        user_by_name(&self, username: &'a str) -> Option<User>;
        user_by_id(&self, id: &'a str) -> Option<User>;
        users_of(&self, tenant: &'a str) -> Vec<User>;
        toolset_names(&self, tenant: &'a str) -> Vec<String>;
        set_password(&self, username: &'a str, hash: &'a str) -> bool;
        set_disabled(&self, username: &'a str, disabled: bool) -> bool;
        insert_client(&self, client: &'a Client) -> ();
        upsert_document_client(&self, client: &'a Client) -> ();
        client(&self, client_id: &'a str) -> Option<Client>;
        clients(&self) -> Vec<Client>;
        revoke_client(&self, client_id: &'a str, now: i64) -> bool;
        set_client_scope(&self, client_id: &'a str, scope: &'a str) -> bool;
        touch_client(&self, client_id: &'a str, now: i64) -> ();
        expire_idle_clients(&self, before: i64) -> u64;
        purge_expired(&self, before: i64) -> u64;
        insert_code(&self, code: &'a AuthCode) -> ();
        redeem_code(&self, code_hash: &'a str, now: i64) -> CodeRedemption;
        insert_family(&self, family: &'a Family) -> ();
        revoke_family(&self, id: &'a str, now: i64) -> bool;
        revoke_subject_families(&self, subject: &'a str, now: i64) -> u64;
        live_grant(&self, family_id: &'a str) -> Option<LiveGrant>;
        insert_refresh(&self, token: &'a RefreshToken) -> ();
        refresh_token(&self, token_hash: &'a str) -> Option<RefreshToken>;
        rotate_refresh(&self, old_hash: &'a str, next: &'a RefreshToken, now: i64) -> bool;
        signing_keys(&self, purpose: KeyPurpose) -> Vec<SigningKey>;
        insert_signing_key(&self, purpose: KeyPurpose, key: &'a SigningKey) -> ();
        retire_signing_key(&self, purpose: KeyPurpose, kid: &'a str, now: i64) -> ();
        insert_session(&self, session: &'a WebSession) -> ();
        session(&self, id_hash: &'a str) -> Option<WebSession>;
        delete_user_sessions(&self, user_id: &'a str) -> u64;
        pending(&self, id: &'a str) -> Option<PendingAuthorization>;
        take_pending(&self, id: &'a str) -> bool;
        count_pending(&self) -> u64;
        consent(&self, user_id: &'a str, client_id: &'a str) -> Option<String>;
        save_consent(&self, user_id: &'a str, client_id: &'a str, scope: &'a str, now: i64) -> ();
        insert_sso_attempt(&self, attempt: &'a SsoAttempt) -> ();
        take_sso_attempt(&self, state_hash: &'a str) -> Option<SsoAttempt>;
        sso_link(&self, provider: &'a str, subject: &'a str) -> Option<SsoLink>;
        sso_link_of_user(&self, provider: &'a str, user_id: &'a str) -> Option<SsoLink>;
        insert_sso_link(&self, link: &'a SsoLink) -> ();
        record_event(&self, event: &'a AuthEvent) -> ();
        recent_events(&self, limit: u32) -> Vec<AuthEvent>;
        count_hit(&self, bucket: &'a str, window_start: i64, window_end: i64) -> u64;
        spend_jwt(&self, key: &'a str, until: i64, now: i64) -> bool;
        client_keys(&self, client_id: &'a str) -> Option<String>;
        set_client_keys(&self, client_id: &'a str, jwks: &'a str, now: i64) -> ();
        tenant_requires_dpop(&self, tenant: &'a str) -> bool;
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
        let req = req.header(SOURCE_HEADER, self.source.to_string());
        let resp = self.cookies.send(req).await;
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|l| l.to_str().ok())
                .map(str::to_owned)
        };
        let (location, retry_after) = (header("location"), header("retry-after"));
        let status = resp.status().as_u16();
        let body = resp.text().await.unwrap_or_default();
        Answer {
            status,
            location,
            retry_after,
            body,
        }
    }

    async fn get(&mut self, path: &str) -> Answer {
        let req = self.http.get(format!("{}{path}", self.base));
        self.send(req).await
    }

    async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Answer {
        let req = common::post_form(&self.http, format!("{}{path}", self.base), form);
        self.send(req).await
    }

    async fn post_json(&mut self, path: &str, body: serde_json::Value) -> Answer {
        let req = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_string());
        self.send(req).await
    }

    /// Registers a public client for itself (RFC 7591); its id.
    async fn register(&mut self, redirect_uri: &str) -> String {
        let body = serde_json::json!({"redirect_uris": [redirect_uri], "client_name": "anyone"});
        let answer = self.post_json("/oauth/register", body).await;
        assert_eq!(answer.status, 201, "{}", answer.body);
        let client: serde_json::Value = serde_json::from_str(&answer.body).expect("JSON");
        client["client_id"]
            .as_str()
            .expect("a client_id")
            .to_owned()
    }

    /// Signs `ada` in on the login page `login` and allows the client;
    /// returns where the browser is sent.
    async fn sign_in_and_allow(&mut self, login: &str) -> String {
        let consent = self.sign_in(login).await;
        let page = self.get(&consent.location.expect("to consent")).await;
        assert_eq!(page.status, 200, "{}", page.body);
        let back = self
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
        back.location.expect("back to the client")
    }

    fn store(&self) -> &dyn AuthStore {
        self.auth.store()
    }

    /// A client registered by the operator (trusted) with these redirect URIs.
    async fn admin_client(&self, id: &str, redirect_uris: &[&str]) {
        self.store().ensure_tenant("demo", 0).await.expect("tenant");
        let client = common::admin_client(id, redirect_uris);
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
    let location = site.sign_in_and_allow(&login.body).await;
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

#[tokio::test]
async fn error_pages_name_no_address_and_no_storage_detail() {
    // A client id whose host resolves to loopback: the page says the
    // document could not be fetched, not where the name points.
    let mut site = serve().await;
    for client_id in [
        "https://localhost/client.json",
        "https://nonexistent.invalid/client.json",
    ] {
        let page = site
            .get(&authorize(client_id, "https://app.example/cb", &[]))
            .await;
        assert_eq!(page.status, 400, "{client_id}: {}", page.body);
        assert_eq!(page.location, None);
        assert!(page.body.contains("could not be fetched"), "{}", page.body);
        for leak in ["127.0.0.1", "::1", "resolve", "private address"] {
            assert!(
                !page.body.contains(leak),
                "{client_id} leaks {leak}: {}",
                page.body
            );
        }
    }

    // The store fails while a pending request is written: the page says
    // the service failed, and nothing of the driver's message.
    let inner = Store::connect("sqlite::memory:").await.expect("store");
    let faulty = Arc::new(Faulty {
        inner,
        broken: std::sync::atomic::AtomicBool::new(true),
    });
    let mut site = serve_on(faulty.clone(), |_| {}).await;
    site.admin_client("app", &["https://app.example/cb"]).await;
    let page = site
        .get(&authorize("app", "https://app.example/cb", &[]))
        .await;
    assert_eq!(page.status, 500, "{}", page.body);
    assert!(
        page.body.contains("The sign-in service failed"),
        "{}",
        page.body
    );
    for leak in [
        "database",
        "oauth_pending",
        "toolhost.db",
        "10.1.2.3",
        "code: 13",
    ] {
        assert!(!page.body.contains(leak), "leaks {leak}: {}", page.body);
    }
    faulty
        .broken
        .store(false, std::sync::atomic::Ordering::SeqCst);
    let page = site
        .get(&authorize("app", "https://app.example/cb", &[]))
        .await;
    assert_eq!(page.status, 200, "{}", page.body);
}

#[tokio::test]
async fn a_self_registered_client_gets_our_error_page_until_a_person_has_consented() {
    let mut site = serve().await;
    admin::add_user(site.store(), "demo", "ada", "ada-password")
        .await
        .expect("ada");
    let evil = "https://evil.example/landing";
    let client = site.register(evil).await;
    let broken = [
        (
            authorize(&client, evil, &[("scope", "admin")]),
            "invalid_scope",
        ),
        (
            authorize(&client, evil, &[("resource", "https://other.example/mcp")]),
            "invalid_target",
        ),
        (
            authorize(&client, evil, &[]).replace("method=S256", "method=plain"),
            "invalid_request",
        ),
        (
            authorize(&client, evil, &[]).replace("response_type=code", "response_type=token"),
            "unsupported_response_type",
        ),
    ];

    // Registered a second ago, nobody consented: each error is our page,
    // naming the error, with no redirect and no link to the client.
    for (path, error) in &broken {
        let page = site.get(path).await;
        assert_eq!(
            (page.status, page.location.as_deref()),
            (400, None),
            "{path}"
        );
        assert!(page.body.contains(error), "{error}: {}", page.body);
        assert!(!page.body.contains("evil.example"), "{}", page.body);
    }

    // An operator's client is trusted: the same error goes back to it.
    site.admin_client("operator-app", &["https://app.example/cb"])
        .await;
    let back = site
        .get(&authorize(
            "operator-app",
            "https://app.example/cb",
            &[("scope", "admin")],
        ))
        .await;
    assert_eq!(back.status, 302, "{}", back.body);
    let location = back.location.expect("back to the client");
    assert_eq!(
        query_param(&location, "error").as_deref(),
        Some("invalid_scope")
    );
    assert_eq!(query_param(&location, "state").as_deref(), Some("st"));

    // Once the person signed in here has consented to the client, its
    // errors go back to it with error, state and iss; success always did.
    let login = site.get(&authorize(&client, evil, &[])).await;
    assert_eq!(login.status, 200, "{}", login.body);
    let location = site.sign_in_and_allow(&login.body).await;
    assert!(
        location.starts_with("https://evil.example/landing?code="),
        "{location}"
    );
    for (path, error) in &broken {
        let back = site.get(path).await;
        assert_eq!(back.status, 302, "{error}: {}", back.body);
        let location = back.location.expect("back to the client");
        assert_eq!(query_param(&location, "error").as_deref(), Some(*error));
        assert_eq!(query_param(&location, "state").as_deref(), Some("st"));
        assert_eq!(
            query_param(&location, "iss").as_deref(),
            Some(site.base.as_str())
        );
    }

    // Another browser, not signed in: our page again.
    site.cookies.clear();
    let page = site
        .get(&authorize(&client, evil, &[("scope", "admin")]))
        .await;
    assert_eq!((page.status, page.location), (400, None));

    // Before the client and its redirect URI are verified: a page, even
    // for the person who consented.
    let unverified = site
        .get(&authorize(&client, "https://evil.example/other", &[]))
        .await;
    assert_eq!((unverified.status, unverified.location), (400, None));
}

/// Waits, if need be, so that what follows runs within one minute window
/// of the per-source limits (they count in fixed, epoch-aligned minutes).
async fn fresh_window() {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis();
    let into = now % 60_000;
    if into > 45_000 {
        let wait = u64::try_from(60_000 - into).expect("under a minute");
        tokio::time::sleep(std::time::Duration::from_millis(wait + 50)).await;
    }
}

#[tokio::test]
async fn registrations_are_counted_per_64_on_every_replica_together() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("two.db").display());
    let three = |c: &mut AuthConfig| c.registrations_per_minute = 3;
    let mut a = serve_on(Arc::new(Store::connect(&url).await.expect("store")), three).await;
    let mut b = serve_on(Arc::new(Store::connect(&url).await.expect("store")), three).await;
    fresh_window().await;
    let body = || serde_json::json!({"redirect_uris": ["https://app.example/cb"]});

    // Three addresses of one /64, on two replicas: three registrations.
    for i in 0..3 {
        let site = if i == 1 { &mut b } else { &mut a };
        site.source = format!("2001:db8:1:2::{}", i + 1).parse().expect("v6");
        let answer = site.post_json("/oauth/register", body()).await;
        assert_eq!(answer.status, 201, "{i}: {}", answer.body);
    }
    // A fourth address of that /64 on either replica: refused, with when
    // to come back.
    for site in [&mut b, &mut a] {
        site.source = "2001:db8:1:2:ffff:ffff:ffff:ffff".parse().expect("v6");
        let refused = site.post_json("/oauth/register", body()).await;
        assert_eq!(refused.status, 429, "{}", refused.body);
        assert!(refused.body.contains("rate_limited"), "{}", refused.body);
        let retry: u64 = refused
            .retry_after
            .expect("Retry-After")
            .parse()
            .expect("seconds");
        assert!((1..=60).contains(&retry), "{retry}");
    }
    // The next /64 and an IPv4 address are their own sources.
    b.source = "2001:db8:1:3::1".parse().expect("v6");
    assert_eq!(b.post_json("/oauth/register", body()).await.status, 201);
    b.source = "192.0.2.9".parse().expect("v4");
    assert_eq!(b.post_json("/oauth/register", body()).await.status, 201);
}

#[tokio::test]
async fn login_attempts_from_one_64_are_refused_once_over_the_limit() {
    let mut site = serve_with(|c| c.logins_per_minute = 3).await;
    admin::add_user(site.store(), "demo", "ada", "ada-password")
        .await
        .expect("ada");
    site.admin_client("app", &["https://app.example/cb"]).await;
    fresh_window().await;
    let login = site
        .get(&authorize("app", "https://app.example/cb", &[]))
        .await;
    assert_eq!(login.status, 200, "{}", login.body);
    let (pending, csrf) = (field(&login.body, "pending"), field(&login.body, "csrf"));
    let form = |password| {
        [
            ("pending", pending.as_str()),
            ("csrf", csrf.as_str()),
            ("username", "ada"),
            ("password", password),
        ]
    };
    for i in 1..=3 {
        site.source = format!("2001:db8:9:9::{i}").parse().expect("v6");
        let wrong = site.post("/oauth/login", &form("guess")).await;
        assert_eq!(wrong.status, 401, "{i}: {}", wrong.body);
    }
    // A new address in the same /64 is the same source: even the right
    // password waits.
    site.source = "2001:db8:9:9:abcd::1".parse().expect("v6");
    let refused = site.post("/oauth/login", &form("ada-password")).await;
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert!(refused.retry_after.is_some());
    // Another source signs in.
    site.source = "2001:db8:9:a::1".parse().expect("v6");
    let signed_in = site.post("/oauth/login", &form("ada-password")).await;
    assert_eq!(signed_in.status, 303, "{}", signed_in.body);
}

#[tokio::test]
async fn sign_in_forms_are_limited_per_source_and_in_number() {
    let mut site = serve_with(|c| {
        c.authorizations_per_minute = 5;
        c.max_pending = 8;
    })
    .await;
    site.admin_client("app", &["https://app.example/cb"]).await;
    fresh_window().await;
    let path = authorize("app", "https://app.example/cb", &[]);

    // One source (addresses of one /64): five forms, then a clear 429.
    for i in 1..=5 {
        site.source = format!("2001:db8:5:5::{i}").parse().expect("v6");
        let form = site.get(&path).await;
        assert_eq!(form.status, 200, "{i}: {}", form.body);
    }
    site.source = "2001:db8:5:5::99".parse().expect("v6");
    let refused = site.get(&path).await;
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert!(
        refused.body.contains("Too many sign-ins"),
        "{}",
        refused.body
    );
    let wait: u64 = refused
        .retry_after
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!((1..=60).contains(&wait), "{wait}");
    assert_eq!(site.store().count_pending().await.expect("count"), 5);

    // Other sources fill the store to its cap of eight rows; then even a
    // new source waits, and nothing more is stored.
    for i in 1..=3 {
        site.source = format!("198.51.100.{i}").parse().expect("v4");
        assert_eq!(site.get(&path).await.status, 200, "{i}");
    }
    site.source = "198.51.100.200".parse().expect("v4");
    let full = site.get(&path).await;
    assert_eq!(full.status, 429, "{}", full.body);
    assert!(full.retry_after.is_some());
    assert_eq!(site.store().count_pending().await.expect("count"), 8);
}

#[tokio::test]
async fn expired_sign_in_forms_are_pruned_to_make_room() {
    let mut site = serve_with(|c| {
        c.max_pending = 3;
        c.pending_ttl = std::time::Duration::from_secs(1);
    })
    .await;
    site.admin_client("app", &["https://app.example/cb"]).await;
    let path = authorize("app", "https://app.example/cb", &[]);
    for i in 1..=3 {
        site.source = format!("203.0.113.{i}").parse().expect("v4");
        assert_eq!(site.get(&path).await.status, 200, "{i}");
    }
    assert_eq!(site.get(&path).await.status, 429);
    // Once they expired, the full store purges them and serves again.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let form = site.get(&path).await;
    assert_eq!(form.status, 200, "{}", form.body);
    assert_eq!(site.store().count_pending().await.expect("count"), 1);
}
