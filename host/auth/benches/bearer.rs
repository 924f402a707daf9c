//! What the bearer check costs per request, in-process, and DPoP's cost
//! beyond it (issue 47's budget: ≤ 30 µs per request; `make bench`,
//! `-- --quick` for fewer requests).
//!
//! A service client presents the same token again and again, as a client
//! does between refreshes: the remembered signature check plus the read
//! of the grant's standing from the store (a SQLite file on the disk, as
//! shipped). Then the same client's token bound to a DPoP key, presented
//! with a fresh proof each time, by an Ed25519 key and by a P-256 one
//! (ES256, what most clients' libraries make): the proof's checks (RFC
//! 9449 §4.3) and its replay record. Then the proof's checks alone, the
//! split between the crypto and the store. Making a proof is the client's
//! work and is never timed.
//!
//! Every check must pass; a refused one panics, a slow one never does.

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::now;
use toolhost_auth::dpop::client::Prover;
use toolhost_auth::dpop::{self, Expected};
use toolhost_auth::{AuthConfig, AuthServer, Presented, admin};
use toolhost_storage::Store;

/// The issue's budget for DPoP beyond the bearer check.
const BUDGET: Duration = Duration::from_micros(30);
const ISSUER: &str = "http://127.0.0.1:1";

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (warmup, requests) = if quick { (200, 2_000) } else { (2_000, 20_000) };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio");
    rt.block_on(run(warmup, requests));
}

async fn run(warmup: usize, requests: usize) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a temp dir");
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("auth.db").display());
    let store = Arc::new(Store::connect(&url).await.expect("store"));
    let auth = AuthServer::start(AuthConfig::new(ISSUER), store.clone())
        .await
        .expect("auth server");
    let base = common::serve_auth(auth.clone()).await;
    let (client, secret) = admin::add_service(store.as_ref(), "bench", "bench", "mcp")
        .await
        .expect("a service client");
    let token_at = |proof: Option<String>| {
        let (base, id, secret) = (base.clone(), client.client_id.clone(), secret.clone());
        async move {
            let body = "grant_type=client_credentials";
            let answer = common::service_token(&base, &id, &secret, body, proof.as_deref()).await;
            answer["access_token"].as_str().expect("a token").to_owned()
        }
    };
    let mcp = format!("{ISSUER}/mcp");

    let bearer = format!("Bearer {}", token_at(None).await);
    let mut plain = Samples::new(warmup, requests);
    while plain.wanted() {
        let t = Instant::now();
        auth.authenticate(Some(&bearer))
            .await
            .expect("a valid token");
        plain.push(t.elapsed());
    }

    let mut rows = vec![(
        "token (signature remembered) + live grant read",
        plain.sorted(),
    )];
    let mut beyond = Vec::new();
    for (name, prover) in [
        ("Ed25519", Prover::generate()),
        ("ES256", Prover::generate_es256()),
    ] {
        let at_token = prover.proof("POST", &format!("{ISSUER}/oauth/token"), now(), None);
        let token = token_at(Some(at_token)).await;
        let authorization = format!("DPoP {token}");
        let mut whole = Samples::new(warmup, requests);
        while whole.wanted() {
            let proof = prover.proof("POST", &mcp, now(), Some(&token));
            let proofs = [proof.as_str()];
            let presented = Presented {
                authorization: Some(&authorization),
                dpop: &proofs,
                method: "POST",
                url: &mcp,
            };
            let t = Instant::now();
            auth.authenticate_request(&presented)
                .await
                .expect("a valid token and proof");
            whole.push(t.elapsed());
        }
        let mut checks = Samples::new(warmup, requests);
        let expected = Expected {
            method: "POST",
            url: &mcp,
            access_token: Some(&token),
        };
        while checks.wanted() {
            let proof = prover.proof("POST", &mcp, now(), Some(&token));
            let at = now();
            let t = Instant::now();
            dpop::check(&proof, &expected, at).expect("a valid proof");
            checks.push(t.elapsed());
        }
        let whole = whole.sorted();
        beyond.push((name, p(&whole, 50).saturating_sub(p(&rows[0].1, 50))));
        rows.push((
            match name {
                "Ed25519" => "DPoP-bound token + an Ed25519 proof (§4.3 and replay record)",
                _ => "DPoP-bound token + an ES256 proof (§4.3 and replay record)",
            },
            whole,
        ));
        rows.push((
            match name {
                "Ed25519" => "of which the Ed25519 proof's checks, without the record",
                _ => "of which the ES256 proof's checks, without the record",
            },
            checks.sorted(),
        ));
    }

    println!("bearer check (in-process, SQLite file), {requests} requests each");
    println!("| measure | p50 µs | p99 µs |");
    println!("|---|---|---|");
    for (name, samples) in &rows {
        println!(
            "| {name} | {} | {} |",
            us(p(samples, 50)),
            us(p(samples, 99))
        );
    }
    for (name, cost) in beyond {
        let verdict = if cost <= BUDGET { "within" } else { "over" };
        println!(
            "DPoP ({name}) beyond the bearer check, p50: {} µs ({verdict} the budget of {} µs)",
            us(cost),
            us(BUDGET)
        );
    }
}

/// Timings after a warm-up.
struct Samples {
    warmup: usize,
    requests: usize,
    seen: usize,
    kept: Vec<Duration>,
}

impl Samples {
    fn new(warmup: usize, requests: usize) -> Self {
        Samples {
            warmup,
            requests,
            seen: 0,
            kept: Vec::with_capacity(requests),
        }
    }

    fn wanted(&self) -> bool {
        self.kept.len() < self.requests
    }

    fn push(&mut self, d: Duration) {
        self.seen += 1;
        if self.seen > self.warmup {
            self.kept.push(d);
        }
    }

    fn sorted(mut self) -> Vec<Duration> {
        self.kept.sort();
        self.kept
    }
}

fn p(sorted: &[Duration], q: usize) -> Duration {
    sorted[(sorted.len() - 1) * q / 100]
}

fn us(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e6)
}
