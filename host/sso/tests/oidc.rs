//! The relying party against a provider whose every answer the test
//! decides: the authorization server and the OIDC adapter are the real
//! ones, on a real listener and store; the provider is a small axum server
//! here that publishes a discovery document and an Ed25519 key set, checks
//! the client's secret and PKCE verifier at its token endpoint, and answers
//! with the ID token the test made (tests/e2e_sso.rs runs a real provider,
//! `oidc-provider`, with RSA keys, through the Python SDK's OAuth client).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Form, State};
use axum::http::HeaderMap;
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ed25519_dalek::pkcs8::{EncodePrivateKey, KeypairBytes};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use toolhost_auth::upstream::{Sso, SsoAudit};
use toolhost_auth::{AuthConfig, AuthEvent, AuthServer, AuthStore, admin, pkce};
use toolhost_policy::PolicyStore;
use toolhost_sso::{ClientSecret, OidcProvider, ProviderConfig, Provision};
use toolhost_storage::Store;

/// The authorization server's test kit: a loopback server, the cookie jar,
/// the operator's client, form posts.
#[path = "../../auth/tests/common/mod.rs"]
mod common;

const CLIENT_ID: &str = "toolhost";
const CLIENT_SECRET: &str = "the-client-secret";

// ---------------------------------------------------------------- provider

/// An Ed25519 signing key and its public half.
struct Key {
    kid: String,
    private_der: Vec<u8>,
    public_x: String,
}

impl Key {
    fn new(kid: &str) -> Key {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).expect("random");
        let signing = ed25519_dalek::SigningKey::from_bytes(&seed);
        let der = KeypairBytes {
            secret_key: seed,
            public_key: None,
        }
        .to_pkcs8_der()
        .expect("der");
        Key {
            kid: kid.into(),
            private_der: der.as_bytes().to_vec(),
            public_x: URL_SAFE_NO_PAD.encode(signing.verifying_key().to_bytes()),
        }
    }

    fn jwk(&self) -> Value {
        json!({"kty": "OKP", "crv": "Ed25519", "x": self.public_x, "kid": self.kid, "alg": "EdDSA", "use": "sig"})
    }

    fn sign(&self, claims: &Value) -> String {
        self.sign_typed(claims, None)
    }

    fn sign_typed(&self, claims: &Value, typ: Option<&str>) -> String {
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(self.kid.clone());
        header.typ = typ.map(Into::into);
        jsonwebtoken::encode(
            &header,
            claims,
            &EncodingKey::from_ed_der(&self.private_der),
        )
        .expect("signs")
    }
}

/// What the provider knows: its keys (the first signs) and the codes it
/// issued, each with the ID token it redeems for and the PKCE challenge.
#[derive(Default)]
struct Idp {
    issuer: String,
    keys: Vec<Key>,
    codes: HashMap<String, (String, String)>,
    down: bool,
}

type Shared = Arc<Mutex<Idp>>;

async fn discovery(State(idp): State<Shared>) -> Json<Value> {
    let issuer = idp.lock().expect("idp").issuer.clone();
    Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "jwks_uri": format!("{issuer}/jwks"),
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
    }))
}

async fn jwks(State(idp): State<Shared>) -> Json<Value> {
    let keys: Vec<Value> = idp.lock().expect("idp").keys.iter().map(Key::jwk).collect();
    Json(json!({ "keys": keys }))
}

async fn token(
    State(idp): State<Shared>,
    headers: HeaderMap,
    Form(form): Form<BTreeMap<String, String>>,
) -> (axum::http::StatusCode, Json<Value>) {
    use axum::http::StatusCode;
    if idp.lock().expect("idp").down {
        return (StatusCode::SERVICE_UNAVAILABLE, Json(json!({})));
    }
    let basic = format!(
        "Basic {}",
        STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
    );
    if headers.get("authorization").and_then(|h| h.to_str().ok()) != Some(basic.as_str()) {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": "invalid_client"})),
        );
    }
    let code = form.get("code").cloned().unwrap_or_default();
    let Some((id_token, challenge)) = idp.lock().expect("idp").codes.remove(&code) else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_grant"})),
        );
    };
    let verifier = form.get("code_verifier").cloned().unwrap_or_default();
    if pkce::s256(&verifier) != challenge {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_grant"})),
        );
    }
    (
        StatusCode::OK,
        Json(json!({"access_token": "at", "token_type": "Bearer", "id_token": id_token})),
    )
}

