//! Group commit for the audit trail: the rows of concurrent calls are
//! written in one transaction, so one sync serves many calls, and each
//! caller still waits until its own row is durable.
//!
//! One writer task per store takes the first waiting row, then every row
//! already queued behind it (up to [`MAX_BATCH`]), and commits them
//! together, each chained to the one before (`src/chain.rs`). At
//! concurrency 1 a batch is one row: the same latency as a plain insert.
//! If a batch fails (a duplicate call id, say), each of its rows is retried
//! on its own, so only the faulty row's caller sees an error. A row's
//! effects (`src/effects.rs`) ride in its transaction, so they commit or
//! roll back with it.
//!
//! On a SQLite file the writer commits on a connection of its own, whose
//! commits sync the write-ahead log (`synchronous = FULL`): a batch is one
//! hand-off to that connection's thread, which inserts the rows, commits
//! and syncs before it answers, and rows that arrive meanwhile queue into
//! the next batch. So the busier the host, the more rows share a commit
//! and its sync (BENCHMARKS part 22: committing each batch unsynced and
//! syncing apart, as before, wrote about three commits' pages per sync
//! and cost more CPU and latency than it saved). No caller is answered
//! before its row's log frames are on disk.
//! Each writer appends to a chain of its own (`src/chain.rs`), whose head
//! it knows, so a batch of rows without effects is one `INSERT`, one trip
//! to sqlx's worker thread.
//! While the store is unreachable no caller waits on another's outage: a
//! batch that cannot reach it answers its callers at once, and its writer
//! reads its chain's head back before its next batch, not now (a batch
//! that finds the store still away then is answered at once); and every
//! row queued before a writer last found the store unreachable is
//! answered so at once, not handed to a writer to wait out the pool's
//! timeout again ([`Outage`]). So a caller waits for the store at most one
//! `--database-timeout`.
//! On PostgreSQL (and an in-memory SQLite database) batches commit through
//! the pool, [`POSTGRES_WRITERS`] writers at once, each with its own chain
//! and no lock shared with any other writer of the cluster: several
//! batches are in flight, and the server's group commit combines their
//! flushes with each other's and other replicas'.

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, SqliteConnection};
use tokio::sync::{mpsc, oneshot};
use toolhost_audit::{AuditEvent, Effect};

use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::StorageError;
use crate::chain::{Anchorer, Source, WriterChain, refused};
use crate::connect::Pools;

/// Most rows per transaction: bounds how long one commit holds the writer
/// and how much a failed batch has to retry.
pub const MAX_BATCH: usize = 256;

/// Rows waiting for the writer beyond those being committed: callers wait
/// (back-pressure) rather than queue without bound.
const QUEUE: usize = 4096;

/// Writers committing through a PostgreSQL pool at once, each on a chain
/// of its own: batches in flight per store.
pub const POSTGRES_WRITERS: usize = 4;

/// A row and the caller waiting for its commit, since it was queued.
struct Pending {
    event: AuditEvent,
    effects: Vec<Effect>,
    done: oneshot::Sender<Result<(), StorageError>>,
    queued: Instant,
}

/// When a writer (or a call, its row says: `STORE_UNAVAILABLE`) last found
/// the store unreachable, and how, until a batch commits again: a row
/// queued before then would only wait out the same outage, so it is
/// answered with it at once; so is a row queued within [`FRESH`] of it
/// (most often the row of a call that has just waited out the outage
/// itself, on a read, and would wait it out twice). After that a batch
/// tries the store again, so a store that is back is found within
/// [`FRESH`] and the pool's wait.
#[derive(Default)]
struct Outage(Mutex<Option<(Instant, StorageError)>>);

/// The error code of a call that found the store unreachable.
const CALL_FOUND_IT_AWAY: &str = "STORE_UNAVAILABLE";

/// How long after a writer found the store unreachable new rows are
/// answered so without trying it.
const FRESH: std::time::Duration = std::time::Duration::from_millis(500);

