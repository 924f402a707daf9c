//! The upstream identity provider is one adapter behind a trait: when it
//! vouches for a local user the browser is logged in; when it is down the
//! login page says so and the local password keeps working.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use toolhost_auth::upstream::{
    SignedIn, Sso, UpstreamError, UpstreamFuture, UpstreamIdentity, UpstreamLogin,
};
use toolhost_auth::{AuthConfig, AuthServer, AuthStore, admin, pkce};
use toolhost_storage::Store;

/// A test double for an OIDC provider: a code `ok-<username>` names the
/// user; `up` false makes every exchange fail as a down provider would.
/// (host/sso has the real relying party, tested against a real provider.)
struct FakeIdp {
    up: AtomicBool,
}

impl UpstreamIdentity for FakeIdp {
    fn name(&self) -> &str {
        "fake"
    }
    fn label(&self) -> &str {
        "Fake SSO"
    }
    fn authorization_url<'a>(&'a self, login: UpstreamLogin<'a>) -> UpstreamFuture<'a, String> {
        Box::pin(async move {
            Ok(format!(
                "https://idp.invalid/authorize?state={}&nonce={}",
                login.state, login.nonce
            ))
        })
    }
    fn sign_in<'a>(&'a self, code: &'a str, _: UpstreamLogin<'a>) -> UpstreamFuture<'a, SignedIn> {
        Box::pin(async move {
            if !self.up.load(Ordering::SeqCst) {
                return Err(UpstreamError::Unavailable("connection refused".into()));
            }
            code.strip_prefix("ok-")
                .map(|u| SignedIn {
                    username: u.into(),
                    subject: format!("sub-{u}"),
                    changes: vec![],
                })
                .ok_or_else(|| UpstreamError::Refused("bad code".into()))
        })
    }
}

struct Site {
    base: String,
    http: reqwest::Client,
    cookies: common::Jar,
}

impl Site {
    async fn send(&mut self, req: reqwest::RequestBuilder) -> (u16, Option<String>, String) {
        let resp = self.cookies.send(req).await;
        let status = resp.status().as_u16();
        let location = resp
            .headers()
            .get("location")
            .and_then(|l| l.to_str().ok())
            .map(str::to_owned);
        (status, location, resp.text().await.unwrap_or_default())
    }

    async fn get(&mut self, path: &str) -> (u16, Option<String>, String) {
        let req = self.http.get(format!("{}{path}", self.base));
        self.send(req).await
    }

    /// A POST of the form `pairs` to `path`, ready to send.
    fn post_form(&self, path: &str, pairs: &[(&str, String)]) -> reqwest::RequestBuilder {
        common::post_form(&self.http, format!("{}{path}", self.base), pairs)
    }
}

async fn serve(idp: Arc<FakeIdp>) -> (Site, Arc<AuthServer>) {
    serve_with(idp, true).await
}

async fn serve_with(idp: Arc<FakeIdp>, password_login: bool) -> (Site, Arc<AuthServer>) {
    let store = Arc::new(Store::connect("sqlite::memory:").await.expect("store"));
    let (listener, base) = common::bind().await;
    let sso = Sso {
        providers: vec![idp],
        audit: None,
    };
    let mut config = AuthConfig::new(base.clone());
    config.password_login = password_login;
    let auth = AuthServer::start_with_sso(config, store, sso)
        .await
        .expect("auth server");
    common::serve(listener, toolhost_auth::router(auth.clone()));
    let site = Site {
        base,
        http: common::browser(),
        cookies: common::Jar::default(),
    };
    (site, auth)
}

/// A public client and the path of an authorization request for it.
async fn client(auth: &AuthServer) -> String {
    let store: &dyn AuthStore = auth.store();
    store.ensure_tenant("demo", 0).await.expect("tenant");
    let c = common::admin_client("app", &["http://127.0.0.1:9/cb"]);
    store.insert_client(&c).await.expect("client");
    format!(
        "/oauth/authorize?response_type=code&client_id=app&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb&code_challenge={}&code_challenge_method=S256",
        pkce::s256("a-verifier-that-is-long-enough-0123456789abcdef")
    )
}

/// Opens the login page of a new authorization request, follows "Sign in
/// with Fake SSO" and returns the pending id and the `state` the browser
/// carries to the provider.
async fn leave_for_the_provider(site: &mut Site, authorize: &str) -> (String, String, String) {
    let (status, _, page) = site.get(authorize).await;
    assert_eq!(status, 200);
    assert!(page.contains("Sign in with Fake SSO"), "{page}");
    let marker = "/oauth/sso/fake/start?pending=";
    let at = page.find(marker).expect("the provider's link") + marker.len();
    let pending = page[at..at + page[at..].find('"').expect("a quote")].to_owned();
    let (status, location, _) = site.get(&format!("{marker}{pending}")).await;
    assert_eq!(status, 303);
    let location = location.expect("to the idp");
    assert!(location.starts_with("https://idp.invalid/authorize?state="));
    let url = url::Url::parse(&location).expect("a URL");
    let state = url
        .query_pairs()
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.into_owned())
        .expect("a state");
    (pending, state, page)
}

