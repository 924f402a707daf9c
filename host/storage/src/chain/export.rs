//! Reading a segment of the audit trail out as export lines
//! (`toolhost_audit::export` says what they are), a page at a time: the
//! anchors after `from_anchor` up to the newest, then each chain's rows up
//! to the place its last anchor in that range records.

use toolhost_audit::Encoding;
use toolhost_audit::chain::{GENESIS, LEGACY_CHAIN, Next};
use toolhost_audit::export::{
    EXPORT_FORMAT, End, ExportLine, ExportedAnchor, ExportedChain, ExportedRow, Header, Neighbours,
    NextRow, Scope,
};

use super::anchors::anchor_page;
use super::select_audit;
use super::walk::{Neighboured, Placed, concat_tenant, placed};
use crate::StorageError;
use crate::connect::{Pools, on_pool};

/// Rows or anchors read per query.
const EXPORT_PAGE: i64 = 1000;

/// The newest anchor's number (0 when none).
const SELECT_LAST_ANCHOR: &str = "SELECT coalesce(max(seq), 0) FROM audit_anchors";

/// Anchor `$1`'s hash.
const SELECT_ANCHOR_HASH: &str = "SELECT anchor_hash FROM audit_anchors WHERE seq = $1";

/// The chains anchored in (`$1`, `$2`], each with its furthest anchored
/// place there, after chain `$3`, a page at a time.
const SELECT_ANCHORED_CHAINS: &str = "SELECT chain_id, max(chain_seq) FROM audit_anchors \
     WHERE seq > $1 AND seq <= $2 AND chain_id > $3 GROUP BY chain_id ORDER BY chain_id LIMIT $4";

/// Where chain `$1` stood at anchor `$2`: its furthest place anchored by
/// then, and the hash recorded there.
const SELECT_CHAIN_START: &str = "SELECT chain_seq, head_hash FROM audit_anchors \
     WHERE chain_id = $1 AND seq <= $2 ORDER BY chain_seq DESC LIMIT 1";

/// How chain `$1` is hashed, if a writer opened it.
const SELECT_ENCODING: &str = "SELECT encoding FROM audit_chains WHERE chain_id = $1";

/// One page of chain `$1`'s rows at places in (`$2`, `$3`].
const SELECT_CHAIN_ROWS: &str = select_audit!(
    "WHERE chain_id = $1 AND chain_seq > $2 AND chain_seq <= $3 ORDER BY chain_seq LIMIT $4"
);

/// One page of the legacy chain's rows after id `$1`.
const SELECT_LEGACY_ROWS: &str =
    select_audit!("WHERE chain_id = '' AND id > $1 ORDER BY id LIMIT $2");

/// One page of the tenant `$1`'s rows of the legacy chain after id `$2`,
/// with their neighbours.
const SELECT_TENANT_LEGACY: &str =
    concat_tenant!("WHERE a.tenant = $1 AND a.chain_id = '' AND a.id > $2 ORDER BY a.id LIMIT $3");

/// One page of the tenant `$1`'s rows of chain `$2` at places in
/// (`$3`, `$4`], with their neighbours.
const SELECT_TENANT_CHAIN: &str = concat_tenant!(
    "WHERE a.tenant = $1 AND a.chain_id = $2 AND a.chain_seq > $3 AND a.chain_seq <= $4 \
     ORDER BY a.chain_seq LIMIT $5"
);

/// What to export.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportRequest {
    /// One tenant's rows (a tenant admin's export), or every chain with
    /// the anchors (`None`: the operator's).
    pub tenant: Option<String>,
    /// The anchor to start after: 0 for the whole trail, or the
    /// `next_from_anchor` of the export before.
    pub from_anchor: i64,
}

/// Why an export stopped.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] StorageError),
    /// `from_anchor` names no anchor.
    #[error("there is no anchor {0} to resume from (the newest is {1})")]
    NoSuchAnchor(i64, i64),
    /// The lines could not be written.
    #[error("writing the export: {0}")]
    Write(#[from] std::io::Error),
}