impl Outage {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(Instant, StorageError)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes `e` if it says the store is unreachable.
    fn saw(&self, e: &StorageError) {
        if matches!(e, StorageError::Unavailable(_)) {
            *self.lock() = Some((Instant::now(), copy_error(e)));
        }
    }

    /// A call found the store unreachable: its row says so.
    fn told(&self, event: &AuditEvent) {
        if event.error_code.as_deref() == Some(CALL_FOUND_IT_AWAY) {
            let down = toolhost_types::StoreUnavailable {
                operation: "append audit rows".into(),
                message: "the call itself found the store unreachable".into(),
            };
            *self.lock() = Some((Instant::now(), StorageError::Unavailable(down)));
        }
    }

    /// A batch committed: the store is back.
    fn over(&self) {
        *self.lock() = None;
    }

    /// Answers, with the outage, every row of `batch` queued before a
    /// writer last found the store unreachable, or all of them within
    /// [`FRESH`] of it; the rest.
    fn answer_stale(&self, batch: Vec<Pending>) -> Vec<Pending> {
        self.answer_stale_at(batch, Instant::now())
    }

    fn answer_stale_at(&self, batch: Vec<Pending>, now: Instant) -> Vec<Pending> {
        let outage = self.lock();
        let Some((seen, e)) = outage.as_ref() else {
            return batch;
        };
        let recent = now.saturating_duration_since(*seen) < FRESH;
        let (stale, fresh): (Vec<Pending>, Vec<Pending>) =
            batch.into_iter().partition(|p| recent || p.queued < *seen);
        fail_all(stale, e);
        fresh
    }
}

type Done = oneshot::Sender<Result<(), StorageError>>;

/// The handle callers use; the writer ends when every handle is dropped.
#[derive(Clone)]
pub(crate) struct GroupCommit {
    tx: mpsc::Sender<Pending>,
    anchors: Arc<Anchorer>,
    outage: Arc<Outage>,
}

impl GroupCommit {
    /// Starts the writers over `pools` (on a connection of their own with
    /// the options `own`, for a SQLite file), and the anchoring of their
    /// chains.
    pub(crate) fn start(pools: Pools, own: Option<SqliteConnectOptions>) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        let anchors = Anchorer::start(pools.clone());
        let outage = Arc::new(Outage::default());
        match own {
            Some(own) => {
                drop(pools);
                let outage = outage.clone();
                tokio::spawn(write_on_own_connection(own, rx, anchors.clone(), outage));
            }
            None => {
                let writers = match pools {
                    Pools::Postgres(_) => POSTGRES_WRITERS,
                    Pools::Sqlite(_) => 1,
                };
                let (idle_tx, idle_rx) = mpsc::channel(writers);
                for _ in 0..writers {
                    tokio::spawn(write_batches(
                        pools.clone(),
                        idle_tx.clone(),
                        anchors.clone(),
                        outage.clone(),
                    ));
                }
                tokio::spawn(dispatch(rx, idle_rx, outage.clone()));
            }
        }
        Self {
            tx,
            anchors,
            outage,
        }
    }

    /// Anchors the writers' moved heads now (the store closing).
    pub(crate) async fn anchor(&self) -> Result<(), StorageError> {
        self.anchors.anchor().await
    }

    /// Queues `event` with the `effects` its transaction applies, and
    /// waits for its commit.
    pub(crate) async fn record(
        &self,
        event: &AuditEvent,
        effects: &[Effect],
    ) -> Result<(), StorageError> {
        let (done, committed) = oneshot::channel();
        self.outage.told(event);
        let pending = Pending {
            event: event.clone(),
            effects: effects.to_vec(),
            done,
            queued: Instant::now(),
        };
        self.tx
            .send(pending)
            .await
            .map_err(|_| StorageError::Closed)?;
        committed.await.map_err(|_| StorageError::Closed)?
    }
}

