//! The signing keys of access tokens and of backend identity assertions
//! (one ring each, [`KeyPurpose`]): Ed25519, kept in the store so every
//! replica signs and verifies with the same set, rotated on a schedule and
//! published (with their `kid`) in the JWKS.
//!
//! A key signs from its creation until a newer key exists; it stays
//! published (and verifiable) until every token it signed has expired, then
//! it is retired.

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::pkcs8::{EncodePrivateKey, KeypairBytes};
use jsonwebtoken::{DecodingKey, EncodingKey};
use serde_json::{Value, json};

use crate::secret;
use crate::store::{AuthStore, AuthStoreError, KeyPurpose, SigningKey};

/// The JOSE algorithm of every key.
pub const ALG: &str = "EdDSA";

/// Why the key ring could not be loaded or a key made.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] AuthStoreError),
    /// A stored key could not be read (corrupt, or another algorithm).
    #[error("signing key {kid}: {message}")]
    Unreadable {
        /// The key's id.
        kid: String,
        /// What was wrong.
        message: String,
    },
}

/// How long keys live.
#[derive(Debug, Clone, Copy)]
pub struct KeySchedule {
    /// A new key is made when the newest is older than this.
    pub rotate_after: Duration,
    /// A superseded key stays published this long (longer than any access token lives).
    pub publish_after_superseded: Duration,
}

/// The keys in use for one purpose: the one that signs, and every one
/// that verifies.
pub struct KeyRing {
    purpose: KeyPurpose,
    keys: RwLock<Loaded>,
}

struct Loaded {
    signing_kid: String,
    signing: EncodingKey,
    verifying: HashMap<String, DecodingKey>,
    jwks: Value,
}

impl KeyRing {
    /// Loads the access-token keys from the store, making a new signing
    /// key if there is none or the newest is due for rotation, and retiring
    /// superseded keys whose tokens have all expired.
    pub async fn load(
        store: &dyn AuthStore,
        schedule: KeySchedule,
        now: i64,
    ) -> Result<KeyRing, KeyError> {
        KeyRing::load_for(KeyPurpose::Access, store, schedule, now).await
    }

    /// [`KeyRing::load`] for the keys of `purpose`.
    pub async fn load_for(
        purpose: KeyPurpose,
        store: &dyn AuthStore,
        schedule: KeySchedule,
        now: i64,
    ) -> Result<KeyRing, KeyError> {
        let loaded = load(store, purpose, schedule, now).await?;
        Ok(KeyRing {
            purpose,
            keys: RwLock::new(loaded),
        })
    }

    /// Reloads from the store (picks up a rotation made by another replica,
    /// or makes one when due).
    pub async fn reload(
        &self,
        store: &dyn AuthStore,
        schedule: KeySchedule,
        now: i64,
    ) -> Result<(), KeyError> {
        let loaded = load(store, self.purpose, schedule, now).await?;
        *self.keys.write().unwrap_or_else(|p| p.into_inner()) = loaded;
        Ok(())
    }

    /// Runs `f` with the signing key and its id.
    pub(crate) fn with_signing<T>(&self, f: impl FnOnce(&str, &EncodingKey) -> T) -> T {
        let keys = self.keys.read().unwrap_or_else(|p| p.into_inner());
        f(&keys.signing_kid, &keys.signing)
    }

    /// The verifying key with this id, if published.
    pub(crate) fn verifying(&self, kid: &str) -> Option<DecodingKey> {
        let keys = self.keys.read().unwrap_or_else(|p| p.into_inner());
        keys.verifying.get(kid).cloned()
    }

    /// The JWKS document (RFC 7517): every published public key.
    pub fn jwks(&self) -> Value {
        self.keys
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .jwks
            .clone()
    }
}