/// A running provider. `stop` closes its port: a down provider.
struct Provider {
    idp: Shared,
    base: String,
    task: tokio::task::JoinHandle<()>,
}

impl Provider {
    async fn start() -> Provider {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let idp = Arc::new(Mutex::new(Idp {
            issuer: base.clone(),
            keys: vec![Key::new("key-1")],
            codes: HashMap::new(),
            down: false,
        }));
        let app = Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/jwks", get(jwks))
            .route("/token", post(token))
            // A tenant path whose document names another issuer.
            .route("/tenant/.well-known/openid-configuration", get(discovery))
            .with_state(idp.clone());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("serves");
        });
        Provider { idp, base, task }
    }

    /// Issues `code`, redeemable once for `id_token` with the verifier of
    /// `challenge`.
    fn issue(&self, code: &str, id_token: String, challenge: &str) {
        self.idp
            .lock()
            .expect("idp")
            .codes
            .insert(code.into(), (id_token, challenge.into()));
    }

    fn sign(&self, claims: &Value) -> String {
        self.idp.lock().expect("idp").keys[0].sign(claims)
    }

    /// An identity assertion grant (ID-JAG) with `claims`, as `typ`.
    fn sign_id_jag(&self, claims: &Value, typ: &str) -> String {
        self.idp.lock().expect("idp").keys[0].sign_typed(claims, Some(typ))
    }

    /// Down: no new connection is accepted, and a kept-alive one is
    /// answered 503.
    async fn stop(self) {
        self.idp.lock().expect("idp").down = true;
        self.task.abort();
        let _ = self.task.await;
    }

    /// A new signing key replaces the old one in the key set.
    fn rotate(&self, kid: &str) {
        self.idp.lock().expect("idp").keys = vec![Key::new(kid)];
    }
}

// ---------------------------------------------------------------- host

/// The audit mirror: (kind, tenant, ok) of each SSO event.
#[derive(Default)]
struct Audit(Mutex<Vec<(String, Option<String>, bool)>>);

impl SsoAudit for Audit {
    fn record<'a>(
        &'a self,
        event: &'a AuthEvent,
        tenant: Option<&'a str>,
        ok: bool,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            self.0
                .lock()
                .expect("audit")
                .push((event.kind.clone(), tenant.map(str::to_owned), ok));
        })
    }
}

/// The host: an authorization server with provider `corp`, tenant `acme`
/// with roles `admin` and `viewer`, and a public client whose
/// authorization request opens the login page.
struct Host {
    base: String,
    http: reqwest::Client,
    cookies: common::Jar,
    store: Arc<Store>,
    audit: Arc<Audit>,
    authorize: String,
}

struct Reply {
    status: u16,
    location: Option<String>,
    page: String,
}

impl Host {
    async fn start(provider: &Provider, tweak: impl FnOnce(&mut ProviderConfig)) -> Host {
        let store = Arc::new(Store::connect("sqlite::memory:").await.expect("store"));
        let (listener, base) = common::bind().await;
        let mut config = ProviderConfig::new(
            "corp",
            provider.base.clone(),
            CLIENT_ID,
            ClientSecret::new(CLIENT_SECRET),
        );
        config.label = "Corp".into();
        config.roles = BTreeMap::from([("tool-admins".into(), vec!["admin".into()])]);
        tweak(&mut config);
        let oidc = OidcProvider::new(
            config,
            store.clone() as Arc<dyn AuthStore>,
            store.clone() as Arc<dyn PolicyStore>,
        )
        .expect("a provider");
        let audit = Arc::new(Audit::default());
        let sso = Sso {
            providers: vec![Arc::new(oidc)],
            audit: Some(audit.clone()),
        };
        let auth = AuthServer::start_with_sso(AuthConfig::new(base.clone()), store.clone(), sso)
            .await
            .expect("auth server");
        common::serve(listener, toolhost_auth::router(auth.clone()));

        store.ensure_tenant("acme", 0).await.expect("tenant");
        for role in ["admin", "viewer"] {
            PolicyStore::create_role(store.as_ref(), "acme", role, false)
                .await
                .expect("role");
        }
        let client = common::admin_client("app", &["http://127.0.0.1:9/cb"]);
        store.insert_client(&client).await.expect("client");
        let authorize = format!(
            "/oauth/authorize?response_type=code&client_id=app&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb&code_challenge={}&code_challenge_method=S256",
            pkce::s256("a-verifier-that-is-long-enough-0123456789abcdef")
        );
        Host {
            base,
            http: common::browser(),
            cookies: common::Jar::default(),
            store,
            audit,
            authorize,
        }
    }

