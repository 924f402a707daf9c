//! The authorization server's edges: the form parameters of every OAuth
//! endpoint, and the access tokens the bearer check verifies.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use toolhost_auth::AccessClaims;
use toolhost_auth::fuzzing::{MAX_VALUE, Params, ephemeral_key_ring, sign, verify};
use toolhost_auth::keys::KeyRing;

use crate::flipped;

/// The OAuth endpoints' form and query parameters: each at most once
/// (RFC 6749 §3.1, §3.2). A body parses exactly when, decoded here on its
/// own, no name has two non-empty values and no value is over
/// [`MAX_VALUE`] bytes; then each name reads as its one non-empty value
/// (an empty one counts as absent), and a refusal is `invalid_request`.
pub fn oauth_params(data: &[u8]) {
    let mut values: HashMap<String, Vec<String>> = HashMap::new();
    let mut oversized = false;
    for (name, value) in url::form_urlencoded::parse(data) {
        oversized |= value.len() > MAX_VALUE;
        let kept = values.entry(name.into_owned()).or_default();
        if !value.is_empty() {
            kept.push(value.into_owned());
        }
    }
    let repeated = values.values().any(|v| v.len() > 1);
    match Params::parse(data) {
        Ok(params) => {
            assert!(!oversized && !repeated, "{data:?} parsed");
            for (name, kept) in &values {
                assert_eq!(params.get(name), kept.first().map(String::as_str), "{name}");
                assert_eq!(params.require(name).is_ok(), !kept.is_empty(), "{name}");
            }
        }
        Err(e) => {
            assert!(oversized || repeated, "{data:?} refused: {}", e.description);
            assert_eq!(e.code, "invalid_request");
        }
    }
}

/// The issuer and the `/mcp` resource of access tokens in these targets.
const ISSUER: &str = "https://tools.example";
const AUDIENCE: &str = "https://tools.example/mcp";

/// A key ring made once per process, and a token it signed for a day.
struct Signed {
    ring: KeyRing,
    token: String,
}

fn signed() -> &'static Signed {
    static SIGNED: OnceLock<Signed> = OnceLock::new();
    SIGNED.get_or_init(|| {
        let ring = ephemeral_key_ring();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("the clock is past 1970")
            .as_secs() as i64;
        let claims = AccessClaims::new(ISSUER, AUDIENCE, "u_1", "c_1", "f_1", "mcp", now, 86_400);
        let token = sign(&ring, &claims);
        let verified = verify(&ring, &token, ISSUER, AUDIENCE);
        assert_eq!(verified, Ok(claims), "the ring verifies its own token");
        Signed { ring, token }
    })
}

/// Access tokens (EdDSA JWTs, the bearer check's `verify`): no input
/// verifies (the ring's key is made when the target starts, so nothing
/// the fuzzer writes is signed by it), and neither does the ring's own
/// token with one byte changed (see [`flipped`]).
pub fn jwt(data: &[u8]) {
    let s = signed();
    if let Ok(text) = std::str::from_utf8(data) {
        let verified = verify(&s.ring, text, ISSUER, AUDIENCE);
        assert!(verified.is_err(), "{text:?} verified: {verified:?}");
    }
    if let Some(changed) = flipped(s.token.as_bytes(), data)
        && let Ok(text) = String::from_utf8(changed)
    {
        let verified = verify(&s.ring, &text, ISSUER, AUDIENCE);
        assert!(verified.is_err(), "{text:?}, a changed token, verified");
    }
}

/// The request the DPoP proofs of [`dpop_proof`] are checked against.
const DPOP_URL: &str = "https://tools.example/mcp";

/// A client's proof for [`DPOP_URL`], made once per process.
fn dpop_signed() -> &'static String {
    static PROOF: OnceLock<String> = OnceLock::new();
    PROOF.get_or_init(|| {
        let prover = toolhost_auth::dpop::client::Prover::generate();
        prover.proof("POST", DPOP_URL, unix_now(), Some("the-access-token"))
    })
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("the clock is past 1970")
        .as_secs() as i64
}

/// DPoP proofs (RFC 9449 §4.3, `dpop::check`): no input but the one proof
/// this process made passes (nothing the fuzzer writes is signed by its
/// key), and neither does that proof with one byte changed (see
/// [`flipped`]); nothing panics on the way.
pub fn dpop_proof(data: &[u8]) {
    use toolhost_auth::dpop::{Expected, check};
    let original = dpop_signed();
    let expected = Expected {
        method: "POST",
        url: DPOP_URL,
        access_token: Some("the-access-token"),
    };
    if let Ok(text) = std::str::from_utf8(data) {
        let checked = check(text, &expected, unix_now());
        assert!(
            checked.is_err() || text == original,
            "{text:?} passed: {checked:?}"
        );
    }
    if let Some(changed) = flipped(original.as_bytes(), data)
        && let Ok(text) = String::from_utf8(changed)
    {
        let checked = check(&text, &expected, unix_now());
        assert!(checked.is_err(), "{text:?}, a changed proof, passed");
    }
}
