//! Walking the audit trail: the anchor chain, the legacy chain in id
//! order, then every writer chain in place order, each a page at a time
//! (memory bounded whatever the tables' size), checking each row against
//! its chain and each anchored place against its anchor. The anchors come
//! first: they are what the chains are held to.

use sqlx::Row;
use toolhost_audit::anchor::{AnchorCheck, StoredAnchor};
use toolhost_audit::chain::{ChainCheck, Next, OwnLink, Problem, TenantCheck, TenantSummary};
use toolhost_audit::{ChainBreak, ChainSummary, Encoding};

use super::anchors::anchor_page;
use super::select_audit;
use crate::StorageError;
use crate::connect::{Pools, on_pool};
use crate::record::Stored;

/// Rows (or anchors, or chain ids) read per query by a walk.
const WALK_PAGE: i64 = 1000;

/// One page of the legacy chain: its rows after id `$1`, at most `$2`.
const SELECT_LEGACY_PAGE: &str =
    select_audit!("WHERE chain_id = '' AND id > $1 ORDER BY id LIMIT $2");

/// One page of writer chain `$1`: its rows after place `$2`, at most `$3`.
const SELECT_CHAIN_PAGE: &str =
    select_audit!("WHERE chain_id = $1 AND chain_seq > $2 ORDER BY chain_seq LIMIT $3");

/// A writer chain's row without a place: the walk by place never meets it.
const SELECT_UNPLACED: &str =
    select_audit!("WHERE chain_id <> '' AND chain_seq IS NULL ORDER BY id LIMIT 1");

/// The first chained row's id, where the chain began.
const SELECT_CHAIN_START: &str = "SELECT min(id) FROM audit WHERE row_hash IS NOT NULL";

/// A row without a hash written after the chain began (`$1`): in any
/// chain, inserted behind the host's back (the legacy walk meets those of
/// the legacy chain only if a legacy row was hashed before them).
const SELECT_UNHASHED_LATE: &str =
    select_audit!("WHERE row_hash IS NULL AND id > $1 ORDER BY id LIMIT 1");

/// One page of the writer chains' ids after `$1`: every chain opened,
/// holding rows, or anchored, so a chain whose rows were all removed (or
/// whose opening was) is still walked.
const SELECT_CHAIN_IDS: &str = "SELECT chain_id FROM (\
     SELECT chain_id FROM audit_chains \
     UNION SELECT chain_id FROM audit WHERE chain_id <> '' \
     UNION SELECT chain_id FROM audit_anchors) AS chains \
     WHERE chain_id > $1 ORDER BY chain_id LIMIT $2";

/// How chain `$1` is hashed, if a writer opened it.
const SELECT_OPENED: &str = "SELECT encoding FROM audit_chains WHERE chain_id = $1";

/// The anchors of chain `$1` at places in (`$2`, `$3`].
const SELECT_ANCHORED: &str = "SELECT seq, chain_seq, head_hash FROM audit_anchors \
     WHERE chain_id = $1 AND chain_seq > $2 AND chain_seq <= $3 ORDER BY chain_seq, seq";

/// The furthest place of chain `$1` any anchor recorded, and that anchor.
const SELECT_LAST_ANCHORED: &str = "SELECT seq, chain_seq FROM audit_anchors \
     WHERE chain_id = $1 ORDER BY chain_seq DESC, seq LIMIT 1";

/// The columns and joins of a tenant's row with its neighbours, then `$rest`.
macro_rules! concat_tenant {
    ($rest:literal) => {
        concat!(
            "SELECT a.*, prev_row.row_hash AS before_hash, \
     next_row.id AS after_id, next_row.prev_hash AS after_prev, \
     (SELECT max(l.chain_seq) FROM audit l WHERE l.chain_id = a.chain_id) AS last_place, \
     (SELECT c.encoding FROM audit_chains c WHERE c.chain_id = a.chain_id) AS chain_encoding \
     FROM audit a \
     LEFT JOIN audit prev_row ON prev_row.chain_id = a.chain_id \
         AND prev_row.chain_seq = a.chain_seq - 1 \
     LEFT JOIN audit next_row ON next_row.chain_id = a.chain_id \
         AND next_row.chain_seq = a.chain_seq + 1 ",
            $rest
        )
    };
}
pub(super) use concat_tenant;