/// The first waiting row and every one queued behind it, up to a batch.
async fn next_batch(rx: &mut mpsc::Receiver<Pending>) -> Option<Vec<Pending>> {
    let first = rx.recv().await?;
    let mut batch = vec![first];
    while batch.len() < MAX_BATCH {
        match rx.try_recv() {
            Ok(p) => batch.push(p),
            Err(_) => break,
        }
    }
    Some(batch)
}

fn rows(batch: &[Pending]) -> Vec<(&AuditEvent, &[Effect])> {
    batch.iter().map(|p| (&p.event, &p.effects[..])).collect()
}

/// An idle writer, waiting for its next batch.
type Idle = oneshot::Sender<Vec<Pending>>;

/// Hands each batch to the writer that became idle last: at low load one
/// writer (and one chain) takes every batch; under load every writer has
/// one in flight, and rows queue into bigger batches while all are busy.
/// Ends when every handle is dropped (the writers then end too).
async fn dispatch(
    mut rx: mpsc::Receiver<Pending>,
    mut idle_rx: mpsc::Receiver<Idle>,
    outage: Arc<Outage>,
) {
    let mut idle: Vec<Idle> = Vec::new();
    loop {
        if idle.is_empty() {
            match idle_rx.recv().await {
                Some(writer) => idle.push(writer),
                None => return,
            }
        }
        let Some(batch) = next_batch(&mut rx).await else {
            return;
        };
        let batch = outage.answer_stale(batch);
        if batch.is_empty() {
            continue;
        }
        while let Ok(writer) = idle_rx.try_recv() {
            idle.push(writer);
        }
        let mut pending = Some(batch);
        while let Some(batch) = pending.take() {
            match idle.pop() {
                // A writer whose task ended (it panicked) hands the batch back.
                Some(writer) => pending = writer.send(batch).err(),
                // Every idle writer gone: fail rather than lose the callers.
                None => fail_all(batch, &StorageError::Closed),
            }
        }
    }
}

/// One of the pool's writers: commits each batch it is handed to its own
/// chain, opened on its first batch.
async fn write_batches(
    pools: Pools,
    idle: mpsc::Sender<Idle>,
    anchors: Arc<Anchorer>,
    outage: Arc<Outage>,
) {
    let mut chain = Chain::default();
    loop {
        let (ready, handed) = oneshot::channel();
        if idle.send(ready).await.is_err() {
            return;
        }
        let Ok(batch) = handed.await else {
            return;
        };
        let mut source = Source::Pools(&pools);
        let appended = commit_to_chain(&mut source, &mut chain, batch, &anchors, &outage).await;
        let Some((committed, _)) = appended else {
            continue;
        };
        if !committed.is_empty() {
            outage.over();
        }
        for done in committed {
            let _ = done.send(Ok(()));
        }
    }
}

/// A writer's chain, once opened, and whether its head must be read back
/// before the next append (an append failed for want of the store, and
/// may or may not have been written).
#[derive(Default)]
struct Chain {
    writer: Option<WriterChain>,
    reread: bool,
}

/// Appends `batch` to the writer's chain on `source`, opening the chain on
/// its first batch (or reading its head back, if due), and notes a moved
/// head for anchoring. The callers whose rows committed, and whether the
/// head moved; `None` (every caller answered) when the chain could not be
/// opened or read.
async fn commit_to_chain(
    source: &mut Source<'_>,
    chain: &mut Chain,
    batch: Vec<Pending>,
    anchors: &Anchorer,
    outage: &Outage,
) -> Option<(Vec<Done>, bool)> {
    let opened = match chain.writer.take() {
        Some(mut w) if std::mem::take(&mut chain.reread) => match w.reread(source).await {
            Ok(()) => Ok(w),
            Err(e) => {
                chain.writer = Some(w);
                chain.reread = true;
                Err(e)
            }
        },
        Some(w) => Ok(w),
        None => WriterChain::open(source).await,
    };
    let mut writer = match opened {
        Ok(w) => w,
        Err(e) => {
            outage.saw(&e);
            fail_all(batch, &e);
            return None;
        }
    };
    let before = writer.head.clone();
    let (committed, reread) = append_batch(source, &mut writer, batch, outage).await;
    let moved = writer.head != before;
    if moved {
        anchors.moved(&writer.id, &writer.head);
    }
    *chain = Chain {
        writer: Some(writer),
        reread,
    };
    Some((committed, moved))
}