    async fn send(&mut self, req: reqwest::RequestBuilder) -> Reply {
        let resp = self.cookies.send(req).await;
        Reply {
            status: resp.status().as_u16(),
            location: resp
                .headers()
                .get("location")
                .and_then(|l| l.to_str().ok())
                .map(str::to_owned),
            page: resp.text().await.unwrap_or_default(),
        }
    }

    async fn get(&mut self, path: &str) -> Reply {
        let req = self.http.get(format!("{}{path}", self.base));
        self.send(req).await
    }

    async fn user(&self, name: &str) -> toolhost_auth::User {
        admin::add_user(self.store.as_ref(), "acme", name, "a-long-password")
            .await
            .expect("user")
    }

    async fn roles_of(&self, username: &str) -> Vec<String> {
        let user = self
            .store
            .user_by_name(username)
            .await
            .expect("read")
            .expect("the user");
        PolicyStore::roles(self.store.as_ref(), "acme")
            .await
            .expect("roles")
            .into_iter()
            .filter(|r| r.members.contains(&user.id))
            .map(|r| r.name)
            .collect()
    }

    async fn events(&self) -> Vec<AuthEvent> {
        self.store.recent_events(100).await.expect("events")
    }

    /// Opens a new authorization request's login page, follows "Sign in
    /// with Corp", and returns where the browser was sent.
    async fn leave(&mut self) -> Trip {
        let authorize = self.authorize.clone();
        let login = self.get(&authorize).await;
        assert_eq!(login.status, 200, "{}", login.page);
        let marker = "/oauth/sso/corp/start?pending=";
        let at = login.page.find(marker).expect("the provider's link") + marker.len();
        let pending = login.page[at..at + login.page[at..].find('"').expect("quote")].to_owned();
        let start = self.get(&format!("{marker}{pending}")).await;
        assert_eq!(start.status, 303, "{}", start.page);
        let to = url::Url::parse(&start.location.expect("a location")).expect("a URL");
        let q: BTreeMap<String, String> = to.query_pairs().into_owned().collect();
        assert_eq!(q["client_id"], CLIENT_ID);
        assert_eq!(q["response_type"], "code");
        assert_eq!(q["code_challenge_method"], "S256");
        assert!(q["scope"].split(' ').any(|s| s == "openid"));
        assert_eq!(
            q["redirect_uri"],
            format!("{}/oauth/sso/corp/callback", self.base)
        );
        Trip {
            pending,
            state: q["state"].clone(),
            nonce: q["nonce"].clone(),
            challenge: q["code_challenge"].clone(),
        }
    }

    /// alice signs in with a good token; the token.
    async fn sign_in_alice(&mut self, provider: &Provider) -> String {
        let trip = self.leave().await;
        let token = provider.sign(&alice_claims(provider, &trip));
        signed_in(&self.back(provider, &trip, token.clone()).await, &trip);
        token
    }

    /// The provider answers `trip` with `id_token`; the browser returns.
    async fn back(&mut self, provider: &Provider, trip: &Trip, id_token: String) -> Reply {
        let code = format!("code-{}", trip.state);
        provider.issue(&code, id_token, &trip.challenge);
        self.get(&format!(
            "/oauth/sso/corp/callback?code={code}&state={}",
            trip.state
        ))
        .await
    }
}

/// One trip to the provider: what the host sent.
struct Trip {
    pending: String,
    state: String,
    nonce: String,
    challenge: String,
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
}

/// The claims of a good ID token for `trip`.
fn claims(provider: &Provider, trip: &Trip, sub: &str, email: &str, groups: &[&str]) -> Value {
    json!({
        "iss": provider.base,
        "aud": CLIENT_ID,
        "sub": sub,
        "email": email,
        "email_verified": true,
        "groups": groups,
        "nonce": trip.nonce,
        "iat": now(),
        "exp": now() + 300,
    })
}

