//! `Backends::send` against a tiny real HTTP server on 127.0.0.1:0 that
//! records every request it receives.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, to_bytes};
use axum::extract::State;
use axum::http::header::{HeaderMap, HeaderName, HeaderValue};
use axum::http::{Method as HttpMethod, StatusCode};
use axum::response::IntoResponse;
use tokio::net::TcpListener;
use toolhost_backend::{
    Access, Acting, Asserter, BackendAuth, BackendConfig, BackendError, Backends, ConfigError,
    ConnectionError, ConnectionFuture, Connector, ExchangeFuture, Exchanged, Exchanger, Identity,
    MAX_REQUEST_BODY, Method, Request, Response, Secret, TokenExchange,
};
use url::Url;

const SECRET: &str = "s3cret-token-0123456789";
const TENANT: &str = "acme";

/// What the server received.
#[derive(Debug, Clone)]
struct Seen {
    method: HttpMethod,
    uri: String,
    headers: HeaderMap,
    body: Vec<u8>,
}

#[derive(Debug, Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Seen>>>);

impl Recorder {
    fn push(&self, seen: Seen) {
        self.0.lock().expect("recorder lock").push(seen);
    }
    fn all(&self) -> Vec<Seen> {
        self.0.lock().expect("recorder lock").clone()
    }
}

struct Server {
    addr: SocketAddr,
    seen: Recorder,
}

impl Server {
    async fn start() -> Server {
        let seen = Recorder::default();
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(seen.clone());
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local addr");
        tokio::spawn(async move { axum::serve(listener, app).await });
        Server { addr, seen }
    }

    fn url(&self, path: &str) -> Url {
        format!("http://{}{path}", self.addr)
            .parse()
            .expect("valid URL")
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.all()
    }

    /// One backend `crm` at this server, with the secret as a bearer token.
    fn backends(&self, tweak: impl FnOnce(&mut BackendConfig)) -> Backends {
        let mut config = BackendConfig::new("crm", self.url("/"));
        config.credential = Some(Secret::new(SECRET.to_owned()));
        tweak(&mut config);
        Backends::new(vec![config]).expect("valid config")
    }
}

/// Records the request, then answers by its last path segment.
async fn handle(
    State(seen): State<Recorder>,
    req: axum::extract::Request,
) -> axum::response::Response {
    let (parts, body) = req.into_parts();
    let body = to_bytes(body, usize::MAX)
        .await
        .expect("request body")
        .to_vec();
    let route = parts
        .uri
        .path()
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_owned();
    let headers = parts.headers.clone();
    seen.push(Seen {
        method: parts.method,
        uri: parts.uri.to_string(),
        headers,
        body,
    });
    match route.as_str() {
        "echo" => echo(&parts.headers),
        "big" => vec![b'x'; 2048].into_response(),
        "big-stream" => {
            Body::from_stream(Body::from(vec![b'x'; 2048]).into_data_stream()).into_response()
        }
        "slow" => {
            tokio::time::sleep(Duration::from_secs(10)).await;
            "late".into_response()
        }
        "redirect" => {
            let headers = [
                ("location", "http://evil.example/"),
                ("set-cookie", "sid=1"),
            ];
            (StatusCode::FOUND, headers, "moved").into_response()
        }
        _ => ([("set-cookie", "sid=2"), ("x-route", "default")], "ok").into_response(),
    }
}

/// Every request header back, in the body and as `x-echo-<name>` headers.
fn echo(headers: &HeaderMap) -> axum::response::Response {
    let mut body = Vec::new();
    let mut echoed = HeaderMap::new();
    for (name, value) in headers {
        body.extend_from_slice(format!("{name}: ").as_bytes());
        body.extend_from_slice(value.as_bytes());
        body.push(b'\n');
        let echo_name = HeaderName::try_from(format!("x-echo-{name}")).expect("valid name");
        echoed.append(echo_name, value.clone());
    }
    (echoed, body).into_response()
}

