//! [`RunStore`] for [`Store`]: the exploration runs' durable queue, each
//! operation one statement from `sql.rs` on either engine (two for a cancel
//! that finds nothing to change), its rows read back by `rows.rs`. Runs are
//! queued and settled as [`toolhost_audit::Effect::Run`]s, with their audit
//! row (`src/effects.rs`).
//!
//! The database decides every race, never a read followed by a write:
//!
//! - `claim` is one conditional `UPDATE … WHERE id = (SELECT … LIMIT 1)
//!   RETURNING`. On PostgreSQL the candidate is locked `FOR UPDATE SKIP
//!   LOCKED`, so concurrent claimers on any replica take different runs
//!   without waiting for each other; a candidate another claimer committed
//!   meanwhile is re-checked and skipped. SQLite runs one write at a time,
//!   and the claim is a single statement, so it is atomic as it stands.
//! - Every later write of an attempt (heartbeat, finish, a lost attempt's
//!   row) is fenced by the lease token the claim minted: once another
//!   worker took the run over, the old token matches no row.
//!
//! On PostgreSQL a trigger NOTIFYs [`RUNS_CHANNEL`] when a run is queued,
//! and a stored cancel of a running run NOTIFYs [`RUN_CANCELS_CHANNEL`]
//! ([`Store::listen_runs`] hears both); workers poll and beat as well.

mod page;
mod rows;
pub(crate) mod sql;

pub(crate) use rows::{json, timeout_ms};

use toolhost_runs::{
    Beat, Claim, INPUT_WAIT, Progress, Run, RunFuture, RunId, RunInput, RunQuery, RunStore,
    RunStoreError,
};

use crate::connect::{Pools, fetch_all, fetch_optional, on_pool};
use crate::{StorageError, Store, explain};

fn failed(operation: &'static str) -> impl FnOnce(sqlx::Error) -> RunStoreError {
    move |e| match crate::error::unreachable(operation, &e) {
        Some(down) => RunStoreError::Unavailable(down),
        None => RunStoreError::Failed(format!("{operation}: {e}")),
    }
}

/// `progress` as its column stores it, refusing numbers JSON cannot hold
/// (NaN would be stored as `null` and never read back).
fn progress_json(progress: Option<&Progress>) -> Result<Option<String>, RunStoreError> {
    let Some(p) = progress else { return Ok(None) };
    if !p.progress.is_finite() || p.total.is_some_and(|t| !t.is_finite()) {
        return Err(RunStoreError::Failed(format!(
            "heartbeat: progress {} of {:?} is not a finite number",
            p.progress, p.total
        )));
    }
    rows::json(p).map(Some).map_err(failed("heartbeat"))
}