/// [`claims`] for alice, in no group.
fn alice_claims(provider: &Provider, trip: &Trip) -> Value {
    alice_in(provider, trip, &[])
}

/// [`alice_claims`] with the provider's `groups`.
fn alice_in(provider: &Provider, trip: &Trip, groups: &[&str]) -> Value {
    claims(provider, trip, "sub-alice", "alice@example.com", groups)
}

fn signed_in(reply: &Reply, trip: &Trip) {
    assert_eq!(reply.status, 303, "{}", reply.page);
    assert_eq!(
        reply.location.as_deref(),
        Some(format!("/oauth/consent?pending={}", trip.pending).as_str())
    );
}

// ---------------------------------------------------------------- tests

#[tokio::test]
async fn a_person_signs_in_is_linked_and_gets_the_roles_their_groups_map_to() {
    let provider = Provider::start().await;
    let mut host = Host::start(&provider, |_| {}).await;
    let alice = host.user("alice@example.com").await;
    // A role the mapping does not name is the operator's and stays.
    PolicyStore::assign(host.store.as_ref(), "acme", "viewer", &alice.id)
        .await
        .expect("viewer");

    let trip = host.leave().await;
    let token = provider.sign(&alice_in(&provider, &trip, &["tool-admins", "staff"]));
    let reply = host.back(&provider, &trip, token).await;
    signed_in(&reply, &trip);
    let consent = host.get(&reply.location.expect("consent")).await;
    assert!(
        consent
            .page
            .contains("Signed in as <strong>alice@example.com</strong>"),
        "{}",
        consent.page
    );
    assert_eq!(
        host.roles_of("alice@example.com").await,
        ["admin", "viewer"]
    );

    // The group is removed at the provider: the role goes at the next login.
    host.cookies.clear();
    let trip = host.leave().await;
    let token = provider.sign(&alice_in(&provider, &trip, &["staff"]));
    signed_in(&host.back(&provider, &trip, token).await, &trip);
    assert_eq!(host.roles_of("alice@example.com").await, ["viewer"]);

    let events = host.events().await;
    let details = |kind: &str| -> Vec<String> {
        events
            .iter()
            .filter(|e| e.kind == kind)
            .map(|e| e.detail.clone())
            .collect()
    };
    assert_eq!(details("sso.login").len(), 2);
    assert_eq!(details("sso.linked").len(), 1, "linked once");
    assert_eq!(
        details("sso.roles"),
        [
            "corp: roles of \"alice@example.com\": -admin",
            "corp: roles of \"alice@example.com\": +admin",
        ]
    );
    assert!(
        events
            .iter()
            .filter(|e| e.kind.starts_with("sso."))
            .all(|e| e.subject.as_deref() == Some(alice.id.as_str()))
    );
    // The same events reached the audit trail, in the user's tenant.
    let audited = host.audit.0.lock().expect("audit").clone();
    assert_eq!(audited.len(), 5, "{audited:?}");
    assert!(
        audited
            .iter()
            .all(|(_, tenant, ok)| tenant.as_deref() == Some("acme") && *ok)
    );
}

