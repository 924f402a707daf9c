//! DPoP (RFC 9449): tokens bound to a key the client holds. A client sends
//! a proof, a JWT signed by its key with the public half in the header, on
//! every request: the token endpoint binds the tokens it issues to the
//! key's thumbprint (`cnf.jkt`, RFC 7638), and the resource server takes a
//! bound token only with a fresh proof by that key for this very request.
//! A bound token found in a log or a proxy is then useless on its own.
//!
//! [`check`] is the pure half of RFC 9449 §4.3 (every check but replay);
//! [`AuthServer::dpop`] adds the replay check, in the shared store so that
//! a proof spent at one replica is spent at all of them.
//!
//! Parsing and signature checks are jsonwebtoken's, with the key built
//! from the proof's own `jwk` header; the only bytes read here by hand are
//! the header's JSON, to refuse a `jwk` that carries private members
//! (jsonwebtoken's `Jwk` drops members it does not know, such as `d`).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use sha2::{Digest as _, Sha256};
use url::Url;

use crate::secret;
use crate::server::AuthServer;

/// The proof algorithms accepted, as advertised in metadata
/// (`dpop_signing_alg_values_supported`) and in `algs` of a challenge:
/// the two asymmetric ones every DPoP client library offers. RSA is left
/// out: its keys are large in a header sent on every request.
pub const ALGORITHMS: [&str; 2] = ["ES256", "EdDSA"];

/// How far a proof's `iat` may lie from our clock, either way, in seconds.
/// A proof is made just before its request; a minute absorbs clock skew
/// between client and host, and bounds how long a `jti` must be kept.
pub const IAT_WINDOW: i64 = 60;

/// The members of a JWK that only a private key has (RFC 7518 §6).
const PRIVATE_MEMBERS: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// Why a proof was refused. Messages are safe to send back: they never
/// repeat what the client sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DpopError {
    /// A DPoP-bound token came without a proof.
    #[error("this access token is DPoP-bound: send a DPoP proof by its key")]
    Missing,
    /// RFC 9449 §4.3: exactly one `DPoP` header.
    #[error("send exactly one DPoP header")]
    NotOne,
    /// Not a JWT, or a required claim (`jti`, `htm`, `htu`, `iat`) missing.
    #[error("the DPoP proof is not a JWT with jti, htm, htu and iat")]
    Malformed,
    /// `typ` is not `dpop+jwt`.
    #[error("the DPoP proof's typ must be dpop+jwt")]
    WrongType,
    /// `alg` is not one of [`ALGORITHMS`].
    #[error("the DPoP proof's alg must be one of ES256, EdDSA")]
    Algorithm,
    /// No `jwk`, a `jwk` of another kind than `alg` signs with, or one
    /// carrying private members.
    #[error("the DPoP proof's jwk must be the public key its alg signs with")]
    Key,
    /// The signature does not verify with the header's key.
    #[error("the DPoP proof's signature does not verify with its jwk")]
    Signature,
    /// `htm` is not this request's method.
    #[error("the DPoP proof is for another HTTP method")]
    Method,
    /// `htu` is not this request's URL (query and fragment aside).
    #[error("the DPoP proof is for another URL")]
    Url,
    /// `iat` is more than [`IAT_WINDOW`] seconds away from now.
    #[error("the DPoP proof's iat is not within 60 seconds of the server's clock")]
    Stale,
    /// `ath` is missing or is not the hash of the presented access token.
    #[error("the DPoP proof's ath does not match the access token")]
    AccessTokenHash,
    /// Signed by another key than the token (or refresh token) is bound to.
    #[error("the DPoP proof is signed by another key than the token is bound to")]
    OtherKey,
    /// This proof was presented before (its `jti`, by its key).
    #[error("the DPoP proof was used before")]
    Replayed,
    /// The replay store could not be read: nothing was decided.
    #[error("the DPoP proof could not be checked; try again")]
    Unavailable,
}

/// The request a proof must be for.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    /// The HTTP method, as sent (`POST`).
    pub method: &'a str,
    /// The URL the client addressed, without query or fragment.
    pub url: &'a str,
    /// The access token presented with the proof (the resource server's
    /// case), whose hash the proof's `ath` must be.
    pub access_token: Option<&'a str>,
}

