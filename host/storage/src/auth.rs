//! [`AuthStore`] for [`Store`]: each operation is one statement (or one
//! transaction) from `sql.rs`, run on whichever engine the store holds, its
//! rows read back by `rows.rs`.
//!
//! Single use is decided by the database, never by a read followed by a
//! write: a code is spent, a refresh token rotated and a pending request
//! taken by a conditional `UPDATE`/`DELETE` whose affected-row count names
//! the one winner, on either engine and across hosts sharing a database.
//!
//! Deleting a client cascades (foreign keys, `ON DELETE CASCADE`) to its
//! grants, codes, refresh tokens and consents; SQLite enforces foreign keys
//! because `connect` turns them on for every connection.

pub(crate) mod people;
mod rows;
pub(crate) mod sql;

use toolhost_auth::{
    AuthCode, AuthEvent, AuthStore, AuthStoreError, Client, CodeRedemption, ConnectionAttempt,
    Family, KeyPurpose, LiveGrant, PendingAuthorization, PersonConnection, RefreshToken,
    SigningKey, SsoAttempt, SsoLink, StoreFuture, User, WebSession,
};

use crate::connect::{execute, fetch_all, fetch_optional, on_pool};
use crate::{Hits, StorageError, Store};
use rows::Fields as _;

/// Maps a driver error met while doing `operation`. The driver's message
/// names tables and constraints, never bound values, so no secret leaks.
fn failed(operation: &'static str) -> impl FnOnce(sqlx::Error) -> AuthStoreError {
    move |e| match crate::error::unreachable(operation, &e) {
        Some(down) => AuthStoreError::Unavailable(down),
        None => AuthStoreError::Database(format!("{operation}: {e}")),
    }
}

/// [`failed`], except that a unique-key violation is `Conflict { what }`.
fn conflict(operation: &'static str, what: String) -> impl FnOnce(sqlx::Error) -> AuthStoreError {
    move |e| match e.as_database_error() {
        Some(db) if db.is_unique_violation() => AuthStoreError::Conflict { what },
        _ => failed(operation)(e),
    }
}

impl Store {
    /// Writes `client` with `statement` (an insert or the document upsert, which
    /// bind the same columns); the number of rows written.
    async fn write_client(
        &self,
        statement: &'static str,
        client: &Client,
    ) -> Result<u64, sqlx::Error> {
        let uris = rows::redirect_uris(client);
        execute!(
            &self.pools,
            statement,
            client.client_id.as_str(),
            client.secret_hash.as_deref(),
            client.kind.as_str(),
            client.origin.as_str(),
            client.name.as_str(),
            uris.as_str(),
            client.scope.as_str(),
            client.tenant.as_deref(),
            client.owner.as_deref(),
            client.created_at,
            client.last_used_at,
            client.revoked_at,
            client.refresh_at,
        )
    }

    /// The outcome of a redemption that changed no row: the code was spent
    /// already (`Replayed`) or never existed (`Unknown`).
    async fn code_lost(&self, code_hash: &str) -> Result<CodeRedemption, sqlx::Error> {
        let family = fetch_optional!(
            &self.pools,
            |row| row.text("family_id"),
            sql::CODE_FAMILY,
            code_hash
        )?;
        Ok(match family {
            Some(family_id) => CodeRedemption::Replayed { family_id },
            None => CodeRedemption::Unknown,
        })
    }
}

impl AuthStore for Store {
    fn users_of<'a>(&'a self, tenant: &'a str) -> StoreFuture<'a, Vec<User>> {
        Box::pin(async move {
            fetch_all!(&self.pools, rows::user, sql::USERS_OF_TENANT, tenant)
                .map_err(failed("select users of a tenant"))
        })
    }

    fn toolset_names<'a>(&'a self, tenant: &'a str) -> StoreFuture<'a, Vec<String>> {
        Box::pin(async move {
            let toolsets = toolhost_policy::PolicyStore::all_toolsets(self, tenant).await;
            let toolsets = toolsets.map_err(|e| match e {
                toolhost_policy::PolicyStoreError::Unavailable(down) => {
                    AuthStoreError::Unavailable(down)
                }
                other => AuthStoreError::Database(other.to_string()),
            })?;
            Ok(toolsets.into_iter().map(|t| t.name).collect())
        })
    }

