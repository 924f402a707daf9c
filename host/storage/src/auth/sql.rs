//! The auth store's SQL: one text per operation, valid on both engines.
//! SQLite accepts PostgreSQL's `$n` placeholders, and `ON CONFLICT`,
//! `RETURNING` and `COALESCE` mean the same in both.

use toolhost_auth::KeyPurpose;

pub(super) const ENSURE_TENANT: &str = "INSERT INTO tenants (id, created_at) \
     VALUES ($1, $2) ON CONFLICT (id) DO NOTHING";

pub(crate) const INSERT_USER: &str = "INSERT INTO users \
     (id, tenant, username, password_hash, disabled, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6)";
pub(super) const USER_BY_NAME: &str = "SELECT \
     id, tenant, username, password_hash, disabled, created_at \
     FROM users WHERE username = $1";
pub(super) const USER_BY_ID: &str = "SELECT \
     id, tenant, username, password_hash, disabled, created_at \
     FROM users WHERE id = $1";
pub(super) const USERS_OF_TENANT: &str = "SELECT \
     id, tenant, username, password_hash, disabled, created_at \
     FROM users WHERE tenant = $1 ORDER BY username";
pub(super) const SET_PASSWORD: &str = "UPDATE users SET password_hash = $1 WHERE username = $2";
pub(super) const SET_DISABLED: &str = "UPDATE users SET disabled = $1 WHERE username = $2";
// The console's: one user of one tenant, by id.
pub(crate) const SET_TENANT_USER_DISABLED: &str =
    "UPDATE users SET disabled = $1 WHERE tenant = $2 AND id = $3";
pub(crate) const SET_TENANT_USER_PASSWORD: &str =
    "UPDATE users SET password_hash = $1 WHERE tenant = $2 AND id = $3";

pub(super) const INSERT_CLIENT: &str = "INSERT INTO oauth_clients \
     (client_id, secret_hash, kind, origin, name, redirect_uris, scope, tenant, owner, \
     created_at, last_used_at, revoked_at, refresh_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)";
// A re-fetched document replaces what the document says; the row keeps its
// creation, last use and any revocation (a revoked client stays revoked).
// The WHERE makes a row of another origin a no-op: 0 rows, a conflict.
pub(super) const UPSERT_DOCUMENT_CLIENT: &str = "INSERT INTO oauth_clients \
     (client_id, secret_hash, kind, origin, name, redirect_uris, scope, tenant, owner, \
     created_at, last_used_at, revoked_at, refresh_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
     ON CONFLICT (client_id) DO UPDATE SET \
     secret_hash = excluded.secret_hash, kind = excluded.kind, name = excluded.name, \
     redirect_uris = excluded.redirect_uris, scope = excluded.scope, \
     tenant = excluded.tenant, owner = excluded.owner, \
     revoked_at = COALESCE(oauth_clients.revoked_at, excluded.revoked_at), \
     refresh_at = excluded.refresh_at \
     WHERE oauth_clients.origin = 'cimd'";
pub(super) const CLIENT: &str = "SELECT \
     client_id, secret_hash, kind, origin, name, redirect_uris, scope, tenant, owner, \
     created_at, last_used_at, revoked_at, refresh_at \
     FROM oauth_clients WHERE client_id = $1";
pub(super) const CLIENTS: &str = "SELECT \
     client_id, secret_hash, kind, origin, name, redirect_uris, scope, tenant, owner, \
     created_at, last_used_at, revoked_at, refresh_at \
     FROM oauth_clients ORDER BY created_at, client_id";
pub(crate) const REVOKE_CLIENT: &str = "UPDATE oauth_clients SET revoked_at = $1 \
     WHERE client_id = $2 AND revoked_at IS NULL";
pub(super) const SET_CLIENT_SCOPE: &str = "UPDATE oauth_clients SET scope = $1 \
     WHERE client_id = $2";
pub(super) const TOUCH_CLIENT: &str = "UPDATE oauth_clients SET last_used_at = $1 \
     WHERE client_id = $2";