fn access(declared: &[&str], safe_only: bool) -> Access {
    let declared: BTreeSet<String> = declared.iter().map(|s| (*s).to_owned()).collect();
    Access {
        declared: Arc::new(declared),
        tenant: TENANT.to_owned(),
        safe_only,
        exploration: false,
        acting: None,
    }
}

fn get(backend: &str, path: &str) -> Request {
    Request {
        backend: backend.to_owned(),
        method: Method::Get,
        path: path.to_owned(),
        headers: Vec::new(),
        body: None,
    }
}

fn header<'a>(response: &'a Response, name: &str) -> Option<&'a str> {
    response
        .headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[tokio::test]
async fn an_undeclared_or_unconfigured_backend_is_refused_and_nothing_is_sent() {
    let server = Server::start().await;
    let mut other = BackendConfig::new("other", server.url("/"));
    other.credential = Some(Secret::new(SECRET.to_owned()));
    let crm = BackendConfig::new("crm", server.url("/"));
    let backends = Backends::new(vec![crm, other]).expect("valid config");
    let who = access(&["crm", "ghost"], false);

    for name in ["other", "ghost"] {
        let err = backends
            .send(&who, get(name, "/x"))
            .await
            .expect_err("refused");
        assert_eq!(err, BackendError::NotDeclared(name.to_owned()));
    }
    let err = Backends::empty()
        .send(&who, get("crm", "/x"))
        .await
        .expect_err("refused");
    assert_eq!(err, BackendError::NotDeclared("crm".to_owned()));
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn safe_only_refuses_side_effects_and_allows_get_and_head() {
    let server = Server::start().await;
    let backends = server.backends(|_| {});
    let who = access(&["crm"], true);
    for method in [Method::Post, Method::Put, Method::Patch, Method::Delete] {
        let req = Request {
            method,
            ..get("crm", "/x")
        };
        let err = backends.send(&who, req).await.expect_err("refused");
        assert!(
            matches!(&err, BackendError::Refused(m) if m.contains("side effects")),
            "{err}"
        );
    }
    assert!(server.seen().is_empty());

    for method in [Method::Get, Method::Head] {
        let req = Request {
            method,
            ..get("crm", "/x")
        };
        let response = backends.send(&who, req).await.expect("allowed");
        assert_eq!(response.status, 200);
    }
    let methods: Vec<_> = server.seen().into_iter().map(|s| s.method).collect();
    assert_eq!(methods, [HttpMethod::GET, HttpMethod::HEAD]);
}

#[tokio::test]
async fn an_exploration_reaches_only_exploration_backends_and_only_reads() {
    let server = Server::start().await;
    let prod = BackendConfig::new("prod", server.url("/"));
    let mut sandbox = BackendConfig::new("sandbox", server.url("/"));
    sandbox.exploration = true;
    let backends = Backends::new(vec![prod, sandbox]).expect("valid config");
    assert!(backends.is_exploration("sandbox") && !backends.is_exploration("prod"));
    let who = Access {
        exploration: true,
        ..access(&["prod", "sandbox"], false)
    };
    let err = backends
        .send(&who, get("prod", "/x"))
        .await
        .expect_err("a production backend");
    assert!(
        matches!(&err, BackendError::Refused(m) if m.contains("not an exploration backend")),
        "{err}"
    );
    let post = Request {
        method: Method::Post,
        ..get("sandbox", "/x")
    };
    let err = backends.send(&who, post).await.expect_err("a write");
    assert!(
        matches!(&err, BackendError::Refused(m) if m.contains("exploration run")),
        "{err}"
    );
    assert!(server.seen().is_empty(), "nothing was sent");
    let read = backends.send(&who, get("sandbox", "/x")).await;
    assert_eq!(read.expect("a read of the sandbox").status, 200);
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn paths_that_could_leave_the_base_are_refused_and_nothing_is_sent() {
    let server = Server::start().await;
    let backends = server.backends(|_| {});
    let who = access(&["crm"], false);
    let paths = [
        "//evil.example/x",
        "http://evil/x",
        "/../x",
        "/a/%2e%2e/b",
        "\\x",
        "/a@b",
    ];
    for path in paths {
        let err = backends.send(&who, get("crm", path)).await.expect_err(path);
        assert!(matches!(err, BackendError::Refused(_)), "{path}: {err}");
    }
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn the_plugins_credential_tenant_and_cookie_are_replaced_by_the_hosts() {
    let server = Server::start().await;
    let backends = server.backends(|_| {});
    let plugin_headers = [
        ("Authorization", "Bearer forged"),
        ("X-Tenant", "someone-else"),
        ("Cookie", "sid=stolen"),
        ("X-Forwarded-For", "10.0.0.1"),
        ("Content-Type", "application/json"),
    ];
    let req = Request {
        method: Method::Post,
        headers: plugin_headers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect(),
        body: Some(b"{\"a\":1}".to_vec()),
        ..get("crm", "/items?limit=5")
    };
    let response = backends
        .send(&access(&["crm"], false), req)
        .await
        .expect("sent");
    assert_eq!(response.status, 200);

    let seen = server.seen().pop().expect("one request");
    let values = |name: &str| -> Vec<&[u8]> {
        seen.headers
            .get_all(name)
            .iter()
            .map(HeaderValue::as_bytes)
            .collect()
    };
    assert_eq!(
        values("authorization"),
        [format!("Bearer {SECRET}").as_bytes()]
    );
    assert_eq!(values("x-tenant"), [TENANT.as_bytes()]);
    assert!(values("cookie").is_empty());
    assert!(values("x-forwarded-for").is_empty());
    assert_eq!(values("content-type"), [&b"application/json"[..]]);
    assert_eq!(
        (seen.method, seen.uri.as_str()),
        (HttpMethod::POST, "/items?limit=5")
    );
    assert_eq!(seen.body, b"{\"a\":1}");
}

#[tokio::test]
async fn an_echoed_credential_comes_back_redacted_in_body_and_headers() {
    let server = Server::start().await;
    let bearer = server.backends(|_| {});
    let api_key = server.backends(|c| c.credential_header = "X-Api-Key".to_owned());
    for backends in [bearer, api_key] {
        let response = backends
            .send(&access(&["crm"], false), get("crm", "/echo"))
            .await
            .expect("sent");
        let body = String::from_utf8(response.body.clone()).expect("utf-8");
        assert!(!body.contains(SECRET), "{body}");
        assert!(body.contains("[redacted]"), "{body}");
        for (name, value) in &response.headers {
            assert!(!value.contains(SECRET), "{name}: {value}");
        }
        let echoed = ["x-echo-authorization", "x-echo-x-api-key"].map(|n| header(&response, n));
        assert!(
            echoed.contains(&Some("[redacted]")),
            "{:?}",
            response.headers
        );
        assert_eq!(
            header(&response, "content-length"),
            Some(body.len().to_string().as_str())
        );
    }
    let sent: Vec<_> = server.seen().into_iter().map(|s| s.headers).collect();
    assert_eq!(
        sent[1].get("x-api-key").map(HeaderValue::as_bytes),
        Some(SECRET.as_bytes())
    );
    assert!(sent[1].get("authorization").is_none());
}

/// Signs `assertion-<n>-for-<audience>-<subject>`, counting signatures.
#[derive(Default)]
struct Numbered(std::sync::atomic::AtomicUsize);

impl Asserter for Numbered {
    fn assert(&self, who: &Identity, audience: &str) -> Result<String, String> {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(format!("assertion-{n}-for-{audience}-{}", who.subject))
    }
}

fn acting(subject: &str) -> Acting {
    Acting::new(Identity {
        subject: subject.into(),
        kind: "user",
        tenant: TENANT.into(),
        client_id: "client-1".into(),
        tool: "list_items".into(),
        call_id: "call-1".into(),
    })
}

/// A request whose plugin forged the assertion header.
fn forging(path: &str) -> Request {
    Request {
        headers: vec![("X-Toolhost-Assertion".into(), "forged".into())],
        ..get("crm", path)
    }
}

#[tokio::test]
async fn a_backend_told_who_acts_gets_the_calls_assertion_in_place_of_the_plugins() {
    let server = Server::start().await;
    let backends = server.backends(|c| c.auth = BackendAuth::CredentialAndAssertion);
    let signer = Arc::new(Numbered::default());
    backends.assert_with(signer.clone());
    let who = Access {
        acting: Some(acting("u_ann")),
        ..access(&["crm"], false)
    };
    for _ in 0..3 {
        backends.send(&who, forging("/x")).await.expect("sent");
    }
    let echoed = backends.send(&who, forging("/echo")).await.expect("sent");
    let sent: Vec<_> = server.seen().into_iter().map(|s| s.headers).collect();
    for headers in &sent {
        let values: Vec<_> = headers.get_all("x-toolhost-assertion").iter().collect();
        assert_eq!(
            values,
            [&HeaderValue::from_static("assertion-0-for-crm-u_ann")]
        );
        assert_eq!(
            headers.get("authorization").map(HeaderValue::as_bytes),
            Some(format!("Bearer {SECRET}").as_bytes())
        );
    }
    assert_eq!(
        signer.0.load(std::sync::atomic::Ordering::Relaxed),
        1,
        "signed once per call"
    );
    let body = String::from_utf8(echoed.body).expect("utf-8");
    assert!(
        !body.contains("assertion-0"),
        "the plugin never reads it: {body}"
    );
    // Another call signs its own.
    let next = Access {
        acting: Some(acting("u_bob")),
        ..access(&["crm"], false)
    };
    backends.send(&next, get("crm", "/x")).await.expect("sent");
    let last = server.seen().pop().expect("a request").headers;
    assert_eq!(
        last.get("x-toolhost-assertion"),
        Some(&HeaderValue::from_static("assertion-1-for-crm-u_bob"))
    );
}

/// Exchanges for `person-token-<n>-<subject>`, counting exchanges.
#[derive(Default)]
struct Exchanging(std::sync::atomic::AtomicUsize);

impl Exchanger for Exchanging {
    fn exchange<'a>(&'a self, who: &'a Identity, _: &'a TokenExchange) -> ExchangeFuture<'a> {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let token = format!("person-token-{n}-{}", who.subject);
        let expires_in = Duration::from_secs(300);
        Box::pin(async move { Ok(Exchanged { token, expires_in }) })
    }
}

/// `crm` on token exchange: no credential, the person's token instead.
fn exchanging(server: &Server) -> Backends {
    server.backends(|c| {
        c.credential = None;
        c.auth = BackendAuth::TokenExchange;
        c.exchange = Some(TokenExchange {
            provider: "corp".into(),
            audience: "https://crm.example".into(),
            scope: None,
        });
    })
}

#[tokio::test]
async fn a_token_exchange_backend_gets_each_persons_own_token_in_place_of_the_plugins() {
    let server = Server::start().await;
    let backends = exchanging(&server);
    let exchanger = Arc::new(Exchanging::default());
    backends.exchange_with(exchanger.clone());
    let as_ann = Access {
        acting: Some(acting("u_ann")),
        ..access(&["crm"], false)
    };
    let forged = Request {
        headers: vec![("Authorization".into(), "Bearer stolen".into())],
        ..get("crm", "/x")
    };
    backends.send(&as_ann, forged).await.expect("sent");
    let echoed = backends
        .send(&as_ann, get("crm", "/echo"))
        .await
        .expect("sent");
    let as_bob = Access {
        acting: Some(acting("u_bob")),
        ..access(&["crm"], false)
    };
    backends
        .send(&as_bob, get("crm", "/x"))
        .await
        .expect("sent");
    let sent: Vec<_> = server.seen().into_iter().map(|s| s.headers).collect();
    let bearer = |h: &HeaderMap| -> Vec<String> {
        let values = h.get_all("authorization").iter();
        values
            .map(|v| v.to_str().expect("text").to_owned())
            .collect()
    };
    assert_eq!(bearer(&sent[0]), ["Bearer person-token-0-u_ann"]);
    assert_eq!(bearer(&sent[1]), ["Bearer person-token-0-u_ann"], "kept");
    assert_eq!(
        bearer(&sent[2]),
        ["Bearer person-token-1-u_bob"],
        "bob's own"
    );
    assert_eq!(exchanger.0.load(std::sync::atomic::Ordering::Relaxed), 2);
    let body = String::from_utf8(echoed.body).expect("utf-8");
    assert!(
        !body.contains("person-token"),
        "the plugin never reads it: {body}"
    );
    let headers = format!("{:?}", echoed.headers);
    assert!(!headers.contains("person-token"), "{headers}");
}

#[tokio::test]
async fn a_token_exchange_backend_is_sent_nothing_for_a_service_a_run_or_without_an_exchanger() {
    let server = Server::start().await;
    let backends = exchanging(&server);
    let as_ann = Access {
        acting: Some(acting("u_ann")),
        ..access(&["crm"], false)
    };
    let before = backends.send(&as_ann, get("crm", "/x")).await;
    assert!(
        matches!(before, Err(BackendError::Refused(_))),
        "{before:?}"
    );
    let exchanger = Arc::new(Exchanging::default());
    backends.exchange_with(exchanger.clone());
    let service = Access {
        acting: Some(Acting::new(Identity {
            kind: "service",
            ..acting("svc-nightly").identity().clone()
        })),
        ..access(&["crm"], false)
    };
    let no_one = access(&["crm"], false);
    for who in [&service, &no_one] {
        let refused = backends.send(who, get("crm", "/x")).await;
        assert!(
            matches!(refused, Err(BackendError::Refused(_))),
            "{refused:?}"
        );
    }
    assert!(server.seen().is_empty(), "nothing was sent");
    assert_eq!(exchanger.0.load(std::sync::atomic::Ordering::Relaxed), 0);
}

/// Connections of the people in it: `own-token-<subject>` each, counting
/// the tokens handed out.
#[derive(Default)]
struct Connected {
    people: Vec<&'static str>,
    handed: std::sync::atomic::AtomicUsize,
}

impl Connector for Connected {
    fn token<'a>(&'a self, _backend: &'a str, who: &'a Identity) -> ConnectionFuture<'a> {
        let connected = self.people.contains(&who.subject.as_str());
        if connected {
            self.handed
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let token = format!("own-token-{}", who.subject);
        Box::pin(async move {
            connected
                .then_some(token)
                .ok_or(ConnectionError::NotConnected)
        })
    }

    fn connect_url(&self, backend: &str) -> String {
        format!("https://host.example/admin/connections/{backend}/connect")
    }
}

