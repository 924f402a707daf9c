//! What the identity assertion costs a backend request (issue 46's target:
//! ≤ 20 µs per request; `make bench`, `-- --quick` for fewer calls).
//!
//! A call's first request to a backend that is told who acts signs the
//! call's assertion (an EdDSA JWT, the host's assertion key) and makes it a
//! header value; the call's later requests to that backend reuse it. Each
//! iteration is one call as the host makes it: a fresh [`Acting`] for a
//! new call id, its first request timed, then a second request timed. The
//! per-request cost of a call of `n` requests is the first's plus `n − 1`
//! reuses, over `n`: a call of one request pays the whole signature.
//!
//! The floor, in the same run: a bare Ed25519 signature over an
//! assertion's bytes by a key parsed once, by aws-lc-rs (what the host
//! signs with, `src/jwt_crypto.rs`) and by ed25519-dalek (the pure-Rust
//! backend it signed with before).
//!
//! Every assertion made is checked to be a three-part JWS naming the
//! call; a wrong one panics, a slow one never does.

use std::sync::Arc;
use std::time::{Duration, Instant};

use toolhost_auth::assertion::Assertions;
use toolhost_auth::keys::KeyRing;
use toolhost_backend::{Acting, Identity};

/// The target per backend request.
const TARGET: Duration = Duration::from_micros(20);

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let calls = if quick { 5_000 } else { 50_000 };
    let signer = Assertions::new("https://tools.example", Arc::new(KeyRing::ephemeral()));
    let mut first = Vec::with_capacity(calls);
    let mut reused = Vec::with_capacity(calls);
    for n in 0..calls {
        let acting = Acting::new(identity(n));
        let started = Instant::now();
        let signed = acting.header("testbench", &signer).expect("signed");
        first.push(started.elapsed());
        let started = Instant::now();
        let again = acting.header("testbench", &signer).expect("reused");
        reused.push(started.elapsed());
        assert_eq!(signed, again, "a call reuses its assertion");
        let token = signed.to_str().expect("ASCII");
        assert_eq!(token.split('.').count(), 3, "a compact JWS: {token}");
    }
    // The floor in the same run: one Ed25519 signature over an assertion's
    // bytes, by a key parsed once (what signing costs without the JWT
    // library's work around it), by each backend.
    let message = Acting::new(identity(0))
        .header("testbench", &signer)
        .expect("signed");
    let message = message.as_bytes();
    let pkcs8 = {
        let rng = aws_lc_rs::rand::SystemRandom::new();
        aws_lc_rs::signature::Ed25519KeyPair::generate_pkcs8(&rng).expect("a key")
    };
    let aws = aws_lc_rs::signature::Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).expect("a key");
    let dalek = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let mut bare = Vec::with_capacity(calls);
    let mut bare_dalek = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        std::hint::black_box(aws.sign(message));
        bare.push(started.elapsed());
        let started = Instant::now();
        std::hint::black_box(ed25519_dalek::Signer::sign(&dalek, message));
        bare_dalek.push(started.elapsed());
    }
    first.sort();
    reused.sort();
    bare.sort();
    bare_dalek.sort();
    let p = |v: &[Duration], q: f64| v[((v.len() - 1) as f64 * q) as usize];
    println!("identity assertion per backend request, {calls} calls");
    println!("| measure | p50 µs | p99 µs |");
    println!("|---|---|---|");
    let row = |name: &str, v: &[Duration]| {
        println!("| {name} | {} | {} |", us(p(v, 0.5)), us(p(v, 0.99)));
    };
    row("a call's first request: sign and make the header", &first);
    row("a later request of the call: reuse", &reused);
    row(
        "the floor: a bare Ed25519 signature, key parsed once (aws-lc-rs)",
        &bare,
    );
    row(
        "the same by ed25519-dalek (the pure-Rust backend)",
        &bare_dalek,
    );
    let ratio = p(&first, 0.5).as_secs_f64() / p(&bare, 0.5).as_secs_f64();
    println!("a call's first request / the bare signature, p50: {ratio:.2}");
    for n in [1u32, 4] {
        let per = (p(&first, 0.5) + p(&reused, 0.5) * (n - 1)) / n;
        let verdict = if per <= TARGET { "within" } else { "over" };
        println!(
            "per request of a call of {n} request(s), p50: {} µs ({verdict} the target of {} µs)",
            us(per),
            us(TARGET)
        );
    }
}

/// The caller of call `n`.
fn identity(n: usize) -> Identity {
    Identity {
        subject: "u_ann".into(),
        kind: "user",
        tenant: "demo".into(),
        client_id: "claude-desktop".into(),
        tool: "list_projects".into(),
        call_id: format!("0193f1c2-{n:012}"),
    }
}

fn us(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e6)
}