// Families, codes, refresh tokens and consents go by ON DELETE CASCADE.
pub(super) const EXPIRE_IDLE_CLIENTS: &str = "DELETE FROM oauth_clients \
     WHERE origin IN ('dcr', 'cimd') AND COALESCE(last_used_at, created_at) < $1";

pub(super) const INSERT_CODE: &str = "INSERT INTO auth_codes \
     (code_hash, family_id, client_id, user_id, redirect_uri, code_challenge, scope, \
     resource, expires_at, dpop_jkt) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
// The conditional UPDATE is the whole decision: exactly one caller gets the row.
pub(super) const REDEEM_CODE: &str = "UPDATE auth_codes SET used_at = $1 \
     WHERE code_hash = $2 AND used_at IS NULL \
     RETURNING code_hash, family_id, client_id, user_id, redirect_uri, code_challenge, \
     scope, resource, expires_at, dpop_jkt";
pub(super) const CODE_FAMILY: &str = "SELECT family_id FROM auth_codes WHERE code_hash = $1";

pub(super) const INSERT_FAMILY: &str = "INSERT INTO token_families \
     (id, client_id, subject, subject_kind, scope, created_at, revoked_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7)";
pub(super) const REVOKE_FAMILY: &str = "UPDATE token_families SET revoked_at = $1 \
     WHERE id = $2 AND revoked_at IS NULL";
pub(crate) const REVOKE_SUBJECT_FAMILIES: &str = "UPDATE token_families SET revoked_at = $1 \
     WHERE subject = $2 AND revoked_at IS NULL";
// The resource server's one read per request. The user join only applies to
// user grants, so a service whose id equals some user id never picks it up.
pub(super) const LIVE_GRANT: &str = "SELECT \
     f.id, f.client_id, f.subject, f.subject_kind, f.scope, f.created_at, f.revoked_at, \
     c.revoked_at AS client_revoked_at, c.tenant AS client_tenant, c.name AS client_name, \
     c.scope AS client_scope, \
     u.tenant AS user_tenant, u.username, u.disabled AS user_disabled \
     FROM token_families f \
     JOIN oauth_clients c ON c.client_id = f.client_id \
     LEFT JOIN users u ON f.subject_kind = 'user' AND u.id = f.subject \
     WHERE f.id = $1";

pub(super) const INSERT_REFRESH: &str = "INSERT INTO refresh_tokens \
     (token_hash, family_id, client_id, scope, resource, expires_at, used_at, dpop_jkt) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
pub(super) const REFRESH_TOKEN: &str = "SELECT \
     token_hash, family_id, client_id, scope, resource, expires_at, used_at, dpop_jkt \
     FROM refresh_tokens WHERE token_hash = $1";

pub(super) const TENANT_REQUIRES_DPOP: &str = "SELECT require_dpop FROM tenants WHERE id = $1";
pub(crate) const SET_TENANT_DPOP: &str = "UPDATE tenants SET require_dpop = $1 WHERE id = $2";

// A single-use JWT not seen, or seen only in a record that has expired, is
// spent now: one row inserted or revived. A live record makes it a no-op
// (0 rows).
pub(super) const SPEND_JWT: &str = "INSERT INTO spent_jwts (jwt_key, expires_at) \
     VALUES ($1, $2) \
     ON CONFLICT (jwt_key) DO UPDATE SET expires_at = excluded.expires_at \
     WHERE spent_jwts.expires_at < $3";
pub(super) const CLIENT_KEYS: &str = "SELECT jwks FROM client_keys WHERE client_id = $1";
pub(super) const SET_CLIENT_KEYS: &str = "INSERT INTO client_keys (client_id, jwks, updated_at) \
     VALUES ($1, $2, $3) \
     ON CONFLICT (client_id) DO UPDATE SET jwks = excluded.jwks, updated_at = excluded.updated_at";