#[tokio::test]
async fn a_connection_backend_gets_each_persons_own_token_and_asks_who_has_none() {
    let server = Server::start().await;
    let backends = server.backends(|c| {
        c.credential = None;
        c.auth = BackendAuth::Connection;
    });
    let as_ann = Access {
        acting: Some(acting("u_ann")),
        ..access(&["crm"], false)
    };
    // No connector installed yet: nothing is sent.
    let before = backends.send(&as_ann, get("crm", "/x")).await;
    assert!(
        matches!(before, Err(BackendError::Refused(_))),
        "{before:?}"
    );
    let connector = Arc::new(Connected {
        people: vec!["u_ann"],
        ..Connected::default()
    });
    backends.connect_with(connector.clone());
    let forged = Request {
        headers: vec![("Authorization".into(), "Bearer stolen".into())],
        ..get("crm", "/x")
    };
    backends.send(&as_ann, forged).await.expect("sent");
    let echoed = backends
        .send(&as_ann, get("crm", "/echo"))
        .await
        .expect("sent");
    let body = String::from_utf8(echoed.body).expect("utf-8");
    assert!(
        !body.contains("own-token"),
        "the plugin never reads it: {body}"
    );
    assert!(!format!("{:?}", echoed.headers).contains("own-token"));
    // bob has not connected: he is asked to, and nothing is sent for him.
    let as_bob = Access {
        acting: Some(acting("u_bob")),
        ..access(&["crm"], false)
    };
    let asked = backends.send(&as_bob, get("crm", "/x")).await;
    let Err(BackendError::ConnectionRequired { backend, url }) = asked else {
        panic!("asked to connect: {asked:?}");
    };
    assert_eq!(backend, "crm");
    assert_eq!(url, "https://host.example/admin/connections/crm/connect");
    // A service, or a call with no one acting, never gets a token.
    let service = Access {
        acting: Some(Acting::new(Identity {
            kind: "service",
            ..acting("u_ann").identity().clone()
        })),
        ..access(&["crm"], false)
    };
    for who in [&service, &access(&["crm"], false)] {
        let refused = backends.send(who, get("crm", "/x")).await;
        assert!(
            matches!(refused, Err(BackendError::Refused(_))),
            "{refused:?}"
        );
    }
    let sent: Vec<_> = server.seen().into_iter().map(|s| s.headers).collect();
    assert_eq!(sent.len(), 2, "ann's two requests only");
    for headers in &sent {
        let values: Vec<_> = headers.get_all("authorization").iter().collect();
        assert_eq!(
            values,
            [&HeaderValue::from_static("Bearer own-token-u_ann")]
        );
    }
    assert_eq!(
        connector.handed.load(std::sync::atomic::Ordering::Relaxed),
        2
    );
    let ann = acting("u_ann");
    assert!(backends.connected("crm", ann.identity()).await);
    assert!(!backends.connected("crm", acting("u_bob").identity()).await);
    assert!(!backends.connected("other", ann.identity()).await);
    assert_eq!(backends.connection_backends(), ["crm"]);
}

