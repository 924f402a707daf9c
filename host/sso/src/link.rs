//! From a provider's verified claims to a local user and their roles.
//!
//! - A subject linked before stays with its user, whatever its claims say
//!   now (an address reassigned at the provider takes over nothing).
//! - Else the configured claim's value names the local user (an `email` only
//!   when `email_verified` is not false); the subject is then linked to it,
//!   unless that user is linked to another subject of this provider.
//! - With no such user, an account is made when the operator allows it.
//! - A disabled user is never linked nor signed in.
//! - The groups claim then sets the mapped roles: a mapped role is given
//!   when one of its groups is present and taken away when none is. A role
//!   the mapping does not name is left as the operator set it. A role that
//!   cannot be taken away fails the sign-in (closed, not open).
//! - A token whose groups claim the provider left out as too large (OpenID
//!   Connect's distributed claims, `_claim_names` naming it, or Entra ID's
//!   `hasgroups`: the "overage") changes no mapped role, and the sign-in
//!   says so (`sso.groups_overage`): stripping every role because the list
//!   was long would lock out the people in the most groups. A token with
//!   no groups claim and no such sign means no groups (some providers leave
//!   an empty list out).

use std::collections::BTreeSet;

use serde_json::{Map, Value};
use toolhost_auth::upstream::{SignedIn, UpstreamError};
use toolhost_auth::{AuthStore, AuthStoreError, SsoLink, User, admin, secret};
use toolhost_policy::{PolicyStore, PolicyStoreError};

use crate::config::ProviderConfig;

/// The stores a link reads and writes.
pub(crate) struct Stores<'a> {
    pub auth: &'a dyn AuthStore,
    pub policy: &'a dyn PolicyStore,
}

fn store_failed(e: impl std::fmt::Display) -> UpstreamError {
    UpstreamError::Unavailable(format!("the store: {e}"))
}

/// Links `claims` to a local user and, with `set_mapped_roles` (a
/// sign-in, not an identity assertion, which carries no groups), sets
/// their mapped roles.
pub(crate) async fn link(
    config: &ProviderConfig,
    claims: &Map<String, Value>,
    stores: &Stores<'_>,
    now: i64,
    set_mapped_roles: bool,
) -> Result<SignedIn, UpstreamError> {
    let subject = claims
        .get("sub")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut changes = Vec::new();
    let linked = stores
        .auth
        .sso_link(&config.name, &subject)
        .await
        .map_err(store_failed)?;
    let user = match linked {
        Some(link) => stores
            .auth
            .user_by_id(&link.user_id)
            .await
            .map_err(store_failed)?
            .ok_or_else(|| UpstreamError::NoAccount("the linked user is gone".into()))?,
        None => {
            let username = local_name(config, claims)?;
            let user = match stores
                .auth
                .user_by_name(&username)
                .await
                .map_err(store_failed)?
            {
                Some(user) => user,
                None => provision(config, &username, stores, &mut changes).await?,
            };
            if user.disabled {
                return Err(UpstreamError::NoAccount(format!(
                    "{username:?} is disabled"
                )));
            }
            let link = SsoLink {
                provider: config.name.clone(),
                subject: subject.clone(),
                user_id: user.id.clone(),
                linked_at: now,
            };
            match stores.auth.insert_sso_link(&link).await {
                Ok(()) => changes.push((
                    "sso.linked",
                    format!("subject {subject:?} linked to {:?}", user.username),
                )),
                Err(AuthStoreError::Conflict { .. }) => {
                    return Err(UpstreamError::NoAccount(format!(
                        "{:?} is linked to another subject of this provider",
                        user.username
                    )));
                }
                Err(e) => return Err(store_failed(e)),
            }
            user
        }
    };
    if user.disabled {
        return Err(UpstreamError::NoAccount(format!(
            "{:?} is disabled",
            user.username
        )));
    }
    if set_mapped_roles
        && let Some(change) = set_roles(config, claims, &user, stores.policy).await?
    {
        changes.push(change);
    }
    Ok(SignedIn {
        username: user.username,
        subject,
        changes,
    })
}

/// The local username the configured claim gives.
fn local_name(
    config: &ProviderConfig,
    claims: &Map<String, Value>,
) -> Result<String, UpstreamError> {
    let value = claims
        .get(&config.claim)
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| {
            UpstreamError::NoAccount(format!("the ID token has no {:?} claim", config.claim))
        })?;
    if config.claim == "email" && claims.get("email_verified") == Some(&Value::Bool(false)) {
        return Err(UpstreamError::NoAccount(format!(
            "the provider has not verified {value:?}"
        )));
    }
    Ok(value.to_owned())
}