impl RunStore for Store {
    fn run<'a>(&'a self, tenant: &'a str, id: &'a RunId) -> RunFuture<'a, Option<Run>> {
        Box::pin(async move {
            fetch_optional!(&self.pools, rows::run, sql::BY_ID, tenant, id.as_str())
                .map_err(failed("read run"))
        })
    }

    fn run_any<'a>(&'a self, id: &'a RunId) -> RunFuture<'a, Option<Run>> {
        Box::pin(async move {
            fetch_optional!(&self.pools, rows::run, sql::BY_ID_ANY, id.as_str())
                .map_err(failed("read run"))
        })
    }

    fn page<'a>(&'a self, query: &'a RunQuery) -> RunFuture<'a, Vec<Run>> {
        Box::pin(async move {
            let engine = self.engine();
            let select = concat!("SELECT ", sql::run_columns!(), " FROM runs");
            let mut runs = on_pool!(&self.pools, pool => {
                page::paged(query, select, engine)
                    .build()
                    .fetch_all(pool)
                    .await
                    .and_then(|rows| rows.iter().map(rows::run).collect::<Result<Vec<_>, _>>())
            })
            .map_err(failed("list runs"))?;
            if query.after.is_some() {
                // Read oldest first from the cursor; listed newest first.
                runs.reverse();
            }
            Ok(runs)
        })
    }

    fn active<'a>(&'a self, tenant: &'a str, principal: &'a str) -> RunFuture<'a, (u32, u32)> {
        Box::pin(async move {
            let (of_tenant, of_principal) =
                fetch_optional!(&self.pools, rows::counts, sql::ACTIVE, tenant, principal)
                    .map_err(failed("count active runs"))?
                    .unwrap_or_default();
            let count = |n: i64| u32::try_from(n).unwrap_or(u32::MAX);
            Ok((count(of_tenant), count(of_principal)))
        })
    }

    fn claim<'a>(
        &'a self,
        worker: &'a str,
        lease_ms: i64,
        now_ms: i64,
    ) -> RunFuture<'a, Option<Claim>> {
        Box::pin(async move {
            let claim = match self.pools {
                Pools::Sqlite(_) => sql::CLAIM_SQLITE,
                Pools::Postgres(_) => sql::CLAIM_POSTGRES,
            };
            let token = rows::lease_token();
            let until = now_ms.saturating_add(lease_ms);
            let wait = i64::try_from(INPUT_WAIT.as_millis()).unwrap_or(i64::MAX);
            let parked_before = now_ms.saturating_sub(wait);
            fetch_optional!(
                &self.pools,
                rows::claim,
                claim,
                worker,
                token.as_str(),
                now_ms,
                until,
                parked_before
            )
            .map_err(failed("claim a run"))
        })
    }

    fn heartbeat<'a>(
        &'a self,
        id: &'a RunId,
        lease_token: &'a str,
        lease_until_ms: i64,
        progress: Option<&'a Progress>,
    ) -> RunFuture<'a, Option<Beat>> {
        Box::pin(async move {
            let progress = progress_json(progress)?;
            fetch_optional!(
                &self.pools,
                rows::beat,
                sql::HEARTBEAT,
                id.as_str(),
                lease_token,
                lease_until_ms,
                progress.as_deref()
            )
            .map_err(failed("heartbeat"))
        })
    }

    fn request_cancel<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a RunId,
        now_ms: i64,
    ) -> RunFuture<'a, Option<Run>> {
        Box::pin(async move {
            let id = id.as_str();
            let moved = fetch_optional!(
                &self.pools,
                rows::run,
                sql::REQUEST_CANCEL,
                tenant,
                id,
                now_ms
            )
            .map_err(failed("request a run's cancel"))?;
            match moved {
                Some(run) => {
                    if run.state == toolhost_runs::RunState::Cancelling {
                        self.notify_cancel(&run.id).await;
                    }
                    Ok(Some(run))
                }
                // Queued, settled, or not this tenant's: as it stands.
                None => fetch_optional!(&self.pools, rows::run, sql::BY_ID, tenant, id)
                    .map_err(failed("read run")),
            }
        })
    }

    fn answer_input<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a RunId,
        asked: &'a RunInput,
        answered: &'a RunInput,
        now_ms: i64,
    ) -> RunFuture<'a, bool> {
        Box::pin(async move {
            let encode = |input| rows::json(input).map_err(failed("answer a run's input"));
            let (asked, queued) = (encode(asked)?, i64::from(answered.is_answered()));
            let answered = encode(answered)?;
            let changed = crate::connect::execute!(
                &self.pools,
                sql::ANSWER_INPUT,
                tenant,
                id.as_str(),
                asked.as_str(),
                answered.as_str(),
                queued,
                now_ms
            )
            .map_err(failed("answer a run's input"))?;
            Ok(changed == 1)
        })
    }

    fn exhausted(&self, now_ms: i64) -> RunFuture<'_, Vec<Claim>> {
        Box::pin(async move {
            fetch_all!(&self.pools, rows::claim, sql::EXHAUSTED, now_ms)
                .map_err(failed("list exhausted runs"))
        })
    }
}

/// The channel the PostgreSQL trigger on `runs` notifies (migration 0011)
/// when a run is queued; the payload is the run's id.
pub const RUNS_CHANNEL: &str = "toolhost_runs";

