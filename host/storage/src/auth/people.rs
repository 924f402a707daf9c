//! A tenant's people a page at a time, for the console (issue 45): its
//! users in name order, found by the start of a name, and its service
//! clients newest first. Each page is one index walk from a keyset cursor
//! (`users_tenant_name`, `oauth_clients_tenant_created`, migration 0030),
//! never an offset scan, either way from the cursor.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use toolhost_auth::{Client, User};

use super::rows;
use crate::connect::on_pool;
use crate::keyset::{Past, push_past};
use crate::{Engine, StorageError, Store, explain};

/// Where a page starts in its list's order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PageFrom<K> {
    /// The list's first rows.
    #[default]
    Start,
    /// The rows after this key, in the list's order.
    After(K),
    /// The rows before this key (still listed in the list's order).
    Before(K),
}

/// A page of one tenant's users, by username.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsersQuery {
    /// Whose users.
    pub tenant: String,
    /// Only usernames starting with this text (empty: all).
    pub starting: String,
    /// Where the page starts: after or before a username.
    pub from: PageFrom<String>,
    /// At most this many users.
    pub limit: u32,
}

/// A service client's place in its tenant's list (newest first): when it
/// was created, then its id. Written `created_at.client_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientKey {
    /// Its `created_at` (seconds).
    pub created_at: i64,
    /// Its id.
    pub client_id: String,
}

impl ClientKey {
    /// `client`'s key.
    pub fn of(client: &Client) -> ClientKey {
        ClientKey {
            created_at: client.created_at,
            client_id: client.client_id.clone(),
        }
    }
}

impl fmt::Display for ClientKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.created_at, self.client_id)
    }
}

impl FromStr for ClientKey {
    type Err = StorageError;

    fn from_str(s: &str) -> Result<ClientKey, StorageError> {
        let bad = || StorageError::Query {
            operation: "read a service client's cursor",
            message: format!("{s:?} is not created_at.client_id"),
        };
        let (created, id) = s.split_once('.').ok_or_else(bad)?;
        let created_at = created.parse().map_err(|_| bad())?;
        if id.is_empty() {
            return Err(bad());
        }
        Ok(ClientKey {
            created_at,
            client_id: id.to_owned(),
        })
    }
}

/// A page of one tenant's service clients, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceClientsQuery {
    /// Whose clients.
    pub tenant: String,
    /// Where the page starts: after (older than) or before (newer than) a key.
    pub from: PageFrom<ClientKey>,
    /// At most this many clients.
    pub limit: u32,
}

/// The username column as it is ordered and compared: byte order on both
/// engines (PostgreSQL's `C` collation, as its index is built), so a
/// name's prefix is a range and the pages are the same on either.
fn name(engine: Engine) -> &'static str {
    match engine {
        Engine::Sqlite => "username",
        Engine::Postgres => "username COLLATE \"C\"",
    }
}

/// Past every character in byte order (its UTF-8 is the greatest): the
/// end of a prefix's range.
const PAST_NAMES: char = char::MAX;

const USER_COLUMNS: &str = "SELECT id, tenant, username, password_hash, disabled, created_at \
     FROM users";
const CLIENT_COLUMNS: &str = "SELECT \
     client_id, secret_hash, kind, origin, name, redirect_uris, scope, tenant, owner, \
     created_at, last_used_at, revoked_at, refresh_at \
     FROM oauth_clients";

/// `select` with `query`'s tenant, prefix, cursor, order and limit.
fn users<DB>(query: &UsersQuery, select: &str, engine: Engine) -> sqlx::QueryBuilder<DB>
where
    DB: sqlx::Database,
    <DB as sqlx::Database>::Arguments: Default,
    for<'t> String: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> i64: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
{
    let name = name(engine);
    let mut sql = sqlx::QueryBuilder::new(select.to_owned());
    sql.push(" WHERE tenant = ").push_bind(query.tenant.clone());
    let starting = query.starting.trim();
    if !starting.is_empty() {
        sql.push(format!(" AND {name} >= "))
            .push_bind(starting.to_owned())
            .push(format!(" AND {name} < "))
            .push_bind(format!("{starting}{PAST_NAMES}"));
    }
    let order = match &query.from {
        PageFrom::Start => "ASC",
        PageFrom::After(key) => {
            sql.push(format!(" AND {name} > ")).push_bind(key.clone());
            "ASC"
        }
        PageFrom::Before(key) => {
            sql.push(format!(" AND {name} < ")).push_bind(key.clone());
            "DESC"
        }
    };
    sql.push(format!(" ORDER BY {name} {order} LIMIT "))
        .push_bind(i64::from(query.limit));
    sql
}