#[tokio::test]
async fn a_backend_told_who_acts_is_sent_nothing_without_an_identity_or_a_signer() {
    let server = Server::start().await;
    let backends = server.backends(|c| c.auth = BackendAuth::CredentialAndAssertion);
    let who = Access {
        acting: Some(acting("u_ann")),
        ..access(&["crm"], false)
    };
    let unsigned = backends.send(&who, get("crm", "/x")).await;
    assert!(
        matches!(unsigned, Err(BackendError::Refused(_))),
        "{unsigned:?}"
    );
    backends.assert_with(Arc::new(Numbered::default()));
    let anonymous = backends
        .send(&access(&["crm"], false), get("crm", "/x"))
        .await;
    assert!(
        matches!(anonymous, Err(BackendError::Refused(_))),
        "{anonymous:?}"
    );
    assert!(server.seen().is_empty());
    assert!(backends.asserts_identity("crm") && !backends.asserts_identity("other"));
}

#[tokio::test]
async fn a_backend_on_the_credential_alone_never_gets_an_assertion_even_a_forged_one() {
    let server = Server::start().await;
    let backends = server.backends(|_| {});
    backends.assert_with(Arc::new(Numbered::default()));
    let who = Access {
        acting: Some(acting("u_ann")),
        ..access(&["crm"], false)
    };
    backends.send(&who, forging("/x")).await.expect("sent");
    let seen = server.seen().pop().expect("a request");
    assert!(seen.headers.get("x-toolhost-assertion").is_none());
}

