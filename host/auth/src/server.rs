//! [`AuthServer`]: the authorization server's state, shared by its routes
//! and the resource server's bearer check.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::assertion::{ASSERTION_TTL, Assertions};
use crate::cimd::{FetchLimits, MetadataFetcher};
use crate::config::AuthConfig;
use crate::error::OAuthError;
use crate::keys::{KeyError, KeyRing, KeySchedule};
use crate::per_source::{Counted, PendingCap, SourceLimits};
use crate::store::{AuthEvent, AuthStore, Client, ClientKind, ClientOrigin, KeyPurpose};
use crate::upstream::{Sso, UpstreamIdentity};
use crate::verified::Verified;
use crate::{secret, token};

/// The most refusal events of one kind kept per client per minute
/// ([`AuthServer::refusal_event`]).
pub(crate) const REFUSAL_EVENTS_PER_MINUTE: u32 = 10;

/// The authorization server: configuration, store, keys and limiters.
pub struct AuthServer {
    pub(crate) config: AuthConfig,
    pub(crate) store: Arc<dyn AuthStore>,
    pub(crate) keys: KeyRing,
    /// The keys of identity assertions to backends: a ring of their own.
    assertion_keys: Arc<KeyRing>,
    /// When the assertion keys were last read again for their JWKS (unix
    /// milliseconds).
    assertion_keys_read: AtomicI64,
    pub(crate) fetcher: MetadataFetcher,
    pub(crate) sso: Sso,
    pub(crate) verified: Verified,
    /// Registrations, logins and authorization requests per source,
    /// counted in the store (shared by every replica).
    per_source: SourceLimits,
    /// The bound on stored pending authorization requests.
    pending_cap: PendingCap,
    /// When a token with an unknown key id last made the keys be read
    /// again (unix milliseconds).
    keys_read_for_unknown: AtomicI64,
}

/// The least time between two reloads of the signing keys for a token
/// naming an unknown key id: forged key ids cannot hammer the store.
const UNKNOWN_KEY_RELOAD_MS: i64 = 1000;

impl AuthServer {
    /// Loads (or makes) the signing keys and builds the server.
    pub async fn start(
        config: AuthConfig,
        store: Arc<dyn AuthStore>,
    ) -> Result<Arc<AuthServer>, KeyError> {
        AuthServer::start_with_sso(config, store, Sso::default()).await
    }

    /// [`AuthServer::start`] with single sign-on: each provider is offered
    /// on the login page next to the password form (or instead of it, when
    /// [`AuthConfig::password_login`] is off).
    pub async fn start_with_sso(
        config: AuthConfig,
        store: Arc<dyn AuthStore>,
        sso: Sso,
    ) -> Result<Arc<AuthServer>, KeyError> {
        let keys = KeyRing::load(store.as_ref(), schedule(&config), now()).await?;
        let assertion_keys = KeyRing::load_for(
            KeyPurpose::BackendAssertion,
            store.as_ref(),
            assertion_schedule(&config),
            now(),
        )
        .await?;
        let fetcher =
            MetadataFetcher::new(FetchLimits::default()).map_err(|e| KeyError::Unreadable {
                kid: "-".into(),
                message: format!("metadata fetcher: {e}"),
            })?;
        Ok(Arc::new(AuthServer {
            per_source: SourceLimits::default(),
            pending_cap: PendingCap::default(),
            config,
            store,
            keys,
            assertion_keys: Arc::new(assertion_keys),
            assertion_keys_read: AtomicI64::new(0),
            fetcher,
            sso,
            verified: Verified::default(),
            keys_read_for_unknown: AtomicI64::new(0),
        }))
    }

    /// The single-sign-on provider named `name`.
    pub(crate) fn provider(&self, name: &str) -> Option<Arc<dyn UpstreamIdentity>> {
        self.sso
            .providers
            .iter()
            .find(|p| p.name() == name)
            .cloned()
    }

    /// What the login page offers besides the password: (name, label) of
    /// every provider.
    pub(crate) fn providers(&self) -> Vec<(&str, &str)> {
        self.sso
            .providers
            .iter()
            .map(|p| (p.name(), p.label()))
            .collect()
    }

    /// The signing keys this replica holds.
    pub fn keys(&self) -> &KeyRing {
        &self.keys
    }

    /// The keys of identity assertions to backends (their JWKS is served
    /// at [`crate::assertion::ASSERTION_JWKS_PATH`]).
    pub fn assertion_keys(&self) -> &KeyRing {
        &self.assertion_keys
    }