/// A proof that passed [`check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    /// The RFC 7638 SHA-256 thumbprint of its key: what tokens bind to.
    pub jkt: String,
    /// Its `jti`.
    pub jti: String,
    /// Its `iat`.
    pub iat: i64,
}

impl Proof {
    /// The replay store's key: a digest of the key and `jti` together, so
    /// a `jti` chosen by one client can never spend another's proof.
    pub fn replay_key(&self) -> String {
        secret::digest(&format!("{}.{}", self.jkt, self.jti))
    }

    /// Until when the replay store must remember it: past this, [`check`]
    /// refuses it as stale anyway.
    pub fn remember_until(&self) -> i64 {
        self.iat + IAT_WINDOW + 1
    }
}

#[derive(Deserialize)]
struct Claims {
    jti: String,
    htm: String,
    htu: String,
    iat: i64,
    #[serde(default)]
    ath: Option<String>,
}

/// RFC 9449 §4.3, every check but replay: the proof's form, its key and
/// signature, that it is for `expected`'s method and URL, made within
/// [`IAT_WINDOW`] of `now`, and, with an access token, that `ath` is its hash.
pub fn check(proof: &str, expected: &Expected<'_>, now: i64) -> Result<Proof, DpopError> {
    let header = jsonwebtoken::decode_header(proof).map_err(|_| DpopError::Malformed)?;
    if !header
        .typ
        .as_deref()
        .is_some_and(|t| t.eq_ignore_ascii_case("dpop+jwt"))
    {
        return Err(DpopError::WrongType);
    }
    if !matches!(header.alg, Algorithm::ES256 | Algorithm::EdDSA) {
        return Err(DpopError::Algorithm);
    }
    let jwk = header.jwk.as_ref().ok_or(DpopError::Key)?;
    if !key_fits(jwk, header.alg) || has_private_members(proof) {
        return Err(DpopError::Key);
    }
    let key = DecodingKey::from_jwk(jwk).map_err(|_| DpopError::Key)?;
    let claims = verified_claims(proof, &key, header.alg)?;
    if claims.htm != expected.method {
        return Err(DpopError::Method);
    }
    if !same_url(&claims.htu, expected.url) {
        return Err(DpopError::Url);
    }
    if claims.iat.abs_diff(now) > IAT_WINDOW.unsigned_abs() {
        return Err(DpopError::Stale);
    }
    if let Some(token) = expected.access_token
        && claims.ath.as_deref() != Some(access_token_hash(token).as_str())
    {
        return Err(DpopError::AccessTokenHash);
    }
    let jkt = jwk
        .thumbprint(ThumbprintHash::SHA256)
        .map_err(|_| DpopError::Key)?;
    Ok(Proof {
        jkt,
        jti: claims.jti,
        iat: claims.iat,
    })
}

/// The one proof among a request's `DPoP` headers, if it sent any (RFC
/// 9449 §4.3: more than one is refused).
pub fn one<'a>(headers: &[&'a str]) -> Result<Option<&'a str>, DpopError> {
    match headers {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        _ => Err(DpopError::NotOne),
    }
}