#[tokio::test]
async fn a_groups_overage_keeps_the_mapped_roles_and_says_so_but_no_groups_claim_is_no_groups() {
    let provider = Provider::start().await;
    let mut host = Host::start(&provider, |_| {}).await;
    host.user("alice@example.com").await;
    let trip = host.leave().await;
    let token = provider.sign(&alice_in(&provider, &trip, &["tool-admins"]));
    signed_in(&host.back(&provider, &trip, token).await, &trip);
    assert_eq!(host.roles_of("alice@example.com").await, ["admin"]);

    // Too many groups: the provider points elsewhere instead (OpenID
    // Connect's distributed claims, Entra ID's overage), or says `hasgroups`.
    let overflowed: [fn(&mut serde_json::Map<String, Value>); 2] = [
        |c| {
            c.insert("_claim_names".into(), json!({"groups": "src1"}));
            c.insert(
                "_claim_sources".into(),
                json!({"src1": {"endpoint": "https://graph.example/me/getMemberObjects"}}),
            );
        },
        |c| {
            c.insert("hasgroups".into(), json!(true));
        },
    ];
    for overflow in overflowed {
        host.cookies.clear();
        let trip = host.leave().await;
        let mut claims = alice_in(&provider, &trip, &[]);
        let object = claims.as_object_mut().expect("claims");
        object.remove("groups");
        overflow(object);
        signed_in(
            &host.back(&provider, &trip, provider.sign(&claims)).await,
            &trip,
        );
        assert_eq!(host.roles_of("alice@example.com").await, ["admin"], "kept");
    }
    let overages: Vec<String> = host
        .events()
        .await
        .into_iter()
        .filter(|e| e.kind == "sso.groups_overage")
        .map(|e| e.detail)
        .collect();
    assert_eq!(overages.len(), 2, "{overages:?}");
    assert!(overages[0].contains("kept as they were"), "{overages:?}");

    // No groups claim and no sign of an overage: no groups, the role goes.
    host.cookies.clear();
    let trip = host.leave().await;
    let mut claims = alice_in(&provider, &trip, &[]);
    claims.as_object_mut().expect("claims").remove("groups");
    signed_in(
        &host.back(&provider, &trip, provider.sign(&claims)).await,
        &trip,
    );
    assert!(host.roles_of("alice@example.com").await.is_empty());
}

/// The ID-JAG claims for alice from `provider`, for client `agent` at `host`.
fn id_jag_claims(provider: &Provider, host: &Host) -> Value {
    json!({
        "iss": provider.base,
        "sub": "sub-alice",
        "email": "alice@example.com",
        "email_verified": true,
        "aud": host.base,
        "client_id": "agent",
        "resource": format!("{}/mcp", host.base),
        "scope": "mcp",
        "jti": toolhost_auth::secret::random(12),
        "iat": now(),
        "exp": now() + 300,
    })
}

impl Host {
    /// A confidential client `agent` (secret `agent-secret`).
    async fn agent(&self) {
        let mut agent = common::admin_client("agent", &["http://127.0.0.1:9/cb"]);
        agent.kind = toolhost_auth::ClientKind::Confidential;
        agent.secret_hash = Some(toolhost_auth::secret::digest("agent-secret"));
        self.store.insert_client(&agent).await.expect("agent");
    }

    /// The JWT-bearer grant with `assertion`, by `agent`: status and answer.
    async fn exchange(&self, assertion: &str) -> (u16, Value) {
        let form = common::encode(&[
            ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
            ("assertion", assertion),
        ]);
        let resp = reqwest::Client::new()
            .post(format!("{}/oauth/token", self.base))
            .basic_auth("agent", Some("agent-secret"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .expect("token");
        let status = resp.status().as_u16();
        let text = resp.text().await.expect("a body");
        (status, serde_json::from_str(&text).expect("JSON"))
    }
}

#[tokio::test]
async fn an_identity_assertion_grant_gets_the_person_a_token_once_and_every_bad_one_is_refused() {
    let provider = Provider::start().await;
    let host = Host::start(&provider, |c| c.id_jag = true).await;
    host.user("alice@example.com").await;
    host.agent().await;
    const TYP: &str = "oauth-id-jag+jwt";

    let assertion = provider.sign_id_jag(&id_jag_claims(&provider, &host), TYP);
    let (status, answer) = host.exchange(&assertion).await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer["access_token"].is_string(), "{answer}");
    assert_eq!(answer["scope"], "mcp", "{answer}");
    assert!(
        answer.get("refresh_token").is_none(),
        "no refresh token: {answer}"
    );

    let (status, answer) = host.exchange(&assertion).await;
    assert_eq!(
        (status, answer["error"].as_str()),
        (400, Some("invalid_grant")),
        "{answer}"
    );
    assert!(
        answer["error_description"]
            .as_str()
            .is_some_and(|d| d.contains("used before"))
    );

    type Tweak = fn(&mut Value, &Host);
    let cases: Vec<(&str, Tweak, &str)> = vec![
        (
            "another server",
            |c, _| c["aud"] = "https://other.example".into(),
            "another authorization server",
        ),
        (
            "another resource",
            |c, _| c["resource"] = "https://other.example/mcp".into(),
            "another resource",
        ),
        (
            "another client",
            |c, _| c["client_id"] = "someone-else".into(),
            "another client",
        ),
        ("expired", |c, _| c["exp"] = (now() - 120).into(), "expired"),
        (
            "a day long",
            |c, _| c["exp"] = (now() + 86_400).into(),
            "too long",
        ),
        (
            "no jti",
            |c, _| drop(c.as_object_mut().map(|o| o.remove("jti"))),
            "jti",
        ),
        (
            "a scope beyond it",
            |c, _| c["scope"] = "openid".into(),
            "beyond",
        ),
        (
            "another provider",
            |c, _| c["iss"] = "https://idp.other.example".into(),
            "no identity provider",
        ),
        (
            "nobody here",
            |c, _| {
                c["sub"] = "sub-bob".into();
                c["email"] = "bob@example.com".into();
            },
            "no account",
        ),
    ];
    for (what, tweak, says) in cases {
        let mut claims = id_jag_claims(&provider, &host);
        tweak(&mut claims, &host);
        let (status, answer) = host.exchange(&provider.sign_id_jag(&claims, TYP)).await;
        assert_eq!(status, 400, "{what}: {answer}");
        let description = answer["error_description"].as_str().unwrap_or_default();
        assert!(description.contains(says), "{what}: {answer}");
    }
    // An ID token is not an identity assertion.
    let as_id_token = provider.sign_id_jag(&id_jag_claims(&provider, &host), "JWT");
    let (status, answer) = host.exchange(&as_id_token).await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["error_description"]
            .as_str()
            .is_some_and(|d| d.contains("typ")),
        "{answer}"
    );