async fn load(
    store: &dyn AuthStore,
    purpose: KeyPurpose,
    schedule: KeySchedule,
    now: i64,
) -> Result<Loaded, KeyError> {
    let mut keys = store.signing_keys(purpose).await?;
    let due = keys
        .iter()
        .find(|k| k.retired_at.is_none())
        .is_none_or(|newest| now - newest.created_at >= secs(schedule.rotate_after));
    if due {
        let key = generate(now);
        store.insert_signing_key(purpose, &key).await?;
        tracing::info!(kid = %key.kid, purpose = purpose.as_str(), "made a new signing key");
        keys.insert(0, key);
    }
    // Keys are newest first: a key was superseded when the one before it was made.
    let mut superseded_at: Option<i64> = None;
    let mut published = Vec::new();
    for key in keys {
        if key.retired_at.is_some() {
            continue;
        }
        match superseded_at {
            Some(at) if now - at >= secs(schedule.publish_after_superseded) => {
                store.retire_signing_key(purpose, &key.kid, now).await?;
                tracing::info!(kid = %key.kid, purpose = purpose.as_str(), "retired a signing key");
            }
            _ => published.push(key.clone()),
        }
        superseded_at = Some(key.created_at);
    }
    assemble(&published)
}

fn assemble(published: &[SigningKey]) -> Result<Loaded, KeyError> {
    // Before any key of a ring signs: its Ed25519 key pairs are parsed once.
    crate::jwt_crypto::install();
    let newest = published.first().ok_or_else(|| KeyError::Unreadable {
        kid: "-".into(),
        message: "no signing key is published".into(),
    })?;
    let mut verifying = HashMap::new();
    let mut jwks = Vec::new();
    for key in published {
        let public = public_key(key)?;
        verifying.insert(key.kid.clone(), DecodingKey::from_ed_der(&public));
        jwks.push(json!({
            "kty": "OKP", "crv": "Ed25519", "alg": ALG, "use": "sig",
            "kid": key.kid, "x": URL_SAFE_NO_PAD.encode(public),
        }));
    }
    Ok(Loaded {
        signing_kid: newest.kid.clone(),
        signing: EncodingKey::from_ed_der(&newest.private_der),
        verifying,
        jwks: json!({ "keys": jwks }),
    })
}

/// A fresh random Ed25519 private key, PKCS#8 v1 DER (the private key
/// only).
pub(crate) fn fresh_ed25519_der() -> Vec<u8> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).expect("the OS random source is available");
    let der = KeypairBytes {
        secret_key: seed,
        public_key: None,
    }
    .to_pkcs8_der()
    .expect("a 32-byte Ed25519 key encodes");
    der.as_bytes().to_vec()
}

/// A new Ed25519 key, PKCS#8 v1 (the private key only).
fn generate(now: i64) -> SigningKey {
    SigningKey {
        kid: secret::random(12),
        alg: ALG.into(),
        private_der: fresh_ed25519_der(),
        created_at: now,
        retired_at: None,
    }
}

/// The raw 32-byte public key of a stored private key.
fn public_key(key: &SigningKey) -> Result<[u8; 32], KeyError> {
    use ed25519_dalek::pkcs8::DecodePrivateKey;
    let unreadable = |message: String| KeyError::Unreadable {
        kid: key.kid.clone(),
        message,
    };
    if key.alg != ALG {
        return Err(unreadable(format!("algorithm {} is not {ALG}", key.alg)));
    }
    let signing = ed25519_dalek::SigningKey::from_pkcs8_der(&key.private_der)
        .map_err(|e| unreadable(e.to_string()))?;
    Ok(signing.verifying_key().to_bytes())
}

fn secs(d: Duration) -> i64 {
    i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
}

impl KeyRing {
    /// A ring of one fresh key, without a store: for tests, the fuzz
    /// targets ([`crate::fuzzing`]) and the benches; the host's rings come
    /// from the store.
    pub fn ephemeral() -> KeyRing {
        let loaded = assemble(&[generate(0)]).expect("a fresh key assembles");
        KeyRing {
            purpose: KeyPurpose::Access,
            keys: RwLock::new(loaded),
        }
    }
}