#[tokio::test]
async fn a_response_over_max_response_is_too_large_with_or_without_a_length() {
    let server = Server::start().await;
    let backends = server.backends(|c| c.max_response = 1024);
    let who = access(&["crm"], false);
    for path in ["/big", "/big-stream"] {
        let err = backends.send(&who, get("crm", path)).await.expect_err(path);
        assert_eq!(err, BackendError::TooLarge, "{path}");
    }
    let fits = server.backends(|c| c.max_response = 2048);
    let response = fits
        .send(&who, get("crm", "/big-stream"))
        .await
        .expect("fits");
    assert_eq!(response.body.len(), 2048);
}

#[tokio::test]
async fn a_request_body_over_the_cap_is_too_large_and_not_sent() {
    let server = Server::start().await;
    let backends = server.backends(|_| {});
    let req = Request {
        method: Method::Put,
        body: Some(vec![0; MAX_REQUEST_BODY + 1]),
        ..get("crm", "/x")
    };
    let err = backends
        .send(&access(&["crm"], false), req)
        .await
        .expect_err("too large");
    assert_eq!(err, BackendError::TooLarge);
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn invalid_plugin_headers_are_refused_and_nothing_is_sent() {
    let server = Server::start().await;
    let backends = server.backends(|_| {});
    for (name, value) in [("X-A", "a\r\nX-Tenant: evil"), ("bad name", "v")] {
        let req = Request {
            headers: vec![(name.to_owned(), value.to_owned())],
            ..get("crm", "/x")
        };
        let err = backends
            .send(&access(&["crm"], false), req)
            .await
            .expect_err("refused");
        assert!(matches!(err, BackendError::Refused(_)), "{err}");
    }
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn a_slow_backend_times_out() {
    let server = Server::start().await;
    let backends = server.backends(|c| c.timeout = Duration::from_millis(200));
    let started = Instant::now();
    let err = backends
        .send(&access(&["crm"], false), get("crm", "/slow"))
        .await
        .expect_err("slow");
    assert_eq!(err, BackendError::Timeout);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_body_that_stalls_after_the_headers_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.expect("accept");
        read_request_head(&stream).await;
        let head = b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nabc";
        stream.writable().await.expect("writable");
        assert_eq!(stream.try_write(head).expect("write"), head.len());
        tokio::time::sleep(Duration::from_secs(10)).await;
    });
    let mut config = BackendConfig::new("crm", format!("http://{addr}").parse().expect("URL"));
    config.timeout = Duration::from_millis(300);
    let backends = Backends::new(vec![config]).expect("valid config");
    let err = backends
        .send(&access(&["crm"], false), get("crm", "/x"))
        .await
        .expect_err("stalls");
    assert_eq!(err, BackendError::Timeout);
}

