//! Group commit for the audit trail: the rows of concurrent calls are
//! written in one transaction, so one fsync serves many calls, and each
//! caller still waits until its own row is committed.
//!
//! One writer task per store takes the first waiting row, then every row
//! already queued behind it (up to [`MAX_BATCH`]), and commits them
//! together, each chained to the one before (`src/chain.rs`). At concurrency 1 a batch is one row: the same latency as a
//! plain insert. If a batch fails (a duplicate call id, say), each of its
//! rows is retried on its own, so only the faulty row's caller sees an error.
//! A row's effects (`src/effects.rs`) ride in its transaction, so they
//! commit or roll back with it.

use tokio::sync::{mpsc, oneshot};
use toolhost_audit::{AuditEvent, Effect};

use crate::StorageError;
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

/// The handle callers use; the writer ends when every handle is dropped.
#[derive(Clone)]
pub(crate) struct GroupCommit {
    tx: mpsc::Sender<Pending>,
}

impl GroupCommit {
    /// Starts the writer over `pools`.
    pub(crate) fn start(pools: Pools) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(write_batches(pools, rx));
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

async fn write_batches(pools: Pools, mut rx: mpsc::Receiver<Pending>) {
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(p) => batch.push(p),
                Err(_) => break,
            }
        }
        let events: Vec<(&AuditEvent, &[Effect])> =
            batch.iter().map(|p| (&p.event, &p.effects[..])).collect();
        match crate::chain::append(&pools, &events).await {
            Ok(_) => {
                for p in batch {
                    let _ = p.done.send(Ok(()));
                }
            }
            Err(e) if batch.len() == 1 => {
                let _ = batch.remove(0).done.send(Err(e));
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