    /// The assertion keys' JWKS, read again from the store first (at most
    /// once a second): a key another replica made since this one's last
    /// maintenance is published here too, so a backend fetching the JWKS
    /// for an unknown key id finds it whichever replica answers.
    pub async fn assertion_jwks(&self) -> serde_json::Value {
        if reload_turn(&self.assertion_keys_read) {
            let schedule = assertion_schedule(&self.config);
            if let Err(e) = (self.assertion_keys)
                .reload(self.store(), schedule, now())
                .await
            {
                tracing::error!(error = %e, "reloading backend-assertion keys for the JWKS");
            }
        }
        self.assertion_keys.jwks()
    }

    /// The signer of identity assertions to backends, for the backends
    /// the operator tells who acts.
    pub fn backend_assertions(&self) -> Arc<Assertions> {
        Arc::new(Assertions::new(
            &self.config.issuer,
            self.assertion_keys.clone(),
        ))
    }

    /// The configuration.
    pub fn config(&self) -> &AuthConfig {
        &self.config
    }

    /// The store.
    pub fn store(&self) -> &dyn AuthStore {
        self.store.as_ref()
    }

    /// Periodic upkeep: picks up key rotations (ours or another
    /// replica's), deletes clients unused past the idle expiry, and purges
    /// expired codes, refresh tokens, pending requests and sessions.
    pub async fn maintain(&self) {
        if let Err(e) = self
            .keys
            .reload(self.store(), schedule(&self.config), now())
            .await
        {
            tracing::error!(error = %e, "reloading signing keys");
        }
        let assertions = assertion_schedule(&self.config);
        if let Err(e) = (self.assertion_keys)
            .reload(self.store(), assertions, now())
            .await
        {
            tracing::error!(error = %e, "reloading backend-assertion keys");
        }
        let before = now() - secs(self.config.client_idle_expiry);
        match self.store.expire_idle_clients(before).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(clients = n, "expired idle OAuth clients"),
            Err(e) => tracing::error!(error = %e, "expiring idle clients"),
        }
        // A spent code is kept until it expires, so that its replay is
        // recognised (and revokes its grant) for as long as it could matter.
        match self.store.purge_expired(now()).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(rows = n, "purged expired codes, tokens and sessions"),
            Err(e) => tracing::error!(error = %e, "purging expired auth rows"),
        }
    }

    /// Runs [`AuthServer::maintain`] every `every` until the task is dropped.
    pub async fn maintain_every(self: Arc<Self>, every: Duration) {
        let mut tick = tokio::time::interval(every);
        tick.tick().await;
        loop {
            tick.tick().await;
            self.maintain().await;
        }
    }

    /// Reads the signing keys again for a token naming a key id this
    /// replica has not loaded (another replica made it), at most once a
    /// second; true if they were read.
    pub(crate) async fn reload_keys(&self) -> bool {
        if !reload_turn(&self.keys_read_for_unknown) {
            return false;
        }
        match self
            .keys
            .reload(self.store(), schedule(&self.config), now())
            .await
        {
            Ok(()) => true,
            Err(e) => {
                tracing::error!(error = %e, "reloading signing keys for an unknown key id");
                false
            }
        }
    }

    /// Signs an access token for a grant; returns it with its lifetime.
    pub(crate) fn mint_access(
        &self,
        subject: &str,
        client_id: &str,
        family: &str,
        scope: &str,
        jkt: Option<&str>,
    ) -> (String, i64) {
        let ttl = secs(self.config.access_ttl);
        // `exp` is in whole seconds, valid through its second, and the
        // client counts `expires_in` from when the answer reached it:
        // counted from the next whole second, the token outlives the
        // client's own deadline by up to a second for the answer's time on
        // the wire, so a client using it up to then is never refused.
        let lives = ttl;
        let claims = token::AccessClaims::new(
            &self.config.issuer,
            &self.config.resource(),
            subject,
            client_id,
            family,
            scope,
            now_ceil(),
            lives,
        )
        .bound_to(jkt);
        (token::sign(&self.keys, &claims), ttl)
    }

    /// The client, if it exists, is not revoked, and has not expired from
    /// disuse.
    pub(crate) async fn usable_client(
        &self,
        client_id: &str,
    ) -> Result<Option<Client>, OAuthError> {
        let client = self
            .store
            .client(client_id)
            .await
            .map_err(|e| OAuthError::from(&e))?;
        Ok(client.filter(|c| c.revoked_at.is_none() && !self.idle_expired(c)))
    }

    fn idle_expired(&self, c: &Client) -> bool {
        let expires = matches!(
            c.origin,
            ClientOrigin::Dynamic | ClientOrigin::MetadataDocument
        );
        let last = c.last_used_at.unwrap_or(c.created_at);
        expires && now() - last > secs(self.config.client_idle_expiry)
    }

    /// Counts a registration against the per-source limit (an IPv4
    /// address or an IPv6 /64, on every replica); the error says how long
    /// to wait.
    pub(crate) async fn allow_registration(
        &self,
        source: Option<IpAddr>,
    ) -> Result<(), OAuthError> {
        let limit = self.config.registrations_per_minute;
        let store = self.store.as_ref();
        self.per_source
            .check(store, Counted::Registrations, limit, source)
            .await
    }

    /// Admits one more pending authorization row (a sign-in form): within
    /// the per-source limit, and under the cap on rows stored.
    pub(crate) async fn allow_pending(&self, source: Option<IpAddr>) -> Result<(), OAuthError> {
        let limit = self.config.authorizations_per_minute;
        let store = self.store.as_ref();
        self.per_source
            .check(store, Counted::Authorizations, limit, source)
            .await?;
        self.pending_cap.admit(store, self.config.max_pending).await
    }

    /// Counts a login attempt against the per-source limit.
    pub(crate) async fn allow_login(&self, source: Option<IpAddr>) -> Result<(), OAuthError> {
        let limit = self.config.logins_per_minute;
        let store = self.store.as_ref();
        self.per_source
            .check(store, Counted::Logins, limit, source)
            .await
    }

    /// Appends a security event (a failure is logged, never fatal); the
    /// event, for a copy elsewhere (the audit trail's).
    pub(crate) async fn event(
        &self,
        kind: &str,
        client_id: Option<&str>,
        subject: Option<&str>,
        source: Option<IpAddr>,
        detail: impl Into<String>,
    ) -> AuthEvent {
        let event = AuthEvent {
            at: now(),
            kind: kind.into(),
            client_id: client_id.map(Into::into),
            subject: subject.map(Into::into),
            source: source.map(|s| s.to_string()),
            detail: detail.into(),
        };
        tracing::info!(kind, client_id, subject, detail = %event.detail, "auth event");
        if let Err(e) = self.store.record_event(&event).await {
            tracing::error!(error = %e, kind, "recording an auth event");
        }
        event
    }

    /// [`event`](Self::event) for a refusal a peer can cause at will (a
    /// forged or replayed assertion naming `client_id`): at most
    /// [`REFUSAL_EVENTS_PER_MINUTE`] of `kind` per client per minute are
    /// kept, the rest only logged, so a flood cannot grow the events table
    /// without bound.
    pub(crate) async fn refusal_event(&self, kind: &str, client_id: &str, detail: String) {
        let bucket = format!("event:{kind}:{client_id}");
        let limit = REFUSAL_EVENTS_PER_MINUTE;
        if crate::per_source::counted_within(self.store.as_ref(), &bucket, limit).await {
            self.event(kind, Some(client_id), None, None, detail).await;
        } else {
            tracing::info!(
                kind,
                client_id,
                detail,
                "auth event past its per-minute bound, not kept"
            );
        }
    }

    /// A new client secret and the digest stored for it, for kinds that have one.
    pub(crate) fn new_secret(kind: ClientKind) -> Option<(String, String)> {
        match kind {
            ClientKind::Public => None,
            ClientKind::Confidential | ClientKind::Service => {
                let s = secret::token(secret::CLIENT_SECRET);
                let d = secret::digest(&s);
                Some((s, d))
            }
        }
    }
}