/// Reads until the blank line that ends a request head (no body expected).
async fn read_request_head(stream: &tokio::net::TcpStream) {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        stream.readable().await.expect("readable");
        match stream.try_read(&mut buf) {
            Ok(0) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => panic!("read: {e}"),
        }
    }
}

#[tokio::test]
async fn a_closed_port_is_unavailable_without_naming_the_url() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("local addr");
    drop(listener);
    let config = BackendConfig::new("crm", format!("http://{addr}/base").parse().expect("URL"));
    let backends = Backends::new(vec![config]).expect("valid config");
    let err = backends
        .send(&access(&["crm"], false), get("crm", "/x"))
        .await
        .expect_err("closed");
    assert_eq!(
        err,
        BackendError::Unavailable("connection failed".to_owned())
    );
    assert!(!err.to_string().contains("127.0.0.1"), "{err}");
}

#[tokio::test]
async fn a_redirect_is_returned_not_followed_and_set_cookie_is_dropped() {
    let server = Server::start().await;
    let backends = server.backends(|_| {});
    let who = access(&["crm"], false);
    let response = backends
        .send(&who, get("crm", "/redirect"))
        .await
        .expect("sent");
    assert_eq!(response.status, 302);
    assert_eq!(header(&response, "location"), Some("http://evil.example/"));
    assert_eq!(header(&response, "set-cookie"), None);
    assert_eq!(response.body, b"moved");

    let response = backends
        .send(&who, get("crm", "/plain"))
        .await
        .expect("sent");
    assert_eq!(header(&response, "x-route"), Some("default"));
    assert_eq!(header(&response, "set-cookie"), None);
    assert_eq!(server.seen().len(), 2);
}

