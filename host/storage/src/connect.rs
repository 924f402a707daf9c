//! Choosing the engine from a URL and opening its pool, with the settings an
//! audit trail needs.

use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::{Engine, StorageError};

/// Default pool size. Every audit write is one short statement, so a few
/// connections keep up with many concurrent calls; 8 stays well inside
/// PostgreSQL's default `max_connections` (100) when several hosts share it.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 8;

/// Default wait for a pooled connection. A call's reply waits for its audit
/// row, so this bounds how long a call can hang on a sick database; at
/// start-up it is also how long `connect` retries a server that refuses
/// connections (one still starting, say).
pub const DEFAULT_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a SQLite statement waits for another connection's write lock
/// before failing with "database is locked". Writes are single-row inserts
/// (microseconds), so 5 s only runs out when something is badly stuck.
pub const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How to size and wait on the connection pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    /// Most connections the pool opens. An in-memory SQLite database always
    /// uses exactly one, since it lives only as long as its connection.
    pub max_connections: u32,
    /// Longest wait for a connection, at connect and for each operation.
    pub acquire_timeout: Duration,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            acquire_timeout: DEFAULT_ACQUIRE_TIMEOUT,
        }
    }
}

/// One pool per engine; the rest of the crate matches on it.
#[derive(Clone)]
pub(crate) enum Pools {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Pools {
    /// A connection of its own `LISTEN`ing on `channels` (PostgreSQL); `None`
    /// on SQLite, which has no channels. `operation` names a failure.
    pub(crate) async fn listen(
        &self,
        channels: &[&str],
        operation: &'static str,
    ) -> Result<Option<sqlx::postgres::PgListener>, StorageError> {
        let Pools::Postgres(pool) = self else {
            return Ok(None);
        };
        let mut listener = sqlx::postgres::PgListener::connect_with(pool)
            .await
            .map_err(StorageError::query(operation))?;
        listener
            .listen_all(channels.iter().copied())
            .await
            .map_err(StorageError::query(operation))?;
        Ok(Some(listener))
    }
}

/// Runs `$body` with `$pool` bound to whichever engine's pool `$pools` holds.
/// The body is compiled once per engine, so the two can never drift apart.
macro_rules! on_pool {
    ($pools:expr, $pool:ident => $body:expr) => {
        match $pools {
            $crate::connect::Pools::Sqlite($pool) => $body,
            $crate::connect::Pools::Postgres($pool) => $body,
        }
    };
}
pub(crate) use on_pool;

/// Runs `$sql` with `$bind`s on either engine; the number of rows it
/// changed. On SQLite it waits for the process's write turn first
/// ([`write_turn`]).
macro_rules! execute {
    ($pools:expr, $sql:expr $(, $bind:expr)* $(,)?) => {
        $crate::connect::on_pool!($pools, pool => {
            let _turn = $crate::connect::turn_for($pools, $sql).await;
            sqlx::query($sql)
                $(.bind($bind))*
                .execute(pool)
                .await
                .map(|done| done.rows_affected())
        })
    };
}
pub(crate) use execute;

/// Runs `$sql` with `$bind`s; the row it returns, if any, read by `$read`
/// (a closure over the engine's row type, compiled once per engine).
macro_rules! fetch_optional {
    ($pools:expr, $read:expr, $sql:expr $(, $bind:expr)* $(,)?) => {
        $crate::connect::on_pool!($pools, pool => {
            let _turn = $crate::connect::turn_for($pools, $sql).await;
            sqlx::query($sql)
                $(.bind($bind))*
                .fetch_optional(pool)
                .await
                .and_then(|row| row.as_ref().map($read).transpose())
        })
    };
}
pub(crate) use fetch_optional;

/// Runs `$sql` with `$bind`s; every row it returns, read by `$read`.
macro_rules! fetch_all {
    ($pools:expr, $read:expr, $sql:expr $(, $bind:expr)* $(,)?) => {
        $crate::connect::on_pool!($pools, pool => {
            let _turn = $crate::connect::turn_for($pools, $sql).await;
            sqlx::query($sql)
                $(.bind($bind))*
                .fetch_all(pool)
                .await
                .and_then(|rows| rows.iter().map($read).collect::<Result<Vec<_>, sqlx::Error>>())
        })
    };
}
pub(crate) use fetch_all;

/// The process's turns to write each SQLite database file: one async
/// lock per file, FIFO-fair, taken by every writer of this process (the
/// pools' statements and transactions, the audit writer, the
/// anchorer) before it asks SQLite for the write lock. SQLite has one
/// writer at a time per file; a writer that finds the lock taken waits in
/// SQLite's busy handler, which sleeps 1, 2, 5 … up to 100 ms between
/// tries whatever the holder does, so under steady writes one unlucky
/// writer waited hundreds of milliseconds and every call queued behind it
/// (BENCHMARKS part 20). Waiting here instead, a writer goes the moment the
/// one before it is done. Only another process (a `toolhost` command)
/// still meets the busy handler. (An in-memory database has a turn of its
/// own, and one connection, so it never waits for anyone else's.)
static WRITE_TURNS: std::sync::LazyLock<
    std::sync::Mutex<std::collections::HashMap<std::path::PathBuf, Arc<tokio::sync::Mutex<()>>>>,
> = std::sync::LazyLock::new(Default::default);

/// The turn lock of the SQLite file `options` opens.
pub(crate) fn turn_lock(options: &SqliteConnectOptions) -> Option<Arc<tokio::sync::Mutex<()>>> {
    let file = options.get_filename();
    // Keyed by the name as the store's URL gives it: every pool of a
    // store opens the file by the same name.
    let mut turns = WRITE_TURNS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(lock) = turns.get(file) {
        return Some(lock.clone());
    }
    Some(turns.entry(file.to_owned()).or_default().clone())
}

/// Waits for the process's turn to write `pool`'s file; held until the
/// returned guard drops (after the commit).
pub(crate) async fn write_turn(pool: &SqlitePool) -> Option<tokio::sync::OwnedMutexGuard<()>> {
    match turn_lock(pool.connect_options().as_ref()) {
        Some(lock) => Some(lock.lock_owned().await),
        None => None,
    }
}

/// The write turn of `pools`' file for a transaction that writes: SQLite
/// only (PostgreSQL's writers lock rows, not the database).
pub(crate) async fn transaction_turn(pools: &Pools) -> Option<tokio::sync::OwnedMutexGuard<()>> {
    match pools {
        Pools::Sqlite(pool) => write_turn(pool).await,
        Pools::Postgres(_) => None,
    }
}

/// The write turn for `sql` on `pools`: SQLite only, and only for a
/// statement that writes.
pub(crate) async fn turn_for(pools: &Pools, sql: &str) -> Option<tokio::sync::OwnedMutexGuard<()>> {
    match pools {
        Pools::Sqlite(pool) if writes(sql) => write_turn(pool).await,
        _ => None,
    }
}

/// Whether `sql` writes: it starts with `INSERT`, `UPDATE`, `DELETE` or
/// `REPLACE` (a `WITH` whose statement writes is not used here).
fn writes(sql: &str) -> bool {
    let head = sql
        .trim_start()
        .get(..7)
        .unwrap_or_default()
        .to_ascii_uppercase();
    ["INSERT", "UPDATE", "DELETE", "REPLACE"]
        .iter()
        .any(|w| head.starts_with(w))
}

/// The engine `url` selects by its scheme.
pub(crate) fn engine_of(url: &str) -> Result<Engine, StorageError> {
    if url.starts_with("sqlite:") {
        Ok(Engine::Sqlite)
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Engine::Postgres)
    } else {
        Err(StorageError::UnsupportedUrl {
            url: crate::error::redact(url),
        })
    }
}

