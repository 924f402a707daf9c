//! Anchoring a store's writer chains: their heads, as each writer's last
//! commit left them, recorded in the anchor chain about once a second
//! ([`ANCHOR_EVERY`]) and when the store closes. One transaction per round
//! for all of the store's chains that moved: the anchor chain's head read
//! and the new anchors inserted under the one lock every writer of the
//! database shares for this ([`super::ANCHOR_LOCK`] on PostgreSQL, the
//! write lock on SQLite). It is the only serialized write of the audit
//! trail, and it is off every call's path.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use toolhost_audit::Encoding;
use toolhost_audit::anchor::AnchorRow;
use toolhost_audit::chain::GENESIS;

use super::{ANCHOR_LOCK, Head};
use crate::StorageError;
use crate::connect::{Pools, on_pool};

/// How often a store anchors its chains' moved heads. Rows newer than a
/// chain's last anchor are covered by its next one; a walk cannot tell
/// their removal from their never having been written.
pub(crate) const ANCHOR_EVERY: Duration = Duration::from_secs(1);

/// The newest anchor: its number and hash.
const SELECT_ANCHOR_HEAD: &str =
    "SELECT seq, anchor_hash FROM audit_anchors ORDER BY seq DESC LIMIT 1";

const INSERT_ANCHOR: &str = "INSERT INTO audit_anchors \
     (seq, at, chain_id, chain_seq, head_hash, prev_hash, anchor_hash, encoding) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

/// The anchors numbered in (`$1`, `$2`], `$3` at most, in number order.
const SELECT_ANCHOR_PAGE: &str = "SELECT seq, at, chain_id, chain_seq, head_hash, prev_hash, \
     anchor_hash, encoding FROM audit_anchors WHERE seq > $1 AND seq <= $2 \
     ORDER BY seq LIMIT $3";

/// An anchor as stored, read back for a walk or an export.
pub(super) struct ReadAnchor {
    pub(super) seq: i64,
    pub(super) at_ms: i64,
    pub(super) chain: String,
    pub(super) place: i64,
    pub(super) head_hash: String,
    pub(super) prev_hash: String,
    pub(super) anchor_hash: String,
    /// The number of the form it was hashed in (perhaps one this build
    /// does not know).
    pub(super) encoding: i64,
}

impl ReadAnchor {
    /// Its hashed values.
    pub(super) fn row(&self) -> AnchorRow<'_> {
        AnchorRow {
            seq: self.seq,
            at_ms: self.at_ms,
            chain: &self.chain,
            place: self.place,
            head_hash: &self.head_hash,
        }
    }
}

/// The anchors numbered in (`after`, `to`], `limit` at most, in number
/// order: one page of a walk or an export.
pub(super) async fn anchor_page(
    pools: &Pools,
    after: i64,
    to: i64,
    limit: i64,
) -> Result<Vec<ReadAnchor>, StorageError> {
    type Columns = (i64, i64, String, i64, String, String, String, i64);
    let page: Vec<Columns> = on_pool!(pools, pool => {
        sqlx::query_as(SELECT_ANCHOR_PAGE)
            .bind(after)
            .bind(to)
            .bind(limit)
            .fetch_all(pool)
            .await
    })
    .map_err(StorageError::query("read audit anchors"))?;
    let read =
        |(seq, at_ms, chain, place, head_hash, prev_hash, anchor_hash, encoding)| ReadAnchor {
            seq,
            at_ms,
            chain,
            place,
            head_hash,
            prev_hash,
            anchor_hash,
            encoding,
        };
    Ok(page.into_iter().map(read).collect())
}

/// The heads a store's writers left, and which of them are anchored.
pub(crate) struct Anchorer {
    pools: Pools,
    /// Each chain's committed head, and whether it is anchored.
    heads: Mutex<BTreeMap<String, (Head, bool)>>,
    /// One round at a time (the periodic one and the closing one).
    round: tokio::sync::Mutex<()>,
}

impl Anchorer {
    /// An anchorer over `pools`, with a task anchoring every
    /// [`ANCHOR_EVERY`] until the anchorer is dropped.
    pub(crate) fn start(pools: Pools) -> Arc<Anchorer> {
        let anchorer = Arc::new(Anchorer {
            pools,
            heads: Mutex::new(BTreeMap::new()),
            round: tokio::sync::Mutex::new(()),
        });
        tokio::spawn(anchor_periodically(Arc::downgrade(&anchorer)));
        anchorer
    }