#[tokio::test]
async fn a_base_url_with_a_path_prefix_keeps_the_prefix() {
    let server = Server::start().await;
    for base in ["/base", "/base/"] {
        let backends = server.backends(|c| c.url = server.url(base));
        let response = backends
            .send(&access(&["crm"], false), get("crm", "/items/1?x=2"))
            .await
            .expect("sent");
        assert_eq!(response.status, 200);
    }
    let uris: Vec<_> = server.seen().into_iter().map(|s| s.uri).collect();
    assert_eq!(uris, ["/base/items/1?x=2", "/base/items/1?x=2"]);
}

#[test]
fn the_send_future_can_move_between_threads() {
    fn is_send<T: Send>(_: &T) {}
    let (backends, who) = (Backends::empty(), access(&[], false));
    let future = backends.send(&who, get("crm", "/x"));
    is_send(&future);
}

#[test]
fn debug_and_display_of_secrets_configs_and_backends_never_show_the_secret() {
    let secret = Secret::new(SECRET.to_owned());
    let mut config = BackendConfig::new("crm", "http://127.0.0.1:1/".parse().expect("URL"));
    config.credential = Some(secret.clone());
    let backends = Backends::new(vec![config.clone()]).expect("valid config");
    let printed = [
        format!("{secret:?}"),
        format!("{secret}"),
        format!("{config:?}"),
        format!("{backends:?}"),
        format!("{:?}", backends.secrets()),
    ];
    for text in printed {
        assert!(!text.contains(SECRET), "{text}");
    }
    assert_eq!(format!("{secret}"), "[redacted]");
    let exposed: Vec<_> = backends
        .secrets()
        .iter()
        .map(|s| s.expose().to_owned())
        .collect();
    assert_eq!(exposed, [SECRET]);
}