/// Answers every caller of `batch` with `e`.
fn fail_all(batch: Vec<Pending>, e: &StorageError) {
    for p in batch {
        let _ = p.done.send(Err(copy_error(e)));
    }
}

/// `e` again, for another caller.
fn copy_error(e: &StorageError) -> StorageError {
    match e {
        StorageError::Unavailable(down) => StorageError::Unavailable(down.clone()),
        other => StorageError::Query {
            operation: "append audit rows",
            message: other.to_string(),
        },
    }
}

/// Appends `batch` to `chain` on `source`: the whole batch at once, or, if
/// that fails for one of its rows, each row on its own, so only the faulty
/// row's caller sees an error. Callers whose rows failed are answered
/// here; those whose rows committed are returned, to be answered when the
/// commit is durable, with whether the head must be read back before the
/// next append. After a failure whose outcome is unknown the chain's head
/// is read back, so the next append follows what was written: at once,
/// unless the store is unreachable (then before the next batch).
async fn append_batch(
    source: &mut Source<'_>,
    chain: &mut WriterChain,
    mut batch: Vec<Pending>,
    outage: &Outage,
) -> (Vec<Done>, bool) {
    let appended = chain.append(source, &rows(&batch)).await;
    let mut committed = Vec::with_capacity(batch.len());
    match appended {
        Ok(()) => committed.extend(batch.into_iter().map(|p| p.done)),
        // No row of the batch can be written one by one either.
        Err(e @ StorageError::Unavailable(_)) => {
            outage.saw(&e);
            fail_all(batch, &e);
            return (committed, !refused(&e));
        }
        Err(e) if batch.len() == 1 => {
            reread_unless_refused(source, chain, &e, outage).await;
            let _ = batch.remove(0).done.send(Err(e));
        }
        Err(e) => {
            reread_unless_refused(source, chain, &e, outage).await;
            for p in batch {
                match chain.append(source, &[(&p.event, &p.effects[..])]).await {
                    Ok(()) => committed.push(p.done),
                    Err(e) => {
                        outage.saw(&e);
                        reread_unless_refused(source, chain, &e, outage).await;
                        let _ = p.done.send(Err(e));
                    }
                }
            }
        }
    }
    (committed, false)
}

/// After a failed append: unless the database refused the rows (then
/// nothing was written), read the chain's head back. If even that fails,
/// the next append fails on the place index and the writer reads again.
async fn reread_unless_refused(
    source: &mut Source<'_>,
    chain: &mut WriterChain,
    e: &StorageError,
    outage: &Outage,
) {
    if !refused(e)
        && let Err(again) = chain.reread(source).await
    {
        outage.saw(&again);
        tracing::warn!(chain = %chain.id, error = %again, "reading an audit chain's head failed");
    }
}

/// The SQLite file's writer: commits each batch to its chain on its own,
/// synced connection and answers its callers. A failed connection is
/// dropped and opened again for the next batch (the chain's head read
/// back on it); a batch that cannot get one fails.
async fn write_on_own_connection(
    connect: SqliteConnectOptions,
    mut rx: mpsc::Receiver<Pending>,
    anchors: Arc<Anchorer>,
    outage: Arc<Outage>,
) {
    let mut conn: Option<SqliteConnection> = None;
    let mut chain = Chain::default();
    // Its commits take the process's write turn like every other writer
    // (`crate::connect::turn_lock`): it never sleeps in SQLite's busy handler.
    let turns = crate::connect::turn_lock(&connect);
    while let Some(batch) = next_batch(&mut rx).await {
        let batch = outage.answer_stale(batch);
        if batch.is_empty() {
            continue;
        }
        let mut c = match conn.take() {
            Some(c) => c,
            None => match connect.connect().await {
                Ok(c) => c,
                Err(e) => {
                    let failed = StorageError::Query {
                        operation: "open the audit writer's connection",
                        message: e.to_string(),
                    };
                    fail_all(batch, &failed);
                    continue;
                }
            },
        };
        let mut source = Source::Sqlite(&mut c);
        let turn = match &turns {
            Some(lock) => Some(lock.lock().await),
            None => None,
        };
        let appended = commit_to_chain(&mut source, &mut chain, batch, &anchors, &outage).await;
        drop(turn);
        let Some((committed, moved)) = appended else {
            continue;
        };
        if !committed.is_empty() {
            outage.over();
        }
        let healthy = moved || is_healthy(&mut c).await;
        if healthy {
            conn = Some(c);
        }
        for done in committed {
            let _ = done.send(Ok(()));
        }
    }
}

