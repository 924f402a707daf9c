//! [`Store`]: one handle over either engine, and the audit trail's SQL.

use std::fmt;
use std::time::SystemTime;

use toolhost_audit::{
    AuditError, AuditEvent, AuditSink, ChainBreak, ChainSummary, Effect, Outcome, SinkFuture,
};

use crate::chain::{self, select_audit};
use crate::connect::{self, Pools, StoreOptions, on_pool};
use crate::error::redact;
use crate::group::GroupCommit;
use crate::record::{AuditRecord, Stored, unix_millis};
use crate::{Engine, StorageError, explain, migrations};
use toolhost_audit::chain::TenantSummary;

// One SQL text serves both engines: SQLite accepts PostgreSQL's `$n`
// placeholders, and every type used (TEXT, 64-bit integers) maps the same.
const COUNT_AUDIT: &str = "SELECT COUNT(*) FROM audit";

/// The row id of call `$1`.
const SELECT_ID: &str = "SELECT id FROM audit WHERE call_id = $1";

/// The host's database: a pool over SQLite or PostgreSQL, migrated at
/// connect. Cheap to clone (clones share the pool).
#[derive(Clone)]
pub struct Store {
    pub(crate) pools: Pools,
    /// The rate-limit counters' own pool, committing without a sync
    /// ([`connect::open_counters`]).
    pub(crate) counters: Pools,
    audit: GroupCommit,
    /// The grant and role reads of every request, from memory
    /// (`src/live.rs`).
    pub(crate) live: std::sync::Arc<crate::live::LiveViews>,
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
        let unconnected = |e: sqlx::Error| StorageError::Connect {
            engine,
            url: redact(url),
            message: e.to_string(),
        };
        let pools = connect::open(engine, url, opts)
            .await
            .map_err(unconnected)?;
        let migrate = |message| StorageError::Migrate {
            engine,
            url: redact(url),
            message,
        };
        let migrator = migrations::migrator(engine).await.map_err(migrate)?;
        on_pool!(&pools, pool => migrator.run(pool).await).map_err(|e| migrate(e.to_string()))?;
        let counters = connect::open_counters(&pools, url, opts)
            .await
            .map_err(unconnected)?;
        let own = connect::audit_writer(url).map_err(unconnected)?;
        let audit = GroupCommit::start(pools.clone(), own);
        let live = crate::live::LiveViews::start(&pools).await;
        Ok(Store {
            pools,
            counters,
            audit,
            live,
        })
    }

    /// Which engine this store talks to.
    pub fn engine(&self) -> Engine {
        match self.pools {
            Pools::Sqlite(_) => Engine::Sqlite,
            Pools::Postgres(_) => Engine::Postgres,
        }
    }

    /// Records one event through the audit writers (as
    /// [`AuditSink::record`] does), chained to the newest row of a writer's
    /// chain, and returns its row id. It writes the whole row or nothing. A
    /// call id already recorded fails with [`StorageError::DuplicateCallId`].
    pub async fn append(&self, event: &AuditEvent) -> Result<i64, StorageError> {
        self.audit.record(event, &[]).await?;
        on_pool!(&self.pools, pool => sqlx::query_scalar(SELECT_ID)
            .bind(&event.call_id)
            .fetch_one(pool)
            .await)
        .map_err(StorageError::query("read an appended audit row's id"))
    }

    /// Anchors the audit writers' chains now, as they are anchored about
    /// once a second ([`crate::chain`]): after it returns, a walk holds
    /// every row committed before it to its anchor.
    pub async fn anchor_audit(&self) -> Result<(), StorageError> {
        self.audit.anchor().await
    }

    /// The `limit` most recently recorded rows, newest first (by row id,
    /// which is recording order; `event.at` is when each call *started*, so
    /// under concurrency it can disagree slightly).
    pub async fn recent(&self, limit: u32) -> Result<Vec<AuditRecord>, StorageError> {
        self.search(&AuditQuery {
            limit,
            ..AuditQuery::default()
        })
        .await
    }

    /// The newest rows matching every filter `query` sets, newest first, at
    /// most `query.limit` of them; with a cursor, the page beside it (see
    /// [`AuditQuery::before`] and [`AuditQuery::after`]). The filters are
    /// applied as the store walks the index `audit_tenant_id` (or the
    /// table's id order without a tenant), so a page costs the same
    /// however many rows precede it. Fails with [`StorageError::Corrupt`]
    /// on a row this build cannot read back.
    pub async fn search(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>, StorageError> {
        let rows: Vec<Stored> = on_pool!(&self.pools, pool => {
            searched(query, select_audit!("WHERE 1 = 1"))
                .build()
                .fetch_all(pool)
                .await
                .and_then(|rows| rows.iter().map(Stored::read).collect())
        })
        .map_err(StorageError::query("search audit rows"))?;
        let mut found = rows
            .into_iter()
            .map(Stored::into_record)
            .collect::<Result<Vec<_>, _>>()?;
        if query.after.is_some() {
            // Read oldest first from the cursor; shown newest first.
            found.reverse();
        }
        Ok(found)
    }

    /// The engine's plan for [`search`](Self::search)'s query, one line
    /// per step (SQLite's `EXPLAIN QUERY PLAN` details, PostgreSQL's
    /// `EXPLAIN` text): what a test, or an operator asking why a page is
    /// slow, reads to see which index serves it.
    pub async fn explain_search(&self, query: &AuditQuery) -> Result<Vec<String>, StorageError> {
        use sqlx::Row as _;
        let engine = self.engine();
        let sql = format!(
            "{}{}",
            explain::prefix(engine),
            select_audit!("WHERE 1 = 1")
        );
        on_pool!(&self.pools, pool => {
            searched(query, &sql)
                .build()
                .fetch_all(pool)
                .await
                .and_then(|rows| rows.iter().map(|r| r.try_get(explain::column(engine))).collect())
        })
        .map_err(StorageError::query("explain an audit search"))
    }

    /// Walks the whole audit trail and recomputes its hashes: the anchor
    /// chain, the legacy chain (rows from before migration 0023) in id
    /// order, then every writer's chain in place order, each anchored place
    /// against its anchor. `Ok(Ok(summary))`: intact (rows from before the
    /// chain counted apart); `Ok(Err(break))`: the first row (or anchor)
    /// that does not fit, and why; `Err`: the rows could not be read. Reads
    /// a page at a time, so it runs beside a serving host on a table of any
    /// size.
    pub async fn verify_chain(&self) -> Result<Result<ChainSummary, ChainBreak>, StorageError> {
        chain::verify(&self.pools).await
    }

    /// Walks `tenant`'s audit rows in id order: each row's hash, and its
    /// links to the rows beside it in its chain, whoever's they are
    /// (their hashes only). What a tenant may verify of the chain without
    /// seeing another tenant's rows or anything host-wide; the whole walk
    /// is [`verify_chain`](Self::verify_chain). `Ok(Err(break))`: the
    /// first of the tenant's rows that does not fit.
    pub async fn verify_tenant_chain(
        &self,
        tenant: &str,
    ) -> Result<Result<TenantSummary, ChainBreak>, StorageError> {
        chain::verify_tenant(&self.pools, tenant).await
    }

    /// Writes a segment of the audit trail to `out` as export lines
    /// (`toolhost_audit::export`): every chain with the anchors, or one
    /// tenant's rows with their neighbours' hashes, after anchor
    /// `request.from_anchor` up to the newest anchor. A page at a time:
    /// memory is bounded whatever the trail's size.
    pub async fn export_audit(
        &self,
        request: &crate::ExportRequest,
        out: &mut dyn FnMut(&toolhost_audit::export::ExportLine) -> std::io::Result<()>,
    ) -> Result<(), crate::ExportError> {
        chain::export(&self.pools, request, out).await
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

    /// How many connections each pool holds now, and how many of those
    /// are idle: for `/metrics`, and for a soak to see they stay bounded.
    pub fn pool_stats(&self) -> PoolStats {
        let (open, idle) = on_pool!(&self.pools, pool => (pool.size(), pool.num_idle()));
        let (counters_open, counters_idle) =
            on_pool!(&self.counters, pool => (pool.size(), pool.num_idle()));
        PoolStats {
            open,
            idle,
            counters_open,
            counters_idle,
        }
    }

    /// Closes every connection, waiting for operations in flight. Later
    /// operations fail. Call it at shutdown so SQLite checkpoints its WAL.
    pub async fn close(&self) {
        if let Err(e) = self.audit.anchor().await {
            tracing::warn!(error = %e, "anchoring the audit chains at close failed");
        }
        on_pool!(&self.counters, pool => pool.close().await);
        on_pool!(&self.pools, pool => pool.close().await)
    }
}

impl AuditSink for Store {
    /// Records `event` through group commit (see [`crate::group`]): it
    /// returns once the row is committed, sharing the commit with the rows
    /// of concurrent calls.
    /// `effects` are applied in the row's transaction (`src/effects.rs`).
    fn record_with<'a>(&'a self, event: &'a AuditEvent, effects: &'a [Effect]) -> SinkFuture<'a> {
        Box::pin(async move {
            self.audit
                .record(event, effects)
                .await
                .map_err(|e| match e {
                    StorageError::Unavailable(down) => AuditError::Unavailable(down),
                    StorageError::EffectLost { effect } => AuditError::Lost { effect },
                    StorageError::DuplicateCallId { call_id } => {
                        AuditError::DuplicateCallId { call_id }
                    }
                    other => AuditError::Failed(other.to_string()),
                })?;
            // A change to people changes what the live views hold: the
            // next request on this host sees it (`src/live.rs`).
            if effects.iter().any(|e| matches!(e, Effect::People(_))) {
                self.live.refresh(&self.pools).await;
            }
            Ok(())
        })
    }
}

