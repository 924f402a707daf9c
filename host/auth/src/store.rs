//! [`AuthStore`]: what the authorization server keeps, as records and the
//! operations on them. `storage` implements it for SQLite and PostgreSQL.
//!
//! Secrets never reach the store in the clear: codes, refresh tokens, client
//! secrets and browser-session ids are stored as SHA-256 hex digests
//! ([`crate::secret::digest`]), passwords as argon2 PHC strings. Times are
//! Unix seconds.

use std::future::Future;
use std::pin::Pin;

use toolhost_types::PrincipalKind;

/// A boxed future, so stores can be used as trait objects.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, AuthStoreError>> + Send + 'a>>;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum AuthStoreError {
    /// A row with the same key exists already (username, client id, kid…);
    /// nothing was written.
    #[error("{what} already exists")]
    Conflict {
        /// What collided, e.g. `user "demo"`.
        what: String,
    },
    /// The database failed; the message is the driver's, without secrets.
    #[error("auth store: {0}")]
    Database(String),
    /// The database could not be reached: the request may be tried again.
    #[error(transparent)]
    Unavailable(#[from] toolhost_types::StoreUnavailable),
}

/// A tenant: the boundary no data crosses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant {
    /// Its id, a short slug (`demo`, `acme`).
    pub id: String,
    /// When it was created.
    pub created_at: i64,
}

/// A local user account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// Stable id (the token's `sub`), never reused.
    pub id: String,
    /// The user's tenant.
    pub tenant: String,
    /// Login name, unique across the host.
    pub username: String,
    /// argon2id PHC string.
    pub password_hash: String,
    /// A disabled user cannot log in, and their tokens stop working at once.
    pub disabled: bool,
    /// When the account was created.
    pub created_at: i64,
}

/// How a client authenticates at the token endpoint, and what it may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    /// No secret (`token_endpoint_auth_method=none`): PKCE is its proof.
    Public,
    /// Has a secret; uses the authorization code grant for users.
    Confidential,
    /// A machine client: client credentials only, acts as its own service
    /// principal in one tenant with its own scope set.
    Service,
}

impl ClientKind {
    /// The stable name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientKind::Public => "public",
            ClientKind::Confidential => "confidential",
            ClientKind::Service => "service",
        }
    }

    /// The kind [`ClientKind::as_str`] names.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "public" => Some(ClientKind::Public),
            "confidential" => Some(ClientKind::Confidential),
            "service" => Some(ClientKind::Service),
            _ => None,
        }
    }
}

/// How a client came to exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientOrigin {
    /// RFC 7591 dynamic registration.
    Dynamic,
    /// A Client ID Metadata Document fetched from its `client_id` URL.
    MetadataDocument,
    /// Created by an operator (`toolhost client add`).
    Admin,
}

impl ClientOrigin {
    /// The stable name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientOrigin::Dynamic => "dcr",
            ClientOrigin::MetadataDocument => "cimd",
            ClientOrigin::Admin => "admin",
        }
    }

    /// The origin [`ClientOrigin::as_str`] names.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "dcr" => Some(ClientOrigin::Dynamic),
            "cimd" => Some(ClientOrigin::MetadataDocument),
            "admin" => Some(ClientOrigin::Admin),
            _ => None,
        }
    }
}

/// A registered OAuth client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    /// The `client_id` (random for DCR and admin clients, the document URL for CIMD).
    pub client_id: String,
    /// SHA-256 hex of the client secret, for confidential and service clients.
    pub secret_hash: Option<String>,
    /// Public, confidential or service.
    pub kind: ClientKind,
    /// Dynamic, metadata document or admin.
    pub origin: ClientOrigin,
    /// Display name shown on the consent page.
    pub name: String,
    /// Exact redirect URIs (empty for service clients).
    pub redirect_uris: Vec<String>,
    /// Space-separated scopes this client may ever be granted.
    pub scope: String,
    /// Service clients: the tenant their principal belongs to.
    pub tenant: Option<String>,
    /// Who created it: the registering source address, or the operator.
    pub owner: Option<String>,
    /// When it was created.
    pub created_at: i64,
    /// When a token was last issued to it.
    pub last_used_at: Option<i64>,
    /// When it was revoked; a revoked client's tokens stop working at once.
    pub revoked_at: Option<i64>,
    /// Metadata documents: when the cached copy must be fetched again.
    pub refresh_at: Option<i64>,
}