/// `ath`: the base64url SHA-256 of an access token (RFC 9449 §4.2).
pub fn access_token_hash(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

/// The signature checked with the header's own key, then the claims read.
/// No registered claim is required or checked here (`iat` is checked
/// against our window, there is no `exp` nor `aud`).
fn verified_claims(proof: &str, key: &DecodingKey, alg: Algorithm) -> Result<Claims, DpopError> {
    let mut validation = Validation::new(alg);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    jsonwebtoken::decode::<Claims>(proof, key, &validation)
        .map(|data| data.claims)
        .map_err(|e| match e.kind() {
            jsonwebtoken::errors::ErrorKind::InvalidSignature => DpopError::Signature,
            jsonwebtoken::errors::ErrorKind::Json(_) => DpopError::Malformed,
            _ => DpopError::Signature,
        })
}

/// The key is of the kind `alg` signs with: P-256 for ES256, Ed25519 for
/// EdDSA, RSA for RS256 (client assertions only: a proof's `alg` is
/// checked first).
pub(crate) fn key_fits(jwk: &Jwk, alg: Algorithm) -> bool {
    match (&jwk.algorithm, alg) {
        (AlgorithmParameters::EllipticCurve(p), Algorithm::ES256) => p.curve == EllipticCurve::P256,
        (AlgorithmParameters::OctetKeyPair(p), Algorithm::EdDSA) => {
            p.curve == EllipticCurve::Ed25519
        }
        (AlgorithmParameters::RSA(_), Algorithm::RS256) => true,
        _ => false,
    }
}

/// Whether the header's `jwk` carries a private member. Read from the
/// header's JSON, which jsonwebtoken has already decoded once: its `Jwk`
/// type ignores members it does not model.
fn has_private_members(proof: &str) -> bool {
    let Some(header) = proof.split('.').next() else {
        return true;
    };
    let Ok(json) = URL_SAFE_NO_PAD.decode(header) else {
        return true;
    };
    let Ok(header) = serde_json::from_slice::<serde_json::Value>(&json) else {
        return true;
    };
    match header.get("jwk").and_then(|k| k.as_object()) {
        Some(jwk) => PRIVATE_MEMBERS.iter().any(|m| jwk.contains_key(*m)),
        None => true,
    }
}

/// `htu` names `expected` once its query and fragment are dropped (RFC
/// 9449 §4.3 step 9), compared after URL normalisation (scheme and host
/// case, default port).
fn same_url(htu: &str, expected: &str) -> bool {
    let (Ok(mut htu), Ok(expected)) = (Url::parse(htu), Url::parse(expected)) else {
        return false;
    };
    htu.set_query(None);
    htu.set_fragment(None);
    htu == expected
}

impl AuthServer {
    /// [`check`], then the key a token is `bound` to (if any), then
    /// replay: the proof's `jti` (by its key) must not have been seen by
    /// any replica sharing this store. Only a proof that passed every
    /// other check is recorded.
    pub async fn dpop(
        &self,
        proof: &str,
        expected: &Expected<'_>,
        bound: Option<&str>,
        now: i64,
    ) -> Result<Proof, DpopError> {
        let proof = check(proof, expected, now)?;
        if bound.is_some_and(|jkt| jkt != proof.jkt) {
            return Err(DpopError::OtherKey);
        }
        let fresh = self
            .store
            .spend_jwt(&proof.replay_key(), proof.remember_until(), now)
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "recording a DPoP proof");
                DpopError::Unavailable
            })?;
        if !fresh {
            return Err(DpopError::Replayed);
        }
        Ok(proof)
    }
}

/// Proofs as a client makes them, for this crate's tests and the
/// benches: a real key, signed with jsonwebtoken.
#[doc(hidden)]
pub mod client {
    use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    use serde_json::json;

    /// A client's DPoP key (Ed25519, or P-256 for ES256).
    pub struct Prover {
        alg: Algorithm,
        key: EncodingKey,
        jwk: Jwk,
    }

    impl Prover {
        /// A new random Ed25519 key.
        pub fn generate() -> Self {
            let key = EncodingKey::from_ed_der(&crate::keys::fresh_ed25519_der());
            Prover::with(Algorithm::EdDSA, key)
        }

        /// A new random P-256 key (ES256, what most clients' libraries make).
        pub fn generate_es256() -> Self {
            use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
            let rng = aws_lc_rs::rand::SystemRandom::new();
            let der = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
                .expect("a P-256 key");
            Prover::with(Algorithm::ES256, EncodingKey::from_ec_der(der.as_ref()))
        }

        fn with(alg: Algorithm, key: EncodingKey) -> Self {
            let jwk = Jwk::from_encoding_key(&key, alg).expect("the key has a public JWK");
            Prover { alg, key, jwk }
        }

        /// The public key, as a proof's header carries it.
        pub fn jwk(&self) -> Jwk {
            self.jwk.clone()
        }

