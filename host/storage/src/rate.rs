//! Fixed-window request counters for the host's rate limits, on either
//! engine, in the `rate_counters` table (`migrations/*/0007_rate_limits.sql`).
//!
//! The store only counts: what a bucket is (a principal, a client, a class
//! of tool), how long a window lasts and what limit a count breaks are the
//! server's (`host/server/src/rate_limit.rs`). The database decides every
//! race: a count is bumped by `INSERT … ON CONFLICT DO UPDATE SET hits =
//! hits + 1 RETURNING hits`, never read then written, so fifty concurrent
//! requests on one host or on many see fifty distinct counts.

use crate::connect::on_pool;
use crate::{StorageError, Store};

// A fresh row starts at one request; an existing one gains one. The row
// lock PostgreSQL takes on conflict (SQLite writes one at a time) orders
// concurrent bumps, and RETURNING reads the count this bump produced.
const BUMP_HEAD: &str = "INSERT INTO rate_counters (bucket, window_start, expires_at, hits) ";
const BUMP_TAIL: &str = " ON CONFLICT (bucket, window_start) \
     DO UPDATE SET hits = rate_counters.hits + 1 RETURNING bucket, hits";
// Served by `rate_counters_expires`.
const PURGE: &str = "DELETE FROM rate_counters WHERE expires_at <= $1";

impl Store {
    /// Counts one request in each of `buckets`, in the window that starts at
    /// `window_start` and ends at `window_end` (unix milliseconds), and
    /// returns each bucket's count including this request, in the order of
    /// `buckets`.
    ///
    /// One statement bumps every bucket: one round trip and one commit per
    /// request, and no bucket is counted without the others. The rows are
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
        let mut sorted = buckets.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.is_empty() {
            return Ok(Vec::new());
        }
        let rows: Vec<(String, i64)> = on_pool!(&self.pools, pool => {
            let mut bump = sqlx::QueryBuilder::new(BUMP_HEAD);
            bump.push_values(&sorted, |mut row, bucket| {
                row.push_bind(*bucket)
                    .push_bind(window_start)
                    .push_bind(window_end)
                    .push("1");
            });
            bump.push(BUMP_TAIL);
            bump.build_query_as().fetch_all(pool).await
        })
        .map_err(StorageError::query("count rate-limit hits"))?;
        buckets.iter().map(|b| count_of(&rows, b)).collect()
    }

    /// Deletes the counters of every window that ended at or before `now`
    /// (unix milliseconds); returns how many rows went. A request that
    /// arrives later for such a window (a host whose clock lags) starts it
    /// again from zero, which errs on the side of letting it through.
    pub async fn purge_hits(&self, now: i64) -> Result<u64, StorageError> {
        on_pool!(&self.pools, pool => {
            sqlx::query(PURGE).bind(now).execute(pool).await.map(|d| d.rows_affected())
        })
        .map_err(StorageError::query("purge rate-limit counters"))
    }
}

/// `bucket`'s count among the rows a bump returned.
fn count_of(rows: &[(String, i64)], bucket: &str) -> Result<u64, StorageError> {
    let hits = rows
        .iter()
        .find(|(name, _)| name == bucket)
        .map(|&(_, hits)| hits);
    // The CHECK (hits >= 1) keeps counts positive; only a statement that
    // returned fewer rows than it bumped gets here.
    hits.and_then(|h| u64::try_from(h).ok())
        .ok_or_else(|| StorageError::Query {
            operation: "count rate-limit hits",
            message: format!("no count came back for bucket {bucket:?}"),
        })
}
