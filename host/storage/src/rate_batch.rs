//! Group commit for the rate-limit counters: the bumps of concurrent
//! requests are written by one statement in one transaction, so a burst of
//! requests takes SQLite's write lock once per batch rather than once per
//! request (per request, the lock's waits and busy retries halved the
//! host's throughput at 32 concurrent clients; BENCHMARKS.md part 4).
//!
//! One writer task takes the first waiting bump, then every bump already
//! queued behind it (up to [`MAX_BATCH`]), adds up how often each
//! (bucket, window) is named, and upserts each once with `hits = hits + n`
//! returning the new count. Bumps of one key are handed out in queue order:
//! with a count `c` after `n` bumps, the first waiting request sees
//! `c - n + 1` and the last `c`, exactly the counts one-at-a-time bumps
//! would have given. If a batch fails, each of its bumps is retried alone,
//! so only a faulty one fails.

use std::collections::BTreeMap;

use tokio::sync::{mpsc, oneshot};

use crate::StorageError;
use crate::connect::{Pools, on_pool};

/// Most requests per batch.
const MAX_BATCH: usize = 256;
/// Requests waiting beyond the batch being written: more wait to queue.
const QUEUE: usize = 4096;

const BUMP_HEAD: &str = "INSERT INTO rate_counters (bucket, window_start, expires_at, hits) ";
// `excluded.hits` is this batch's number of bumps of the key.
const BUMP_TAIL: &str = " ON CONFLICT (bucket, window_start) \
     DO UPDATE SET hits = rate_counters.hits + excluded.hits \
     RETURNING bucket, window_start, hits";

/// One request's bump: its distinct buckets in one window.
struct Bump {
    buckets: Vec<String>,
    window_start: i64,
    window_end: i64,
    done: oneshot::Sender<Result<Vec<u64>, StorageError>>,
}

/// The handle requests use; the writer ends when every handle is dropped.
#[derive(Clone)]
pub(crate) struct CounterCommit {
    tx: mpsc::Sender<Bump>,
}

impl CounterCommit {
    /// Starts the writer over `pools`.
    pub(crate) fn start(pools: Pools) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(write_batches(pools, rx));
        Self { tx }
    }

    /// Bumps each of `buckets` (distinct) once in the window and waits for
    /// the commit; each bucket's count including this bump, in order.
    pub(crate) async fn bump(
        &self,
        buckets: Vec<String>,
        window_start: i64,
        window_end: i64,
    ) -> Result<Vec<u64>, StorageError> {
        let (done, committed) = oneshot::channel();
        let bump = Bump {
            buckets,
            window_start,
            window_end,
            done,
        };
        self.tx.send(bump).await.map_err(|_| StorageError::Closed)?;
        committed.await.map_err(|_| StorageError::Closed)?
    }
}

async fn write_batches(pools: Pools, mut rx: mpsc::Receiver<Bump>) {
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(b) => batch.push(b),
                Err(_) => break,
            }
        }
        match write(&pools, &batch).await {
            Ok(counts) => {
                for (bump, counts) in batch.into_iter().zip(counts) {
                    let _ = bump.done.send(Ok(counts));
                }
            }
            Err(e) if batch.len() == 1 => {
                let _ = batch.remove(0).done.send(Err(e));
            }
            Err(_) => {
                for bump in batch {
                    let alone = write(&pools, std::slice::from_ref(&bump)).await;
                    let _ = bump.done.send(alone.map(|mut c| c.remove(0)));
                }
            }
        }
    }
}

/// A (bucket, window start) key.
type Key = (String, i64);

/// Writes `batch` in one statement; each bump's counts, in batch order.
async fn write(pools: &Pools, batch: &[Bump]) -> Result<Vec<Vec<u64>>, StorageError> {
    // How often each key is bumped, and when its window ends. A BTreeMap
    // keeps the keys sorted: concurrent batches of several hosts lock
    // PostgreSQL's rows in one order and cannot deadlock.
    let mut times: BTreeMap<Key, (i64, i64)> = BTreeMap::new();
    for bump in batch {
        for bucket in &bump.buckets {
            let entry = times.entry((bucket.clone(), bump.window_start));
            entry.or_insert((bump.window_end, 0)).1 += 1;
        }
    }
    let rows: Vec<(String, i64, i64)> = on_pool!(pools, pool => {
        let mut upsert = sqlx::QueryBuilder::new(BUMP_HEAD);
        upsert.push_values(&times, |mut row, ((bucket, start), (end, n))| {
            row.push_bind(bucket.as_str())
                .push_bind(*start)
                .push_bind(*end)
                .push_bind(*n);
        });
        upsert.push(BUMP_TAIL);
        upsert.build_query_as().fetch_all(pool).await
    })
    .map_err(StorageError::query("count rate-limit hits"))?;
    // The count after the batch, less the bumps still to hand out.
    let mut next: BTreeMap<Key, i64> = BTreeMap::new();
    for (bucket, start, hits) in rows {
        let n = times.get(&(bucket.clone(), start)).map_or(0, |t| t.1);
        next.insert((bucket, start), hits - n + 1);
    }
    batch
        .iter()
        .map(|bump| {
            bump.buckets
                .iter()
                .map(|bucket| {
                    let key = (bucket.clone(), bump.window_start);
                    let count = next.get_mut(&key).ok_or_else(|| missing(bucket))?;
                    let seen = u64::try_from(*count).map_err(|_| missing(bucket))?;
                    *count += 1;
                    Ok(seen)
                })
                .collect()
        })
        .collect()
}

fn missing(bucket: &str) -> StorageError {
    StorageError::Query {
        operation: "count rate-limit hits",
        message: format!("no count came back for bucket {bucket:?}"),
    }
}