/// Writes the segment `request` names to `out`, line by line.
pub(crate) async fn export(
    pools: &Pools,
    request: &ExportRequest,
    out: &mut dyn FnMut(&ExportLine) -> std::io::Result<()>,
) -> Result<(), ExportError> {
    let read = |what| StorageError::query(what);
    let to_anchor: i64 = on_pool!(pools, pool => {
        sqlx::query_scalar(SELECT_LAST_ANCHOR).fetch_one(pool).await
    })
    .map_err(read("read the newest audit anchor"))?;
    let from = request.from_anchor;
    let from_anchor_hash = if from == 0 {
        GENESIS.to_owned()
    } else {
        let hash: Option<String> = on_pool!(pools, pool => {
            sqlx::query_scalar(SELECT_ANCHOR_HASH).bind(from).fetch_optional(pool).await
        })
        .map_err(read("read an audit anchor"))?;
        hash.ok_or(ExportError::NoSuchAnchor(from, to_anchor))?
    };
    let scope = match request.tenant {
        Some(_) => Scope::Tenant,
        None => Scope::Host,
    };
    out(&ExportLine::Header(Header {
        format: EXPORT_FORMAT.to_owned(),
        scope,
        tenant: request.tenant.clone(),
        from_anchor: from,
        from_anchor_hash,
        to_anchor,
    }))?;
    let mut counted = End {
        rows: 0,
        anchors: 0,
        next_from_anchor: to_anchor,
    };
    if scope == Scope::Host {
        counted.anchors = anchors(pools, from, to_anchor, out).await?;
    }
    if from == 0 {
        counted.rows += legacy(pools, request.tenant.as_deref(), out).await?;
    }
    let mut after = String::new();
    loop {
        let chains: Vec<(String, i64)> = on_pool!(pools, pool => {
            sqlx::query_as(SELECT_ANCHORED_CHAINS)
                .bind(from)
                .bind(to_anchor)
                .bind(&after)
                .bind(EXPORT_PAGE)
                .fetch_all(pool)
                .await
        })
        .map_err(read("list the anchored audit chains"))?;
        for (chain, end) in &chains {
            counted.rows += writer_chain(pools, request, chain, *end, out).await?;
        }
        match chains.last() {
            Some((last, _)) if chains.len() as i64 == EXPORT_PAGE => after = last.clone(),
            _ => break,
        }
    }
    out(&ExportLine::End(counted))?;
    Ok(())
}

/// Writes the anchors in (`from`, `to`]; how many.
async fn anchors(
    pools: &Pools,
    from: i64,
    to: i64,
    out: &mut dyn FnMut(&ExportLine) -> std::io::Result<()>,
) -> Result<u64, ExportError> {
    let mut after = from;
    let mut written = 0;
    loop {
        let page = anchor_page(pools, after, to, EXPORT_PAGE).await?;
        for anchor in &page {
            // An encoding this build does not know is exported as the
            // tagged one: the check then names the anchor.
            let encoding = Encoding::from_number(anchor.encoding).unwrap_or_default();
            out(&ExportLine::Anchor(ExportedAnchor {
                anchor_hash: anchor.anchor_hash.clone(),
                anchor: encoding.anchor_object(&anchor.prev_hash, &anchor.row()),
            }))?;
            written += 1;
        }
        match page.last() {
            Some(last) if page.len() as i64 == EXPORT_PAGE => after = last.seq,
            _ => return Ok(written),
        }
    }
}

/// Writes the legacy chain (or `tenant`'s rows of it); how many rows.
async fn legacy(
    pools: &Pools,
    tenant: Option<&str>,
    out: &mut dyn FnMut(&ExportLine) -> std::io::Result<()>,
) -> Result<u64, ExportError> {
    out(&ExportLine::Chain(ExportedChain {
        chain: LEGACY_CHAIN.to_owned(),
        encoding: Some(Encoding::Tagged.number()),
        start_place: 0,
        start_hash: GENESIS.to_owned(),
    }))?;
    let mut after = i64::MIN;
    let mut written = 0;
    loop {
        let page: Vec<Exported> = match tenant {
            None => on_pool!(pools, pool => {
                sqlx::query(SELECT_LEGACY_ROWS)
                    .bind(after)
                    .bind(EXPORT_PAGE)
                    .fetch_all(pool)
                    .await
                    .and_then(|rows| rows.iter().map(|r| placed(r).map(Exported::plain)).collect())
            }),
            Some(tenant) => on_pool!(pools, pool => {
                sqlx::query(SELECT_TENANT_LEGACY)
                    .bind(tenant)
                    .bind(after)
                    .bind(EXPORT_PAGE)
                    .fetch_all(pool)
                    .await
                    .and_then(|rows| {
                        rows.iter()
                            .map(|r| Neighboured::read(r).map(Exported::neighboured))
                            .collect()
                    })
            }),
        }
        .map_err(StorageError::query("read the legacy audit chain"))?;
        for row in &page {
            out(&row.line(Encoding::Tagged))?;
            written += 1;
        }
        match page.last() {
            Some(last) if page.len() as i64 == EXPORT_PAGE => after = last.id(),
            _ => return Ok(written),
        }
    }
}