/// `select` (the audit columns and `WHERE 1 = 1`, perhaps after
/// `EXPLAIN`) with `query`'s filters, cursor, order and limit bound.
fn searched<DB>(query: &AuditQuery, select: &str) -> sqlx::QueryBuilder<DB>
where
    DB: sqlx::Database,
    <DB as sqlx::Database>::Arguments: Default,
    for<'t> &'t str: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> i64: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
{
    let mut sql = sqlx::QueryBuilder::new(select.to_owned());
    let text = [
        (" AND tenant = ", query.tenant.as_deref()),
        (" AND principal = ", query.principal.as_deref()),
        (" AND tool = ", query.tool.as_deref()),
        (
            " AND outcome = ",
            query.outcome.as_ref().map(Outcome::as_str),
        ),
        (" AND call_id = ", query.call_id.as_deref()),
        (" AND client_id = ", query.client_id.as_deref()),
    ];
    for (clause, value) in text {
        if let Some(value) = value {
            sql.push(clause).push_bind(value);
        }
    }
    if let Some(since) = query.since.map(unix_millis) {
        sql.push(" AND at >= ").push_bind(since);
    }
    if let Some(until) = query.until.map(unix_millis) {
        sql.push(" AND at < ").push_bind(until);
    }
    if let Some(before) = query.before {
        sql.push(" AND id < ").push_bind(before);
    }
    // `after` pages toward newer rows: read oldest first from the cursor.
    let order = match query.after {
        Some(after) => {
            sql.push(" AND id > ").push_bind(after);
            " ORDER BY id ASC LIMIT "
        }
        None => " ORDER BY id DESC LIMIT ",
    };
    sql.push(order).push_bind(i64::from(query.limit));
    sql
}