/// `select` with `query`'s tenant, cursor, order and limit: the tenant's
/// service clients, newest first.
fn service_clients<DB>(query: &ServiceClientsQuery, select: &str) -> sqlx::QueryBuilder<DB>
where
    DB: sqlx::Database,
    <DB as sqlx::Database>::Arguments: Default,
    for<'t> String: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> i64: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
{
    let mut sql = sqlx::QueryBuilder::new(select.to_owned());
    sql.push(" WHERE tenant = ")
        .push_bind(query.tenant.clone())
        .push(" AND kind = 'service'");
    let columns = ("created_at", "client_id");
    let order = match &query.from {
        PageFrom::Start => "DESC",
        PageFrom::After(k) => {
            let cursor = (k.created_at, k.client_id.as_str());
            push_past(&mut sql, columns, cursor, Past::Earlier);
            "DESC"
        }
        PageFrom::Before(k) => {
            let cursor = (k.created_at, k.client_id.as_str());
            push_past(&mut sql, columns, cursor, Past::Later);
            "ASC"
        }
    };
    sql.push(format!(
        " ORDER BY created_at {order}, client_id {order} LIMIT "
    ))
    .push_bind(i64::from(query.limit));
    sql
}

impl Store {
    /// One page of a tenant's users (see [`UsersQuery`]), in name order.
    pub async fn users_page(&self, query: &UsersQuery) -> Result<Vec<User>, StorageError> {
        let engine = self.engine();
        let mut found = on_pool!(&self.pools, pool => {
            users(query, USER_COLUMNS, engine)
                .build()
                .fetch_all(pool)
                .await
                .and_then(|rows| rows.iter().map(rows::user).collect::<Result<Vec<_>, _>>())
        })
        .map_err(StorageError::query("list a tenant's users"))?;
        if matches!(query.from, PageFrom::Before(_)) {
            found.reverse();
        }
        Ok(found)
    }

    /// One page of a tenant's service clients (see
    /// [`ServiceClientsQuery`]), newest first.
    pub async fn service_clients_page(
        &self,
        query: &ServiceClientsQuery,
    ) -> Result<Vec<Client>, StorageError> {
        let mut found = on_pool!(&self.pools, pool => {
            service_clients(query, CLIENT_COLUMNS)
                .build()
                .fetch_all(pool)
                .await
                .and_then(|rows| rows.iter().map(rows::client).collect::<Result<Vec<_>, _>>())
        })
        .map_err(StorageError::query("list a tenant's service clients"))?;
        if matches!(query.from, PageFrom::Before(_)) {
            found.reverse();
        }
        Ok(found)
    }

    /// The usernames of those of `ids` who are users of `tenant`, by id
    /// (an id of another tenant's user, or of nobody, is left out).
    pub async fn usernames(
        &self,
        tenant: &str,
        ids: &[&str],
    ) -> Result<BTreeMap<String, String>, StorageError> {
        use sqlx::Row as _;
        if ids.is_empty() {
            return Ok(BTreeMap::new());
        }
        let pairs = on_pool!(&self.pools, pool => {
            let mut sql = sqlx::QueryBuilder::new("SELECT id, username FROM users WHERE tenant = ");
            sql.push_bind(tenant.to_owned()).push(" AND id IN (");
            let mut each = sql.separated(", ");
            for id in ids {
                each.push_bind((*id).to_owned());
            }
            sql.push(")");
            sql.build()
                .fetch_all(pool)
                .await
                .and_then(|rows| {
                    rows.iter()
                        .map(|r| Ok((r.try_get::<String, _>("id")?, r.try_get::<String, _>("username")?)))
                        .collect::<Result<Vec<_>, sqlx::Error>>()
                })
        })
        .map_err(StorageError::query("name a tenant's users"))?;
        Ok(pairs.into_iter().collect())
    }

    /// The plan of [`Store::users_page`]'s query, a line per step.
    pub async fn explain_users(&self, query: &UsersQuery) -> Result<Vec<String>, StorageError> {
        use sqlx::Row as _;
        let engine = self.engine();
        let select = format!("{}{USER_COLUMNS}", explain::prefix(engine));
        on_pool!(&self.pools, pool => {
            users(query, &select, engine)
                .build()
                .fetch_all(pool)
                .await
                .and_then(|rows| rows.iter().map(|r| r.try_get(explain::column(engine))).collect())
        })
        .map_err(StorageError::query("explain a listing of users"))
    }

    /// The plan of [`Store::service_clients_page`]'s query, a line per step.
    pub async fn explain_service_clients(
        &self,
        query: &ServiceClientsQuery,
    ) -> Result<Vec<String>, StorageError> {
        use sqlx::Row as _;
        let engine = self.engine();
        let select = format!("{}{CLIENT_COLUMNS}", explain::prefix(engine));
        on_pool!(&self.pools, pool => {
            service_clients(query, &select)
                .build()
                .fetch_all(pool)
                .await
                .and_then(|rows| rows.iter().map(|r| r.try_get(explain::column(engine))).collect())
        })
        .map_err(StorageError::query("explain a listing of service clients"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_key_reads_back_as_written_and_nothing_else_reads() {
        let key = ClientKey {
            created_at: 1_764_000_000,
            client_id: "svc.a.b".into(),
        };
        assert_eq!(key.to_string().parse::<ClientKey>().expect("read"), key);
        for bad in ["", "12", "x.svc", "12.", ".svc"] {
            assert!(bad.parse::<ClientKey>().is_err(), "{bad:?}");
        }
    }
}
