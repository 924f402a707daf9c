//! Operator actions behind `toolhost user …` and `toolhost client …`, and
//! the demo seed of `make run`.

use toolhost_types::PrincipalKind;

use crate::scope::Scopes;
use crate::server::now;
use crate::store::{AuthStore, AuthStoreError, Client, ClientKind, ClientOrigin, User};
use crate::{password, secret};

/// Why an operator action failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The store failed or a name is taken.
    #[error(transparent)]
    Store(#[from] AuthStoreError),
    /// No such user or client.
    #[error("{0} does not exist")]
    NotFound(String),
    /// A value is not acceptable.
    #[error("{0}")]
    Invalid(String),
}

/// The shortest password accepted.
pub const MIN_PASSWORD: usize = 8;

/// Creates a user in `tenant` (created if missing).
pub async fn add_user(
    store: &dyn AuthStore,
    tenant: &str,
    username: &str,
    pass: &str,
) -> Result<User, AdminError> {
    let user = new_user(tenant, username, pass).await?;
    store.ensure_tenant(tenant, now()).await?;
    store.insert_user(&user).await?;
    Ok(user)
}

/// A user of `tenant` as [`add_user`] creates one, not stored yet: the
/// names checked, a fresh id, the password checked and hashed. For a
/// caller that stores it its own way (the console, with its audit row).
pub async fn new_user(tenant: &str, username: &str, pass: &str) -> Result<User, AdminError> {
    valid_name("username", username)?;
    valid_name("tenant", tenant)?;
    Ok(User {
        id: format!("u_{}", secret::random(12)),
        tenant: tenant.into(),
        username: username.into(),
        password_hash: password_hash(pass).await?,
        disabled: false,
        created_at: now(),
    })
}

/// `pass` checked (at least [`MIN_PASSWORD`] characters) and hashed as
/// every stored password is (argon2id, a PHC string).
pub async fn password_hash(pass: &str) -> Result<String, AdminError> {
    valid_password(pass)?;
    password::hash(pass.into())
        .await
        .map_err(AdminError::Invalid)
}

/// Sets a user's password and ends their browser sessions.
pub async fn set_password(
    store: &dyn AuthStore,
    username: &str,
    pass: &str,
) -> Result<(), AdminError> {
    let hash = password_hash(pass).await?;
    let user = store
        .user_by_name(username)
        .await?
        .ok_or_else(|| AdminError::NotFound(format!("user {username:?}")))?;
    store.set_password(username, &hash).await?;
    store.delete_user_sessions(&user.id).await?;
    Ok(())
}

/// Disables (or re-enables) a user. Disabling ends their sessions and
/// revokes their grants: their tokens stop working at once.
pub async fn set_disabled(
    store: &dyn AuthStore,
    username: &str,
    disabled: bool,
) -> Result<(), AdminError> {
    let user = store
        .user_by_name(username)
        .await?
        .ok_or_else(|| AdminError::NotFound(format!("user {username:?}")))?;
    store.set_disabled(username, disabled).await?;
    if disabled {
        store.delete_user_sessions(&user.id).await?;
        store.revoke_subject_families(&user.id, now()).await?;
    }
    Ok(())
}

/// A new service client: its id and its secret (shown once).
pub async fn add_service(
    store: &dyn AuthStore,
    tenant: &str,
    name: &str,
    scope: &str,
) -> Result<(Client, String), AdminError> {
    valid_name("tenant", tenant)?;
    let scopes = service_scopes(scope)?;
    if scopes.is_empty() {
        return Err(AdminError::Invalid(
            "a service needs at least one scope".into(),
        ));
    }
    store.ensure_tenant(tenant, now()).await?;
    let secret_value = secret::token(secret::CLIENT_SECRET);
    let client = Client {
        client_id: format!("svc_{}", secret::random(12)),
        secret_hash: Some(secret::digest(&secret_value)),
        kind: ClientKind::Service,
        origin: ClientOrigin::Admin,
        name: name.into(),
        redirect_uris: vec![],
        scope: scopes.to_string(),
        tenant: Some(tenant.into()),
        owner: Some("admin".into()),
        created_at: now(),
        last_used_at: None,
        revoked_at: None,
        refresh_at: None,
    };
    store.insert_client(&client).await?;
    Ok((client, secret_value))
}

/// A new service client that authenticates with assertions signed by one of
/// `jwks`'s keys (RFC 7523 `private_key_jwt`; see [`client_keys`] for what
/// is accepted) instead of a secret. Its stored secret is a random one
/// nobody is told, so no secret ever authenticates it.
pub async fn add_keyed_service(
    store: &dyn AuthStore,
    tenant: &str,
    name: &str,
    scope: &str,
    jwks: &str,
) -> Result<Client, AdminError> {
    let jwks = client_keys(jwks)?;
    let (client, _unused_secret) = add_service(store, tenant, name, scope).await?;
    store
        .set_client_keys(&client.client_id, &jwks, now())
        .await?;
    Ok(client)
}

/// Sets or replaces a service client's public keys (rotation: list the
/// new key beside the old until the workload signs with the new one). From
/// then on it authenticates only with assertions; its secret is refused.
pub async fn set_service_keys(
    store: &dyn AuthStore,
    client_id: &str,
    jwks: &str,
) -> Result<usize, AdminError> {
    let jwks = client_keys(jwks)?;
    must_be_service(store, client_id).await?;
    store.set_client_keys(client_id, &jwks, now()).await?;
    let count = serde_json::from_str::<serde_json::Value>(&jwks)
        .ok()
        .and_then(|v| v["keys"].as_array().map(Vec::len))
        .unwrap_or(0);
    Ok(count)
}

