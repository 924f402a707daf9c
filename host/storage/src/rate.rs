//! Fixed-window request counters for the host's rate limits, on either
//! engine, in the `rate_counters` table (`migrations/*/0007_rate_limits.sql`).
//!
//! The store only adds up: what a bucket is (a principal, a client, a class
//! of tool), how long a window lasts, what limit a count breaks and how
//! often a host reports are the server's (`host/server/src/rate_limit.rs`
//! and `rate_count.rs`: each host counts in memory and reports what it
//! counted here every few tens of milliseconds). The database decides every
//! race: a report is `INSERT … ON CONFLICT DO UPDATE SET hits = hits + n
//! RETURNING hits`, never read then written, so hosts reporting at the same
//! moment each get a total that includes both.

use std::collections::BTreeMap;

use crate::connect::on_pool;
use crate::{StorageError, Store};

// Served by `rate_counters_expires`.
const PURGE: &str = "DELETE FROM rate_counters WHERE expires_at <= $1";

const ADD_HEAD: &str = "INSERT INTO rate_counters (bucket, window_start, expires_at, hits) ";
// `excluded.hits` is this report's hits of the key.
const ADD_TAIL: &str = " ON CONFLICT (bucket, window_start) \
     DO UPDATE SET hits = rate_counters.hits + excluded.hits \
     RETURNING bucket, window_start, hits";

/// Requests a host counted in one bucket's window and has not reported yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hits {
    /// The bucket's name, such as `principal:acme/u-alice`.
    pub bucket: String,
    /// When the window starts (unix milliseconds): with the bucket, the
    /// counter's identity. Hosts sharing a store must use one window length.
    pub window_start: i64,
    /// When it ends (unix milliseconds): after that the counter may be purged.
    pub window_end: i64,
    /// How many requests to add.
    pub n: u64,
}

impl Store {
    /// Adds each of `hits` to its (bucket, window) counter and returns each
    /// counter's total afterwards (every host's reports), in the order of
    /// `hits`.
    ///
    /// One statement in one transaction: every counter is added to, or
    /// none. The commit does not wait for the disk (the counters' own pool,
    /// see `connect::open_counters`). Rows are written in sorted order, so
    /// two hosts reporting shared buckets cannot deadlock on PostgreSQL's
    /// row locks. A key named twice is added to once with both counts; a
    /// count of zero adds nothing (its total is what the others' report
    /// returns for the key, or 0); no hits run no statement.
    pub async fn add_hits(&self, hits: &[Hits]) -> Result<Vec<u64>, StorageError> {
        // Per (bucket, window start): when it ends and how many to add.
        let mut adds: BTreeMap<(&str, i64), (i64, i64)> = BTreeMap::new();
        for h in hits.iter().filter(|h| h.n > 0) {
            let n = i64::try_from(h.n).map_err(|_| too_many(&h.bucket))?;
            let entry = adds.entry((h.bucket.as_str(), h.window_start));
            let (_, sum) = entry.or_insert((h.window_end, 0));
            *sum = sum.checked_add(n).ok_or_else(|| too_many(&h.bucket))?;
        }
        if adds.is_empty() {
            return Ok(vec![0; hits.len()]);
        }
        let rows: Vec<(String, i64, i64)> = on_pool!(&self.counters, pool => {
            let mut upsert = sqlx::QueryBuilder::new(ADD_HEAD);
            upsert.push_values(&adds, |mut row, ((bucket, start), (end, n))| {
                row.push_bind(*bucket).push_bind(*start).push_bind(*end).push_bind(*n);
            });
            upsert.push(ADD_TAIL);
            let _turn = crate::connect::turn_for(&self.counters, ADD_HEAD).await;
            upsert.build_query_as().fetch_all(pool).await
        })
        .map_err(StorageError::query("count rate-limit hits"))?;
        let totals: BTreeMap<(String, i64), u64> = rows
            .into_iter()
            .map(|(bucket, start, hits)| ((bucket, start), u64::try_from(hits).unwrap_or(0)))
            .collect();
        Ok(hits
            .iter()
            .map(|h| {
                let key = (h.bucket.clone(), h.window_start);
                totals.get(&key).copied().unwrap_or(0)
            })
            .collect())
    }

    /// Deletes the counters of every window that ended at or before `now`
    /// (unix milliseconds); returns how many rows went. A report that
    /// arrives later for such a window (a host whose clock lags) starts it
    /// again from its own count, which errs on the side of letting through.
    pub async fn purge_hits(&self, now: i64) -> Result<u64, StorageError> {
        on_pool!(&self.counters, pool => {
            let _turn = crate::connect::turn_for(&self.counters, PURGE).await;
            sqlx::query(PURGE).bind(now).execute(pool).await.map(|d| d.rows_affected())
        })
        .map_err(StorageError::query("purge rate-limit counters"))
    }
}

fn too_many(bucket: &str) -> StorageError {
    StorageError::Query {
        operation: "count rate-limit hits",
        message: format!("a count too large for bucket {bucket:?}"),
    }
}
