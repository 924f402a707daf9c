//! What a person's own connection costs a backend request (issue 46,
//! `auth = "connection"`; `make bench`, `-- --quick` for fewer requests).
//!
//! Each request to a connection backend asks the connector for the
//! person's token: one read of their row from the store (SQLite on a file,
//! as `make run` serves) and an AES-256-GCM open of the sealed tokens,
//! nothing cached, so a revocation on any replica takes effect on the next
//! request. The floor, in the same run and the same store: the row's read
//! alone, and the open alone. Printed as µs per request and as the ratio
//! of the whole to the sum of its two parts.
//!
//! Every token handed out is checked to be the person's; a wrong one
//! panics, a slow one never does.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use toolhost_auth::{AuthStore, PersonConnection, User};
use toolhost_backend::{Connector, Identity};
use toolhost_sso::ClientSecret;
use toolhost_sso::connections::{ConnectionBackend, Connections, Owner, SealingKeys};
use toolhost_storage::Store;

const TOKEN: &str = "an-access-token-of-about-the-size-a-jwt-would-be.0123456789abcdef";

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let requests = if quick { 2_000 } else { 20_000 };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(measure(requests));
}

async fn measure(requests: usize) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("bench.db").display()
    );
    let store = Arc::new(Store::connect(&url).await.expect("a store"));
    store.ensure_tenant("acme", 0).await.expect("a tenant");
    let user = User {
        id: "u-ann".into(),
        tenant: "acme".into(),
        username: "ann".into(),
        password_hash: "x".into(),
        disabled: false,
        created_at: 0,
    };
    store.insert_user(&user).await.expect("a user");
    let key = base64::engine::general_purpose::STANDARD.encode([7u8; 32]);
    let keys = Arc::new(SealingKeys::parse(&format!("k1 {key}")).expect("keys"));
    let owner = Owner {
        tenant: "acme",
        user_id: "u-ann",
        backend: "crm",
    };
    let plain = format!(r#"{{"access_token":"{TOKEN}","refresh_token":"r"}}"#);
    let sealed = keys.seal(owner, plain.as_bytes()).expect("sealed");
    let row = PersonConnection {
        tenant: "acme".into(),
        user_id: "u-ann".into(),
        backend: "crm".into(),
        key_id: "k1".into(),
        sealed: sealed.clone(),
        connected_at: 0,
        expires_at: None,
    };
    store.put_person_connection(&row).await.expect("stored");
    let backend = ConnectionBackend {
        name: "crm".into(),
        issuer: "http://127.0.0.1:9".into(),
        client_id: "toolhost".into(),
        client_secret: ClientSecret::new("s"),
        scope: None,
        resource: None,
    };
    let dyn_store = store.clone() as Arc<dyn AuthStore>;
    let connections = Connections::new(
        "https://tools.example",
        vec![backend],
        keys.clone(),
        dyn_store,
    )
    .expect("connections");
    let who = Identity {
        subject: "u-ann".into(),
        kind: "user",
        tenant: "acme".into(),
        client_id: "client-1".into(),
        tool: "list".into(),
        call_id: "call-1".into(),
    };
    let mut whole = Vec::with_capacity(requests);
    let mut read = Vec::with_capacity(requests);
    let mut open = Vec::with_capacity(requests);
    for _ in 0..requests {
        let started = Instant::now();
        let token = connections.token("crm", &who).await.expect("a token");
        whole.push(started.elapsed());
        assert_eq!(token, TOKEN, "the person's own token");
        let started = Instant::now();
        let got = store.person_connection("acme", "u-ann", "crm").await;
        read.push(started.elapsed());
        assert!(got.expect("read").is_some());
        let started = Instant::now();
        let opened = keys.open("k1", owner, &sealed);
        open.push(started.elapsed());
        assert_eq!(opened.as_deref(), Some(plain.as_bytes()));
    }
    let (w, r, o) = (p50(&mut whole), p50(&mut read), p50(&mut open));
    println!("connection token per backend request ({requests} requests, SQLite on a file)");
    println!("  whole (read + open + parse):  p50 {:>7.1} µs", micros(w));
    println!("  floor: the row's read alone:  p50 {:>7.1} µs", micros(r));
    println!("  floor: the AES-GCM open alone: p50 {:>7.1} µs", micros(o));
    let ratio = w.as_secs_f64() / (r + o).as_secs_f64();
    println!("  whole / (read + open) = {ratio:.2}");
}

fn p50(samples: &mut [Duration]) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
