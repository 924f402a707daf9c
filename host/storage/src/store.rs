//! [`Store`]: one handle over either engine, and the audit trail's SQL.

use std::fmt;

use toolhost_audit::{AuditError, AuditEvent, AuditSink, SinkFuture};

use crate::connect::{self, Pools, StoreOptions, on_pool};
use crate::error::redact;
use crate::group::GroupCommit;
use crate::record::{AuditRecord, Columns, Stored};
use crate::{Engine, StorageError, migrations};

// One SQL text serves both engines: SQLite accepts PostgreSQL's `$n`
// placeholders, and every type used (TEXT, 64-bit integers) maps the same.
const INSERT_AUDIT: &str = "INSERT INTO audit (call_id, at, principal, tenant, tool, plugin, \
     plugin_digest, argument_digest, outcome, error_code, duration_us) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id";
const SELECT_RECENT: &str = "SELECT id, call_id, at, principal, tenant, tool, plugin, \
     plugin_digest, argument_digest, outcome, error_code, duration_us \
     FROM audit ORDER BY id DESC LIMIT $1";
const COUNT_AUDIT: &str = "SELECT COUNT(*) FROM audit";

/// The host's database: a pool over SQLite or PostgreSQL, migrated at
/// connect. Cheap to clone (clones share the pool).
#[derive(Clone)]
pub struct Store {
    pub(crate) pools: Pools,
    audit: GroupCommit,
}

impl Store {
    /// Opens the database `url` names and applies any pending migrations,
    /// with [`StoreOptions::default`].
    ///
    /// - `sqlite://path/to/audit.db?mode=rwc`, `sqlite:audit.db`: one file,
    ///   created if missing, in WAL mode with fully synced commits.
    /// - `sqlite::memory:`: a private database that ends with the store.
    /// - `postgres://user@host:5432/db` (or `postgresql://`): a server;
    ///   URL parameters such as `options[search_path]=schema` pass through.
    ///
    /// Fails with [`StorageError::UnsupportedUrl`] for any other scheme,
    /// [`StorageError::Connect`] when no connection opens within the acquire
    /// timeout, and [`StorageError::Migrate`] when the database holds
    /// migrations this build does not know or whose text changed.
    pub async fn connect(url: &str) -> Result<Store, StorageError> {
        Store::connect_with(url, &StoreOptions::default()).await
    }

    /// [`Store::connect`] with an explicit pool size and timeout.
    pub async fn connect_with(url: &str, opts: &StoreOptions) -> Result<Store, StorageError> {
        let engine = connect::engine_of(url)?;
        let pools = connect::open(engine, url, opts)
            .await
            .map_err(|e| StorageError::Connect {
                engine,
                url: redact(url),
                message: e.to_string(),
            })?;
        let migrate = |message| StorageError::Migrate {
            engine,
            url: redact(url),
            message,
        };
        let migrator = migrations::migrator(engine).await.map_err(migrate)?;
        on_pool!(&pools, pool => migrator.run(pool).await).map_err(|e| migrate(e.to_string()))?;
        let audit = GroupCommit::start(pools.clone());
        Ok(Store { pools, audit })
    }

    /// Which engine this store talks to.
    pub fn engine(&self) -> Engine {
        match self.pools {
            Pools::Sqlite(_) => Engine::Sqlite,
            Pools::Postgres(_) => Engine::Postgres,
        }
    }

    /// Records one event and returns its row id. The insert is a single
    /// statement: it writes the whole row or nothing. A call id already
    /// recorded fails with [`StorageError::DuplicateCallId`].
    pub async fn append(&self, event: &AuditEvent) -> Result<i64, StorageError> {
        let c = Columns::of(event);
        let inserted = on_pool!(&self.pools, pool => {
            sqlx::query_scalar(INSERT_AUDIT)
                .bind(c.call_id)
                .bind(c.at_ms)
                .bind(c.principal)
                .bind(c.tenant)
                .bind(c.tool)
                .bind(c.plugin)
                .bind(c.plugin_digest.as_deref())
                .bind(c.argument_digest.as_str())
                .bind(c.outcome)
                .bind(c.error_code)
                .bind(c.duration_us)
                .fetch_one(pool)
                .await
        });
        inserted.map_err(|e| match e.as_database_error() {
            Some(db) if db.is_unique_violation() => StorageError::DuplicateCallId {
                call_id: event.call_id.clone(),
            },
            _ => StorageError::query("insert audit row")(e),
        })
    }