    /// Notes that `chain`'s head is now `head`, committed.
    pub(crate) fn moved(&self, chain: &str, head: &Head) {
        let mut heads = self.heads.lock().unwrap_or_else(|e| e.into_inner());
        heads.insert(chain.to_owned(), (head.clone(), false));
    }

    /// Anchors every chain whose head moved since its last anchor, in one
    /// transaction. On failure the heads stay unanchored for the next round.
    pub(crate) async fn anchor(&self) -> Result<(), StorageError> {
        let _round = self.round.lock().await;
        let moved: Vec<(String, Head)> = {
            let heads = self.heads.lock().unwrap_or_else(|e| e.into_inner());
            heads
                .iter()
                .filter(|(_, (_, anchored))| !anchored)
                .map(|(chain, (head, _))| (chain.clone(), head.clone()))
                .collect()
        };
        let closed = match &self.pools {
            Pools::Sqlite(pool) => pool.is_closed(),
            Pools::Postgres(pool) => pool.is_closed(),
        };
        if moved.is_empty() || closed {
            return Ok(());
        }
        append_anchors(&self.pools, &moved)
            .await
            .map_err(StorageError::query("anchor the audit chains"))?;
        let mut heads = self.heads.lock().unwrap_or_else(|e| e.into_inner());
        for (chain, head) in moved {
            // Anchored only if no later commit moved it meanwhile.
            if let Some((now, anchored)) = heads.get_mut(&chain)
                && *now == head
            {
                *anchored = true;
            }
        }
        Ok(())
    }
}

/// Anchors every [`ANCHOR_EVERY`] while the anchorer lives.
async fn anchor_periodically(anchorer: Weak<Anchorer>) {
    let mut tick = tokio::time::interval(ANCHOR_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(anchorer) = anchorer.upgrade() else {
            return;
        };
        if let Err(e) = anchorer.anchor().await {
            tracing::warn!(error = %e, "anchoring the audit chains failed; the next round retries");
        }
    }
}

/// The transaction of one round on `$pool`: begin with `$begin`, take
/// `$lock` if any, read the anchor chain's head, insert one anchor per
/// moved head after it, commit.
macro_rules! anchor_in {
    ($pool:expr, $begin:expr, $lock:expr, $moved:expr) => {
        async {
            let mut tx = $pool.begin_with($begin).await?;
            if let Some(lock) = $lock {
                sqlx::query(lock)
                    .bind(ANCHOR_LOCK)
                    .execute(&mut *tx)
                    .await?;
            }
            let head: Option<(i64, String)> = sqlx::query_as(SELECT_ANCHOR_HEAD)
                .fetch_optional(&mut *tx)
                .await?;
            let (mut seq, mut prev) = head.unwrap_or((0, GENESIS.to_owned()));
            let at_ms = crate::record::unix_millis(std::time::SystemTime::now());
            for (chain, head) in $moved {
                seq += 1;
                let row = AnchorRow {
                    seq,
                    at_ms,
                    chain,
                    place: head.place,
                    head_hash: &head.hash,
                };
                let hash = Encoding::CURRENT.anchor_hash(&prev, &row).to_string();
                sqlx::query(INSERT_ANCHOR)
                    .bind(seq)
                    .bind(at_ms)
                    .bind(chain.as_str())
                    .bind(head.place)
                    .bind(head.hash.as_str())
                    .bind(prev.as_str())
                    .bind(hash.as_str())
                    .bind(Encoding::CURRENT.number())
                    .execute(&mut *tx)
                    .await?;
                prev = hash;
            }
            tx.commit().await
        }
        .await
    };
}

async fn append_anchors(pools: &Pools, moved: &[(String, Head)]) -> Result<(), sqlx::Error> {
    match pools {
        Pools::Sqlite(pool) => {
            let _turn = crate::connect::write_turn(pool).await;
            anchor_in!(pool, "BEGIN IMMEDIATE", None::<&str>, moved)
        }
        Pools::Postgres(pool) => {
            let lock = Some("SELECT pg_advisory_xact_lock($1)");
            anchor_in!(pool, "BEGIN", lock, moved)
        }
    }
}