pub(super) const USE_REFRESH: &str = "UPDATE refresh_tokens SET used_at = $1 \
     WHERE token_hash = $2 AND used_at IS NULL";

pub(super) const SIGNING_KEYS: &str = "SELECT \
     kid, alg, private_der, created_at, retired_at \
     FROM signing_keys ORDER BY created_at DESC, kid";
pub(super) const INSERT_SIGNING_KEY: &str = "INSERT INTO signing_keys \
     (kid, alg, private_der, created_at, retired_at) \
     VALUES ($1, $2, $3, $4, $5)";
// The first retirement time stands: retiring twice changes nothing.
pub(super) const RETIRE_SIGNING_KEY: &str = "UPDATE signing_keys SET retired_at = $1 \
     WHERE kid = $2 AND retired_at IS NULL";

pub(super) const ASSERTION_KEYS: &str = "SELECT \
     kid, alg, private_der, created_at, retired_at \
     FROM backend_assertion_keys ORDER BY created_at DESC, kid";
pub(super) const INSERT_ASSERTION_KEY: &str = "INSERT INTO backend_assertion_keys \
     (kid, alg, private_der, created_at, retired_at) \
     VALUES ($1, $2, $3, $4, $5)";
pub(super) const RETIRE_ASSERTION_KEY: &str = "UPDATE backend_assertion_keys \
     SET retired_at = $1 WHERE kid = $2 AND retired_at IS NULL";

/// The three statements on the keys of `purpose`: list, insert, retire.
pub(super) fn keys_of(purpose: KeyPurpose) -> [&'static str; 3] {
    match purpose {
        KeyPurpose::Access => [SIGNING_KEYS, INSERT_SIGNING_KEY, RETIRE_SIGNING_KEY],
        KeyPurpose::BackendAssertion => {
            [ASSERTION_KEYS, INSERT_ASSERTION_KEY, RETIRE_ASSERTION_KEY]
        }
    }
}

pub(super) const INSERT_SESSION: &str = "INSERT INTO web_sessions \
     (id_hash, user_id, created_at, expires_at) \
     VALUES ($1, $2, $3, $4)";
pub(super) const SESSION: &str = "SELECT id_hash, user_id, created_at, expires_at \
     FROM web_sessions WHERE id_hash = $1";
pub(crate) const DELETE_USER_SESSIONS: &str = "DELETE FROM web_sessions WHERE user_id = $1";

pub(super) const INSERT_PENDING: &str = "INSERT INTO pending_authorizations \
     (id, browser_hash, csrf, request, expires_at) \
     VALUES ($1, $2, $3, $4, $5)";
pub(super) const PENDING: &str = "SELECT id, browser_hash, csrf, request, expires_at \
     FROM pending_authorizations WHERE id = $1";
pub(super) const TAKE_PENDING: &str = "DELETE FROM pending_authorizations WHERE id = $1";
pub(super) const COUNT_PENDING: &str = "SELECT COUNT(*) AS n FROM pending_authorizations";

pub(super) const CONSENT: &str = "SELECT scope FROM consents \
     WHERE user_id = $1 AND client_id = $2";
pub(super) const SAVE_CONSENT: &str = "INSERT INTO consents \
     (user_id, client_id, scope, granted_at) \
     VALUES ($1, $2, $3, $4) \
     ON CONFLICT (user_id, client_id) \
     DO UPDATE SET scope = excluded.scope, granted_at = excluded.granted_at";

pub(super) const RECORD_EVENT: &str = "INSERT INTO auth_events \
     (at, kind, client_id, subject, source, detail) \
     VALUES ($1, $2, $3, $4, $5, $6)";
// By id, not `at`: two events in the same second keep their recording order.
pub(super) const RECENT_EVENTS: &str = "SELECT at, kind, client_id, subject, source, detail \
     FROM auth_events ORDER BY id DESC LIMIT $1";

pub(super) const INSERT_SSO_ATTEMPT: &str = "INSERT INTO sso_attempts \
     (state_hash, provider, pending_id, browser_hash, nonce, code_verifier, expires_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7)";
