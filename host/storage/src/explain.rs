//! Query plans: how each engine says which indexes serve a query, for
//! the lists that page through many rows (the console's audit and runs
//! pages). A test reads them to hold those lists to an index on both
//! engines; an operator can read them to see why a page is slow.

use crate::Engine;

/// What goes before a query to ask `engine` for its plan instead of its
/// rows: SQLite's `EXPLAIN QUERY PLAN` (a row per step), PostgreSQL's
/// `EXPLAIN` (a line of text per row).
pub(crate) fn prefix(engine: Engine) -> &'static str {
    match engine {
        Engine::Sqlite => "EXPLAIN QUERY PLAN ",
        Engine::Postgres => "EXPLAIN ",
    }
}

/// The column of a plan's row that says what the step does: SQLite's
/// `detail` (after `id`, `parent` and `notused`), PostgreSQL's only one.
pub(crate) fn column(engine: Engine) -> usize {
    match engine {
        Engine::Sqlite => 3,
        Engine::Postgres => 0,
    }
}
