//! A [`PeopleEffect`] on an open transaction: the same statements the
//! auth and policy stores run for `toolhost user|role|grant|revoke|client`,
//! written with the console's audit row.
//!
//! What a change needs gone missing meanwhile (a user, a role, a client,
//! or a client revoked already) changes no row, or is refused by a foreign
//! key: the change lost, and fails the transaction.

use toolhost_audit::PeopleEffect;

use super::{Tx, one_row, statement};
use crate::auth::sql as auth;
use crate::policy::sql as policy;

/// Applies one change to a tenant's people.
pub(super) async fn apply(tx: &mut impl Tx, change: &PeopleEffect) -> Result<(), sqlx::Error> {
    match change {
        PeopleEffect::SetDisabled {
            tenant,
            user,
            disabled,
            at_s,
        } => set_disabled(tx, tenant, user, *disabled, *at_s).await,
        PeopleEffect::Permission {
            tenant,
            role,
            permission,
            permit,
        } => {
            let sql = if *permit {
                policy::PERMIT
            } else {
                policy::FORBID
            };
            let changed = statement(sql).bind(tenant).bind(role).bind(permission);
            changed.execute(tx).await.map(drop).map_err(missing_is_lost)
        }
        PeopleEffect::Membership {
            tenant,
            role,
            user,
            member,
        } => {
            let sql = if *member {
                policy::ASSIGN
            } else {
                policy::UNASSIGN
            };
            let changed = statement(sql).bind(tenant).bind(role).bind(user);
            changed.execute(tx).await.map(drop).map_err(missing_is_lost)
        }
        PeopleEffect::AddUser {
            tenant,
            user,
            username,
            password_hash,
            at_s,
        } => {
            let added = statement(auth::INSERT_USER)
                .bind(user)
                .bind(tenant)
                .bind(username)
                .bind(password_hash)
                .bind(false)
                .bind(*at_s)
                .execute(tx)
                .await
                .map_err(taken_is_lost)?;
            one_row(added)
        }
        PeopleEffect::SetPassword {
            tenant,
            user,
            password_hash,
        } => {
            let changed = statement(auth::SET_TENANT_USER_PASSWORD)
                .bind(password_hash)
                .bind(tenant)
                .bind(user)
                .execute(tx)
                .await?;
            one_row(changed)?;
            statement(auth::DELETE_USER_SESSIONS)
                .bind(user)
                .execute(tx)
                .await
                .map(drop)
        }
        PeopleEffect::RevokeClient { client_id, at_s } => {
            let revoked = statement(auth::REVOKE_CLIENT)
                .bind(*at_s)
                .bind(client_id)
                .execute(tx)
                .await?;
            one_row(revoked)
        }
    }
}

/// Disables (or enables) a user; disabling ends their sessions and
/// revokes their grants in the same transaction.
async fn set_disabled(
    tx: &mut impl Tx,
    tenant: &str,
    user: &str,
    disabled: bool,
    at_s: i64,
) -> Result<(), sqlx::Error> {
    let changed = statement(auth::SET_TENANT_USER_DISABLED)
        .bind(disabled)
        .bind(tenant)
        .bind(user)
        .execute(tx)
        .await?;
    one_row(changed)?;
    if disabled {
        statement(auth::DELETE_USER_SESSIONS)
            .bind(user)
            .execute(tx)
            .await?;
        statement(auth::REVOKE_SUBJECT_FAMILIES)
            .bind(at_s)
            .bind(user)
            .execute(tx)
            .await?;
    }
    Ok(())
}

/// A role or user the change names, refused by a foreign key because it
/// is gone: lost, as a change that finds no row is.
fn missing_is_lost(e: sqlx::Error) -> sqlx::Error {
    let missing = e
        .as_database_error()
        .is_some_and(|db| db.is_foreign_key_violation());
    if missing { sqlx::Error::RowNotFound } else { e }
}

/// A username (or id) taken meanwhile, refused by its unique index: the
/// change lost, as a change that finds no row is.
fn taken_is_lost(e: sqlx::Error) -> sqlx::Error {
    let taken = e
        .as_database_error()
        .is_some_and(|db| db.is_unique_violation());
    if taken { sqlx::Error::RowNotFound } else { e }
}