    let events = host.events().await;
    let count = |kind: &str| events.iter().filter(|e| e.kind == kind).count();
    assert_eq!(count("id_jag.granted"), 1);
    // 11 refusals; at most 10 a minute are kept per client (11 when the
    // test straddles a minute).
    assert!((10..=11).contains(&count("id_jag.refused")), "{events:?}");
    assert_eq!(count("sso.linked"), 1, "linked as a sign-in would link");
}

#[tokio::test]
async fn a_provider_not_trusted_for_identity_assertions_vouches_for_nobody() {
    let provider = Provider::start().await;
    let host = Host::start(&provider, |_| {}).await;
    host.user("alice@example.com").await;
    host.agent().await;
    let assertion = provider.sign_id_jag(&id_jag_claims(&provider, &host), "oauth-id-jag+jwt");
    let (status, answer) = host.exchange(&assertion).await;
    assert_eq!(
        (status, answer["error"].as_str()),
        (400, Some("invalid_grant")),
        "{answer}"
    );
}

#[tokio::test]
async fn every_bad_answer_is_refused_and_signs_nobody_in() {
    let provider = Provider::start().await;
    let mut host = Host::start(&provider, |_| {}).await;
    host.user("alice@example.com").await;

    // A good sign-in first: its token is replayed below.
    let good = host.sign_in_alice(&provider).await;

    let forger = {
        let k = Key::new("key-1");
        move |claims: &Value| k.sign(claims)
    };
    type Make = Box<dyn Fn(&Provider, &Trip) -> String>;
    let cases: Vec<(&str, Make, &str)> = vec![
        (
            "another audience",
            Box::new(|p, t| {
                let mut c = alice_claims(p, t);
                c["aud"] = json!("someone-else");
                p.sign(&c)
            }),
            "issued to another client",
        ),
        (
            "expired",
            Box::new(|p, t| {
                let mut c = alice_claims(p, t);
                c["iat"] = json!(now() - 7200);
                c["exp"] = json!(now() - 3600);
                p.sign(&c)
            }),
            "it has expired",
        ),
        (
            "replayed",
            Box::new(move |_, _| good.clone()),
            "nonce is not this sign-in's",
        ),
        (
            "a wrong nonce",
            Box::new(|p, t| {
                let mut c = alice_claims(p, t);
                c["nonce"] = json!("not-the-nonce");
                p.sign(&c)
            }),
            "nonce is not this sign-in's",
        ),
        (
            "an unknown issuer",
            Box::new(|p, t| {
                let mut c = alice_claims(p, t);
                c["iss"] = json!("https://evil.example");
                p.sign(&c)
            }),
            "issued by another issuer",
        ),
        (
            "a key the provider does not publish",
            Box::new(move |p, t| forger(&alice_claims(p, t))),
            "signature does not verify",
        ),
        (
            "a shared-secret algorithm",
            Box::new(|p, t| {
                jsonwebtoken::encode(
                    &Header::new(Algorithm::HS256),
                    &alice_claims(p, t),
                    &EncodingKey::from_secret(CLIENT_SECRET.as_bytes()).expect("key"),
                )
                .expect("signs")
            }),
            "algorithm HS256 is not accepted",
        ),
    ];
    for (what, make, why) in cases {
        host.cookies.clear();
        let trip = host.leave().await;
        let token = make(&provider, &trip);
        let reply = host.back(&provider, &trip, token).await;
        assert_eq!(reply.status, 401, "{what}: {}", reply.page);
        assert!(
            reply.page.contains("Corp did not sign you in"),
            "{what}: {}",
            reply.page
        );
        assert!(
            !host.cookies.0.contains_key("toolhost_session"),
            "{what}: signed in"
        );
        let failed = &host.events().await[0];
        assert_eq!(failed.kind, "sso.login.failed", "{what}");
        assert!(failed.detail.contains(why), "{what}: {}", failed.detail);
    }

    // The provider's own refusal, with markup in it, is shown as text.
    host.cookies.clear();
    let trip = host.leave().await;
    let reply = host
        .get(&format!(
            "/oauth/sso/corp/callback?error=access_denied&error_description=%3Cscript%3Ealert(1)%3C%2Fscript%3E%22&state={}",
            trip.state
        ))
        .await;
    assert_eq!(reply.status, 401);
    assert!(!reply.page.contains("<script>"), "{}", reply.page);
    assert!(
        reply
            .page
            .contains("access_denied: &lt;script&gt;alert(1)&lt;&#x2f;script&gt;&quot;"),
        "{}",
        reply.page
    );
}