/// Opens `engine`'s pool at `url` and checks one connection works.
pub(crate) async fn open(
    engine: Engine,
    url: &str,
    opts: &StoreOptions,
) -> Result<Pools, sqlx::Error> {
    Ok(match engine {
        Engine::Sqlite => Pools::Sqlite(open_sqlite(url, opts).await?),
        Engine::Postgres => Pools::Postgres(open_postgres(url, opts).await?),
    })
}

/// Every SQLite connection's options: the file (created if missing), in
/// WAL mode, with foreign keys, committing with `synchronous`.
fn sqlite_options(
    url: &str,
    synchronous: SqliteSynchronous,
) -> Result<SqliteConnectOptions, sqlx::Error> {
    Ok(url
        .parse::<SqliteConnectOptions>()?
        .create_if_missing(true)
        // WAL: readers (the CLI, `recent`) never block the writer.
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(synchronous)
        // Per connection in SQLite: deleting an OAuth client cascades to its
        // grants, codes and tokens only with this on (see src/auth.rs).
        .foreign_keys(true)
        .busy_timeout(SQLITE_BUSY_TIMEOUT))
}

async fn open_sqlite(url: &str, opts: &StoreOptions) -> Result<SqlitePool, sqlx::Error> {
    // FULL, not NORMAL: in WAL mode NORMAL skips the fsync at commit, so a
    // power cut or OS crash can lose the last commits. What a caller is
    // told is stored must then survive, so every commit is synced (the
    // audit writer syncs its own, `src/group.rs`).
    let connect = sqlite_options(url, SqliteSynchronous::Full)?;
    let pool = SqlitePoolOptions::new().acquire_timeout(opts.acquire_timeout);
    let pool = if is_in_memory(url) {
        // An in-memory database dies with its last connection: keep exactly
        // one, forever (this also avoids shared-cache table locks).
        pool.max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
    } else {
        pool.max_connections(opts.max_connections)
    };
    pool.connect_with(connect).await
}