    /// The `limit` most recently recorded rows, newest first (by row id,
    /// which is recording order; `event.at` is when each call *started*, so
    /// under concurrency it can disagree slightly).
    pub async fn recent(&self, limit: u32) -> Result<Vec<AuditRecord>, StorageError> {
        on_pool!(&self.pools, pool => {
            let rows = sqlx::query(SELECT_RECENT)
                .bind(i64::from(limit))
                .fetch_all(pool)
                .await
                .map_err(StorageError::query("select recent audit rows"))?;
            rows.iter()
                .map(|row| Stored::read(row).map_err(StorageError::query("read audit row")))
                .map(|stored| stored?.into_record())
                .collect()
        })
    }

    /// How many audit rows there are.
    pub async fn count(&self) -> Result<u64, StorageError> {
        let n: i64 = on_pool!(&self.pools, pool => {
            sqlx::query_scalar(COUNT_AUDIT).fetch_one(pool).await
        })
        .map_err(StorageError::query("count audit rows"))?;
        Ok(u64::try_from(n).expect("COUNT(*) is never negative"))
    }

    /// Readiness: one round trip (`SELECT 1`) on a pooled connection.
    pub async fn ping(&self) -> Result<(), StorageError> {
        on_pool!(&self.pools, pool => sqlx::query("SELECT 1").execute(pool).await.map(drop))
            .map_err(StorageError::query("ping"))
    }

    /// Closes every connection, waiting for operations in flight. Later
    /// operations fail. Call it at shutdown so SQLite checkpoints its WAL.
    pub async fn close(&self) {
        on_pool!(&self.pools, pool => pool.close().await)
    }
}

impl AuditSink for Store {
    /// Records `event` through group commit (see [`crate::group`]): it
    /// returns once the row is committed, sharing the commit with the rows
    /// of concurrent calls.
    fn record<'a>(&'a self, event: &'a AuditEvent) -> SinkFuture<'a> {
        Box::pin(async move {
            self.audit
                .record(event)
                .await
                .map_err(|e| AuditError(e.to_string()))
        })
    }
}

/// The columns of an audit row, in `INSERT` order.
const AUDIT_COLUMNS: &str = "INSERT INTO audit (call_id, at, principal, tenant, tool, plugin, \
     plugin_digest, argument_digest, outcome, error_code, duration_us) ";

/// Inserts `events` with one multi-row `INSERT` (one statement, so all of
/// them or none, and one commit).
pub(crate) async fn insert_all(pools: &Pools, events: &[&AuditEvent]) -> Result<(), StorageError> {
    let columns: Vec<Columns<'_>> = events.iter().map(|e| Columns::of(e)).collect();
    let inserted = on_pool!(pools, pool => {
        let mut insert = sqlx::QueryBuilder::new(AUDIT_COLUMNS);
        insert.push_values(&columns, |mut row, c| {
            row.push_bind(c.call_id)
                .push_bind(c.at_ms)
                .push_bind(c.principal)
                .push_bind(c.tenant)
                .push_bind(c.tool)
                .push_bind(c.plugin)
                .push_bind(c.plugin_digest.as_deref())
                .push_bind(c.argument_digest.as_str())
                .push_bind(c.outcome)
                .push_bind(c.error_code)
                .push_bind(c.duration_us);
        });
        insert.build().execute(pool).await.map(drop)
    });
    inserted.map_err(|e| match (e.as_database_error(), events) {
        (Some(db), [one]) if db.is_unique_violation() => StorageError::DuplicateCallId {
            call_id: one.call_id.clone(),
        },
        _ => StorageError::query("insert audit rows")(e),
    })
}

impl fmt::Debug for Store {
    // Not derived: the pools' Debug is pool statistics; a log needs the engine.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("engine", &self.engine())
            .finish_non_exhaustive()
    }
}