/// Whether the writer's connection still answers, after a batch of which
/// nothing committed.
async fn is_healthy(conn: &mut SqliteConnection) -> bool {
    sqlx::query("SELECT 1").execute(conn).await.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(queued: Instant) -> (Pending, oneshot::Receiver<Result<(), StorageError>>) {
        let (done, answer) = oneshot::channel();
        let event = AuditEvent::new("acme", "alice", "greet", toolhost_types::Digest::of(b"{}"));
        let row = Pending {
            event,
            effects: Vec::new(),
            done,
            queued,
        };
        (row, answer)
    }

    fn down() -> StorageError {
        StorageError::Unavailable(toolhost_types::StoreUnavailable {
            operation: "append audit rows".into(),
            message: "pool timed out".into(),
        })
    }

    #[test]
    fn rows_queued_before_the_store_was_found_away_are_answered_with_it_at_once() {
        let outage = Outage::default();
        let (before, mut told) = pending(Instant::now());
        let kept = outage.answer_stale(vec![before]);
        assert_eq!(kept.len(), 1, "no outage seen: every row goes on");

        outage.saw(&StorageError::Closed);
        let kept = outage.answer_stale(kept);
        assert_eq!(kept.len(), 1, "only an unreachable store is an outage");

        outage.saw(&down());
        let (after, mut told_after) = pending(Instant::now());
        let later = Instant::now() + FRESH;
        let mut batch =
            outage.answer_stale_at(vec![kept.into_iter().next().expect("a row"), after], later);
        assert_eq!(
            batch.len(),
            1,
            "past FRESH, the row queued since tries the store"
        );
        assert!(
            matches!(told.try_recv(), Ok(Err(StorageError::Unavailable(_)))),
            "the row queued before is answered: unavailable"
        );
        let (soon, _) = pending(Instant::now());
        batch.push(soon);
        let kept = outage.answer_stale(batch);
        assert!(
            kept.is_empty(),
            "within FRESH every row is answered at once"
        );
        assert!(matches!(
            told_after.try_recv(),
            Ok(Err(StorageError::Unavailable(_)))
        ));
        let mut batch = kept;

        outage.over();
        let (old, _) = pending(Instant::now() - std::time::Duration::from_secs(5));
        batch.push(old);
        let (new, _) = pending(Instant::now());
        batch.push(new);
        let batch = outage.answer_stale(batch);
        assert_eq!(batch.len(), 2, "the store is back");

        // A call that found the store away says so in its row: its row,
        // and those queued soon after, are answered at once.
        let (mut found_away, mut told_too) = pending(Instant::now());
        outage.told(&found_away.event);
        assert_eq!(
            outage.answer_stale(batch).len(),
            2,
            "an ordinary row tells nothing"
        );
        found_away.event.error_code = Some(CALL_FOUND_IT_AWAY.into());
        outage.told(&found_away.event);
        found_away.queued = Instant::now();
        assert!(outage.answer_stale(vec![found_away]).is_empty());
        assert!(matches!(
            told_too.try_recv(),
            Ok(Err(StorageError::Unavailable(_)))
        ));
    }
}
