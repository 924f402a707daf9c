//! A page of runs ([`RunQuery`]): its filters and cursor as one `SELECT`,
//! on either engine. The plugin and tool are read from the run's `spec`
//! (its JSON), each engine with its own JSON operator; the rest is the
//! same text. A page is an index walk of `runs_tenant_created` (or
//! `runs_principal_created` for one principal's runs) from the cursor, in
//! the listing's order, the filters applied as it goes.

use toolhost_runs::RunQuery;

use crate::Engine;
use crate::keyset::{Past, push_past};

/// The spec's tool and plugin on `engine`.
fn spec_fields(engine: Engine) -> (&'static str, &'static str) {
    match engine {
        Engine::Sqlite => (
            "json_extract(spec, '$.tool')",
            "json_extract(spec, '$.revision.plugin')",
        ),
        Engine::Postgres => (
            "(spec::jsonb ->> 'tool')",
            "(spec::jsonb #>> '{revision,plugin}')",
        ),
    }
}

/// `text` as a `LIKE` pattern matching any value containing it, ignoring
/// case (`lower` on both sides): `%` and `_` match themselves.
fn containing(text: &str) -> String {
    let mut pattern = String::from("%");
    for c in text.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// `select` (the run columns `FROM runs`, perhaps after `EXPLAIN`) with
/// `query`'s filters, cursor, order and limit bound, for `engine`.
pub(super) fn paged<DB>(query: &RunQuery, select: &str, engine: Engine) -> sqlx::QueryBuilder<DB>
where
    DB: sqlx::Database,
    <DB as sqlx::Database>::Arguments: Default,
    for<'t> String: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> i64: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
{
    let mut sql = sqlx::QueryBuilder::new(select.to_owned());
    sql.push(" WHERE tenant = ").push_bind(query.tenant.clone());
    if let Some(principal) = &query.principal {
        sql.push(" AND principal = ").push_bind(principal.clone());
    }
    if let Some(state) = query.state {
        sql.push(" AND state = ")
            .push_bind(state.as_str().to_owned());
    }
    let (tool, plugin) = spec_fields(engine);
    for (field, wanted) in [(tool, &query.tool), (plugin, &query.plugin)] {
        if let Some(text) = wanted.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            sql.push(format!(" AND lower({field}) LIKE "))
                .push_bind(containing(text))
                .push(" ESCAPE '\\'");
        }
    }
    let columns = ("created_at", "id");
    if let Some(before) = &query.before {
        let cursor = (before.created_at_ms, before.id.as_str());
        push_past(&mut sql, columns, cursor, Past::Earlier);
    }
    let order = match &query.after {
        Some(after) => {
            let cursor = (after.created_at_ms, after.id.as_str());
            push_past(&mut sql, columns, cursor, Past::Later);
            " ORDER BY created_at ASC, id ASC LIMIT "
        }
        None => " ORDER BY created_at DESC, id DESC LIMIT ",
    };
    sql.push(order).push_bind(i64::from(query.limit));
    sql
}

#[cfg(test)]
mod tests {
    use super::containing;

    #[test]
    fn a_filters_text_is_matched_literally_anywhere_ignoring_case() {
        assert_eq!(containing("Explore"), "%explore%");
        assert_eq!(containing("100%_a\\b"), "%100\\%\\_a\\\\b%");
    }
}