/// Which rows [`Store::search`] returns: those matching every filter that
/// is set. The default sets none and returns the newest 50 rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditQuery {
    /// Only this tenant's calls.
    pub tenant: Option<String>,
    /// Only this principal's calls (the opaque subject id).
    pub principal: Option<String>,
    /// Only calls of this tool (as called, known or not).
    pub tool: Option<String>,
    /// Only calls that ended so.
    pub outcome: Option<Outcome>,
    /// Only calls that started at or after this instant (to the millisecond).
    pub since: Option<SystemTime>,
    /// Only calls that started before this instant (to the millisecond).
    pub until: Option<SystemTime>,
    /// Only the row of this call id.
    pub call_id: Option<String>,
    /// Only calls made through this OAuth client (`toolhost-console` for
    /// the admin console's).
    pub client_id: Option<String>,
    /// Only rows older than this row id: the next page toward the oldest,
    /// from the last row of the page before (a keyset cursor: the store
    /// seeks to it in the index, never counts the rows it skips).
    pub before: Option<i64>,
    /// Only rows newer than this row id, the `limit` nearest it: the page
    /// before, toward the newest, from the first row of the page shown.
    /// Still returned newest first. With `before` too, rows between both.
    pub after: Option<i64>,
    /// At most this many rows, the newest (with `after`, the nearest it).
    pub limit: u32,
}

impl Default for AuditQuery {
    fn default() -> Self {
        AuditQuery {
            tenant: None,
            principal: None,
            tool: None,
            outcome: None,
            since: None,
            until: None,
            call_id: None,
            client_id: None,
            before: None,
            after: None,
            limit: 50,
        }
    }
}

impl fmt::Debug for Store {
    // Not derived: the pools' Debug is pool statistics; a log needs the engine.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("engine", &self.engine())
            .finish_non_exhaustive()
    }
}

/// What [`Store::pool_stats`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStats {
    /// Connections of the main pool.
    pub open: u32,
    /// Of those, idle.
    pub idle: usize,
    /// Connections of the rate-limit counters' pool.
    pub counters_open: u32,
    /// Of those, idle.
    pub counters_idle: usize,
}