/// One page of a tenant's walk: the tenant `$1`'s rows after id `$2`, at
/// most `$3`, each with what the walk may see of its neighbours in its
/// chain (the row before: its `row_hash`; the row after: its `prev_hash`)
/// and its chain's last place, to tell its head from a gap after it. The
/// neighbours are found by `(chain_id, chain_seq)`, which is indexed.
const SELECT_TENANT_PAGE: &str =
    concat_tenant!("WHERE a.tenant = $1 AND a.id > $2 ORDER BY a.id LIMIT $3");

/// A row with its chain and place.
pub(super) struct Placed {
    pub(super) stored: Stored,
    pub(super) chain: String,
    pub(super) place: Option<i64>,
}

pub(super) fn placed<'r, R>(row: &'r R) -> Result<Placed, sqlx::Error>
where
    R: Row,
    &'static str: sqlx::ColumnIndex<R>,
    i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok(Placed {
        stored: Stored::read(row)?,
        chain: row.try_get("chain_id")?,
        place: row.try_get("chain_seq")?,
    })
}

/// The walk's result: the store's error outside, the trail's inside.
type Walked<T> = Result<Result<T, ChainBreak>, StorageError>;

/// Walks the whole trail: the anchors, the legacy chain, every writer
/// chain. The outer error is the store's (the rows could not be read); the
/// inner one the trail's (the first row or anchor that does not fit).
pub(crate) async fn verify(pools: &Pools) -> Walked<ChainSummary> {
    let anchors = match walk_anchors(pools).await? {
        Ok(anchors) => anchors,
        Err(broken) => return Ok(Err(broken)),
    };
    let mut summary = match walk_legacy(pools).await? {
        Ok(summary) => summary,
        Err(broken) => return Ok(Err(broken)),
    };
    summary.anchors = anchors.count();
    summary.anchor_head = anchors.head().cloned();
    let unplaced: Option<Placed> = on_pool!(pools, pool => {
        sqlx::query(SELECT_UNPLACED)
            .fetch_optional(pool)
            .await
            .and_then(|row| row.as_ref().map(placed).transpose())
    })
    .map_err(StorageError::query("read audit rows without a place"))?;
    if let Some(row) = unplaced {
        return Ok(Err(row_break(&row.stored, Problem::Unplaced)));
    }
    if let Some(broken) = unhashed_late(pools).await? {
        return Ok(Err(broken));
    }
    let mut after = String::new();
    loop {
        let ids: Vec<String> = on_pool!(pools, pool => {
            sqlx::query_scalar(SELECT_CHAIN_IDS)
                .bind(&after)
                .bind(WALK_PAGE)
                .fetch_all(pool)
                .await
        })
        .map_err(StorageError::query("list the audit chains"))?;
        for chain in &ids {
            match walk_chain(pools, chain).await? {
                Ok(walked) => {
                    summary.chains += 1;
                    summary.verified += walked.verified;
                    if let Some(head) = walked.head
                        && summary.head.as_ref().is_none_or(|(id, _)| head.0 > *id)
                    {
                        summary.head = Some(head);
                    }
                }
                Err(broken) => return Ok(Err(broken)),
            }
        }
        match ids.last() {
            Some(last) if ids.len() as i64 == WALK_PAGE => after = last.clone(),
            _ => return Ok(Ok(summary)),
        }
    }
}

/// The first row without a hash written after the chain began, if any.
async fn unhashed_late(pools: &Pools) -> Result<Option<ChainBreak>, StorageError> {
    let start: Option<i64> = on_pool!(pools, pool => {
        sqlx::query_scalar(SELECT_CHAIN_START).fetch_one(pool).await
    })
    .map_err(StorageError::query("find where the audit chain began"))?;
    let Some(start) = start else {
        return Ok(None);
    };
    let late: Option<Stored> = on_pool!(pools, pool => {
        sqlx::query(SELECT_UNHASHED_LATE)
            .bind(start)
            .fetch_optional(pool)
            .await
            .and_then(|row| row.as_ref().map(Stored::read).transpose())
    })
    .map_err(StorageError::query("read audit rows without a hash"))?;
    Ok(late.map(|row| row_break(&row, Problem::Unhashed { chain_start: start })))
}

/// The break naming `stored`'s row.
fn row_break(stored: &Stored, problem: Problem) -> ChainBreak {
    let link = stored.link();
    ChainBreak {
        id: link.id,
        call_id: link.row.call_id.to_owned(),
        problem,
    }
}

