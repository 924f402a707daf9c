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

/// Replaces a service client's scope set. Its tokens lose removed scopes
/// on their next request; new tokens get at most the new set.
pub async fn set_service_scope(
    store: &dyn AuthStore,
    client_id: &str,
    scope: &str,
) -> Result<(), AdminError> {
    let scopes = service_scopes(scope)?;
    match store.client(client_id).await? {
        Some(c) if c.kind == ClientKind::Service => {}
        Some(_) => {
            return Err(AdminError::Invalid(format!(
                "{client_id:?} is not a service client"
            )));
        }
        None => return Err(AdminError::NotFound(format!("client {client_id:?}"))),
    }
    store
        .set_client_scope(client_id, &scopes.to_string())
        .await?;
    Ok(())
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