/// A grant: every token minted from one authorization (or one client
/// credentials exchange) belongs to one family, revoked as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Family {
    /// Random id; access tokens carry it as `sid`.
    pub id: String,
    /// The client the grant was made to.
    pub client_id: String,
    /// User id or service client id.
    pub subject: String,
    /// User or service.
    pub subject_kind: PrincipalKind,
    /// The granted scopes, space-separated.
    pub scope: String,
    /// When the grant was made.
    pub created_at: i64,
    /// When it was revoked (replay, logout, revocation request).
    pub revoked_at: Option<i64>,
}

/// An authorization code, issued by `/oauth/authorize` and redeemed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthCode {
    /// SHA-256 hex of the code.
    pub code_hash: String,
    /// The family its tokens will belong to (created at redemption).
    pub family_id: String,
    /// The client it was issued to.
    pub client_id: String,
    /// The user who approved it.
    pub user_id: String,
    /// The exact redirect URI of the authorization request.
    pub redirect_uri: String,
    /// The PKCE S256 challenge.
    pub code_challenge: String,
    /// The approved scopes, space-separated.
    pub scope: String,
    /// The resource (RFC 8707) the tokens are for.
    pub resource: String,
    /// After this, the code is refused.
    pub expires_at: i64,
    /// The JWK thumbprint of the DPoP key the authorization request bound
    /// it to (`dpop_jkt`, RFC 9449 §10): the token request's proof must be
    /// by that key.
    pub dpop_jkt: Option<String>,
}

/// What redeeming a code found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeRedemption {
    /// First use: the code is now spent.
    Redeemed(AuthCode),
    /// The code was spent already: whatever it minted must be revoked.
    Replayed {
        /// The family the first redemption created.
        family_id: String,
    },
    /// No such code.
    Unknown,
}

/// A refresh token (opaque; only its digest is stored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshToken {
    /// SHA-256 hex of the token.
    pub token_hash: String,
    /// Its family.
    pub family_id: String,
    /// The client it was issued to.
    pub client_id: String,
    /// The scopes it may refresh to (never more), space-separated.
    pub scope: String,
    /// The resource its access tokens are for.
    pub resource: String,
    /// After this, it is refused.
    pub expires_at: i64,
    /// When it was rotated (used); a used token presented again is a replay.
    pub used_at: Option<i64>,
    /// The thumbprint of the DPoP key it is bound to (RFC 9449 §5: a
    /// public client's refresh token is used only with a proof by that key).
    pub dpop_jkt: Option<String>,
}

/// What the resource server needs to know, live, about a family: one read
/// per request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveGrant {
    /// The family itself.
    pub family: Family,
    /// The client's revocation time, if revoked.
    pub client_revoked_at: Option<i64>,
    /// The client's scope set as it is now (an operator may have narrowed it).
    pub client_scope: String,
    /// The principal's tenant: the user's, or the service client's.
    pub tenant: String,
    /// The principal's display name: username or client name.
    pub name: String,
    /// True if the user is disabled (always false for services).
    pub disabled: bool,
}

/// A signing key for access tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningKey {
    /// Key id, published in the JWKS and the token header.
    pub kid: String,
    /// JOSE algorithm name (`EdDSA`).
    pub alg: String,
    /// The private key, PKCS#8 DER.
    pub private_der: Vec<u8>,
    /// When it was created (keys sign from creation until the next rotation).
    pub created_at: i64,
    /// When it stopped being published (tokens it signed have all expired).
    pub retired_at: Option<i64>,
}

/// What a set of signing keys signs. Each purpose has keys of its own,
/// kept apart in the store (migration 0034), so a token of one purpose can
/// never verify as the other: an identity assertion sent to a backend is
/// not an access token for `/mcp`, and an access token is not an
/// assertion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyPurpose {
    /// Access tokens for `/mcp` (the JWKS at `/oauth/jwks`).
    Access,
    /// Identity assertions sent to backends (the JWKS at
    /// [`crate::assertion::ASSERTION_JWKS_PATH`]).
    BackendAssertion,
}

