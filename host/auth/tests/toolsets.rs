//! A person binds a client to one of their tenant's toolsets at consent,
//! and the binding holds: in the code's token, through the bearer check
//! (though the client's registration never named it), through a refresh
//! that asks for less, and in the next authorization that skips consent.
//! A toolset the tenant does not define cannot be picked.

mod common;

use std::sync::Arc;

use toolhost_auth::{AuthConfig, AuthServer, AuthStore, admin, pkce};
use toolhost_policy::{PolicyStore, Toolset};
use toolhost_storage::Store;

const VERIFIER: &str = "a-verifier-that-is-long-enough-0123456789abcdef";

struct Site {
    base: String,
    http: reqwest::Client,
    cookies: common::Jar,
}

impl Site {
    /// GET `path`: status, `Location`, body.
    async fn get(&mut self, path: &str) -> (u16, Option<String>, String) {
        let req = self.http.get(format!("{}{path}", self.base));
        answer(self.cookies.send(req).await).await
    }

    /// POST the form `pairs` to `path`: status, `Location`, body.
    async fn post(&mut self, path: &str, pairs: &[(&str, &str)]) -> (u16, Option<String>, String) {
        let req = common::post_form(&self.http, format!("{}{path}", self.base), pairs);
        answer(self.cookies.send(req).await).await
    }
}

async fn answer(resp: reqwest::Response) -> (u16, Option<String>, String) {
    let status = resp.status().as_u16();
    let location = (resp.headers().get("location")).map(|v| v.to_str().expect("ascii").to_owned());
    (status, location, resp.text().await.expect("a body"))
}

/// The `code` of a redirect to the client.
fn code_of(location: &str) -> String {
    let url = url::Url::parse(location).expect("a URL");
    (url.query_pairs().find(|(k, _)| k == "code"))
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| panic!("no code in {location}"))
}

#[tokio::test]
async fn a_toolset_picked_at_consent_binds_the_token_its_refresh_and_the_next_authorization() {
    let store = Arc::new(Store::connect("sqlite::memory:").await.expect("store"));
    let (listener, base) = common::bind().await;
    let auth = AuthServer::start(AuthConfig::new(base.clone()), store.clone())
        .await
        .expect("auth server");
    common::serve(listener, toolhost_auth::router(auth.clone()));
    admin::add_user(store.as_ref(), "demo", "ada", "ada-password")
        .await
        .expect("ada");
    let client = common::admin_client("app", &["http://127.0.0.1:9/cb"]);
    store.insert_client(&client).await.expect("client");
    let crm = Toolset {
        name: "crm".into(),
        plugins: ["crm-core".to_owned()].into(),
        ..Toolset::default()
    };
    store.define_toolset("demo", &crm).await.expect("defined");
    let mut site = Site {
        base: base.clone(),
        http: common::browser(),
        cookies: common::Jar::default(),
    };
    let authorize = format!(
        "/oauth/authorize?response_type=code&client_id=app&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb&code_challenge={}&code_challenge_method=S256",
        pkce::s256(VERIFIER)
    );

    // Sign in; the consent page offers the tenant's toolsets.
    let (status, _, login) = site.get(&authorize).await;
    assert_eq!(status, 200, "{login}");
    let pending = common::field(&login, "pending");
    let csrf = common::field(&login, "csrf");
    let signed_in = [
        ("pending", pending.as_str()),
        ("csrf", csrf.as_str()),
        ("username", "ada"),
        ("password", "ada-password"),
    ];
    let (status, location, _) = site.post("/oauth/login", &signed_in).await;
    assert_eq!(status, 303);
    let (status, _, consent) = site.get(&location.expect("to consent")).await;
    assert_eq!(status, 200);
    assert!(consent.contains("<option value=\"crm\">"), "{consent}");
    let csrf = common::field(&consent, "csrf");

    // A toolset the tenant does not define cannot be picked.
    let mut form = vec![
        ("pending", pending.as_str()),
        ("csrf", csrf.as_str()),
        ("decision", "allow"),
        ("toolset", "finance"),
    ];
    let (status, location, page) = site.post("/oauth/consent", &form).await;
    assert!(location.is_none() && status >= 400, "{status} {page}");

    // Picked: the token is bound, though the client's registration says
    // only `mcp`.
    let (status, location, _) = site.get(&authorize).await;
    assert_eq!(status, 303, "signed in already: straight to consent");
    let (_, _, consent) = site.get(&location.expect("to consent")).await;
    let pending = common::field(&consent, "pending");
    let csrf = common::field(&consent, "csrf");
    form = vec![
        ("pending", pending.as_str()),
        ("csrf", csrf.as_str()),
        ("decision", "allow"),
        ("toolset", "crm"),
    ];
    let (status, location, _) = site.post("/oauth/consent", &form).await;
    assert_eq!(status, 302);
    let tokens = redeem(&site, &code_of(&location.expect("back to the client"))).await;
    assert_eq!(tokens["scope"], "mcp toolset:crm");
    let who = auth
        .authenticate(Some(&format!(
            "Bearer {}",
            tokens["access_token"].as_str().expect("a token")
        )))
        .await
        .expect("a principal");
    assert!(who.has_scope("toolset:crm"), "{:?}", who.scopes);

    // A refresh asking for less keeps the binding.
    let refresh = tokens["refresh_token"].as_str().expect("a refresh token");
    let refreshed = token(
        &site,
        &[
            ("grant_type", "refresh_token"),
            ("client_id", "app"),
            ("refresh_token", refresh),
            ("scope", "mcp"),
        ],
    )
    .await;
    assert_eq!(refreshed["scope"], "mcp toolset:crm", "{refreshed}");

    // The next authorization, consent remembered, carries the choice.
    let (status, location, _) = site.get(&authorize).await;
    assert_eq!(status, 302, "consent remembered: back with a code");
    let again = redeem(&site, &code_of(&location.expect("a code"))).await;
    assert_eq!(again["scope"], "mcp toolset:crm");
}

/// The tokens a code is redeemed for.
async fn redeem(site: &Site, code: &str) -> serde_json::Value {
    let form = [
        ("grant_type", "authorization_code"),
        ("client_id", "app"),
        ("code", code),
        ("redirect_uri", "http://127.0.0.1:9/cb"),
        ("code_verifier", VERIFIER),
    ];
    token(site, &form).await
}

async fn token(site: &Site, form: &[(&str, &str)]) -> serde_json::Value {
    let req = common::post_form(&site.http, format!("{}/oauth/token", site.base), form);
    let resp = req.send().await.expect("a response");
    assert_eq!(resp.status().as_u16(), 200);
    serde_json::from_slice(&resp.bytes().await.expect("a body")).expect("JSON")
}