/// Writes writer chain `chain`'s rows after where it stood at the
/// request's anchor, up to place `end`; how many rows.
async fn writer_chain(
    pools: &Pools,
    request: &ExportRequest,
    chain: &str,
    end: i64,
    out: &mut dyn FnMut(&ExportLine) -> std::io::Result<()>,
) -> Result<u64, ExportError> {
    let read = |what| StorageError::query(what);
    let encoding: Option<i64> = on_pool!(pools, pool => {
        sqlx::query_scalar(SELECT_ENCODING).bind(chain).fetch_optional(pool).await
    })
    .map_err(read("read an audit chain's opening"))?;
    let start: Option<(i64, String)> = on_pool!(pools, pool => {
        sqlx::query_as(SELECT_CHAIN_START)
            .bind(chain)
            .bind(request.from_anchor)
            .fetch_optional(pool)
            .await
    })
    .map_err(read("read where an audit chain stood"))?;
    let hashed_in = encoding.and_then(Encoding::from_number).unwrap_or_default();
    let (start_place, start_hash) = start.unwrap_or_else(|| (0, hashed_in.genesis(chain)));
    out(&ExportLine::Chain(ExportedChain {
        chain: chain.to_owned(),
        encoding,
        start_place,
        start_hash,
    }))?;
    let mut after = start_place;
    let mut written = 0;
    loop {
        let page: Vec<Exported> = match &request.tenant {
            None => on_pool!(pools, pool => {
                sqlx::query(SELECT_CHAIN_ROWS)
                    .bind(chain)
                    .bind(after)
                    .bind(end)
                    .bind(EXPORT_PAGE)
                    .fetch_all(pool)
                    .await
                    .and_then(|rows| rows.iter().map(|r| placed(r).map(Exported::plain)).collect())
            }),
            Some(tenant) => on_pool!(pools, pool => {
                sqlx::query(SELECT_TENANT_CHAIN)
                    .bind(tenant)
                    .bind(chain)
                    .bind(after)
                    .bind(end)
                    .bind(EXPORT_PAGE)
                    .fetch_all(pool)
                    .await
                    .and_then(|rows| {
                        rows.iter()
                            .map(|r| Neighboured::read(r).map(Exported::neighboured))
                            .collect()
                    })
            }),
        }
        .map_err(read("read an audit chain's rows"))?;
        for row in &page {
            out(&row.line(hashed_in))?;
            written += 1;
        }
        match page.last() {
            Some(last) if page.len() as i64 == EXPORT_PAGE => {
                after = last.row.place.unwrap_or(end);
            }
            _ => return Ok(written),
        }
    }
}

/// A row read for an export, with its neighbours for a tenant's.
struct Exported {
    row: Placed,
    neighbours: Option<Neighbours>,
}

impl Exported {
    fn plain(row: Placed) -> Exported {
        Exported {
            row,
            neighbours: None,
        }
    }

    fn neighboured(n: Neighboured) -> Exported {
        let next = match n.next() {
            Next::Head => NextRow::Head,
            Next::Missing => NextRow::Missing,
            Next::Links(prev) => NextRow::Links {
                prev_hash: prev.map(str::to_owned),
            },
        };
        let neighbours = Neighbours {
            before_hash: n.before.clone(),
            next,
        };
        Exported {
            row: n.row,
            neighbours: Some(neighbours),
        }
    }

    fn id(&self) -> i64 {
        self.row.stored.link().id
    }

    /// Its line, its object written in its chain's `encoding`.
    fn line(&self, encoding: Encoding) -> ExportLine {
        let link = self.row.stored.link();
        let mut row = encoding.row_object(link.prev_hash.unwrap_or_default(), &link.row);
        if link.prev_hash.is_none() {
            row["prev_hash"] = serde_json::Value::Null;
        }
        ExportLine::Row(ExportedRow {
            id: link.id,
            chain: self.row.chain.clone(),
            place: self.row.place,
            row_hash: link.row_hash.map(str::to_owned),
            row,
            neighbours: self.neighbours.clone(),
        })
    }
}