async fn open_postgres(url: &str, opts: &StoreOptions) -> Result<PgPool, sqlx::Error> {
    // PostgreSQL's default `synchronous_commit = on` already flushes the WAL
    // at every commit: the same guarantee as SQLite's FULL, nothing to set.
    // No TLS feature is compiled in: a URL asking for `sslmode=require` fails.
    let connect = url.parse::<PgConnectOptions>()?;
    PgPoolOptions::new()
        .max_connections(opts.max_connections)
        .acquire_timeout(opts.acquire_timeout)
        .connect_with(connect)
        .await
}

/// The audit writer's own connection (`src/group.rs`), for a SQLite file:
/// its commits sync the write-ahead log (`synchronous = FULL`), as the
/// pool's do. `None` for PostgreSQL and an in-memory database.
pub(crate) fn audit_writer(url: &str) -> Result<Option<SqliteConnectOptions>, sqlx::Error> {
    if !url.starts_with("sqlite:") || is_in_memory(url) {
        return Ok(None);
    }
    sqlite_options(url, SqliteSynchronous::Full).map(Some)
}

/// Most connections of the counters' pool: a report is one short statement.
const COUNTER_CONNECTIONS: u32 = 2;

/// A second, small pool for the rate-limit counters and the single-use JWT
/// records (DPoP proofs, client assertions), whose commits do not wait for
/// the disk: SQLite's `synchronous = NORMAL` (in WAL mode a commit is not
/// fsynced; a power cut may lose the last writes, a killed process does
/// not) and PostgreSQL's `synchronous_commit = off`. A lost report lets its
/// requests through again elsewhere, a lost record lets its JWT be replayed
/// until it expires; a synced write per request halved throughput
/// (BENCHMARKS.md part 4). The audit keeps the main pool and its syncs. An
/// in-memory SQLite database has one connection, shared.
pub(crate) async fn open_counters(
    main: &Pools,
    url: &str,
    opts: &StoreOptions,
) -> Result<Pools, sqlx::Error> {
    let pools = match main {
        Pools::Sqlite(pool) if is_in_memory(url) => Pools::Sqlite(pool.clone()),
        Pools::Sqlite(_) => {
            let connect = sqlite_options(url, SqliteSynchronous::Normal)?;
            let pool = SqlitePoolOptions::new()
                .acquire_timeout(opts.acquire_timeout)
                .max_connections(COUNTER_CONNECTIONS)
                .connect_with(connect)
                .await?;
            Pools::Sqlite(pool)
        }
        Pools::Postgres(_) => {
            let connect = url
                .parse::<PgConnectOptions>()?
                .options([("synchronous_commit", "off")]);
            let pool = PgPoolOptions::new()
                .max_connections(COUNTER_CONNECTIONS)
                .acquire_timeout(opts.acquire_timeout)
                .connect_with(connect)
                .await?;
            Pools::Postgres(pool)
        }
    };
    Ok(pools)
}