pub(super) const TAKE_SSO_ATTEMPT: &str = "DELETE FROM sso_attempts WHERE state_hash = $1 \
     RETURNING state_hash, provider, pending_id, browser_hash, nonce, code_verifier, expires_at";
pub(super) const SSO_LINK: &str = "SELECT provider, subject, user_id, linked_at \
     FROM sso_links WHERE provider = $1 AND subject = $2";
pub(super) const SSO_LINK_OF_USER: &str = "SELECT provider, subject, user_id, linked_at \
     FROM sso_links WHERE provider = $1 AND user_id = $2";
pub(super) const INSERT_SSO_LINK: &str = "INSERT INTO sso_links \
     (provider, subject, user_id, linked_at) VALUES ($1, $2, $3, $4)";

/// What [`AuthStore::purge_expired`](toolhost_auth::AuthStore::purge_expired) deletes, one statement per table.
pub(super) const PURGE_EXPIRED: [&str; 7] = [
    "DELETE FROM auth_codes WHERE expires_at < $1",
    "DELETE FROM refresh_tokens WHERE expires_at < $1",
    "DELETE FROM pending_authorizations WHERE expires_at < $1",
    "DELETE FROM web_sessions WHERE expires_at < $1",
    "DELETE FROM sso_attempts WHERE expires_at < $1",
    "DELETE FROM spent_jwts WHERE expires_at < $1",
    "DELETE FROM connection_attempts WHERE expires_at < $1",
];

/// Security events older than the retention (its cut-off bound as `$1`).
pub(super) const PURGE_OLD_EVENTS: &str = "DELETE FROM auth_events WHERE at < $1";

/// The columns of a `person_connections` row, in order.
macro_rules! connection_columns {
    () => {
        "tenant, user_id, backend, key_id, sealed, connected_at, expires_at"
    };
}
pub(super) const PERSON_CONNECTION: &str = concat!(
    "SELECT ",
    connection_columns!(),
    " FROM person_connections WHERE tenant = $1 AND user_id = $2 AND backend = $3"
);
pub(super) const PUT_PERSON_CONNECTION: &str = concat!(
    "INSERT INTO person_connections (",
    connection_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (tenant, user_id, backend) DO UPDATE \
     SET key_id = excluded.key_id, sealed = excluded.sealed, \
     connected_at = excluded.connected_at, expires_at = excluded.expires_at"
);
pub(super) const REFRESH_PERSON_CONNECTION: &str = "UPDATE person_connections \
     SET key_id = $1, sealed = $2, expires_at = $3 \
     WHERE tenant = $4 AND user_id = $5 AND backend = $6 AND sealed = $7";
pub(super) const DELETE_PERSON_CONNECTION: &str = "DELETE FROM person_connections \
     WHERE tenant = $1 AND user_id = $2 AND backend = $3";
pub(super) const PERSON_CONNECTIONS: &str = concat!(
    "SELECT ",
    connection_columns!(),
    " FROM person_connections WHERE tenant = $1 AND ($2 IS NULL OR user_id = $2) \
     ORDER BY user_id, backend LIMIT $3"
);
/// A person's earlier flows to a backend end when they start another: one
/// attempt per person and backend, however often the page is loaded.
pub(super) const CLEAR_CONNECTION_ATTEMPTS: &str = "DELETE FROM connection_attempts \
     WHERE tenant = $1 AND user_id = $2 AND backend = $3";
pub(super) const INSERT_CONNECTION_ATTEMPT: &str = "INSERT INTO connection_attempts \
     (state_hash, tenant, user_id, backend, code_verifier, expires_at) \
     VALUES ($1, $2, $3, $4, $5, $6)";
pub(super) const TAKE_CONNECTION_ATTEMPT: &str = "DELETE FROM connection_attempts \
     WHERE state_hash = $1 \
     RETURNING state_hash, tenant, user_id, backend, code_verifier, expires_at";