impl KeyPurpose {
    /// Words for logs: what the keys sign.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyPurpose::Access => "access-token",
            KeyPurpose::BackendAssertion => "backend-assertion",
        }
    }
}

/// A logged-in browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSession {
    /// SHA-256 hex of the session cookie's value.
    pub id_hash: String,
    /// The user.
    pub user_id: String,
    /// When the user logged in.
    pub created_at: i64,
    /// When the session ends.
    pub expires_at: i64,
}

/// An authorization request between `/oauth/authorize` and the consent
/// decision: its parameters, bound to one browser and one CSRF token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingAuthorization {
    /// Random id carried in the forms.
    pub id: String,
    /// SHA-256 hex of the browser-binding cookie set with it.
    pub browser_hash: String,
    /// The CSRF token the forms must echo.
    pub csrf: String,
    /// The validated request, JSON.
    pub request: String,
    /// After this, the forms are refused.
    pub expires_at: i64,
}

/// One trip to an OpenID provider and back: what the callback checks the
/// provider's answer against. Taken (deleted) by the callback, so good once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SsoAttempt {
    /// SHA-256 hex of the `state` sent to the provider.
    pub state_hash: String,
    /// The provider's configured name.
    pub provider: String,
    /// The pending request (an authorization or a sign-in) it continues.
    pub pending_id: String,
    /// SHA-256 hex of the browser-binding cookie of the browser that left.
    pub browser_hash: String,
    /// The nonce the ID token must carry.
    pub nonce: String,
    /// The PKCE verifier the code is redeemed with.
    pub code_verifier: String,
    /// After this, the callback is refused.
    pub expires_at: i64,
}

/// A provider's subject linked to a local user, for good.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SsoLink {
    /// The provider's configured name.
    pub provider: String,
    /// The provider's `sub` for the person.
    pub subject: String,
    /// The local user.
    pub user_id: String,
    /// When the link was made.
    pub linked_at: i64,
}

/// A person's own connection to a backend (issue 46): their tokens at the
/// backend's authorization server, sealed. Only the connections room
/// (`toolhost_sso::Connections`) can open `sealed`.
#[derive(Clone, PartialEq, Eq)]
pub struct PersonConnection {
    /// The person's tenant.
    pub tenant: String,
    /// The person.
    pub user_id: String,
    /// The backend it is for.
    pub backend: String,
    /// The sealing key's id.
    pub key_id: String,
    /// The sealed tokens (base64).
    pub sealed: String,
    /// When the person connected.
    pub connected_at: i64,
    /// When the access token expires, if the server said.
    pub expires_at: Option<i64>,
}

impl std::fmt::Debug for PersonConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersonConnection")
            .field("tenant", &self.tenant)
            .field("user_id", &self.user_id)
            .field("backend", &self.backend)
            .field("key_id", &self.key_id)
            .field("connected_at", &self.connected_at)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// A connect flow under way, from the host's page to the backend's
/// authorization server and back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionAttempt {
    /// SHA-256 hex of the `state` sent.
    pub state_hash: String,
    /// The tenant of the person who started it.
    pub tenant: String,
    /// The person who started it: only their browser session finishes it.
    pub user_id: String,
    /// The backend being connected.
    pub backend: String,
    /// The PKCE verifier the code is redeemed with.
    pub code_verifier: String,
    /// After this, the callback is refused.
    pub expires_at: i64,
}

/// How long security events are kept: long enough to look back over a
/// quarter, short enough that a flood of failed sign-ins is not kept for
/// ever.
pub const EVENT_RETENTION: std::time::Duration = std::time::Duration::from_secs(90 * 24 * 3600);

/// A security event: registrations, revocations, replays, failed logins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthEvent {
    /// When.
    pub at: i64,
    /// What: `client.registered`, `family.revoked.replay`, `login.failed`, …
    pub kind: String,
    /// The client concerned.
    pub client_id: Option<String>,
    /// The user or service concerned.
    pub subject: Option<String>,
    /// The source address of the request, if any.
    pub source: Option<String>,
    /// A human-readable detail, never a secret.
    pub detail: String,
}