#[tokio::test]
async fn a_state_is_good_once_and_only_in_the_browser_that_left() {
    let provider = Provider::start().await;
    let mut host = Host::start(&provider, |_| {}).await;
    host.user("alice@example.com").await;
    let forged = host
        .get("/oauth/sso/corp/callback?code=c&state=forged")
        .await;
    assert_eq!(forged.status, 400, "{}", forged.page);

    // Another browser arrives with this browser's state: refused, and the
    // state is spent for everyone.
    let trip = host.leave().await;
    let mine = std::mem::take(&mut host.cookies);
    let token = provider.sign(&alice_claims(&provider, &trip));
    assert_eq!(host.back(&provider, &trip, token.clone()).await.status, 400);
    host.cookies = mine;
    assert_eq!(host.back(&provider, &trip, token).await.status, 400);

    // Used once, it cannot be used again.
    let trip = host.leave().await;
    let token = provider.sign(&alice_claims(&provider, &trip));
    signed_in(&host.back(&provider, &trip, token.clone()).await, &trip);
    assert_eq!(host.back(&provider, &trip, token).await.status, 400);
    let failures = host
        .events()
        .await
        .into_iter()
        .filter(|e| e.kind == "sso.login.failed")
        .count();
    assert_eq!(failures, 4);
}

#[tokio::test]
async fn linking_refuses_disabled_users_reassigned_addresses_and_strangers() {
    let provider = Provider::start().await;
    let mut host = Host::start(&provider, |_| {}).await;
    host.user("alice@example.com").await;
    host.user("carol@example.com").await;
    admin::set_disabled(host.store.as_ref(), "carol@example.com", true)
        .await
        .expect("disable");

    host.sign_in_alice(&provider).await;

    let refusals: [(&str, &str, bool, &str); 4] = [
        ("sub-carol", "carol@example.com", true, "is disabled"),
        // Alice's address, now at another subject: not alice.
        (
            "sub-new",
            "alice@example.com",
            true,
            "linked to another subject",
        ),
        ("sub-bob", "bob@example.com", true, "no local user"),
        ("sub-dave", "dave@example.com", false, "has not verified"),
    ];
    for (sub, email, verified, why) in refusals {
        host.cookies.clear();
        let trip = host.leave().await;
        let mut c = claims(&provider, &trip, sub, email, &[]);
        c["email_verified"] = json!(verified);
        let reply = host.back(&provider, &trip, provider.sign(&c)).await;
        assert_eq!(reply.status, 403, "{email}: {}", reply.page);
        assert!(
            reply.page.contains("no enabled account here"),
            "{}",
            reply.page
        );
        let failed = &host.events().await[0];
        assert!(failed.detail.contains(why), "{email}: {}", failed.detail);
    }
    // A disabled user's subject was not linked either.
    assert_eq!(
        host.store
            .sso_link("corp", "sub-carol")
            .await
            .expect("read"),
        None
    );
}

