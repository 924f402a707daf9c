//! The condition of a keyset page ordered by a time and an id: the rows
//! past a cursor `(at, id)`, spelled so that both engines seek the index
//! on the time and compare ids only within one instant.

/// Which way from the cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Past {
    /// Rows before the cursor: an earlier time, or the same and a smaller id.
    Earlier,
    /// Rows after the cursor: a later time, or the same and a greater id.
    Later,
}

/// Pushes ` AND` the rows of columns `(time, id)` that lie `past` the
/// cursor `(at, id)`.
pub(crate) fn push_past<DB>(
    sql: &mut sqlx::QueryBuilder<DB>,
    (time, id_column): (&str, &str),
    (at, id): (i64, &str),
    past: Past,
) where
    DB: sqlx::Database,
    for<'t> String: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> i64: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
{
    let (eq, strict) = match past {
        Past::Earlier => ("<=", "<"),
        Past::Later => (">=", ">"),
    };
    sql.push(format!(" AND {time} {eq} "))
        .push_bind(at)
        .push(format!(" AND ({time} {strict} "))
        .push_bind(at)
        .push(format!(" OR {id_column} {strict} "))
        .push_bind(id.to_owned())
        .push(")");
}