/// Walks the anchor chain in number order.
async fn walk_anchors(pools: &Pools) -> Walked<AnchorCheck> {
    let mut check = AnchorCheck::new();
    let mut after = 0i64;
    loop {
        let page = anchor_page(pools, after, i64::MAX, WALK_PAGE).await?;
        for anchor in &page {
            let Some(encoding) = Encoding::from_number(anchor.encoding) else {
                let problem = Problem::AnchorEncoding {
                    anchor: anchor.seq,
                    encoding: anchor.encoding,
                };
                return Ok(Err(ChainBreak::of_trail(problem)));
            };
            let stored = StoredAnchor {
                row: anchor.row(),
                prev_hash: &anchor.prev_hash,
                anchor_hash: &anchor.anchor_hash,
                encoding,
            };
            if let Err(broken) = check.check(&stored) {
                return Ok(Err(broken));
            }
        }
        match page.last() {
            Some(last) if page.len() as i64 == WALK_PAGE => after = last.seq,
            _ => return Ok(Ok(check)),
        }
    }
}

/// Walks the legacy chain in id order (rows from before the chain first,
/// unverifiable but counted).
async fn walk_legacy(pools: &Pools) -> Walked<ChainSummary> {
    let mut check = ChainCheck::new();
    let mut after = i64::MIN;
    loop {
        let page: Vec<Stored> = on_pool!(pools, pool => {
            sqlx::query(SELECT_LEGACY_PAGE)
                .bind(after)
                .bind(WALK_PAGE)
                .fetch_all(pool)
                .await
                .and_then(|rows| rows.iter().map(Stored::read).collect())
        })
        .map_err(StorageError::query("read audit rows for the chain walk"))?;
        for stored in &page {
            if let Err(broken) = check.check(&stored.link()) {
                return Ok(Err(broken));
            }
        }
        match page.last() {
            Some(last) if page.len() as i64 == WALK_PAGE => after = last.link().id,
            _ => return Ok(Ok(check.summary())),
        }
    }
}

/// What one writer chain's walk found.
struct ChainWalked {
    verified: u64,
    /// Its newest row's id and hash.
    head: Option<(i64, String)>,
}

/// Walks writer chain `chain` in place order: each row at the next place,
/// linked and hashed; each anchored place holding the hash its anchor
/// recorded; no anchor beyond its last row; and the chain opened by a
/// writer.
async fn walk_chain(pools: &Pools, chain: &str) -> Walked<ChainWalked> {
    let opened: Option<i64> = on_pool!(pools, pool => {
        sqlx::query_scalar(SELECT_OPENED).bind(chain).fetch_optional(pool).await
    })
    .map_err(StorageError::query("read an audit chain's opening"))?;
    let encoding = match opened.map(Encoding::from_number) {
        Some(Some(encoding)) => encoding,
        Some(None) => {
            let problem = Problem::ChainEncoding {
                chain: chain.to_owned(),
                encoding: opened.unwrap_or_default(),
            };
            return Ok(Err(ChainBreak::of_trail(problem)));
        }
        // Not opened: its first row, if any, is named below.
        None => Encoding::default(),
    };
    let mut check = ChainCheck::for_chain(chain, encoding);
    let mut last: Option<(i64, String, i64)> = None; // id, call id, place
    let mut head = None;
    let mut after = 0i64;
    loop {
        let page: Vec<Placed> = on_pool!(pools, pool => {
            sqlx::query(SELECT_CHAIN_PAGE)
                .bind(chain)
                .bind(after)
                .bind(WALK_PAGE)
                .fetch_all(pool)
                .await
                .and_then(|rows| rows.iter().map(placed).collect())
        })
        .map_err(StorageError::query("read an audit chain's rows"))?;
        if opened.is_none()
            && let Some(first) = page.first()
        {
            let problem = Problem::UnopenedChain {
                chain: chain.to_owned(),
            };
            return Ok(Err(row_break(&first.stored, problem)));
        }
        let mut hashes = Vec::with_capacity(page.len());
        for row in &page {
            let link = row.stored.link();
            let place = row.place.unwrap_or_default();
            match check.check_placed(&link, place) {
                Ok(hash) => {
                    head = Some((link.id, hash.clone()));
                    hashes.push((place, hash, row));
                }
                Err(broken) => return Ok(Err(broken)),
            }
        }
        let Some((end, _, end_row)) = hashes.last() else {
            break;
        };
        let anchored: Vec<(i64, i64, String)> = on_pool!(pools, pool => {
            sqlx::query_as(SELECT_ANCHORED)
                .bind(chain)
                .bind(after)
                .bind(*end)
                .fetch_all(pool)
                .await
        })
        .map_err(StorageError::query("read an audit chain's anchors"))?;
        for (anchor, place, recorded) in &anchored {
            let Some((_, hash, row)) = usize::try_from(place - after - 1)
                .ok()
                .and_then(|i| hashes.get(i))
            else {
                continue;
            };
            if hash != recorded {
                let problem = Problem::Unanchored { anchor: *anchor };
                return Ok(Err(row_break(&row.stored, problem)));
            }
        }
        let end_link = end_row.stored.link();
        last = Some((end_link.id, end_link.row.call_id.to_owned(), *end));
        if (page.len() as i64) < WALK_PAGE {
            break;
        }
        after = *end;
    }
    let furthest: Option<(i64, i64)> = on_pool!(pools, pool => {
        sqlx::query_as(SELECT_LAST_ANCHORED)
            .bind(chain)
            .fetch_optional(pool)
            .await
    })
    .map_err(StorageError::query("read an audit chain's last anchor"))?;
    let reached = last.as_ref().map_or(0, |(_, _, place)| *place);
    if let Some((_, place)) = furthest
        && place > reached
    {
        let problem = Problem::Truncated {
            chain: chain.to_owned(),
            place,
        };
        let (id, call_id) = last.map(|(id, call, _)| (id, call)).unwrap_or_default();
        return Ok(Err(ChainBreak {
            id,
            call_id,
            problem,
        }));
    }
    Ok(Ok(ChainWalked {
        verified: check.summary().verified,
        head,
    }))
}