        /// The key's thumbprint (what a bound token's `cnf.jkt` is).
        pub fn jkt(&self) -> String {
            self.jwk
                .thumbprint(ThumbprintHash::SHA256)
                .expect("an Ed25519 JWK has a thumbprint")
        }

        /// A proof for `method` `url` made at `iat`, with `ath` for
        /// `access_token` if given.
        pub fn proof(
            &self,
            method: &str,
            url: &str,
            iat: i64,
            access_token: Option<&str>,
        ) -> String {
            let mut header = Header::new(self.alg);
            header.typ = Some("dpop+jwt".into());
            header.jwk = Some(self.jwk.clone());
            let mut claims = json!({
                "jti": crate::secret::random(16),
                "htm": method,
                "htu": url,
                "iat": iat,
            });
            if let Some(token) = access_token {
                claims["ath"] = super::access_token_hash(token).into();
            }
            jsonwebtoken::encode(&header, &claims, &self.key).expect("signing does not fail")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::client::Prover;
    use super::*;
    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::json;

    const URL: &str = "https://tools.example/mcp";
    const NOW: i64 = 1_800_000_000;

    fn expected(token: Option<&str>) -> Expected<'_> {
        Expected {
            method: "POST",
            url: URL,
            access_token: token,
        }
    }

    /// A proof signed by a P-256 key, with header and claims as given.
    fn es256(header: impl FnOnce(&mut Header), claims: serde_json::Value) -> String {
        use p256::pkcs8::EncodePrivateKey as _;
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).expect("random");
        let secret = p256::ecdsa::SigningKey::from_slice(&seed).expect("a P-256 scalar");
        let der = secret.to_pkcs8_der().expect("PKCS#8");
        let key = EncodingKey::from_ec_der(der.as_bytes());
        let mut h = Header::new(Algorithm::ES256);
        h.typ = Some("dpop+jwt".into());
        h.jwk = Some(Jwk::from_encoding_key(&key, Algorithm::ES256).expect("a public JWK"));
        header(&mut h);
        jsonwebtoken::encode(&h, &claims, &key).expect("signs")
    }

    fn claims() -> serde_json::Value {
        json!({"jti": "j1", "htm": "POST", "htu": URL, "iat": NOW})
    }

    #[test]
    fn a_proof_by_either_algorithm_yields_its_keys_thumbprint() {
        for prover in [Prover::generate(), Prover::generate_es256()] {
            let proof = check(&prover.proof("POST", URL, NOW, None), &expected(None), NOW);
            assert_eq!(proof.expect("valid").jkt, prover.jkt());
        }
        assert!(check(&es256(|_| {}, claims()), &expected(None), NOW).is_ok());
    }

    #[test]
    fn query_fragment_case_and_default_port_do_not_change_the_url() {
        let prover = Prover::generate();
        for htu in [
            "https://tools.example/mcp?x=1",
            "https://tools.example/mcp#f",
            "HTTPS://Tools.Example:443/mcp",
        ] {
            let proof = prover.proof("POST", htu, NOW, None);
            assert!(check(&proof, &expected(None), NOW).is_ok(), "{htu}");
        }
    }

    #[test]
    fn every_rule_of_section_4_3_refuses_with_its_error() {
        let other = |claims: serde_json::Value| es256(|_| {}, claims);
        let with = |f: fn(&mut serde_json::Value)| {
            let mut c = claims();
            f(&mut c);
            other(c)
        };
        let cases: Vec<(&str, String, DpopError)> = vec![
            ("not a JWT", "x.y".into(), DpopError::Malformed),
            (
                "typ",
                es256(|h| h.typ = Some("JWT".into()), claims()),
                DpopError::WrongType,
            ),
            (
                "no typ",
                es256(|h| h.typ = None, claims()),
                DpopError::WrongType,
            ),
            ("no jwk", es256(|h| h.jwk = None, claims()), DpopError::Key),
            (
                "no jti",
                with(|c| drop(c.as_object_mut().map(|o| o.remove("jti")))),
                DpopError::Malformed,
            ),
            ("htm", with(|c| c["htm"] = "GET".into()), DpopError::Method),
            (
                "htu",
                with(|c| c["htu"] = "https://tools.example/other".into()),
                DpopError::Url,
            ),
            (
                "htu host",
                with(|c| c["htu"] = "https://evil.example/mcp".into()),
                DpopError::Url,
            ),
            (
                "old",
                with(|c| c["iat"] = (NOW - IAT_WINDOW - 1).into()),
                DpopError::Stale,
            ),
            (
                "future",
                with(|c| c["iat"] = (NOW + IAT_WINDOW + 1).into()),
                DpopError::Stale,
            ),
            (
                "iat at the end of i64",
                with(|c| c["iat"] = i64::MIN.into()),
                DpopError::Stale,
            ),
            (
                "an Ed25519 jwk under ES256",
                es256(|h| h.jwk = Some(Prover::generate().jwk()), claims()),
                DpopError::Key,
            ),
        ];
        for (what, proof, error) in cases {
            assert_eq!(check(&proof, &expected(None), NOW), Err(error), "{what}");
        }
    }

