//! The auth tables' rows read back into `toolhost_auth` records, on either
//! engine. Pure conversions; the SQL that fetches them lives in `auth.rs`.
//!
//! A stored value this build cannot read back (an unknown kind, a redirect
//! list that is not a JSON array) fails as a decode error naming the table,
//! the row's key and the column: the row was written by hand or by another
//! build, and guessing would be worse.

use toolhost_auth::{
    AuthCode, AuthEvent, Client, ClientKind, ClientOrigin, ConnectionAttempt, Family, LiveGrant,
    PendingAuthorization, PersonConnection, RefreshToken, SigningKey, SsoAttempt, SsoLink, User,
    WebSession,
};
use toolhost_types::PrincipalKind;

pub(crate) use crate::fields::Fields;
use crate::fields::corrupt;

/// A `users` row.
pub(crate) fn user(row: &impl Fields) -> Result<User, sqlx::Error> {
    Ok(User {
        id: row.text("id")?,
        tenant: row.text("tenant")?,
        username: row.text("username")?,
        password_hash: row.text("password_hash")?,
        disabled: row.maybe_flag("disabled")?.unwrap_or(false),
        created_at: row.int("created_at")?,
    })
}

/// An `oauth_clients` row.
pub(crate) fn client(row: &impl Fields) -> Result<Client, sqlx::Error> {
    let client_id = row.text("client_id")?;
    let bad =
        |column, value: &str, problem| corrupt("oauth_clients", &client_id, column, value, problem);
    let kind = row.text("kind")?;
    let origin = row.text("origin")?;
    let uris = row.text("redirect_uris")?;
    Ok(Client {
        kind: ClientKind::parse(&kind).ok_or_else(|| bad("kind", &kind, "not a client kind"))?,
        origin: ClientOrigin::parse(&origin)
            .ok_or_else(|| bad("origin", &origin, "not a client origin"))?,
        redirect_uris: serde_json::from_str(&uris)
            .map_err(|_| bad("redirect_uris", &uris, "not a JSON array of strings"))?,
        secret_hash: row.maybe_text("secret_hash")?,
        name: row.text("name")?,
        scope: row.text("scope")?,
        tenant: row.maybe_text("tenant")?,
        owner: row.maybe_text("owner")?,
        created_at: row.int("created_at")?,
        last_used_at: row.maybe_int("last_used_at")?,
        revoked_at: row.maybe_int("revoked_at")?,
        refresh_at: row.maybe_int("refresh_at")?,
        client_id,
    })
}

/// The JSON array `redirect_uris` is stored as.
pub(crate) fn redirect_uris(client: &Client) -> String {
    serde_json::to_string(&client.redirect_uris).expect("a list of strings always serializes")
}

/// A `token_families` row (or the family columns of a joined row).
pub(crate) fn family(row: &impl Fields) -> Result<Family, sqlx::Error> {
    let id = row.text("id")?;
    let kind = row.text("subject_kind")?;
    Ok(Family {
        subject_kind: PrincipalKind::parse(&kind).ok_or_else(|| {
            corrupt(
                "token_families",
                &id,
                "subject_kind",
                &kind,
                "not a principal kind",
            )
        })?,
        client_id: row.text("client_id")?,
        subject: row.text("subject")?,
        scope: row.text("scope")?,
        created_at: row.int("created_at")?,
        revoked_at: row.maybe_int("revoked_at")?,
        id,
    })
}

/// A family joined with its client and (for users) its user; `None` when
/// the family names a user who no longer exists.
pub(crate) fn live_grant(row: &impl Fields) -> Result<Option<LiveGrant>, sqlx::Error> {
    let family = family(row)?;
    let (tenant, name, disabled) = match family.subject_kind {
        PrincipalKind::User => {
            let (Some(tenant), Some(name)) =
                (row.maybe_text("user_tenant")?, row.maybe_text("username")?)
            else {
                return Ok(None);
            };
            (
                tenant,
                name,
                row.maybe_flag("user_disabled")?.unwrap_or(false),
            )
        }
        PrincipalKind::Service => {
            let tenant = row.maybe_text("client_tenant")?.ok_or_else(|| {
                let problem = "a service client needs a tenant";
                corrupt(
                    "oauth_clients",
                    &family.client_id,
                    "tenant",
                    "NULL",
                    problem,
                )
            })?;
            (tenant, row.text("client_name")?, false)
        }
    };
    Ok(Some(LiveGrant {
        client_revoked_at: row.maybe_int("client_revoked_at")?,
        client_scope: row.text("client_scope")?,
        family,
        tenant,
        name,
        disabled,
    }))
}