#[test]
fn backends_new_refuses_bad_configs_naming_the_value() {
    let url = |s: &str| -> Url { s.parse().expect("URL") };
    let ok = || BackendConfig::new("crm", url("http://127.0.0.1:1/"));
    let with = |f: fn(&mut BackendConfig)| {
        let mut config = ok();
        f(&mut config);
        config
    };
    let cases: [(Vec<BackendConfig>, &str); 7] = [
        (vec![ok(), ok()], "\"crm\""),
        (
            vec![BackendConfig::new("CRM!", url("http://127.0.0.1:1/"))],
            "\"CRM!\"",
        ),
        (
            vec![BackendConfig::new("", url("http://127.0.0.1:1/"))],
            "\"\"",
        ),
        (
            vec![with(|c| {
                c.url = "http://bob:pw@127.0.0.1:1/".parse().expect("URL")
            })],
            "userinfo",
        ),
        (
            vec![with(|c| c.url = "ftp://127.0.0.1/".parse().expect("URL"))],
            "ftp://127.0.0.1/",
        ),
        (
            vec![with(|c| c.credential_header = "x-tenant".to_owned())],
            "\"x-tenant\"",
        ),
        (
            vec![with(|c| {
                c.credential = Some(Secret::new("a\nb".to_owned()))
            })],
            "credential",
        ),
    ];
    for (configs, named) in cases {
        let err = Backends::new(configs).expect_err(named);
        let message = err.to_string();
        assert!(message.contains(named), "{message}");
        assert!(
            !message.contains("pw") && !message.contains("a\nb"),
            "{message}"
        );
    }
    let err = Backends::new(vec![ok(), ok()]).expect_err("duplicate");
    assert_eq!(err, ConfigError::Duplicate("crm".to_owned()));
}

#[test]
fn token_exchange_settings_come_with_their_mode_and_own_authorization() {
    let spec = || TokenExchange {
        provider: "corp".into(),
        audience: "https://crm.example".into(),
        scope: None,
    };
    let config = |auth, exchange, credential: Option<&str>| {
        let mut c = BackendConfig::new("crm", "http://127.0.0.1:1/".parse().expect("URL"));
        (c.auth, c.exchange) = (auth, exchange);
        c.credential = credential.map(|s| Secret::new(s.to_owned()));
        c
    };
    let exchanging = BackendAuth::TokenExchange;
    let refused = [
        config(exchanging, None, None),
        config(BackendAuth::Credential, Some(spec()), None),
        config(
            exchanging,
            Some(TokenExchange {
                audience: String::new(),
                ..spec()
            }),
            None,
        ),
        config(exchanging, Some(spec()), Some("s3cret")),
    ];
    for c in refused {
        let err = Backends::new(vec![c]).expect_err("refused");
        assert!(matches!(err, ConfigError::BadAuth { .. }), "{err}");
        assert!(!err.to_string().contains("s3cret"), "{err}");
    }
    let mut other_header = config(exchanging, Some(spec()), Some("s3cret"));
    other_header.credential_header = "x-api-key".into();
    let backends = Backends::new(vec![other_header]).expect("fits");
    assert_eq!(backends.exchanges(), [("crm".to_owned(), spec())]);
}
