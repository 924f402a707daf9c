//! Fixed-window request counters for the host's rate limits, on either
//! engine, in the `rate_counters` table (`migrations/*/0007_rate_limits.sql`).
//!
//! The store only counts: what a bucket is (a principal, a client, a class
//! of tool), how long a window lasts and what limit a count breaks are the
//! server's (`host/server/src/rate_limit.rs`). The database decides every
//! race: a count is bumped by `INSERT … ON CONFLICT DO UPDATE SET hits =
//! hits + n RETURNING hits` (n: the batch's bumps of it), never read then
//! written, so fifty concurrent requests on one host or on many see fifty
//! distinct counts.

use crate::connect::on_pool;
use crate::{StorageError, Store};

// Served by `rate_counters_expires`.
const PURGE: &str = "DELETE FROM rate_counters WHERE expires_at <= $1";

impl Store {
    /// Counts one request in each of `buckets`, in the window that starts at
    /// `window_start` and ends at `window_end` (unix milliseconds), and
    /// returns each bucket's count including this request, in the order of
    /// `buckets`.
    ///
    /// One statement bumps every bucket, together with the bumps of the
    /// requests waiting at the same moment (`src/rate_batch.rs`): one
    /// commit per batch, and no bucket is counted without the others. The
    /// commit does not wait for the disk (the counters' own pool, see
    /// `connect::open_counters`). The rows are
    /// bumped in sorted order, so two requests sharing buckets cannot
    /// deadlock on PostgreSQL's row locks. A bucket named twice is counted
    /// once; no bucket runs no statement. A window is identified by its
    /// start alone: hosts sharing a store must use the same window length.
    pub async fn count_hits(
        &self,
        buckets: &[&str],
        window_start: i64,
        window_end: i64,
    ) -> Result<Vec<u64>, StorageError> {
        let mut sorted: Vec<String> = buckets.iter().map(|b| (*b).to_owned()).collect();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.is_empty() {
            return Ok(Vec::new());
        }
        let counts = self
            .counter_commit
            .bump(sorted.clone(), window_start, window_end)
            .await?;
        let count_of = |bucket: &&str| {
            let at = sorted.binary_search_by(|b| b.as_str().cmp(bucket));
            at.map(|i| counts[i]).map_err(|_| StorageError::Query {
                operation: "count rate-limit hits",
                message: format!("no count came back for bucket {bucket:?}"),
            })
        };
        buckets.iter().map(count_of).collect()
    }

    /// Deletes the counters of every window that ended at or before `now`
    /// (unix milliseconds); returns how many rows went. A request that
    /// arrives later for such a window (a host whose clock lags) starts it
    /// again from zero, which errs on the side of letting it through.
    pub async fn purge_hits(&self, now: i64) -> Result<u64, StorageError> {
        on_pool!(&self.counters, pool => {
            sqlx::query(PURGE).bind(now).execute(pool).await.map(|d| d.rows_affected())
        })
        .map_err(StorageError::query("purge rate-limit counters"))
    }
}