    #[test]
    fn a_symmetric_or_unsigned_proof_is_refused() {
        let hs = jsonwebtoken::encode(
            &Header {
                typ: Some("dpop+jwt".into()),
                ..Header::new(Algorithm::HS256)
            },
            &claims(),
            &EncodingKey::from_secret(b"shared").expect("an HMAC key"),
        )
        .expect("signs");
        assert_eq!(check(&hs, &expected(None), NOW), Err(DpopError::Algorithm));
        let header = URL_SAFE_NO_PAD.encode(br#"{"typ":"dpop+jwt","alg":"none"}"#);
        let body = URL_SAFE_NO_PAD.encode(claims().to_string());
        let none = format!("{header}.{body}.");
        assert_eq!(
            check(&none, &expected(None), NOW),
            Err(DpopError::Malformed)
        );
    }

    #[test]
    fn a_jwk_with_its_private_key_is_refused() {
        let prover = Prover::generate();
        let proof = prover.proof("POST", URL, NOW, None);
        let mut parts: Vec<String> = proof.split('.').map(str::to_owned).collect();
        let mut header: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(&parts[0]).expect("b64")).expect("json");
        header["jwk"]["d"] = "c2VjcmV0".into();
        parts[0] = URL_SAFE_NO_PAD.encode(header.to_string());
        assert_eq!(
            check(&parts.join("."), &expected(None), NOW),
            Err(DpopError::Key)
        );
    }

    #[test]
    fn a_tampered_proof_fails_its_signature() {
        let prover = Prover::generate();
        let proof = prover.proof("POST", URL, NOW, None);
        let mut parts: Vec<String> = proof.split('.').map(str::to_owned).collect();
        let mut body: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(&parts[1]).expect("b64")).expect("json");
        body["jti"] = "another".into();
        parts[1] = URL_SAFE_NO_PAD.encode(body.to_string());
        assert_eq!(
            check(&parts.join("."), &expected(None), NOW),
            Err(DpopError::Signature)
        );
    }

    #[test]
    fn with_an_access_token_ath_must_be_its_hash() {
        let prover = Prover::generate();
        let token = "the.access.token";
        let right = prover.proof("POST", URL, NOW, Some(token));
        assert!(check(&right, &expected(Some(token)), NOW).is_ok());
        let none = prover.proof("POST", URL, NOW, None);
        assert_eq!(
            check(&none, &expected(Some(token)), NOW),
            Err(DpopError::AccessTokenHash)
        );
        let other = prover.proof("POST", URL, NOW, Some("another.token"));
        assert_eq!(
            check(&other, &expected(Some(token)), NOW),
            Err(DpopError::AccessTokenHash)
        );
    }

    #[test]
    fn the_replay_key_is_per_key_and_jti() {
        let a = Proof {
            jkt: "k1".into(),
            jti: "j".into(),
            iat: NOW,
        };
        let b = Proof {
            jkt: "k2".into(),
            jti: "j".into(),
            iat: NOW,
        };
        assert_ne!(a.replay_key(), b.replay_key());
        assert!(a.remember_until() > NOW + IAT_WINDOW);
    }
}
