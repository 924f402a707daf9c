//! One statement of an effect, written once for both engines: its SQL and
//! the values bound to it ([`Statement`]), run on an open transaction of
//! either engine ([`Tx`]).
//!
//! The effects are ordinary functions over `impl Tx`, compiled once per
//! engine, so SQLite and PostgreSQL can never be sent different
//! statements. A value keeps its SQL type (text, integer, bytes, boolean)
//! even when it is NULL: PostgreSQL types a parameter by what is bound.

use std::borrow::Cow;
use std::future::Future;

use sqlx::query::Query;
use sqlx::{Database, Encode, PgConnection, Postgres, Sqlite, SqliteConnection, Type};

/// A value bound to a statement.
#[derive(Debug, Clone)]
pub(crate) enum Value<'a> {
    /// `TEXT`, or NULL.
    Text(Option<Cow<'a, str>>),
    /// `INTEGER` / `BIGINT`, or NULL.
    Int(Option<i64>),
    /// `BLOB` / `BYTEA`.
    Bytes(&'a [u8]),
    /// `BOOLEAN`.
    Bool(bool),
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(s: &'a str) -> Self {
        Value::Text(Some(Cow::Borrowed(s)))
    }
}

impl<'a> From<&'a String> for Value<'a> {
    fn from(s: &'a String) -> Self {
        Value::Text(Some(Cow::Borrowed(s)))
    }
}

impl From<String> for Value<'_> {
    fn from(s: String) -> Self {
        Value::Text(Some(Cow::Owned(s)))
    }
}

impl<'a> From<Option<&'a str>> for Value<'a> {
    fn from(s: Option<&'a str>) -> Self {
        Value::Text(s.map(Cow::Borrowed))
    }
}

impl From<Option<String>> for Value<'_> {
    fn from(s: Option<String>) -> Self {
        Value::Text(s.map(Cow::Owned))
    }
}

impl From<i64> for Value<'_> {
    fn from(n: i64) -> Self {
        Value::Int(Some(n))
    }
}

impl From<Option<i64>> for Value<'_> {
    fn from(n: Option<i64>) -> Self {
        Value::Int(n)
    }
}

impl<'a> From<&'a [u8]> for Value<'a> {
    fn from(b: &'a [u8]) -> Self {
        Value::Bytes(b)
    }
}

impl From<bool> for Value<'_> {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

/// A statement and its values, in order (`$1`, `$2`, …): what
/// `sqlx::query(sql).bind(…)` is, before an engine is chosen.
#[derive(Debug, Clone)]
pub(crate) struct Statement<'a> {
    sql: &'static str,
    values: Vec<Value<'a>>,
}

/// The statement `sql`, with nothing bound yet.
pub(crate) fn statement<'a>(sql: &'static str) -> Statement<'a> {
    Statement {
        sql,
        values: Vec::new(),
    }
}

impl<'a> Statement<'a> {
    /// Binds the next value.
    pub(crate) fn bind(mut self, value: impl Into<Value<'a>>) -> Self {
        self.values.push(value.into());
        self
    }

    /// Runs it on `tx`; the number of rows it changed.
    pub(crate) async fn execute(&self, tx: &mut impl Tx) -> Result<u64, sqlx::Error> {
        tx.execute(self).await
    }

    /// Runs it on `tx`; whether it returned a row.
    pub(crate) async fn exists(&self, tx: &mut impl Tx) -> Result<bool, sqlx::Error> {
        tx.exists(self).await
    }

    /// The `sqlx` query of engine `DB`, its values bound.
    fn query<DB>(&self) -> Query<'_, DB, DB::Arguments>
    where
        DB: Database,
        for<'e> Option<&'e str>: Encode<'e, DB> + Type<DB>,
        for<'e> Option<i64>: Encode<'e, DB> + Type<DB>,
        for<'e> &'e [u8]: Encode<'e, DB> + Type<DB>,
        for<'e> bool: Encode<'e, DB> + Type<DB>,
    {
        self.values
            .iter()
            .fold(sqlx::query(self.sql), |q, value| match value {
                Value::Text(s) => q.bind(s.as_deref()),
                Value::Int(n) => q.bind(*n),
                Value::Bytes(b) => q.bind(*b),
                Value::Bool(b) => q.bind(*b),
            })
    }
}

/// An open transaction of either engine (a `Transaction` derefs to its
/// connection: pass `&mut *tx`), as the effects use it.
pub(crate) trait Tx: Send {
    /// Runs `statement`; the number of rows it changed.
    fn execute(
        &mut self,
        statement: &Statement<'_>,
    ) -> impl Future<Output = Result<u64, sqlx::Error>> + Send;

    /// Runs `statement`; whether it returned a row.
    fn exists(
        &mut self,
        statement: &Statement<'_>,
    ) -> impl Future<Output = Result<bool, sqlx::Error>> + Send;

    /// Serializes this transaction with every other that locks `key`, to
    /// its end: PostgreSQL's transaction-scoped advisory lock on the key's
    /// hash. Nothing on SQLite, whose one writer at a time already is.
    fn lock_key(&mut self, key: &str) -> impl Future<Output = Result<(), sqlx::Error>> + Send;
}

// The two engines differ only in their query result's type (which has no
// common trait for the rows changed): the statement itself is built once.
impl Tx for SqliteConnection {
    async fn execute(&mut self, statement: &Statement<'_>) -> Result<u64, sqlx::Error> {
        let query = statement.query::<Sqlite>();
        Ok(query.execute(self).await?.rows_affected())
    }

    async fn exists(&mut self, statement: &Statement<'_>) -> Result<bool, sqlx::Error> {
        let query = statement.query::<Sqlite>();
        Ok(query.fetch_optional(self).await?.is_some())
    }

    async fn lock_key(&mut self, _key: &str) -> Result<(), sqlx::Error> {
        Ok(())
    }
}

impl Tx for PgConnection {
    async fn execute(&mut self, statement: &Statement<'_>) -> Result<u64, sqlx::Error> {
        let query = statement.query::<Postgres>();
        Ok(query.execute(self).await?.rows_affected())
    }

    async fn exists(&mut self, statement: &Statement<'_>) -> Result<bool, sqlx::Error> {
        let query = statement.query::<Postgres>();
        Ok(query.fetch_optional(self).await?.is_some())
    }

    async fn lock_key(&mut self, key: &str) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(key)
            .execute(self)
            .await
            .map(drop)
    }
}
