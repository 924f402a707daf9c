//! Each person's own connections (issue 46): a backend configured
//! `auth = "connection"` is an OAuth resource with an authorization server
//! of its own, where the host is registered as a client. A person connects
//! their account there once, in their browser, through the host's page;
//! the host keeps their tokens sealed in the store, refreshes them, and
//! sends each person's token only on that person's calls.
//!
//! The flow (authorization code with PKCE, RFC 6749 and 7636):
//! [`Connections::start`] makes a fresh `state` and verifier, stores the
//! attempt bound to the person signed in to the host's page, and sends
//! the browser to the server's authorization endpoint, found by RFC 8414
//! metadata (OpenID discovery as a fallback), whose `issuer` must be the
//! configured one. [`Connections::finish`] takes the attempt back by its
//! `state` (once), checks it is the same person and backend and, where the
//! server says it sends one, that the response's `iss` is the configured
//! issuer (RFC 9207: no mix-up between servers), redeems the code with the
//! verifier, and stores the sealed tokens ([`seal`]). A revoked or expired
//! connection that cannot be refreshed is deleted, and the person is asked
//! to connect again; a connection is never replaced silently.

mod seal;
mod upstream;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use toolhost_auth::{AuthEvent, AuthStore, ConnectionAttempt, PersonConnection, pkce, secret};
use toolhost_backend::{ConnectionError, ConnectionFuture, Connector, Identity};

use crate::ClientSecret;
use crate::http;

pub use seal::{KeyError, Owner, SealingKeys};
use upstream::{Upstream, issued, upstream_error};

/// How long a connect flow may take, from the host's page to the callback.
pub const ATTEMPT_TTL: Duration = Duration::from_secs(10 * 60);
/// A token this close to its expiry is refreshed before it is sent.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(30);
/// Most connections one page of the console lists.
pub const MAX_LISTED: u32 = 500;

/// One connection backend as the operator configures it
/// (`[backends.NAME]` with `auth = "connection"`).
#[derive(Debug, Clone)]
pub struct ConnectionBackend {
    /// The backend's name.
    pub name: String,
    /// Its authorization server's issuer (RFC 8414), https (or http to a
    /// loopback address).
    pub issuer: String,
    /// The host's client id there.
    pub client_id: String,
    /// The host's client secret there.
    pub client_secret: ClientSecret,
    /// The scope asked for, if any.
    pub scope: Option<String>,
    /// The RFC 8707 resource asked for, if any (the backend's URL as the
    /// server knows it).
    pub resource: Option<String>,
}

/// Why a connection could not be made, read or revoked. The words are for
/// the person's page (escaped) and the log; never a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    /// No backend of that name acts with people's connections.
    #[error("no backend {0:?} takes people's connections")]
    UnknownBackend(String),
    /// The callback's `state` names no attempt, or another person's or
    /// backend's, or one that expired.
    #[error("this connection attempt is unknown, expired or not yours: start again")]
    UnknownAttempt,
    /// The server refused, or its answer is not what it should be.
    #[error("the backend's authorization server refused: {0}")]
    Refused(String),
    /// The server or the store could not be reached.
    #[error("unavailable: {0}")]
    Unavailable(String),
}

/// A connection as the console shows it: whose, to what, since when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionInfo {
    /// The person.
    pub user_id: String,
    /// The backend.
    pub backend: String,
    /// When they connected (seconds since the epoch).
    pub connected_at: i64,
    /// When the access token expires, if the server said.
    pub expires_at: Option<i64>,
}
/// What a sealed row holds.
#[derive(Serialize, Deserialize)]
struct Tokens {
    access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refresh_token: Option<String>,
}

/// The host's [`Connector`]: every connection backend, the sealing keys
/// and the store.
pub struct Connections {
    host_issuer: String,
    backends: BTreeMap<String, Upstream>,
    keys: Arc<SealingKeys>,
    store: Arc<dyn AuthStore>,
    http: reqwest::Client,
    /// Turns to refresh, by [`stripe`] of the person and backend.
    refreshing: Box<[tokio::sync::Mutex<()>]>,
}

