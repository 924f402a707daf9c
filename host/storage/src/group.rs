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
//! On a SQLite file the commit is **pipelined**: the writer commits on a
//! connection of its own whose commits do not wait for the disk
//! (`synchronous = NORMAL`, in WAL mode a commit appends to the log
//! without syncing it), and hands the batch to a syncer task, which syncs
//! the write-ahead log and only then answers the batch's callers. While
//! the syncer waits for the disk the writer commits the next batch, and a
//! sync serves every batch committed before it started. The guarantee is
//! `synchronous = FULL`'s: no reply before its row's log frames are on
//! disk (a sync of the file covers every frame written to it so far, and
//! SQLite recovers a log's frames in order, so a crash keeps a prefix that
//! holds every answered row). Other writers keep the pool's FULL commits.
//! The writer remembers the chain's head its last commit left, so a batch
//! of rows without effects is begun, inserted and committed in one trip to
//! sqlx's worker thread rather than four; if another writer moved the head
//! meanwhile, the database refuses that batch and the writer appends it
//! the usual way, reading the head first.
//! PostgreSQL commits through the pool as before: the server already
//! groups the flushes of concurrent commits.

use std::path::PathBuf;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, SqliteConnection};
use tokio::sync::{mpsc, oneshot};
use toolhost_audit::{AuditEvent, Effect};

use crate::StorageError;
use crate::chain::Head;
use crate::connect::Pools;

/// Most rows per transaction: bounds how long one commit holds the writer
/// and how much a failed batch has to retry.
pub const MAX_BATCH: usize = 256;

/// Rows waiting for the writer beyond those being committed: callers wait
/// (back-pressure) rather than queue without bound.
const QUEUE: usize = 4096;

/// A row and the caller waiting for its commit.
struct Pending {
    event: AuditEvent,
    effects: Vec<Effect>,
    done: oneshot::Sender<Result<(), StorageError>>,
}

type Done = oneshot::Sender<Result<(), StorageError>>;

/// Where the pipelined writer commits and what it syncs.
pub(crate) struct Pipelined {
    /// The writer's own connection: the file's options with
    /// `synchronous = NORMAL`.
    pub(crate) connect: SqliteConnectOptions,
    /// The file's write-ahead log (`<file>-wal`).
    pub(crate) wal: PathBuf,
}

/// The handle callers use; the writer ends when every handle is dropped.
#[derive(Clone)]
pub(crate) struct GroupCommit {
    tx: mpsc::Sender<Pending>,
}