/// An `auth_codes` row.
pub(crate) fn code(row: &impl Fields) -> Result<AuthCode, sqlx::Error> {
    Ok(AuthCode {
        code_hash: row.text("code_hash")?,
        family_id: row.text("family_id")?,
        client_id: row.text("client_id")?,
        user_id: row.text("user_id")?,
        redirect_uri: row.text("redirect_uri")?,
        code_challenge: row.text("code_challenge")?,
        scope: row.text("scope")?,
        resource: row.text("resource")?,
        expires_at: row.int("expires_at")?,
        dpop_jkt: row.maybe_text("dpop_jkt")?,
    })
}

/// A `refresh_tokens` row.
pub(crate) fn refresh(row: &impl Fields) -> Result<RefreshToken, sqlx::Error> {
    Ok(RefreshToken {
        token_hash: row.text("token_hash")?,
        family_id: row.text("family_id")?,
        client_id: row.text("client_id")?,
        scope: row.text("scope")?,
        resource: row.text("resource")?,
        expires_at: row.int("expires_at")?,
        used_at: row.maybe_int("used_at")?,
        dpop_jkt: row.maybe_text("dpop_jkt")?,
    })
}

/// A `signing_keys` row.
pub(crate) fn signing_key(row: &impl Fields) -> Result<SigningKey, sqlx::Error> {
    Ok(SigningKey {
        kid: row.text("kid")?,
        alg: row.text("alg")?,
        private_der: row.bytes("private_der")?,
        created_at: row.int("created_at")?,
        retired_at: row.maybe_int("retired_at")?,
    })
}

/// A `web_sessions` row.
pub(crate) fn session(row: &impl Fields) -> Result<WebSession, sqlx::Error> {
    Ok(WebSession {
        id_hash: row.text("id_hash")?,
        user_id: row.text("user_id")?,
        created_at: row.int("created_at")?,
        expires_at: row.int("expires_at")?,
    })
}

/// A `pending_authorizations` row.
pub(crate) fn pending(row: &impl Fields) -> Result<PendingAuthorization, sqlx::Error> {
    Ok(PendingAuthorization {
        id: row.text("id")?,
        browser_hash: row.text("browser_hash")?,
        csrf: row.text("csrf")?,
        request: row.text("request")?,
        expires_at: row.int("expires_at")?,
    })
}

/// An `sso_attempts` row.
pub(crate) fn sso_attempt(row: &impl Fields) -> Result<SsoAttempt, sqlx::Error> {
    Ok(SsoAttempt {
        state_hash: row.text("state_hash")?,
        provider: row.text("provider")?,
        pending_id: row.text("pending_id")?,
        browser_hash: row.text("browser_hash")?,
        nonce: row.text("nonce")?,
        code_verifier: row.text("code_verifier")?,
        expires_at: row.int("expires_at")?,
    })
}

/// An `sso_links` row.
pub(crate) fn sso_link(row: &impl Fields) -> Result<SsoLink, sqlx::Error> {
    Ok(SsoLink {
        provider: row.text("provider")?,
        subject: row.text("subject")?,
        user_id: row.text("user_id")?,
        linked_at: row.int("linked_at")?,
    })
}

/// A `person_connections` row.
pub(crate) fn person_connection(row: &impl Fields) -> Result<PersonConnection, sqlx::Error> {
    Ok(PersonConnection {
        tenant: row.text("tenant")?,
        user_id: row.text("user_id")?,
        backend: row.text("backend")?,
        key_id: row.text("key_id")?,
        sealed: row.text("sealed")?,
        connected_at: row.int("connected_at")?,
        expires_at: row.maybe_int("expires_at")?,
    })
}

/// A `connection_attempts` row.
pub(crate) fn connection_attempt(row: &impl Fields) -> Result<ConnectionAttempt, sqlx::Error> {
    Ok(ConnectionAttempt {
        state_hash: row.text("state_hash")?,
        tenant: row.text("tenant")?,
        user_id: row.text("user_id")?,
        backend: row.text("backend")?,
        code_verifier: row.text("code_verifier")?,
        expires_at: row.int("expires_at")?,
    })
}

/// An `auth_events` row.
pub(crate) fn event(row: &impl Fields) -> Result<AuthEvent, sqlx::Error> {
    Ok(AuthEvent {
        at: row.int("at")?,
        kind: row.text("kind")?,
        client_id: row.maybe_text("client_id")?,
        subject: row.maybe_text("subject")?,
        source: row.maybe_text("source")?,
        detail: row.text("detail")?,
    })
}