fn schedule(config: &AuthConfig) -> KeySchedule {
    KeySchedule {
        rotate_after: config.key_rotation,
        publish_after_superseded: config.access_ttl * 2 + Duration::from_secs(60),
    }
}

/// Whether this caller takes the turn to read keys again: at most one a
/// second (`at` holds the last turn, unix milliseconds), so requests cannot
/// hammer the store.
fn reload_turn(at: &AtomicI64) -> bool {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default();
    let last = at.load(Ordering::Relaxed);
    now_ms - last >= UNKNOWN_KEY_RELOAD_MS
        && (at.compare_exchange(last, now_ms, Ordering::Relaxed, Ordering::Relaxed)).is_ok()
}

/// The assertion keys rotate with the access-token keys; a superseded
/// one stays published until every assertion it signed has expired, and a
/// minute more for a backend's cached JWKS.
fn assertion_schedule(config: &AuthConfig) -> KeySchedule {
    KeySchedule {
        rotate_after: config.key_rotation,
        publish_after_superseded: ASSERTION_TTL * 2 + Duration::from_secs(60),
    }
}

/// Now, in Unix seconds.
pub(crate) fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// A duration in whole seconds, saturating.
/// Unix seconds, rounded up.
fn now_ceil() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64().ceil() as i64)
        .unwrap_or_default()
}

pub(crate) fn secs(d: Duration) -> i64 {
    i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
}