/// The most keys one client may register.
const MAX_CLIENT_KEYS: usize = 8;

/// A client's public keys as stored: `text` is a JWK Set or one JWK; each
/// key public only (no private member), of a kind an assertion may be
/// signed with (Ed25519, P-256, RSA of at least 2048 bits), usable as a
/// verification key; at most [`MAX_CLIENT_KEYS`].
pub fn client_keys(text: &str) -> Result<String, AdminError> {
    use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet};
    let invalid = |m: String| AdminError::Invalid(format!("the client's keys: {m}"));
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| invalid(format!("not JSON: {e}")))?;
    let raw = match value.get("keys") {
        Some(serde_json::Value::Array(keys)) => keys.clone(),
        Some(_) => return Err(invalid("keys must be an array".into())),
        None => vec![value],
    };
    if raw.is_empty() || raw.len() > MAX_CLIENT_KEYS {
        return Err(invalid(format!(
            "1 to {MAX_CLIENT_KEYS} keys, not {}",
            raw.len()
        )));
    }
    let mut keys = Vec::with_capacity(raw.len());
    for key in raw {
        let private = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];
        if key
            .as_object()
            .is_some_and(|o| private.iter().any(|m| o.contains_key(*m)))
        {
            return Err(invalid(
                "a key carries a private member: give public keys only".into(),
            ));
        }
        let jwk: Jwk = serde_json::from_value(key).map_err(|e| invalid(format!("a key: {e}")))?;
        let fits = match &jwk.algorithm {
            AlgorithmParameters::OctetKeyPair(p) => p.curve == EllipticCurve::Ed25519,
            AlgorithmParameters::EllipticCurve(p) => p.curve == EllipticCurve::P256,
            AlgorithmParameters::RSA(p) => {
                use base64::Engine as _;
                let n = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(&p.n);
                n.is_ok_and(|n| n.len() >= 256)
            }
            _ => false,
        };
        if !fits {
            return Err(invalid(
                "each key must be Ed25519 (OKP), P-256 (EC) or RSA of 2048 bits or more".into(),
            ));
        }
        jsonwebtoken::DecodingKey::from_jwk(&jwk)
            .map_err(|e| invalid(format!("a key cannot verify: {e}")))?;
        keys.push(jwk);
    }
    serde_json::to_string(&JwkSet { keys }).map_err(|e| invalid(e.to_string()))
}

/// Replaces a service client's scope set. Its tokens lose removed scopes
/// on their next request; new tokens get at most the new set.
pub async fn set_service_scope(
    store: &dyn AuthStore,
    client_id: &str,
    scope: &str,
) -> Result<(), AdminError> {
    let scopes = service_scopes(scope)?;
    must_be_service(store, client_id).await?;
    store
        .set_client_scope(client_id, &scopes.to_string())
        .await?;
    Ok(())
}

/// `client_id` names a service client.
async fn must_be_service(store: &dyn AuthStore, client_id: &str) -> Result<(), AdminError> {
    match store.client(client_id).await? {
        Some(c) if c.kind == ClientKind::Service => Ok(()),
        Some(_) => Err(AdminError::Invalid(format!(
            "{client_id:?} is not a service client"
        ))),
        None => Err(AdminError::NotFound(format!("client {client_id:?}"))),
    }
}

/// A service's scope set: any scopes, each toolset binding well named
/// (`toolset:NAME`, NAME 1–64 of `[a-z0-9-]`).
fn service_scopes(scope: &str) -> Result<Scopes, AdminError> {
    let scopes = Scopes::parse(scope).map_err(AdminError::Invalid)?;
    if let Some(bad) = scopes
        .toolsets()
        .find(|t| !toolhost_policy::is_toolset_name(t))
    {
        return Err(AdminError::Invalid(format!(
            "toolset {bad:?} in the scope: a toolset's name is 1–64 of [a-z0-9-]"
        )));
    }
    Ok(scopes)
}

/// Revokes a client: every token it holds stops working at once.
pub async fn revoke_client(store: &dyn AuthStore, client_id: &str) -> Result<(), AdminError> {
    if store.revoke_client(client_id, now()).await? {
        Ok(())
    } else {
        Err(AdminError::NotFound(format!(
            "an active client {client_id:?}"
        )))
    }
}

/// `make run`'s demo: tenant `demo`, admin user `demo`. Returns the
/// password when the user was created now (None if it existed).
pub async fn seed_demo(
    store: &dyn AuthStore,
    pass: Option<&str>,
) -> Result<Option<String>, AdminError> {
    if store.user_by_name("demo").await?.is_some() {
        return Ok(None);
    }
    let pass = pass.map_or_else(|| secret::random(12), str::to_owned);
    match add_user(store, "demo", "demo", &pass).await {
        Ok(_) => Ok(Some(pass)),
        // Another replica starting at the same moment made it.
        Err(AdminError::Store(AuthStoreError::Conflict { .. })) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Describes a subject kind for listings.
pub fn kind_of(client: &Client) -> PrincipalKind {
    match client.kind {
        ClientKind::Service => PrincipalKind::Service,
        _ => PrincipalKind::User,
    }
}

fn valid_name(what: &str, name: &str) -> Result<(), AdminError> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.@".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(AdminError::Invalid(format!(
            "{what} {name:?}: use 1-64 letters, digits, '-', '_', '.', '@'"
        )))
    }
}

fn valid_password(pass: &str) -> Result<(), AdminError> {
    if pass.chars().count() < MIN_PASSWORD {
        return Err(AdminError::Invalid(format!(
            "a password needs at least {MIN_PASSWORD} characters"
        )));
    }
    Ok(())
}