/// A tenant's row as [`SELECT_TENANT_PAGE`] reads it.
pub(super) struct Neighboured {
    pub(super) row: Placed,
    pub(super) before: Option<String>,
    after_id: Option<i64>,
    after_prev: Option<String>,
    last_place: Option<i64>,
    /// Its chain's encoding (`None`: the legacy chain, or one never opened).
    chain_encoding: Option<i64>,
}

impl Neighboured {
    /// Reads a row selected by [`concat_tenant`], on either engine.
    pub(super) fn read<'r, R>(r: &'r R) -> Result<Neighboured, sqlx::Error>
    where
        R: Row,
        &'static str: sqlx::ColumnIndex<R>,
        i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
        String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    {
        Ok(Neighboured {
            row: placed(r)?,
            before: r.try_get("before_hash")?,
            after_id: r.try_get("after_id")?,
            after_prev: r.try_get("after_prev")?,
            last_place: r.try_get("last_place")?,
            chain_encoding: r.try_get("chain_encoding")?,
        })
    }

    /// The row after it in its chain, as a tenant may see it.
    pub(super) fn next(&self) -> Next<'_> {
        match (self.after_id, self.row.place, self.last_place) {
            (Some(_), _, _) => Next::Links(self.after_prev.as_deref()),
            (None, Some(place), Some(last)) if place < last => Next::Missing,
            (None, _, _) => Next::Head,
        }
    }

    fn own_link(&self) -> OwnLink<'_> {
        let place = self.row.place;
        let after = self.next();
        let encoding = (self.chain_encoding)
            .and_then(Encoding::from_number)
            .unwrap_or_default();
        OwnLink {
            link: self.row.stored.link(),
            chain: &self.row.chain,
            encoding,
            place,
            before: self.before.as_deref(),
            after,
        }
    }
}

/// Walks `tenant`'s rows in id order, a page at a time, checking each
/// and its links to its neighbours in its chain ([`TenantCheck`]): only
/// the tenant's rows are read whole, and nothing host-wide is reported.
/// Outer error: the store's; inner: the first of the tenant's rows that
/// does not fit.
pub(crate) async fn verify_tenant(pools: &Pools, tenant: &str) -> Walked<TenantSummary> {
    let mut check = TenantCheck::new();
    let mut after = i64::MIN;
    loop {
        let page: Vec<Neighboured> = on_pool!(pools, pool => {
            sqlx::query(SELECT_TENANT_PAGE)
                .bind(tenant)
                .bind(after)
                .bind(WALK_PAGE)
                .fetch_all(pool)
                .await
                .and_then(|rows| rows.iter().map(Neighboured::read).collect())
        })
        .map_err(StorageError::query(
            "read a tenant's audit rows for its chain walk",
        ))?;
        for row in &page {
            if let Err(broken) = check.check(&row.own_link()) {
                return Ok(Err(broken));
            }
        }
        match page.last() {
            Some(last) if page.len() as i64 == WALK_PAGE => after = last.row.stored.link().id,
            _ => return Ok(Ok(check.summary())),
        }
    }
}