/// The authorization server's storage. Every method is one transaction.
pub trait AuthStore: Send + Sync {
    /// Creates the tenant if it does not exist.
    fn ensure_tenant<'a>(&'a self, id: &'a str, now: i64) -> StoreFuture<'a, ()>;
    /// Creates a user; `Conflict` if the username is taken.
    fn insert_user<'a>(&'a self, user: &'a User) -> StoreFuture<'a, ()>;
    /// The user with this username.
    fn user_by_name<'a>(&'a self, username: &'a str) -> StoreFuture<'a, Option<User>>;
    /// The user with this id.
    fn user_by_id<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<User>>;
    /// The users of `tenant`, by username.
    fn users_of<'a>(&'a self, tenant: &'a str) -> StoreFuture<'a, Vec<User>>;
    /// The names of the toolsets `tenant` defines, by name: what a person
    /// may bind a client to at consent.
    fn toolset_names<'a>(&'a self, tenant: &'a str) -> StoreFuture<'a, Vec<String>>;
    /// Replaces a user's password hash; false if there is no such user.
    fn set_password<'a>(&'a self, username: &'a str, hash: &'a str) -> StoreFuture<'a, bool>;
    /// Enables or disables a user; false if there is no such user.
    fn set_disabled<'a>(&'a self, username: &'a str, disabled: bool) -> StoreFuture<'a, bool>;

    /// Registers a client; `Conflict` if the id is taken.
    fn insert_client<'a>(&'a self, client: &'a Client) -> StoreFuture<'a, ()>;
    /// Inserts or replaces a metadata-document client (never an admin or
    /// dynamic one with the same id: `Conflict`).
    fn upsert_document_client<'a>(&'a self, client: &'a Client) -> StoreFuture<'a, ()>;
    /// The client with this id (revoked ones included).
    fn client<'a>(&'a self, client_id: &'a str) -> StoreFuture<'a, Option<Client>>;
    /// Every client, oldest first.
    fn clients(&self) -> StoreFuture<'_, Vec<Client>>;
    /// Revokes a client; false if there is no such client or it was revoked already.
    fn revoke_client<'a>(&'a self, client_id: &'a str, now: i64) -> StoreFuture<'a, bool>;
    /// Replaces a client's scope set; false if there is no such client.
    /// Tokens already issued lose the removed scopes on their next request.
    fn set_client_scope<'a>(&'a self, client_id: &'a str, scope: &'a str) -> StoreFuture<'a, bool>;
    /// Records that a token was just issued to the client.
    fn touch_client<'a>(&'a self, client_id: &'a str, now: i64) -> StoreFuture<'a, ()>;
    /// Deletes dynamic and metadata-document clients unused since `before`
    /// (last use, or creation if never used), with their families, tokens
    /// and codes; returns how many clients went.
    fn expire_idle_clients(&self, before: i64) -> StoreFuture<'_, u64>;

    /// Deletes what can no longer be used: codes, refresh tokens, pending
    /// authorizations, browser sessions, sign-in and connect attempts and
    /// spent JWTs that expired before `before`, and security events older
    /// than [`EVENT_RETENTION`] before it. Returns how many rows went.
    fn purge_expired(&self, before: i64) -> StoreFuture<'_, u64>;

    /// Stores a new authorization code.
    fn insert_code<'a>(&'a self, code: &'a AuthCode) -> StoreFuture<'a, ()>;
    /// Spends a code: the first call for a hash gets `Redeemed`, every later
    /// one `Replayed` (a conditional update, so concurrent redemptions get
    /// exactly one `Redeemed`).
    fn redeem_code<'a>(&'a self, code_hash: &'a str, now: i64) -> StoreFuture<'a, CodeRedemption>;

    /// Records a new grant.
    fn insert_family<'a>(&'a self, family: &'a Family) -> StoreFuture<'a, ()>;
    /// Revokes a grant; false if unknown or already revoked.
    fn revoke_family<'a>(&'a self, id: &'a str, now: i64) -> StoreFuture<'a, bool>;
    /// Revokes every grant of a subject (user logout everywhere, disable).
    fn revoke_subject_families<'a>(&'a self, subject: &'a str, now: i64) -> StoreFuture<'a, u64>;
    /// The grant, its client's and subject's standing, and the tenant: the
    /// resource server's one read per request. None if the family is unknown
    /// (or its subject no longer exists).
    fn live_grant<'a>(&'a self, family_id: &'a str) -> StoreFuture<'a, Option<LiveGrant>>;

    /// Stores a new refresh token.
    fn insert_refresh<'a>(&'a self, token: &'a RefreshToken) -> StoreFuture<'a, ()>;
    /// The refresh token with this digest (used ones included).
    fn refresh_token<'a>(&'a self, token_hash: &'a str) -> StoreFuture<'a, Option<RefreshToken>>;
    /// Rotates: marks `old_hash` used if it is still unused and inserts
    /// `next`, in one transaction. False (and nothing written) if another
    /// request rotated it first.
    fn rotate_refresh<'a>(
        &'a self,
        old_hash: &'a str,
        next: &'a RefreshToken,
        now: i64,
    ) -> StoreFuture<'a, bool>;

    /// Every signing key of `purpose`, retired ones included, newest first.
    fn signing_keys(&self, purpose: KeyPurpose) -> StoreFuture<'_, Vec<SigningKey>>;
    /// Stores a new signing key of `purpose`; `Conflict` if the kid exists.
    fn insert_signing_key<'a>(
        &'a self,
        purpose: KeyPurpose,
        key: &'a SigningKey,
    ) -> StoreFuture<'a, ()>;
    /// Marks a key of `purpose` retired (no longer published).
    fn retire_signing_key<'a>(
        &'a self,
        purpose: KeyPurpose,
        kid: &'a str,
        now: i64,
    ) -> StoreFuture<'a, ()>;

    /// Stores a browser session.
    fn insert_session<'a>(&'a self, session: &'a WebSession) -> StoreFuture<'a, ()>;
    /// The session with this digest, if it exists (expired ones included).
    fn session<'a>(&'a self, id_hash: &'a str) -> StoreFuture<'a, Option<WebSession>>;
    /// Ends every browser session of a user.
    fn delete_user_sessions<'a>(&'a self, user_id: &'a str) -> StoreFuture<'a, u64>;

    /// Stores a pending authorization request.
    fn insert_pending<'a>(&'a self, pending: &'a PendingAuthorization) -> StoreFuture<'a, ()>;
    /// The pending request with this id.
    fn pending<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<PendingAuthorization>>;
    /// How many pending requests are stored, expired ones included (until
    /// [`AuthStore::purge_expired`] deletes them).
    fn count_pending(&self) -> StoreFuture<'_, u64>;
    /// Removes a pending request; true for exactly one caller (single use).
    fn take_pending<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool>;

    /// The scopes (space-separated) the user already approved for the client.
    fn consent<'a>(
        &'a self,
        user_id: &'a str,
        client_id: &'a str,
    ) -> StoreFuture<'a, Option<String>>;
    /// Records (or replaces) the user's approval for the client.
    fn save_consent<'a>(
        &'a self,
        user_id: &'a str,
        client_id: &'a str,
        scope: &'a str,
        now: i64,
    ) -> StoreFuture<'a, ()>;

    /// Stores a single-sign-on attempt.
    fn insert_sso_attempt<'a>(&'a self, attempt: &'a SsoAttempt) -> StoreFuture<'a, ()>;
    /// Removes and returns the attempt with this state digest: `Some` for
    /// exactly one caller (single use), expired ones included.
    fn take_sso_attempt<'a>(&'a self, state_hash: &'a str) -> StoreFuture<'a, Option<SsoAttempt>>;
    /// The local user a provider's subject is linked to, if any.
    fn sso_link<'a>(
        &'a self,
        provider: &'a str,
        subject: &'a str,
    ) -> StoreFuture<'a, Option<SsoLink>>;
    /// The link of a local user at a provider, if any.
    fn sso_link_of_user<'a>(
        &'a self,
        provider: &'a str,
        user_id: &'a str,
    ) -> StoreFuture<'a, Option<SsoLink>>;
    /// Links a subject to a user; `Conflict` if either is linked already.
    fn insert_sso_link<'a>(&'a self, link: &'a SsoLink) -> StoreFuture<'a, ()>;

    /// The connection of `user_id` of `tenant` to `backend`, if any.
    fn person_connection<'a>(
        &'a self,
        tenant: &'a str,
        user_id: &'a str,
        backend: &'a str,
    ) -> StoreFuture<'a, Option<PersonConnection>>;
    /// Stores a connection, replacing the person's earlier one to that
    /// backend.
    fn put_person_connection<'a>(&'a self, c: &'a PersonConnection) -> StoreFuture<'a, ()>;
    /// Replaces the connection sealed as `sealed` with `c` (a refresh):
    /// false if it changed meanwhile (another replica refreshed it, or it
    /// was revoked), and then nothing is written.
    fn refresh_person_connection<'a>(
        &'a self,
        sealed: &'a str,
        c: &'a PersonConnection,
    ) -> StoreFuture<'a, bool>;
    /// Removes a connection; whether there was one.
    fn delete_person_connection<'a>(
        &'a self,
        tenant: &'a str,
        user_id: &'a str,
        backend: &'a str,
    ) -> StoreFuture<'a, bool>;
    /// The connections of `tenant` (of `user_id` alone, if given), by user
    /// and backend, at most `limit`.
    fn person_connections<'a>(
        &'a self,
        tenant: &'a str,
        user_id: Option<&'a str>,
        limit: u32,
    ) -> StoreFuture<'a, Vec<PersonConnection>>;
    /// Stores a connect flow under way, ending the person's earlier ones
    /// to that backend (one attempt per person and backend).
    fn insert_connection_attempt<'a>(&'a self, a: &'a ConnectionAttempt) -> StoreFuture<'a, ()>;
    /// Removes and returns the attempt with this state digest: `Some` for
    /// exactly one caller (single use), expired ones included.
    fn take_connection_attempt<'a>(
        &'a self,
        state_hash: &'a str,
    ) -> StoreFuture<'a, Option<ConnectionAttempt>>;

    /// Appends a security event.
    fn record_event<'a>(&'a self, event: &'a AuthEvent) -> StoreFuture<'a, ()>;
    /// The latest `limit` security events, newest first.
    fn recent_events(&self, limit: u32) -> StoreFuture<'_, Vec<AuthEvent>>;

    /// Whether tenant `tenant` requires DPoP-bound tokens of its clients
    /// (false for a tenant that does not exist).
    fn tenant_requires_dpop<'a>(&'a self, tenant: &'a str) -> StoreFuture<'a, bool>;

    /// Records a single-use JWT (a DPoP proof by
    /// [`Proof::replay_key`](crate::dpop::Proof::replay_key), a client
    /// assertion by [`replay_key`](crate::client_assertion::replay_key))
    /// until `until`, in one atomic statement: true if it was not seen
    /// before (or only by a record expired at `now`), false for a replay,
    /// whichever replica saw it first.
    fn spend_jwt<'a>(&'a self, key: &'a str, until: i64, now: i64) -> StoreFuture<'a, bool>;

    /// A service client's public keys (a JWK Set as JSON), if the operator
    /// set any: such a client authenticates only with an assertion.
    fn client_keys<'a>(&'a self, client_id: &'a str) -> StoreFuture<'a, Option<String>>;
    /// Sets (or replaces) a client's public keys (the client must exist).
    fn set_client_keys<'a>(
        &'a self,
        client_id: &'a str,
        jwks: &'a str,
        now: i64,
    ) -> StoreFuture<'a, ()>;

    /// Adds one to the shared counter `bucket` for the window from
    /// `window_start` to `window_end` (unix ms) and returns its total, every
    /// replica's hits included: one atomic statement, never a read then a
    /// write. The counter may be purged once its window has ended.
    fn count_hit<'a>(
        &'a self,
        bucket: &'a str,
        window_start: i64,
        window_end: i64,
    ) -> StoreFuture<'a, u64>;
}