/// The channel [`RunStore::request_cancel`] notifies once a running run's
/// cancel is stored; the payload is the run's id.
pub const RUN_CANCELS_CHANNEL: &str = "toolhost_run_cancels";

/// What a [`RunListener`] heard. The id is a hint to act on, never the
/// act: any worker may claim a queued run first, and a worker stops a run
/// only once its heartbeat reads the stored cancel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunNotice {
    /// A run was queued.
    Queued(RunId),
    /// A running run's cancel was stored.
    CancelRequested(RunId),
    /// A payload that is not a run id, sent by something other than the
    /// host: a reason to look at the queue, nothing more.
    Other,
}

/// Runs queued and cancels stored anywhere, pushed by the database as they
/// commit (PostgreSQL's `LISTEN`). A lost connection is re-established by
/// the driver; notifications sent meanwhile are lost, so workers poll and
/// beat as well.
pub struct RunListener(sqlx::postgres::PgListener);

impl RunListener {
    /// Waits for the next notice.
    pub async fn next(&mut self) -> Result<RunNotice, StorageError> {
        let heard = (self.0.recv().await).map_err(StorageError::query("wait for a run notice"))?;
        let Some(id) = RunId::parse(heard.payload()) else {
            return Ok(RunNotice::Other);
        };
        Ok(match heard.channel() {
            RUN_CANCELS_CHANNEL => RunNotice::CancelRequested(id),
            _ => RunNotice::Queued(id),
        })
    }
}

impl Store {
    /// How many audit rows link the receipt `sha256` (one: the row of the
    /// attempt, or the cancel, that settled its run).
    pub async fn audit_rows_with_receipt(&self, sha256: &str) -> Result<u64, StorageError> {
        let count = fetch_optional!(
            &self.pools,
            |row: &_| sqlx::Row::try_get::<i64, _>(row, 0),
            "SELECT COUNT(*) FROM audit WHERE receipt_sha256 = $1",
            sha256
        )
        .map_err(StorageError::query("count the audit rows of a receipt"))?;
        Ok(count.map_or(0, |n| u64::try_from(n).unwrap_or(0)))
    }

    /// A listener for queued runs and stored cancels on PostgreSQL; `None`
    /// on SQLite, which cannot push them (workers poll it and beat, and a
    /// host wakes and signals its own).
    pub async fn listen_runs(&self) -> Result<Option<RunListener>, StorageError> {
        let channels = [RUNS_CHANNEL, RUN_CANCELS_CHANNEL];
        let listener = (self.pools)
            .listen(&channels, "listen for queued runs and cancels")
            .await?;
        Ok(listener.map(RunListener))
    }

    /// Tells every replica (PostgreSQL) that run `id`'s cancel is stored,
    /// so the one running it stops it now. Best effort: a lost notice
    /// leaves the cancel to the run's next heartbeat.
    async fn notify_cancel(&self, id: &RunId) {
        let Pools::Postgres(pool) = &self.pools else {
            return;
        };
        let sent = sqlx::query("SELECT pg_notify($1, $2)")
            .bind(RUN_CANCELS_CHANNEL)
            .bind(id.as_str())
            .execute(pool)
            .await;
        if let Err(e) = sent {
            tracing::warn!(run = %id, error = %e, "telling the replicas of a run's cancel failed; its heartbeat hears it");
        }
    }

    /// The engine's plan for [`RunStore::page`]'s query, one line per step
    /// (see [`Store::explain_search`]).
    pub async fn explain_runs(&self, query: &RunQuery) -> Result<Vec<String>, StorageError> {
        use sqlx::Row as _;
        let engine = self.engine();
        let select = format!(
            "{}SELECT {} FROM runs",
            explain::prefix(engine),
            sql::run_columns!()
        );
        on_pool!(&self.pools, pool => {
            page::paged(query, &select, engine)
                .build()
                .fetch_all(pool)
                .await
                .and_then(|rows| rows.iter().map(|r| r.try_get(explain::column(engine))).collect())
        })
        .map_err(StorageError::query("explain a listing of runs"))
    }
}