#[tokio::test]
async fn the_upstream_logs_a_user_in_and_its_outage_leaves_password_login_working() {
    let idp = Arc::new(FakeIdp {
        up: AtomicBool::new(false),
    });
    let (mut site, auth) = serve(idp.clone()).await;
    admin::add_user(auth.store(), "demo", "alice", "alice-password")
        .await
        .expect("alice");
    let authorize = client(&auth).await;

    // The provider is down: the page says so; the password still works.
    let (pending, state, _) = leave_for_the_provider(&mut site, &authorize).await;
    let (status, _, page) = site
        .get(&format!(
            "/oauth/sso/fake/callback?code=ok-alice&state={state}"
        ))
        .await;
    assert_eq!(status, 502);
    assert!(page.contains("use your password"), "{page}");
    let form = [
        ("pending", pending.clone()),
        ("csrf", common::field(&page, "csrf")),
        ("username", "alice".into()),
        ("password", "alice-password".into()),
    ];
    let req = site.post_form("/oauth/login", &form);
    let (status, location, _) = site.send(req).await;
    assert_eq!(
        (status, location.as_deref()),
        (
            303,
            Some(format!("/oauth/consent?pending={pending}").as_str())
        )
    );

    // The provider is back: a fresh browser is logged in through it alone.
    idp.up.store(true, Ordering::SeqCst);
    site.cookies.clear();
    let (pending, state, _) = leave_for_the_provider(&mut site, &authorize).await;
    let (status, location, _) = site
        .get(&format!(
            "/oauth/sso/fake/callback?code=ok-alice&state={state}"
        ))
        .await;
    assert_eq!(status, 303);
    assert_eq!(
        location.as_deref(),
        Some(format!("/oauth/consent?pending={pending}").as_str())
    );
    let (status, _, consent) = site.get(&location.expect("to consent")).await;
    assert_eq!(status, 200);
    assert!(
        consent.contains("Signed in as <strong>alice</strong>"),
        "{consent}"
    );
    // The state was good once.
    let (status, _, _) = site
        .get(&format!(
            "/oauth/sso/fake/callback?code=ok-alice&state={state}"
        ))
        .await;
    assert_eq!(status, 400);

    // It cannot vouch for someone who has no local account.
    site.cookies.clear();
    let (_, state, _) = leave_for_the_provider(&mut site, &authorize).await;
    let (status, _, page) = site
        .get(&format!(
            "/oauth/sso/fake/callback?code=ok-mallory&state={state}"
        ))
        .await;
    assert_eq!(status, 403, "{page}");

    let kinds: Vec<String> = auth
        .store()
        .recent_events(20)
        .await
        .expect("events")
        .into_iter()
        .map(|e| e.kind)
        .collect();
    for kind in ["sso.login", "sso.login.failed"] {
        assert!(kinds.iter().any(|k| k == kind), "{kind} in {kinds:?}");
    }
}

#[tokio::test]
async fn with_passwords_off_the_page_offers_only_the_provider_and_a_password_post_is_refused() {
    let idp = Arc::new(FakeIdp {
        up: AtomicBool::new(true),
    });
    let (mut site, auth) = serve_with(idp, false).await;
    admin::add_user(auth.store(), "demo", "alice", "alice-password")
        .await
        .expect("alice");
    let authorize = client(&auth).await;
    let (pending, _, page) = leave_for_the_provider(&mut site, &authorize).await;
    assert!(!page.contains("type=\"password\""), "{page}");
    // The form is not offered, and posting it anyway is refused.
    let (_, _, signin) = site
        .get("/oauth/signin?return_to=%2Foauth%2Fapprovals")
        .await;
    assert!(!signin.contains("type=\"password\""), "{signin}");
    assert!(signin.contains("Sign in with Fake SSO"), "{signin}");
    let form = [
        ("pending", pending),
        ("csrf", "whatever".into()),
        ("username", "alice".into()),
        ("password", "alice-password".into()),
    ];
    let req = site.post_form("/oauth/login", &form);
    let (status, _, page) = site.send(req).await;
    assert_eq!(status, 403, "{page}");
    assert!(page.contains("Password sign-in is turned off"), "{page}");
}