/// An account for `username`, when the operator allows making one.
async fn provision(
    config: &ProviderConfig,
    username: &str,
    stores: &Stores<'_>,
    changes: &mut Vec<(&'static str, String)>,
) -> Result<User, UpstreamError> {
    let Some(provision) = &config.provision else {
        return Err(UpstreamError::NoAccount(format!(
            "no local user {username:?}"
        )));
    };
    // Nobody knows this password: the account signs in through the provider
    // until an operator sets one.
    let unusable = secret::random(32);
    let user = match admin::add_user(stores.auth, &provision.tenant, username, &unusable).await {
        Ok(user) => user,
        // Made by a concurrent first sign-in: use it.
        Err(admin::AdminError::Store(AuthStoreError::Conflict { .. })) => stores
            .auth
            .user_by_name(username)
            .await
            .map_err(store_failed)?
            .ok_or_else(|| UpstreamError::NoAccount(format!("no local user {username:?}")))?,
        Err(admin::AdminError::Invalid(why)) => {
            return Err(UpstreamError::NoAccount(format!(
                "cannot make an account: {why}"
            )));
        }
        Err(e) => return Err(store_failed(e)),
    };
    changes.push((
        "sso.user.created",
        format!("user {username:?} created in tenant {:?}", provision.tenant),
    ));
    if let Some(role) = &provision.role {
        stores
            .policy
            .assign(&user.tenant, role, &user.id)
            .await
            .map_err(store_failed)?;
    }
    Ok(user)
}

/// Whether the provider left the groups claim out as too large: it names
/// the claim in `_claim_names` (OpenID Connect Core §5.6.2, as Entra ID
/// does past 200 groups) or says `hasgroups` (Entra ID's implicit flow).
fn groups_overflowed(claims: &Map<String, Value>, groups_claim: &str) -> bool {
    if claims.contains_key(groups_claim) {
        return false;
    }
    let named = claims
        .get("_claim_names")
        .and_then(Value::as_object)
        .is_some_and(|names| names.contains_key(groups_claim));
    named || claims.get("hasgroups") == Some(&Value::Bool(true))
}

/// Sets the roles the mapping names from the groups claim; what changed
/// (an event kind and its detail).
async fn set_roles(
    config: &ProviderConfig,
    claims: &Map<String, Value>,
    user: &User,
    policy: &dyn PolicyStore,
) -> Result<Option<(&'static str, String)>, UpstreamError> {
    if config.roles.is_empty() {
        return Ok(None);
    }
    if groups_overflowed(claims, &config.groups_claim) {
        return Ok(Some((
            "sso.groups_overage",
            format!(
                "roles of {:?} kept as they were: the provider left the {:?} claim out as too large",
                user.username, config.groups_claim
            ),
        )));
    }
    let groups: BTreeSet<&str> = match claims.get(&config.groups_claim) {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        Some(Value::String(one)) => BTreeSet::from([one.as_str()]),
        _ => BTreeSet::new(),
    };
    let mapped: BTreeSet<&str> = config
        .roles
        .values()
        .flatten()
        .map(String::as_str)
        .collect();
    let wanted: BTreeSet<&str> = config
        .roles
        .iter()
        .filter(|(group, _)| groups.contains(group.as_str()))
        .flat_map(|(_, roles)| roles.iter().map(String::as_str))
        .collect();
    let (mut added, mut removed, mut missing) = (Vec::new(), Vec::new(), Vec::new());
    for role in mapped {
        if wanted.contains(role) {
            match policy.assign(&user.tenant, role, &user.id).await {
                Ok(true) => added.push(role),
                Ok(false) => {}
                Err(PolicyStoreError::NotFound { .. }) => missing.push(role),
                Err(e) => return Err(store_failed(e)),
            }
        } else {
            match policy.unassign(&user.tenant, role, &user.id).await {
                Ok(true) => removed.push(role),
                // A role that does not exist is not held.
                Ok(false) | Err(PolicyStoreError::NotFound { .. }) => {}
                Err(e) => return Err(store_failed(e)),
            }
        }
    }
    if added.is_empty() && removed.is_empty() && missing.is_empty() {
        return Ok(None);
    }
    let mut change = format!("roles of {:?}:", user.username);
    for r in added {
        change.push_str(&format!(" +{r}"));
    }
    for r in removed {
        change.push_str(&format!(" -{r}"));
    }
    for r in missing {
        change.push_str(&format!(" (no role {r:?} in tenant {:?})", user.tenant));
    }
    Ok(Some(("sso.roles", change)))
}