/// How many refresh turns a replica has: people and backends share them
/// by hash, so the lock memory is fixed however many people there are.
const REFRESH_TURNS: usize = 64;

/// The refresh turn of `owner`.
fn stripe(owner: Owner<'_>) -> usize {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (owner.tenant, owner.user_id, owner.backend).hash(&mut h);
    (h.finish() % REFRESH_TURNS as u64) as usize
}

/// A stored connection as a request finds it.
enum Current {
    /// Its access token, fresh.
    Fresh(String),
    /// Expired (or about to): the row and its tokens, to refresh.
    Expired(Box<PersonConnection>, Tokens),
}

impl std::fmt::Debug for Connections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connections")
            .field("backends", &self.backends.keys().collect::<Vec<_>>())
            .field("keys", &self.keys)
            .finish_non_exhaustive()
    }
}

fn now() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH);
    since.map_or(0, |d| d.as_secs() as i64)
}

impl Connections {
    /// The connection backends of a host whose public address is
    /// `host_issuer`, checked without contacting their servers.
    pub fn new(
        host_issuer: &str,
        configs: Vec<ConnectionBackend>,
        keys: Arc<SealingKeys>,
        store: Arc<dyn AuthStore>,
    ) -> Result<Self, String> {
        let mut backends = BTreeMap::new();
        for config in configs {
            http::allowed_url(&config.issuer)
                .map_err(|e| format!("backend {:?}: connect_issuer {e}", config.name))?;
            if config.client_id.is_empty() || config.client_secret.expose().is_empty() {
                return Err(format!(
                    "backend {:?}: connect_client_id and the client secret must not be empty",
                    config.name
                ));
            }
            let upstream = Upstream::new(config);
            backends.insert(upstream.config.name.clone(), upstream);
        }
        let http = http::client()?;
        Ok(Connections {
            host_issuer: host_issuer.trim_end_matches('/').to_owned(),
            backends,
            keys,
            store,
            http,
            refreshing: (0..REFRESH_TURNS)
                .map(|_| tokio::sync::Mutex::new(()))
                .collect(),
        })
    }

    /// The connection backends' names.
    pub fn backend_names(&self) -> Vec<String> {
        self.backends.keys().cloned().collect()
    }

    /// This host's callback for `backend`: registered at its server.
    pub fn callback_url(&self, backend: &str) -> String {
        format!("{}/admin/connections/{backend}/callback", self.host_issuer)
    }

    fn upstream(&self, backend: &str) -> Result<&Upstream, ConnectError> {
        (self.backends.get(backend)).ok_or_else(|| ConnectError::UnknownBackend(backend.to_owned()))
    }

