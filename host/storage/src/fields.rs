//! [`Fields`]: typed column access by name on a row of either engine, so
//! each room reads its rows with one function instead of one per engine.

use sqlx::{ColumnIndex, Decode, Row, Type};

/// Typed column access by name, for a row of either engine.
pub(crate) trait Fields {
    fn text(&self, column: &'static str) -> Result<String, sqlx::Error>;
    fn maybe_text(&self, column: &'static str) -> Result<Option<String>, sqlx::Error>;
    fn int(&self, column: &'static str) -> Result<i64, sqlx::Error>;
    fn maybe_int(&self, column: &'static str) -> Result<Option<i64>, sqlx::Error>;
    fn flag(&self, column: &'static str) -> Result<bool, sqlx::Error>;
    fn maybe_flag(&self, column: &'static str) -> Result<Option<bool>, sqlx::Error>;
    fn bytes(&self, column: &'static str) -> Result<Vec<u8>, sqlx::Error>;
}

impl<R> Fields for R
where
    R: Row,
    &'static str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> bool: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Vec<u8>: Decode<'r, R::Database> + Type<R::Database>,
{
    fn text(&self, column: &'static str) -> Result<String, sqlx::Error> {
        self.try_get(column)
    }
    fn maybe_text(&self, column: &'static str) -> Result<Option<String>, sqlx::Error> {
        self.try_get(column)
    }
    fn int(&self, column: &'static str) -> Result<i64, sqlx::Error> {
        self.try_get(column)
    }
    fn maybe_int(&self, column: &'static str) -> Result<Option<i64>, sqlx::Error> {
        self.try_get(column)
    }
    fn flag(&self, column: &'static str) -> Result<bool, sqlx::Error> {
        self.try_get(column)
    }
    fn maybe_flag(&self, column: &'static str) -> Result<Option<bool>, sqlx::Error> {
        self.try_get(column)
    }
    fn bytes(&self, column: &'static str) -> Result<Vec<u8>, sqlx::Error> {
        self.try_get(column)
    }
}

/// A decode error for a stored value this build cannot read (written by
/// hand, or by a build with other words), naming the table, the row's key
/// and the column: guessing would be worse.
pub(crate) fn corrupt(
    table: &str,
    key: &str,
    column: &str,
    value: &str,
    problem: &str,
) -> sqlx::Error {
    sqlx::Error::Decode(format!("{table} row {key:?}: {column} holds {value:?}: {problem}").into())
}
