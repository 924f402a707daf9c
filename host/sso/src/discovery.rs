//! The provider's discovery document and signing keys, fetched when first
//! needed and kept: the document for an hour, the keys until a token names
//! a key id they lack (the provider rotated), then fetched again, at most
//! once a second.
//!
//! Nothing is fetched when the host starts, so a provider that is down
//! then does not stop the host; its sign-in fails until it is back.

use std::time::{Duration, Instant};

use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet};
use serde::Deserialize;
use tokio::sync::Mutex;
use toolhost_auth::upstream::UpstreamError;

use crate::http;

/// How long a discovery document is used before it is fetched again.
const METADATA_TTL: Duration = Duration::from_secs(3600);
/// How long a key set is used before it is fetched again anyway.
const KEYS_TTL: Duration = Duration::from_secs(3600);
/// The least time between two fetches of the key set for an unknown key id:
/// a token naming keys that do not exist cannot make the host hammer the
/// provider (and the callback is rate-limited per address besides).
const KEYS_REFETCH: Duration = Duration::from_secs(1);

/// The parts of the discovery document (OpenID Connect Discovery 1.0 §3)
/// the relying party uses.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Metadata {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub jwks_uri: String,
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
}

/// A fetched value and when.
struct Fetched<T> {
    at: Instant,
    value: T,
}

/// The provider's document and keys.
pub(crate) struct Discovery {
    issuer: String,
    http: reqwest::Client,
    metadata: Mutex<Option<Fetched<Metadata>>>,
    keys: Mutex<Option<Fetched<JwkSet>>>,
}

impl Discovery {
    pub(crate) fn new(issuer: &str, http: reqwest::Client) -> Self {
        Discovery {
            issuer: issuer.to_owned(),
            http,
            metadata: Mutex::new(None),
            keys: Mutex::new(None),
        }
    }

    /// The discovery document: its `issuer` must be the configured one,
    /// exactly (Discovery §4.3), and its endpoints fetchable.
    pub(crate) async fn metadata(&self) -> Result<Metadata, UpstreamError> {
        let mut cached = self.metadata.lock().await;
        if let Some(f) = cached.as_ref().filter(|f| f.at.elapsed() < METADATA_TTL) {
            return Ok(f.value.clone());
        }
        let url = format!(
            "{}/.well-known/openid-configuration",
            self.issuer.trim_end_matches('/')
        );
        let doc: Metadata = http::get_json(&self.http, "the discovery document", &url).await?;
        if doc.issuer != self.issuer {
            return Err(UpstreamError::Refused(format!(
                "the discovery document names issuer {:?}, not the configured {:?}",
                doc.issuer, self.issuer
            )));
        }
        for endpoint in [
            &doc.authorization_endpoint,
            &doc.token_endpoint,
            &doc.jwks_uri,
        ] {
            http::allowed_url(endpoint).map_err(UpstreamError::Refused)?;
        }
        *cached = Some(Fetched {
            at: Instant::now(),
            value: doc.clone(),
        });
        Ok(doc)
    }

    /// The provider's key for a token signed with `alg` under `kid`.
    pub(crate) async fn key(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<Jwk, UpstreamError> {
        let mut cached = self.keys.lock().await;
        let fresh = cached.as_ref().is_some_and(|f| f.at.elapsed() < KEYS_TTL);
        if fresh && let Some(key) = cached.as_ref().and_then(|f| pick(&f.value, kid, alg)) {
            return Ok(key);
        }
        let may_refetch = cached
            .as_ref()
            .is_none_or(|f| !fresh || f.at.elapsed() >= KEYS_REFETCH);
        if may_refetch {
            let jwks_uri = self.metadata().await?.jwks_uri;
            let set: JwkSet = http::get_json(&self.http, "the key set", &jwks_uri).await?;
            *cached = Some(Fetched {
                at: Instant::now(),
                value: set,
            });
        }
        cached
            .as_ref()
            .and_then(|f| pick(&f.value, kid, alg))
            .ok_or_else(|| {
                UpstreamError::Refused(format!(
                    "no signing key {kid:?} for {alg:?} in the provider's key set"
                ))
            })
    }
}

/// The key of `set` a token signed with `alg` under `kid` verifies with: a
/// public key of the algorithm's family (never a shared secret), whose own
/// `alg`, if it names one, is the token's. Without a `kid`, the one key
/// that fits, if exactly one does.
fn pick(set: &JwkSet, kid: Option<&str>, alg: Algorithm) -> Option<Jwk> {
    let fits = |k: &&Jwk| {
        let family = matches!(
            (&k.algorithm, alg),
            (
                AlgorithmParameters::RSA(_),
                Algorithm::RS256
                    | Algorithm::RS384
                    | Algorithm::RS512
                    | Algorithm::PS256
                    | Algorithm::PS384
                    | Algorithm::PS512
            ) | (
                AlgorithmParameters::EllipticCurve(_),
                Algorithm::ES256 | Algorithm::ES384
            ) | (AlgorithmParameters::OctetKeyPair(_), Algorithm::EdDSA)
        );
        let own_alg = k
            .common
            .key_algorithm
            .is_none_or(|a| a.to_string() == format!("{alg:?}"));
        family && own_alg
    };
    match kid {
        Some(kid) => set
            .keys
            .iter()
            .filter(|k| k.common.key_id.as_deref() == Some(kid))
            .find(fits)
            .cloned(),
        None => {
            let mut candidates = set.keys.iter().filter(fits);
            match (candidates.next(), candidates.next()) {
                (Some(only), None) => Some(only.clone()),
                _ => None,
            }
        }
    }
}