/// Whether a SQLite URL names an in-memory database (sqlx keeps that fact
/// private once parsed).
fn is_in_memory(url: &str) -> bool {
    url.contains(":memory:") || url.contains("mode=memory")
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_writing_statements_take_a_turn() {
        for sql in [
            "INSERT INTO a VALUES (1)",
            "  update a SET b = 1",
            "DELETE FROM a",
            "REPLACE INTO a VALUES (1)",
        ] {
            assert!(writes(sql), "{sql}");
        }
        for sql in ["SELECT 1", "PRAGMA synchronous", "", "UPD"] {
            assert!(!writes(sql), "{sql}");
        }
    }

    #[tokio::test]
    async fn the_pools_of_one_file_share_a_turn_and_a_memory_database_takes_none() {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("t.db").display());
        let main = sqlite_options(&url, SqliteSynchronous::Full).expect("options");
        let counters = sqlite_options(&url, SqliteSynchronous::Normal).expect("options");
        let (a, b) = (
            turn_lock(&main).expect("a file"),
            turn_lock(&counters).expect("a file"),
        );
        assert!(Arc::ptr_eq(&a, &b));
        let other = format!("sqlite://{}?mode=rwc", dir.path().join("u.db").display());
        let other = turn_lock(&sqlite_options(&other, SqliteSynchronous::Full).expect("options"));
        assert!(!Arc::ptr_eq(&a, &other.expect("a file")));
        // A turn is held until its guard drops; the next writer waits for it.
        let held = a.clone().lock_owned().await;
        assert!(b.try_lock().is_err());
        drop(held);
        assert!(b.try_lock().is_ok());
    }

    use super::*;
    use sqlx::ConnectOptions;

    /// `PRAGMA synchronous` of a connection of `pool`: 1 NORMAL, 2 FULL.
    async fn synchronous(pool: &Pools) -> i64 {
        let Pools::Sqlite(pool) = pool else {
            panic!("a SQLite pool")
        };
        sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(pool)
            .await
            .expect("pragma")
    }

    #[tokio::test]
    async fn only_the_counters_commit_without_a_sync() {
        let dir = tempfile::tempdir().expect("temp");
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("s.db").display());
        let opts = StoreOptions::default();
        let main = open(Engine::Sqlite, &url, &opts).await.expect("main pool");
        let counters = open_counters(&main, &url, &opts).await.expect("counters");
        assert_eq!(
            synchronous(&main).await,
            2,
            "the audit's commits are synced"
        );
        assert_eq!(synchronous(&counters).await, 1, "the counters' are not");
    }

    #[tokio::test]
    async fn the_audit_writer_of_a_sqlite_file_syncs_each_commit() {
        let dir = tempfile::tempdir().expect("temp");
        let file = dir.path().join("s.db");
        let url = format!("sqlite://{}?mode=rwc", file.display());
        let own = audit_writer(&url).expect("parses").expect("a file");
        let mut conn = own.connect().await.expect("connects");
        let level: i64 = sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(&mut conn)
            .await
            .expect("pragma");
        assert_eq!(
            level, 2,
            "FULL: no caller answered before the log is synced"
        );
        for url in ["sqlite::memory:", "postgres://u@h/db"] {
            assert!(audit_writer(url).expect("parses").is_none(), "{url}");
        }
    }

    #[test]
    fn the_scheme_selects_the_engine() {
        let cases = [
            ("sqlite://audit.db?mode=rwc", Some(Engine::Sqlite)),
            ("sqlite::memory:", Some(Engine::Sqlite)),
            ("postgres://u@h/db", Some(Engine::Postgres)),
            ("postgresql://u@h/db", Some(Engine::Postgres)),
            ("mysql://u@h/db", None),
            ("audit.db", None),
        ];
        for (url, want) in cases {
            assert_eq!(engine_of(url).ok(), want, "{url}");
        }
    }
}