#[tokio::test]
async fn with_provisioning_a_stranger_gets_an_account_in_the_configured_tenant() {
    let provider = Provider::start().await;
    let mut host = Host::start(&provider, |c| {
        c.claim = "preferred_username".into();
        c.provision = Some(Provision {
            tenant: "acme".into(),
            role: Some("viewer".into()),
        });
    })
    .await;
    let trip = host.leave().await;
    let mut c = claims(
        &provider,
        &trip,
        "sub-bob",
        "bob@example.com",
        &["tool-admins"],
    );
    c["preferred_username"] = json!("bob");
    signed_in(&host.back(&provider, &trip, provider.sign(&c)).await, &trip);
    let bob = host
        .store
        .user_by_name("bob")
        .await
        .expect("read")
        .expect("bob exists");
    assert_eq!(bob.tenant, "acme");
    assert_eq!(host.roles_of("bob").await, ["admin", "viewer"]);
    let kinds: Vec<String> = host.events().await.into_iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        ["sso.login", "sso.roles", "sso.linked", "sso.user.created"]
    );
    // Nobody knows the made-up password.
    host.cookies.clear();
    let page = host.get(&host.authorize.clone()).await.page;
    assert!(page.contains("type=\"password\""));
}

#[tokio::test]
async fn rotated_keys_are_fetched_and_a_provider_that_is_down_leaves_the_password() {
    let provider = Provider::start().await;
    let mut host = Host::start(&provider, |_| {}).await;
    host.user("alice@example.com").await;
    host.sign_in_alice(&provider).await;

    // The provider rotates: the old key is gone from its set.
    provider.rotate("key-2");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    host.cookies.clear();
    host.sign_in_alice(&provider).await;

    // Down: the person is told, and the password still works.
    host.cookies.clear();
    let trip = host.leave().await;
    provider.stop().await;
    let reply = host
        .get(&format!(
            "/oauth/sso/corp/callback?code=c&state={}",
            trip.state
        ))
        .await;
    assert_eq!(reply.status, 502, "{}", reply.page);
    assert!(
        reply
            .page
            .contains("Corp cannot be reached right now; use your password."),
        "{}",
        reply.page
    );
    let csrf = {
        let marker = "name=\"csrf\" value=\"";
        let at = reply.page.find(marker).expect("the form") + marker.len();
        reply.page[at..at + reply.page[at..].find('"').expect("quote")].to_owned()
    };
    let form = [
        ("pending", trip.pending.as_str()),
        ("csrf", &csrf),
        ("username", "alice@example.com"),
        ("password", "a-long-password"),
    ];
    let req = common::post_form(&host.http, format!("{}/oauth/login", host.base), &form);
    let login = host.send(req).await;
    signed_in(&login, &trip);
}

#[tokio::test]
async fn a_discovery_document_naming_another_issuer_is_refused() {
    let provider = Provider::start().await;
    let base = provider.base.clone();
    let mut host = Host::start(&provider, |c| c.issuer = format!("{base}/tenant")).await;
    let authorize = host.authorize.clone();
    let login = host.get(&authorize).await;
    let marker = "/oauth/sso/corp/start?pending=";
    let at = login.page.find(marker).expect("the link") + marker.len();
    let pending = login.page[at..at + login.page[at..].find('"').expect("quote")].to_owned();
    let start = host.get(&format!("{marker}{pending}")).await;
    assert_eq!(start.status, 401, "{}", start.page);
    let failed = &host.events().await[0];
    assert!(failed.detail.contains("names issuer"), "{}", failed.detail);
}
