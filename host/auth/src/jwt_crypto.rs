//! The JWT library's cryptography: aws-lc-rs (`jsonwebtoken`'s `aws_lc_rs`
//! provider), except that an Ed25519 signing key is parsed once, not once
//! per signature.
//!
//! `jsonwebtoken` asks its provider for a fresh signer on every `encode`,
//! and aws-lc-rs's signer parses the PKCS#8 document and derives the public
//! key each time: about as long as the signature itself. The host signs an
//! access token per grant and an identity assertion per backend call with
//! a handful of keys (a ring's newest, per purpose), so [`install`] puts a
//! provider in place whose Ed25519 signers come from a small cache of
//! parsed key pairs, keyed by the key's PKCS#8 bytes. Everything else
//! (verification, other algorithms) is the `aws_lc_rs` provider's.
//!
//! The cache holds at most [`CACHED_KEYS`] keys: a rotated-out key leaves
//! it when newer ones push it out, and a key that is not cached is parsed
//! as the library would.

use std::sync::{Arc, OnceLock, RwLock};

use aws_lc_rs::signature::Ed25519KeyPair;
use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, aws_lc};
use jsonwebtoken::errors::{ErrorKind, Result};
use jsonwebtoken::{Algorithm, AlgorithmFamily, EncodingKey};

/// How many parsed Ed25519 key pairs are kept: two rings (access tokens and
/// assertions), each with its newest key and the one it superseded, with
/// room for tests that make several rings in one process.
const CACHED_KEYS: usize = 8;

/// Makes the host's provider the process's `jsonwebtoken` provider, once.
/// Called before the host signs with a ring's key; a process where another
/// provider was already chosen keeps it (and parses per signature).
pub fn install() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        if CryptoProvider::install_default(provider()).is_err() {
            tracing::warn!("another JWT crypto provider was chosen first; Ed25519 keys are parsed per signature");
        }
    });
}

/// The `aws_lc_rs` provider with [`cached_signer`] as its signer factory.
fn provider() -> &'static CryptoProvider {
    static PROVIDER: OnceLock<CryptoProvider> = OnceLock::new();
    PROVIDER.get_or_init(|| CryptoProvider {
        signer_factory: cached_signer,
        ..aws_lc::DEFAULT_PROVIDER.clone()
    })
}

/// An Ed25519 signer from the cache (parsing and caching the key on a
/// miss); any other algorithm's from the `aws_lc_rs` provider.
fn cached_signer(algorithm: &Algorithm, key: &EncodingKey) -> Result<Box<dyn JwtSigner>> {
    if *algorithm != Algorithm::EdDSA || key.family() != AlgorithmFamily::Ed {
        return (aws_lc::DEFAULT_PROVIDER.signer_factory)(algorithm, key);
    }
    Ok(Box::new(CachedEd25519(parsed(key.as_bytes())?)))
}

/// Parsed Ed25519 key pairs by PKCS#8 document, newest last.
type Cache = Vec<(Vec<u8>, Arc<Ed25519KeyPair>)>;

fn cache() -> &'static RwLock<Cache> {
    static CACHE: OnceLock<RwLock<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| RwLock::new(Vec::with_capacity(CACHED_KEYS)))
}

/// The key pair of `pkcs8`, parsed once.
fn parsed(pkcs8: &[u8]) -> Result<Arc<Ed25519KeyPair>> {
    let find = |cache: &Cache| {
        cache
            .iter()
            .find(|(der, _)| der.as_slice() == pkcs8)
            .map(|(_, pair)| Arc::clone(pair))
    };
    if let Some(pair) = find(&cache().read().unwrap_or_else(|p| p.into_inner())) {
        return Ok(pair);
    }
    let pair = Arc::new(Ed25519KeyPair::from_pkcs8(pkcs8).map_err(|_| ErrorKind::InvalidEddsaKey)?);
    let mut cache = cache().write().unwrap_or_else(|p| p.into_inner());
    if let Some(raced) = find(&cache) {
        return Ok(raced);
    }
    if cache.len() == CACHED_KEYS {
        cache.remove(0);
    }
    cache.push((pkcs8.to_vec(), Arc::clone(&pair)));
    Ok(pair)
}

/// An Ed25519 signer over a cached key pair.
struct CachedEd25519(Arc<Ed25519KeyPair>);

impl jsonwebtoken::signature::Signer<Vec<u8>> for CachedEd25519 {
    fn try_sign(&self, msg: &[u8]) -> std::result::Result<Vec<u8>, jsonwebtoken::signature::Error> {
        Ok(self.0.sign(msg).as_ref().to_vec())
    }
}

impl JwtSigner for CachedEd25519 {
    fn algorithm(&self) -> Algorithm {
        Algorithm::EdDSA
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Header, Validation};
    use serde_json::{Value, json};

    fn public_of(pkcs8: &[u8]) -> DecodingKey {
        use aws_lc_rs::signature::KeyPair;
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8).expect("a key");
        DecodingKey::from_ed_der(pair.public_key().as_ref())
    }

    fn verifies(token: &str, key: &DecodingKey) -> bool {
        let mut validation = Validation::new(Algorithm::EdDSA);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        jsonwebtoken::decode::<Value>(token, key, &validation).is_ok()
    }

    #[test]
    fn each_key_signs_as_itself_after_more_keys_than_the_cache_holds() {
        install();
        let keys: Vec<Vec<u8>> = (0..CACHED_KEYS + 3)
            .map(|_| crate::keys::fresh_ed25519_der())
            .collect();
        // Twice around: the second round finds the newest keys cached and
        // parses the oldest again.
        for _ in 0..2 {
            for (n, der) in keys.iter().enumerate() {
                let token = jsonwebtoken::encode(
                    &Header::new(Algorithm::EdDSA),
                    &json!({ "n": n }),
                    &EncodingKey::from_ed_der(der),
                )
                .expect("signed");
                assert!(verifies(&token, &public_of(der)), "key {n} signs as itself");
                let other = &keys[(n + 1) % keys.len()];
                assert!(
                    !verifies(&token, &public_of(other)),
                    "and not as key {}",
                    n + 1
                );
            }
        }
        let held = cache().read().expect("cache").len();
        assert!(
            held <= CACHED_KEYS,
            "the cache keeps at most {CACHED_KEYS}, held {held}"
        );
    }

    #[test]
    fn a_malformed_key_is_an_error_and_is_not_cached() {
        install();
        let junk = EncodingKey::from_ed_der(b"not a PKCS#8 document");
        let err = jsonwebtoken::encode(&Header::new(Algorithm::EdDSA), &json!({}), &junk)
            .expect_err("refused");
        assert!(matches!(err.kind(), ErrorKind::InvalidEddsaKey), "{err:?}");
        let cached = cache().read().expect("cache");
        assert!(
            cached
                .iter()
                .all(|(der, _)| der != b"not a PKCS#8 document")
        );
    }

    #[test]
    fn other_algorithms_are_the_aws_lc_providers() {
        install();
        let secret = EncodingKey::from_secret(b"a shared secret").expect("a key");
        let token = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &json!({"a": 1}), &secret)
            .expect("signed");
        let mut validation = Validation::new(Algorithm::HS256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        let key = DecodingKey::from_secret(b"a shared secret").expect("a key");
        assert!(jsonwebtoken::decode::<Value>(&token, &key, &validation).is_ok());
    }
}