    fn ensure_tenant<'a>(&'a self, id: &'a str, now: i64) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            execute!(&self.pools, sql::ENSURE_TENANT, id, now).map_err(failed("ensure tenant"))?;
            Ok(())
        })
    }

    fn insert_user<'a>(&'a self, user: &'a User) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            execute!(
                &self.pools,
                sql::INSERT_USER,
                user.id.as_str(),
                user.tenant.as_str(),
                user.username.as_str(),
                user.password_hash.as_str(),
                user.disabled,
                user.created_at,
            )
            .map_err(conflict("insert user", format!("user {:?}", user.username)))?;
            Ok(())
        })
    }

    fn user_by_name<'a>(&'a self, username: &'a str) -> StoreFuture<'a, Option<User>> {
        Box::pin(async move {
            fetch_optional!(&self.pools, rows::user, sql::USER_BY_NAME, username)
                .map_err(failed("select user by name"))
        })
    }

    fn user_by_id<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<User>> {
        Box::pin(async move {
            fetch_optional!(&self.pools, rows::user, sql::USER_BY_ID, id)
                .map_err(failed("select user by id"))
        })
    }

    fn set_password<'a>(&'a self, username: &'a str, hash: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let changed = execute!(&self.pools, sql::SET_PASSWORD, hash, username)
                .map_err(failed("set password"))?;
            Ok(changed == 1)
        })
    }

    fn set_disabled<'a>(&'a self, username: &'a str, disabled: bool) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let changed = execute!(&self.pools, sql::SET_DISABLED, disabled, username)
                .map_err(failed("set disabled"))?;
            self.live.refresh(&self.pools).await;
            Ok(changed == 1)
        })
    }

    fn insert_client<'a>(&'a self, client: &'a Client) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let what = format!("client {:?}", client.client_id);
            self.write_client(sql::INSERT_CLIENT, client)
                .await
                .map_err(conflict("insert client", what))?;
            Ok(())
        })
    }

    fn upsert_document_client<'a>(&'a self, client: &'a Client) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let what = || {
                format!(
                    "client {:?} (not a metadata-document client)",
                    client.client_id
                )
            };
            let written = self
                .write_client(sql::UPSERT_DOCUMENT_CLIENT, client)
                .await
                .map_err(conflict("upsert document client", what()))?;
            self.live.refresh(&self.pools).await;
            match written {
                0 => Err(AuthStoreError::Conflict { what: what() }),
                _ => Ok(()),
            }
        })
    }

    fn client<'a>(&'a self, client_id: &'a str) -> StoreFuture<'a, Option<Client>> {
        Box::pin(async move {
            fetch_optional!(&self.pools, rows::client, sql::CLIENT, client_id)
                .map_err(failed("select client"))
        })
    }

    fn clients(&self) -> StoreFuture<'_, Vec<Client>> {
        Box::pin(async move {
            fetch_all!(&self.pools, rows::client, sql::CLIENTS).map_err(failed("select clients"))
        })
    }

    fn revoke_client<'a>(&'a self, client_id: &'a str, now: i64) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let changed = execute!(&self.pools, sql::REVOKE_CLIENT, now, client_id)
                .map_err(failed("revoke client"))?;
            self.live.refresh(&self.pools).await;
            Ok(changed == 1)
        })
    }

    fn set_client_scope<'a>(&'a self, client_id: &'a str, scope: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let changed = execute!(&self.pools, sql::SET_CLIENT_SCOPE, scope, client_id)
                .map_err(failed("set client scope"))?;
            self.live.refresh(&self.pools).await;
            Ok(changed == 1)
        })
    }

    fn touch_client<'a>(&'a self, client_id: &'a str, now: i64) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            execute!(&self.pools, sql::TOUCH_CLIENT, now, client_id)
                .map_err(failed("touch client"))?;
            Ok(())
        })
    }

    fn expire_idle_clients(&self, before: i64) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            // Counts the clients only: cascaded deletes are not "rows changed".
            let expired = execute!(&self.pools, sql::EXPIRE_IDLE_CLIENTS, before)
                .map_err(failed("expire idle clients"))?;
            self.live.refresh(&self.pools).await;
            Ok(expired)
        })
    }

    fn purge_expired(&self, before: i64) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let mut purged = 0;
            for statement in sql::PURGE_EXPIRED {
                purged += execute!(&self.pools, statement, before)
                    .map_err(failed("purge expired auth rows"))?;
            }
            let retained = toolhost_auth::EVENT_RETENTION.as_secs() as i64;
            purged += execute!(&self.pools, sql::PURGE_OLD_EVENTS, before - retained)
                .map_err(failed("purge old auth events"))?;
            Ok(purged)
        })
    }

    fn insert_code<'a>(&'a self, code: &'a AuthCode) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            execute!(
                &self.pools,
                sql::INSERT_CODE,
                code.code_hash.as_str(),
                code.family_id.as_str(),
                code.client_id.as_str(),
                code.user_id.as_str(),
                code.redirect_uri.as_str(),
                code.code_challenge.as_str(),
                code.scope.as_str(),
                code.resource.as_str(),
                code.expires_at,
                code.dpop_jkt.as_deref(),
            )
            .map_err(conflict("insert code", "authorization code".into()))?;
            Ok(())
        })
    }

    fn redeem_code<'a>(&'a self, code_hash: &'a str, now: i64) -> StoreFuture<'a, CodeRedemption> {
        Box::pin(async move {
            // The conditional UPDATE picks the winner; expiry is the caller's check.
            let won = fetch_optional!(&self.pools, rows::code, sql::REDEEM_CODE, now, code_hash)
                .map_err(failed("redeem code"))?;
            match won {
                Some(code) => Ok(CodeRedemption::Redeemed(code)),
                None => self
                    .code_lost(code_hash)
                    .await
                    .map_err(failed("look up spent code")),
            }
        })
    }

    fn insert_family<'a>(&'a self, family: &'a Family) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            execute!(
                &self.pools,
                sql::INSERT_FAMILY,
                family.id.as_str(),
                family.client_id.as_str(),
                family.subject.as_str(),
                family.subject_kind.as_str(),
                family.scope.as_str(),
                family.created_at,
                family.revoked_at,
            )
            .map_err(conflict("insert family", format!("family {:?}", family.id)))?;
            Ok(())
        })
    }

    fn revoke_family<'a>(&'a self, id: &'a str, now: i64) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let changed = execute!(&self.pools, sql::REVOKE_FAMILY, now, id)
                .map_err(failed("revoke family"))?;
            self.live.refresh(&self.pools).await;
            Ok(changed == 1)
        })
    }

    fn revoke_subject_families<'a>(&'a self, subject: &'a str, now: i64) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let revoked = execute!(&self.pools, sql::REVOKE_SUBJECT_FAMILIES, now, subject)
                .map_err(failed("revoke subject families"))?;
            self.live.refresh(&self.pools).await;
            Ok(revoked)
        })
    }

    fn live_grant<'a>(&'a self, family_id: &'a str) -> StoreFuture<'a, Option<LiveGrant>> {
        Box::pin(async move {
            let ticket = match self.live.grant(family_id) {
                Ok(remembered) => return Ok(Some(remembered)),
                Err(ticket) => ticket,
            };
            let grant = fetch_optional!(&self.pools, rows::live_grant, sql::LIVE_GRANT, family_id)
                .map_err(failed("select live grant"))?
                .flatten();
            if let Some(grant) = &grant {
                self.live.keep_grant(ticket, family_id, grant);
            }
            Ok(grant)
        })
    }

    fn insert_refresh<'a>(&'a self, token: &'a RefreshToken) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            execute!(
                &self.pools,
                sql::INSERT_REFRESH,
                token.token_hash.as_str(),
                token.family_id.as_str(),
                token.client_id.as_str(),
                token.scope.as_str(),
                token.resource.as_str(),
                token.expires_at,
                token.used_at,
                token.dpop_jkt.as_deref(),
            )
            .map_err(conflict("insert refresh token", "refresh token".into()))?;
            Ok(())
        })
    }

    fn refresh_token<'a>(&'a self, token_hash: &'a str) -> StoreFuture<'a, Option<RefreshToken>> {
        Box::pin(async move {
            fetch_optional!(&self.pools, rows::refresh, sql::REFRESH_TOKEN, token_hash)
                .map_err(failed("select refresh token"))
        })
    }

    fn rotate_refresh<'a>(
        &'a self,
        old_hash: &'a str,
        next: &'a RefreshToken,
        now: i64,
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let rotated = on_pool!(&self.pools, pool => async {
                let _turn = crate::connect::transaction_turn(&self.pools).await;
                let mut tx = pool.begin().await?;
                let used = sqlx::query(sql::USE_REFRESH)
                    .bind(now)
                    .bind(old_hash)
                    .execute(&mut *tx)
                    .await?;
                if used.rows_affected() == 0 {
                    // Another request rotated it first. Roll back now: a
                    // dropped transaction waits for its connection's next use.
                    tx.rollback().await?;
                    return Ok(false);
                }
                sqlx::query(sql::INSERT_REFRESH)
                    .bind(next.token_hash.as_str())
                    .bind(next.family_id.as_str())
                    .bind(next.client_id.as_str())
                    .bind(next.scope.as_str())
                    .bind(next.resource.as_str())
                    .bind(next.expires_at)
                    .bind(next.used_at)
                    .bind(next.dpop_jkt.as_deref())
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok::<_, sqlx::Error>(true)
            }
            .await);
            rotated.map_err(conflict("rotate refresh token", "refresh token".into()))
        })
    }

    fn signing_keys(&self, purpose: KeyPurpose) -> StoreFuture<'_, Vec<SigningKey>> {
        let [list, _, _] = sql::keys_of(purpose);
        Box::pin(async move {
            fetch_all!(&self.pools, rows::signing_key, list).map_err(failed("select signing keys"))
        })
    }

    fn insert_signing_key<'a>(
        &'a self,
        purpose: KeyPurpose,
        key: &'a SigningKey,
    ) -> StoreFuture<'a, ()> {
        let [_, insert, _] = sql::keys_of(purpose);
        Box::pin(async move {
            execute!(
                &self.pools,
                insert,
                key.kid.as_str(),
                key.alg.as_str(),
                key.private_der.as_slice(),
                key.created_at,
                key.retired_at,
            )
            .map_err(conflict(
                "insert signing key",
                format!("signing key {:?}", key.kid),
            ))?;
            Ok(())
        })
    }

    fn retire_signing_key<'a>(
        &'a self,
        purpose: KeyPurpose,
        kid: &'a str,
        now: i64,
    ) -> StoreFuture<'a, ()> {
        let [_, _, retire] = sql::keys_of(purpose);
        Box::pin(async move {
            execute!(&self.pools, retire, now, kid).map_err(failed("retire signing key"))?;
            Ok(())
        })
    }

    fn insert_session<'a>(&'a self, session: &'a WebSession) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            execute!(
                &self.pools,
                sql::INSERT_SESSION,
                session.id_hash.as_str(),
                session.user_id.as_str(),
                session.created_at,
                session.expires_at,
            )
            .map_err(conflict("insert session", "browser session".into()))?;
            Ok(())
        })
    }

    fn session<'a>(&'a self, id_hash: &'a str) -> StoreFuture<'a, Option<WebSession>> {
        Box::pin(async move {
            fetch_optional!(&self.pools, rows::session, sql::SESSION, id_hash)
                .map_err(failed("select session"))
        })
    }

    fn delete_user_sessions<'a>(&'a self, user_id: &'a str) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            execute!(&self.pools, sql::DELETE_USER_SESSIONS, user_id)
                .map_err(failed("delete user sessions"))
        })
    }

    fn insert_pending<'a>(&'a self, pending: &'a PendingAuthorization) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            execute!(
                &self.pools,
                sql::INSERT_PENDING,
                pending.id.as_str(),
                pending.browser_hash.as_str(),
                pending.csrf.as_str(),
                pending.request.as_str(),
                pending.expires_at,
            )
            .map_err(conflict(
                "insert pending authorization",
                "pending authorization".into(),
            ))?;
            Ok(())
        })
    }

    fn pending<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<PendingAuthorization>> {
        Box::pin(async move {
            fetch_optional!(&self.pools, rows::pending, sql::PENDING, id)
                .map_err(failed("select pending authorization"))
        })
    }

    fn count_pending(&self) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let n = fetch_optional!(&self.pools, |row| row.int("n"), sql::COUNT_PENDING)
                .map_err(failed("count pending authorizations"))?;
            Ok(n.and_then(|n| u64::try_from(n).ok()).unwrap_or(0))
        })
    }

    fn take_pending<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let deleted = execute!(&self.pools, sql::TAKE_PENDING, id)
                .map_err(failed("take pending authorization"))?;
            Ok(deleted == 1)
        })
    }

    fn consent<'a>(
        &'a self,
        user_id: &'a str,
        client_id: &'a str,
    ) -> StoreFuture<'a, Option<String>> {
        Box::pin(async move {
            fetch_optional!(
                &self.pools,
                |row| row.text("scope"),
                sql::CONSENT,
                user_id,
                client_id
            )
            .map_err(failed("select consent"))
        })
    }

    fn save_consent<'a>(
        &'a self,
        user_id: &'a str,
        client_id: &'a str,
        scope: &'a str,
        now: i64,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            execute!(
                &self.pools,
                sql::SAVE_CONSENT,
                user_id,
                client_id,
                scope,
                now
            )
            .map_err(failed("save consent"))?;
            Ok(())
        })
    }

    fn insert_sso_attempt<'a>(&'a self, attempt: &'a SsoAttempt) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            execute!(
                &self.pools,
                sql::INSERT_SSO_ATTEMPT,
                attempt.state_hash.as_str(),
                attempt.provider.as_str(),
                attempt.pending_id.as_str(),
                attempt.browser_hash.as_str(),
                attempt.nonce.as_str(),
                attempt.code_verifier.as_str(),
                attempt.expires_at,
            )
            .map_err(conflict("insert sso attempt", "sso attempt".into()))?;
            Ok(())
        })
    }

    fn take_sso_attempt<'a>(&'a self, state_hash: &'a str) -> StoreFuture<'a, Option<SsoAttempt>> {
        Box::pin(async move {
            fetch_optional!(
                &self.pools,
                rows::sso_attempt,
                sql::TAKE_SSO_ATTEMPT,
                state_hash
            )
            .map_err(failed("take sso attempt"))
        })
    }

    fn sso_link<'a>(
        &'a self,
        provider: &'a str,
        subject: &'a str,
    ) -> StoreFuture<'a, Option<SsoLink>> {
        Box::pin(async move {
            fetch_optional!(
                &self.pools,
                rows::sso_link,
                sql::SSO_LINK,
                provider,
                subject
            )
            .map_err(failed("select sso link"))
        })
    }

    fn sso_link_of_user<'a>(
        &'a self,
        provider: &'a str,
        user_id: &'a str,
    ) -> StoreFuture<'a, Option<SsoLink>> {
        Box::pin(async move {
            fetch_optional!(
                &self.pools,
                rows::sso_link,
                sql::SSO_LINK_OF_USER,
                provider,
                user_id
            )
            .map_err(failed("select sso link of user"))
        })
    }

    fn insert_sso_link<'a>(&'a self, link: &'a SsoLink) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            execute!(
                &self.pools,
                sql::INSERT_SSO_LINK,
                link.provider.as_str(),
                link.subject.as_str(),
                link.user_id.as_str(),
                link.linked_at,
            )
            .map_err(conflict(
                "insert sso link",
                format!("a link at {:?} for this subject or user", link.provider),
            ))?;
            Ok(())
        })
    }

    fn person_connection<'a>(
        &'a self,
        tenant: &'a str,
        user_id: &'a str,
        backend: &'a str,
    ) -> StoreFuture<'a, Option<PersonConnection>> {
        Box::pin(async move {
            fetch_optional!(
                &self.pools,
                rows::person_connection,
                sql::PERSON_CONNECTION,
                tenant,
                user_id,
                backend
            )
            .map_err(failed("select person connection"))
        })
    }

    fn put_person_connection<'a>(&'a self, c: &'a PersonConnection) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            execute!(
                &self.pools,
                sql::PUT_PERSON_CONNECTION,
                c.tenant.as_str(),
                c.user_id.as_str(),
                c.backend.as_str(),
                c.key_id.as_str(),
                c.sealed.as_str(),
                c.connected_at,
                c.expires_at,
            )
            .map_err(failed("put person connection"))?;
            Ok(())
        })
    }

    fn refresh_person_connection<'a>(
        &'a self,
        sealed: &'a str,
        c: &'a PersonConnection,
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let changed = execute!(
                &self.pools,
                sql::REFRESH_PERSON_CONNECTION,
                c.key_id.as_str(),
                c.sealed.as_str(),
                c.expires_at,
                c.tenant.as_str(),
                c.user_id.as_str(),
                c.backend.as_str(),
                sealed,
            )
            .map_err(failed("refresh person connection"))?;
            Ok(changed == 1)
        })
    }

    fn delete_person_connection<'a>(
        &'a self,
        tenant: &'a str,
        user_id: &'a str,
        backend: &'a str,
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let deleted = execute!(
                &self.pools,
                sql::DELETE_PERSON_CONNECTION,
                tenant,
                user_id,
                backend
            )
            .map_err(failed("delete person connection"))?;
            Ok(deleted > 0)
        })
    }

    fn person_connections<'a>(
        &'a self,
        tenant: &'a str,
        user_id: Option<&'a str>,
        limit: u32,
    ) -> StoreFuture<'a, Vec<PersonConnection>> {
        Box::pin(async move {
            fetch_all!(
                &self.pools,
                rows::person_connection,
                sql::PERSON_CONNECTIONS,
                tenant,
                user_id,
                i64::from(limit)
            )
            .map_err(failed("select person connections"))
        })
    }

    fn insert_connection_attempt<'a>(&'a self, a: &'a ConnectionAttempt) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            execute!(
                &self.pools,
                sql::CLEAR_CONNECTION_ATTEMPTS,
                a.tenant.as_str(),
                a.user_id.as_str(),
                a.backend.as_str(),
            )
            .map_err(failed("clear connection attempts"))?;
            execute!(
                &self.pools,
                sql::INSERT_CONNECTION_ATTEMPT,
                a.state_hash.as_str(),
                a.tenant.as_str(),
                a.user_id.as_str(),
                a.backend.as_str(),
                a.code_verifier.as_str(),
                a.expires_at,
            )
            .map_err(failed("insert connection attempt"))?;
            Ok(())
        })
    }

    fn take_connection_attempt<'a>(
        &'a self,
        state_hash: &'a str,
    ) -> StoreFuture<'a, Option<ConnectionAttempt>> {
        Box::pin(async move {
            fetch_optional!(
                &self.pools,
                rows::connection_attempt,
                sql::TAKE_CONNECTION_ATTEMPT,
                state_hash
            )
            .map_err(failed("take connection attempt"))
        })
    }

    fn record_event<'a>(&'a self, event: &'a AuthEvent) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            execute!(
                &self.pools,
                sql::RECORD_EVENT,
                event.at,
                event.kind.as_str(),
                event.client_id.as_deref(),
                event.subject.as_deref(),
                event.source.as_deref(),
                event.detail.as_str(),
            )
            .map_err(failed("record auth event"))?;
            Ok(())
        })
    }

    fn count_hit<'a>(
        &'a self,
        bucket: &'a str,
        window_start: i64,
        window_end: i64,
    ) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let hit = [Hits {
                bucket: bucket.to_owned(),
                window_start,
                window_end,
                n: 1,
            }];
            let totals = self.add_hits(&hit).await.map_err(|e| match e {
                StorageError::Unavailable(down) => AuthStoreError::Unavailable(down),
                other => AuthStoreError::Database(other.to_string()),
            })?;
            Ok(totals.first().copied().unwrap_or(0))
        })
    }

    fn tenant_requires_dpop<'a>(&'a self, tenant: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let required = fetch_optional!(
                &self.pools,
                |row| row.flag("require_dpop"),
                sql::TENANT_REQUIRES_DPOP,
                tenant
            )
            .map_err(failed("select a tenant's DPoP requirement"))?;
            Ok(required.unwrap_or(false))
        })
    }

    /// On the counters' pool (`connect::open_counters`): the commit does
    /// not wait for the disk. A record lost to a power cut (SQLite) or a
    /// database crash (PostgreSQL) lets that JWT be replayed until it
    /// expires (a DPoP proof's `iat` window, a minute; a client
    /// assertion's `exp`, at most six); a synced commit added about 100 µs
    /// to each DPoP-bound request (BENCHMARKS Part 32).
    fn spend_jwt<'a>(&'a self, key: &'a str, until: i64, now: i64) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let spent = execute!(&self.counters, sql::SPEND_JWT, key, until, now)
                .map_err(failed("record a single-use JWT"))?;
            Ok(spent == 1)
        })
    }

    fn client_keys<'a>(&'a self, client_id: &'a str) -> StoreFuture<'a, Option<String>> {
        Box::pin(async move {
            fetch_optional!(
                &self.pools,
                |row| row.text("jwks"),
                sql::CLIENT_KEYS,
                client_id
            )
            .map_err(failed("select a client's keys"))
        })
    }

    fn set_client_keys<'a>(
        &'a self,
        client_id: &'a str,
        jwks: &'a str,
        now: i64,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            execute!(&self.pools, sql::SET_CLIENT_KEYS, client_id, jwks, now)
                .map_err(failed("set a client's keys"))?;
            Ok(())
        })
    }

    fn recent_events(&self, limit: u32) -> StoreFuture<'_, Vec<AuthEvent>> {
        Box::pin(async move {
            fetch_all!(
                &self.pools,
                rows::event,
                sql::RECENT_EVENTS,
                i64::from(limit)
            )
            .map_err(failed("select recent auth events"))
        })
    }
}