    /// Starts a connect flow for `user_id` of `tenant` to `backend`: the
    /// address of the server's authorization endpoint to send the browser to.
    pub async fn start(
        &self,
        tenant: &str,
        user_id: &str,
        backend: &str,
    ) -> Result<String, ConnectError> {
        let upstream = self.upstream(backend)?;
        let metadata = upstream.metadata(&self.http).await?;
        let state = secret::random(32);
        let attempt = ConnectionAttempt {
            state_hash: secret::digest(&state),
            tenant: tenant.to_owned(),
            user_id: user_id.to_owned(),
            backend: backend.to_owned(),
            code_verifier: secret::random(48),
            expires_at: now() + ATTEMPT_TTL.as_secs() as i64,
        };
        (self.store.insert_connection_attempt(&attempt).await)
            .map_err(|e| ConnectError::Unavailable(e.to_string()))?;
        let mut url =
            http::allowed_url(&metadata.authorization_endpoint).map_err(ConnectError::Refused)?;
        let challenge = pkce::s256(&attempt.code_verifier);
        let redirect = self.callback_url(backend);
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &upstream.config.client_id)
                .append_pair("redirect_uri", &redirect)
                .append_pair("state", &state)
                .append_pair("code_challenge", &challenge)
                .append_pair("code_challenge_method", "S256");
            if let Some(scope) = &upstream.config.scope {
                query.append_pair("scope", scope);
            }
            if let Some(resource) = &upstream.config.resource {
                query.append_pair("resource", resource);
            }
        }
        Ok(url.to_string())
    }

    /// Finishes the flow whose `state` came back with `code` (and `iss`,
    /// RFC 9207) to the browser of `user_id` of `tenant`, at `backend`'s
    /// callback: the person's tokens are stored, sealed.
    pub async fn finish(
        &self,
        (tenant, user_id, backend): (&str, &str, &str),
        state: &str,
        code: &str,
        iss: Option<&str>,
    ) -> Result<(), ConnectError> {
        let upstream = self.upstream(backend)?;
        let state_hash = secret::digest(state);
        let taken = self.store.take_connection_attempt(&state_hash);
        let attempt = (taken.await)
            .map_err(|e| ConnectError::Unavailable(e.to_string()))?
            .filter(|a| a.tenant == tenant && a.user_id == user_id && a.backend == backend)
            .filter(|a| a.expires_at >= now())
            .ok_or(ConnectError::UnknownAttempt)?;
        let metadata = upstream.metadata(&self.http).await?;
        match iss {
            Some(iss) if iss != metadata.issuer => {
                return Err(ConnectError::Refused(format!(
                    "the response came from issuer {iss:?}, not {:?}",
                    metadata.issuer
                )));
            }
            None if metadata.authorization_response_iss_parameter_supported => {
                return Err(ConnectError::Refused(
                    "the response names no issuer, though the server sends one".into(),
                ));
            }
            _ => {}
        }
        let redirect = self.callback_url(backend);
        let mut form = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect.as_str()),
            ("code_verifier", attempt.code_verifier.as_str()),
        ];
        if let Some(resource) = &upstream.config.resource {
            form.push(("resource", resource));
        }
        let answer = (upstream.token_client(&metadata))
            .post(&self.http, &form, "the code")
            .await
            .map_err(upstream_error)?;
        let (tokens, expires_at) = issued(&answer.body, None)?;
        let owner = Owner {
            tenant,
            user_id,
            backend,
        };
        let row = self.sealed(owner, &tokens, now(), expires_at)?;
        (self.store.put_person_connection(&row).await)
            .map_err(|e| ConnectError::Unavailable(e.to_string()))?;
        self.event("connection.made", owner, String::new()).await;
        Ok(())
    }

    /// The connections of `tenant` (of `user_id` alone, if given), at most
    /// [`MAX_LISTED`].
    pub async fn list(
        &self,
        tenant: &str,
        user_id: Option<&str>,
    ) -> Result<Vec<ConnectionInfo>, ConnectError> {
        let rows = self.store.person_connections(tenant, user_id, MAX_LISTED);
        let rows = rows
            .await
            .map_err(|e| ConnectError::Unavailable(e.to_string()))?;
        Ok(rows
            .into_iter()
            .map(|r| ConnectionInfo {
                user_id: r.user_id,
                backend: r.backend,
                connected_at: r.connected_at,
                expires_at: r.expires_at,
            })
            .collect())
    }

    /// Deletes the connection of `user_id` of `tenant` to `backend`, by
    /// `by` (the person or their tenant's admin); whether there was one.
    /// Their next call to the backend asks them to connect again.
    pub async fn revoke(
        &self,
        (tenant, user_id, backend): (&str, &str, &str),
        by: &str,
    ) -> Result<bool, ConnectError> {
        let deleted = self
            .store
            .delete_person_connection(tenant, user_id, backend);
        let deleted = (deleted.await).map_err(|e| ConnectError::Unavailable(e.to_string()))?;
        if deleted {
            let owner = Owner {
                tenant,
                user_id,
                backend,
            };
            self.event("connection.revoked", owner, format!("by {by}"))
                .await;
        }
        Ok(deleted)
    }

    /// The row for `tokens` of `owner`, sealed under the current key.
    fn sealed(
        &self,
        owner: Owner<'_>,
        tokens: &Tokens,
        connected_at: i64,
        expires_at: Option<i64>,
    ) -> Result<PersonConnection, ConnectError> {
        let plain =
            serde_json::to_vec(tokens).map_err(|e| ConnectError::Unavailable(e.to_string()))?;
        let sealed = (self.keys.seal(owner, &plain)).map_err(ConnectError::Unavailable)?;
        Ok(PersonConnection {
            tenant: owner.tenant.to_owned(),
            user_id: owner.user_id.to_owned(),
            backend: owner.backend.to_owned(),
            key_id: self.keys.current().to_owned(),
            sealed,
            connected_at,
            expires_at,
        })
    }

    async fn event(&self, kind: &str, owner: Owner<'_>, more: String) {
        let detail = format!(
            "backend {} of tenant {} {more}",
            owner.backend, owner.tenant
        );
        let event = AuthEvent {
            at: now(),
            kind: kind.to_owned(),
            client_id: None,
            subject: Some(owner.user_id.to_owned()),
            source: None,
            detail: detail.trim_end().to_owned(),
        };
        if let Err(e) = self.store.record_event(&event).await {
            tracing::warn!(error = %e, kind, "recording a connection event failed");
        }
    }

    /// The access token of `owner`, refreshed if it must be.
    async fn token_of(&self, owner: Owner<'_>) -> Result<String, ConnectionError> {
        let upstream = (self.backends.get(owner.backend)).ok_or(ConnectionError::NotConnected)?;
        if let Current::Fresh(token) = self.current(owner).await? {
            return Ok(token);
        }
        // One refresh at a time per person and backend on this replica: the
        // requests of a call that all find the token expired refresh it
        // once (a server that rotates refresh tokens may take a second use
        // of the old one for theft and end the grant).
        let _turn = self.refreshing[stripe(owner)].lock().await;
        match self.current(owner).await? {
            Current::Fresh(token) => Ok(token),
            Current::Expired(row, tokens) => self.refreshed(upstream, owner, &row, tokens).await,
        }
    }

    /// The stored connection of `owner`: its access token if it is fresh
    /// (sealed again under the current key if an older one sealed it), or
    /// the row and tokens to refresh.
    async fn current(&self, owner: Owner<'_>) -> Result<Current, ConnectionError> {
        let row = self
            .store
            .person_connection(owner.tenant, owner.user_id, owner.backend);
        let row = (row.await)
            .map_err(|e| ConnectionError::Unavailable(e.to_string()))?
            .ok_or(ConnectionError::NotConnected)?;
        let Some(tokens) = self.opened(owner, &row) else {
            tracing::warn!(
                backend = owner.backend, key_id = %row.key_id,
                "a connection does not open (an unknown key, or not this person's); asking again"
            );
            return Err(ConnectionError::NotConnected);
        };
        let fresh = row
            .expires_at
            .is_none_or(|at| at - REFRESH_MARGIN.as_secs() as i64 > now());
        if !fresh {
            return Ok(Current::Expired(Box::new(row), tokens));
        }
        if row.key_id != self.keys.current() {
            // Rotation: sealed again under the current key, once.
            if let Ok(resealed) = self.sealed(owner, &tokens, row.connected_at, row.expires_at) {
                let _ = self
                    .store
                    .refresh_person_connection(&row.sealed, &resealed)
                    .await;
            }
        }
        Ok(Current::Fresh(tokens.access_token))
    }

    fn opened(&self, owner: Owner<'_>, row: &PersonConnection) -> Option<Tokens> {
        let plain = self.keys.open(&row.key_id, owner, &row.sealed)?;
        serde_json::from_slice(&plain).ok()
    }

    /// A new access token for the expired `row`, by its refresh token; a
    /// connection that cannot be refreshed is deleted (asked for again).
    async fn refreshed(
        &self,
        upstream: &Upstream,
        owner: Owner<'_>,
        row: &PersonConnection,
        tokens: Tokens,
    ) -> Result<String, ConnectionError> {
        let unavailable = |e: String| ConnectionError::Unavailable(e);
        let Some(refresh) = tokens.refresh_token.clone() else {
            self.expired(owner, row, "it expired and has no refresh token")
                .await?;
            return Err(ConnectionError::NotConnected);
        };
        let metadata =
            (upstream.metadata(&self.http).await).map_err(|e| unavailable(e.to_string()))?;
        let mut form = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh.as_str()),
        ];
        if let Some(resource) = &upstream.config.resource {
            form.push(("resource", resource));
        }
        let client = upstream.token_client(&metadata);
        let answer = client.send(&self.http, &form).await;
        let answer = answer.map_err(|e| unavailable(e.to_string()))?;
        if (400..500).contains(&answer.status) {
            let code = http::refusal(&answer);
            // RFC 6749 §5.2: the refresh token is invalid, expired or
            // revoked. Any other refusal (the host's client misconfigured,
            // say) is the operator's to fix, not every person's connection
            // to delete.
            if code != "invalid_grant" {
                let why = format!("the token endpoint refused a refresh: {code}");
                return Err(unavailable(why));
            }
            self.expired(owner, row, "its refresh was refused").await?;
            return Err(ConnectionError::NotConnected);
        }
        if !(200..300).contains(&answer.status) {
            return Err(unavailable(format!(
                "the token endpoint answered {}",
                answer.status
            )));
        }
        let (tokens, expires_at) =
            issued(&answer.body, Some(refresh)).map_err(|e| unavailable(e.to_string()))?;
        let renewed = self.sealed(owner, &tokens, row.connected_at, expires_at);
        let renewed = renewed.map_err(|e| unavailable(e.to_string()))?;
        let stored = self.store.refresh_person_connection(&row.sealed, &renewed);
        if !(stored.await).map_err(|e| unavailable(e.to_string()))? {
            // Changed meanwhile: refreshed elsewhere (use theirs next
            // time) or revoked (this token was issued before the revocation
            // was seen, and is not sent).
            let now_row = self
                .store
                .person_connection(owner.tenant, owner.user_id, owner.backend);
            let now_row = (now_row.await).map_err(|e| unavailable(e.to_string()))?;
            let theirs = now_row.and_then(|r| self.opened(owner, &r));
            return theirs
                .map(|t| t.access_token)
                .ok_or(ConnectionError::NotConnected);
        }
        Ok(tokens.access_token)
    }

    /// Deletes `row`, which can no longer be used, if it is still the one
    /// stored; the person is asked to connect again.
    async fn expired(
        &self,
        owner: Owner<'_>,
        row: &PersonConnection,
        why: &str,
    ) -> Result<(), ConnectionError> {
        let current = self
            .store
            .person_connection(owner.tenant, owner.user_id, owner.backend);
        let current = (current.await).map_err(|e| ConnectionError::Unavailable(e.to_string()))?;
        if current.is_some_and(|c| c.sealed == row.sealed) {
            let deleted =
                self.store
                    .delete_person_connection(owner.tenant, owner.user_id, owner.backend);
            (deleted.await).map_err(|e| ConnectionError::Unavailable(e.to_string()))?;
            self.event("connection.expired", owner, format!("({why})"))
                .await;
        }
        Ok(())
    }
}
impl Connector for Connections {
    fn token<'a>(&'a self, backend: &'a str, who: &'a Identity) -> ConnectionFuture<'a> {
        Box::pin(async move {
            let owner = Owner {
                tenant: &who.tenant,
                user_id: &who.subject,
                backend,
            };
            self.token_of(owner).await
        })
    }

    fn connect_url(&self, backend: &str) -> String {
        format!("{}/admin/connections/{backend}/connect", self.host_issuer)
    }
}