impl GroupCommit {
    /// Starts the writer over `pools`, pipelined as `pipelined` says if set.
    pub(crate) fn start(pools: Pools, pipelined: Option<Pipelined>) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        match pipelined {
            Some(p) => {
                let (synced_tx, synced_rx) = mpsc::unbounded_channel();
                drop(pools);
                tokio::spawn(write_pipelined(p.connect, rx, synced_tx));
                tokio::spawn(sync_batches(p.wal, synced_rx));
            }
            None => {
                tokio::spawn(write_batches(pools, rx));
            }
        }
        Self { tx }
    }

    /// Queues `event` with the `effects` its transaction applies, and
    /// waits for its commit.
    pub(crate) async fn record(
        &self,
        event: &AuditEvent,
        effects: &[Effect],
    ) -> Result<(), StorageError> {
        let (done, committed) = oneshot::channel();
        let pending = Pending {
            event: event.clone(),
            effects: effects.to_vec(),
            done,
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

async fn write_batches(pools: Pools, mut rx: mpsc::Receiver<Pending>) {
    while let Some(mut batch) = next_batch(&mut rx).await {
        match crate::chain::append(&pools, &rows(&batch)).await {
            Ok(_) => {
                for p in batch {
                    let _ = p.done.send(Ok(()));
                }
            }
            Err(e) if batch.len() == 1 => {
                let _ = batch.remove(0).done.send(Err(e));
            }
            // No row of the batch can be written one by one either.
            Err(StorageError::Unavailable(down)) => {
                for p in batch {
                    let _ = p.done.send(Err(StorageError::Unavailable(down.clone())));
                }
            }
            Err(_) => {
                for p in batch {
                    let one = crate::chain::append(&pools, &[(&p.event, &p.effects[..])])
                        .await
                        .map(drop);
                    let _ = p.done.send(one);
                }
            }
        }
    }
}

/// The pipelined writer: commits each batch on its own connection, then
/// hands its callers to the syncer. A failed connection is dropped and
/// opened again for the next batch; a batch that cannot get one fails.
async fn write_pipelined(
    connect: SqliteConnectOptions,
    mut rx: mpsc::Receiver<Pending>,
    synced: mpsc::UnboundedSender<Vec<Done>>,
) {
    let mut conn: Option<SqliteConnection> = None;
    // The chain's head as this writer's last commit left it: the next batch
    // is appended after it in one trip to SQLite, unless it moved.
    let mut head: Option<Head> = None;
    while let Some(batch) = next_batch(&mut rx).await {
        let mut c = match conn.take() {
            Some(c) => c,
            None => match connect.connect().await {
                Ok(c) => c,
                Err(e) => {
                    let message = e.to_string();
                    for p in batch {
                        let _ = p.done.send(Err(StorageError::Query {
                            operation: "open the audit writer's connection",
                            message: message.clone(),
                        }));
                    }
                    continue;
                }
            },
        };
        let appended = append_pipelined(&mut c, head.take(), &batch).await;
        let mut committed = Vec::with_capacity(batch.len());
        let mut healthy = true;
        match appended {
            Ok(after) => {
                head = Some(after);
                committed.extend(batch.into_iter().map(|p| p.done));
            }
            Err(e) if batch.len() == 1 => {
                healthy = !is_connection_error(&e);
                let p = batch.into_iter().next().expect("one");
                let _ = p.done.send(Err(e));
            }
            Err(_) => {
                for p in batch {
                    let one = [(&p.event, &p.effects[..])];
                    match crate::chain::append_on(&mut c, &one).await {
                        Ok(after) => {
                            head = Some(after);
                            committed.push(p.done);
                        }
                        Err(e) => {
                            healthy &= !is_connection_error(&e);
                            let _ = p.done.send(Err(e));
                        }
                    }
                }
            }
        }
        if healthy {
            conn = Some(c);
        }
        if !committed.is_empty() && synced.send(committed).is_err() {
            return;
        }
    }
}

/// Appends `batch` on the writer's connection: after `head` in one trip
/// when the writer knows it and no row has effects, else (and when that
/// fails: the head moved, or a row was refused) the usual way, which reads
/// the head. Returns the new head.
async fn append_pipelined(
    conn: &mut SqliteConnection,
    head: Option<Head>,
    batch: &[Pending],
) -> Result<Head, StorageError> {
    if let Some(head) = head
        && batch.iter().all(|p| p.effects.is_empty())
    {
        let events: Vec<&AuditEvent> = batch.iter().map(|p| &p.event).collect();
        if let Ok(after) = crate::chain::append_after(conn, &head, &events).await {
            return Ok(after);
        }
    }
    crate::chain::append_on(conn, &rows(batch)).await
}

/// Whether an append failed for want of its connection (then it is opened
/// again), not for what it wrote.
fn is_connection_error(e: &StorageError) -> bool {
    !matches!(e, StorageError::DuplicateCallId { .. })
}

/// The syncer: syncs the write-ahead log once for every batch committed
/// before the sync began, then answers their callers.
async fn sync_batches(wal: PathBuf, mut rx: mpsc::UnboundedReceiver<Vec<Done>>) {
    while let Some(first) = rx.recv().await {
        let mut waiting = first;
        while let Ok(more) = rx.try_recv() {
            waiting.extend(more);
        }
        let path = wal.clone();
        let synced = tokio::task::spawn_blocking(move || sync_log(&path))
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)));
        let failed = synced.err().map(|e| e.to_string());
        for done in waiting {
            let result = match &failed {
                None => Ok(()),
                Some(message) => Err(StorageError::Query {
                    operation: "sync the audit log",
                    message: message.clone(),
                }),
            };
            let _ = done.send(result);
        }
    }
}

/// Syncs the write-ahead log's data. A log that is gone was checkpointed
/// into the database, which SQLite syncs before it removes the log.
fn sync_log(wal: &std::path::Path) -> std::io::Result<()> {
    match std::fs::File::open(wal) {
        Ok(file) => file.sync_data(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}
