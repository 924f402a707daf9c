//! An export of the audit trail as JSON lines, and its offline check.
//!
//! `toolhost audit export` writes one JSON object per line ([`ExportLine`],
//! tagged by `type`), a segment of the trail bounded by two anchors:
//!
//! 1. `header`: the format, the scope (`host`: every chain, with the
//!    anchors; `tenant`: one tenant's rows, each with its neighbours'
//!    hashes, no anchors), and the anchors it runs from (exclusive, with
//!    that anchor's hash) and to (inclusive).
//! 2. (host scope) every `anchor` in that range, in number order.
//! 3. For each chain, a `chain` line (its id, its encoding, the place and
//!    hash it starts after), then its `row`s in place order: each with its
//!    stored `row_hash` and the object its hash is taken of (for chains in
//!    [`Encoding::Jcs`], the SHA-256 of that object's RFC 8785 text is the
//!    `row_hash`: [`crate::encoding`]). A segment from anchor 0 starts with
//!    the legacy chain (id `""`), in id order.
//! 4. `end`: how many rows and anchors, and the anchor the next segment
//!    resumes from (`--from-anchor`).
//!
//! Rows are exported up to the place their chain's last anchor in the
//! range records, so every chain of a host-scope segment ends at an
//! anchored head, and segments join: the next starts where this one
//! ended. [`ExportCheck`] walks a segment as `audit verify` walks the
//! tables, with nothing but the file; [`ExportCheck::after`] joins it to
//! the segment before.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::anchor::{AnchorCheck, AnchorRow, StoredAnchor};
use crate::chain::{
    ChainBreak, ChainCheck, ChainedRow, GENESIS, LEGACY_CHAIN, Link, Next, OwnLink, Problem,
    TenantCheck,
};
use crate::encoding::Encoding;

/// The `format` of an export's header.
pub const EXPORT_FORMAT: &str = "toolhost-audit-export-v1";

/// One line of an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ExportLine {
    /// The first line.
    Header(Header),
    /// An anchor (host scope).
    Anchor(ExportedAnchor),
    /// The start of a chain's rows.
    Chain(ExportedChain),
    /// A row of the chain last started.
    Row(ExportedRow),
    /// The last line.
    End(End),
}

/// What an export holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// [`EXPORT_FORMAT`].
    pub format: String,
    /// Whose rows.
    pub scope: Scope,
    /// The tenant, for [`Scope::Tenant`].
    pub tenant: Option<String>,
    /// The anchor the segment starts after (0: the trail's start).
    pub from_anchor: i64,
    /// That anchor's hash ([`GENESIS`] for 0).
    pub from_anchor_hash: String,
    /// The last anchor the segment covers.
    pub to_anchor: i64,
}

/// Whose rows an export holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Every chain and the anchors: the operator's.
    Host,
    /// One tenant's rows: a tenant admin's.
    Tenant,
}

/// An anchor as exported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportedAnchor {
    /// Its stored hash.
    pub anchor_hash: String,
    /// Its values ([`Encoding::anchor_object`]).
    pub anchor: Value,
}

/// The start of a chain's rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportedChain {
    /// Its id (`""`: the legacy chain).
    pub chain: String,
    /// Its stored encoding number; `null` if no writer opened it.
    pub encoding: Option<i64>,
    /// The place its first exported row follows (0: the chain's start).
    pub start_place: i64,
    /// The hash at that place (the chain's genesis at 0).
    pub start_hash: String,
}

/// A row as exported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportedRow {
    /// Its id.
    pub id: i64,
    /// Its chain.
    pub chain: String,
    /// Its place in the chain (`null` on rows from before the chain).
    pub place: Option<i64>,
    /// Its stored `row_hash`.
    pub row_hash: Option<String>,
    /// Its values and `prev_hash` ([`Encoding::row_object`]).
    pub row: Value,
    /// (Tenant scope.) What a tenant may see of its neighbours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neighbours: Option<Neighbours>,
}

/// A tenant's row's neighbours in its chain: their hashes only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Neighbours {
    /// The `row_hash` of the row at the place before (`null`: none there).
    pub before_hash: Option<String>,
    /// The row at the place after.
    pub next: NextRow,
}

/// The row after a tenant's row, as exported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum NextRow {
    /// None: the row is its chain's head.
    Head,
    /// The chain goes on but no row holds the next place.
    Missing,
    /// The next row's `prev_hash`.
    Links {
        /// Its stored `prev_hash`.
        prev_hash: Option<String>,
    },
}

/// The last line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct End {
    /// Rows in the segment.
    pub rows: u64,
    /// Anchors in the segment.
    pub anchors: u64,
    /// Where the next segment starts: `--from-anchor` of the next export.
    pub next_from_anchor: i64,
}

/// A row's values as an export's object holds them.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RowFields {
    encoding: String,
    prev_hash: Option<String>,
    call_id: String,
    at: i64,
    principal: String,
    tenant: String,
    client_id: Option<String>,
    tool: String,
    plugin: Option<String>,
    catalog_version: Option<String>,
    plugin_digest: Option<String>,
    argument_digest: String,
    outcome: String,
    error_code: Option<String>,
    duration_us: i64,
    gate_id: Option<String>,
    receipt_sha256: Option<String>,
    client_rounds: Option<String>,
    definition_digest: Option<String>,
}

impl RowFields {
    fn chained(&self) -> ChainedRow<'_> {
        ChainedRow {
            call_id: &self.call_id,
            at_ms: self.at,
            principal: &self.principal,
            tenant: &self.tenant,
            client_id: self.client_id.as_deref(),
            tool: &self.tool,
            plugin: self.plugin.as_deref(),
            catalog_version: self.catalog_version.as_deref(),
            plugin_digest: self.plugin_digest.as_deref(),
            argument_digest: &self.argument_digest,
            outcome: &self.outcome,
            error_code: self.error_code.as_deref(),
            duration_us: self.duration_us,
            gate_id: self.gate_id.as_deref(),
            receipt_sha256: self.receipt_sha256.as_deref(),
            client_rounds: self.client_rounds.as_deref(),
            definition_digest: self.definition_digest.as_deref(),
        }
    }
}

/// An anchor's values as an export's object holds them.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnchorFields {
    encoding: String,
    prev_hash: String,
    seq: i64,
    at: i64,
    chain: String,
    place: i64,
    head_hash: String,
}

/// Why an export does not check out: the line, and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("export line {line}: {problem}")]
pub struct ExportBreak {
    /// The line (from 1; the line after the last when the file ended early).
    pub line: u64,
    /// What is wrong.
    pub problem: ExportProblem,
}

/// What is wrong with an export.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportProblem {
    /// Not a line of an export.
    #[error("not an export line: {0}")]
    Malformed(String),
    /// A line where another was due.
    #[error("{0}")]
    Misplaced(&'static str),
    /// A row's or an anchor's object is not the one its hash is taken of,
    /// or names another encoding than its chain's.
    #[error("{0}")]
    Form(String),
    /// The segment does not join the one before it.
    #[error("{0}")]
    Unjoined(String),
    /// The rows or anchors do not fit their chain.
    #[error("{0}")]
    Broken(#[from] ChainBreak),
}

/// What an intact export held: enough to join the next segment to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportSummary {
    /// Its scope (`None` before a header).
    pub scope: Option<Scope>,
    /// Rows checked.
    pub rows: u64,
    /// Anchors checked.
    pub anchors: u64,
    /// The last anchor covered and its hash.
    pub anchor_head: (i64, String),
    /// Each chain's end: its last exported place and hash.
    pub ends: BTreeMap<String, (i64, String)>,
}

/// The chain whose rows are being read.
struct OpenChain {
    id: String,
    encoding: Encoding,
    check: ChainCheck,
    /// The last place read.
    place: i64,
}

/// A walk over an export's lines: feed each to [`ExportCheck::line`],
/// then [`ExportCheck::finish`]. Memory holds the segment's anchors and
/// each chain's end, never its rows.
pub struct ExportCheck {
    line: u64,
    previous: Option<ExportSummary>,
    header: Option<Header>,
    anchors: AnchorCheck,
    /// The anchored places of the segment: chain → place → (anchor, hash).
    anchored: BTreeMap<String, BTreeMap<i64, (i64, String)>>,
    chain: Option<OpenChain>,
    seen: BTreeSet<String>,
    tenant: TenantCheck,
    summary: ExportSummary,
    ended: bool,
}

impl ExportCheck {
    /// A check of a segment read on its own (its start taken as given).
    pub fn new() -> Self {
        ExportCheck {
            line: 0,
            previous: None,
            header: None,
            anchors: AnchorCheck::new(),
            anchored: BTreeMap::new(),
            chain: None,
            seen: BTreeSet::new(),
            tenant: TenantCheck::new(),
            summary: ExportSummary::default(),
            ended: false,
        }
    }

    /// A check of the segment that follows `previous`: it must start at
    /// the anchor `previous` ended at, and each of its chains where
    /// `previous` left it.
    pub fn after(previous: ExportSummary) -> Self {
        ExportCheck {
            previous: Some(previous),
            ..Self::new()
        }
    }

    /// Checks the next line's text.
    pub fn line(&mut self, text: &str) -> Result<(), ExportBreak> {
        self.line += 1;
        let at = self.line;
        let broken = |problem| ExportBreak { line: at, problem };
        let line: ExportLine = serde_json::from_str(text)
            .map_err(|e| broken(ExportProblem::Malformed(e.to_string())))?;
        self.take(line).map_err(broken)
    }

    fn take(&mut self, line: ExportLine) -> Result<(), ExportProblem> {
        if self.ended {
            return Err(ExportProblem::Misplaced("a line after the end"));
        }
        match line {
            ExportLine::Header(header) => self.header(header),
            _ if self.header.is_none() => Err(ExportProblem::Misplaced(
                "the first line must be the header",
            )),
            ExportLine::Anchor(anchor) => self.anchor(anchor),
            ExportLine::Chain(chain) => self.start_chain(chain),
            ExportLine::Row(row) => self.row(row),
            ExportLine::End(end) => self.end(end),
        }
    }

    fn header(&mut self, header: Header) -> Result<(), ExportProblem> {
        if self.header.is_some() {
            return Err(ExportProblem::Misplaced("a second header"));
        }
        if header.format != EXPORT_FORMAT {
            return Err(ExportProblem::Malformed(format!(
                "format {:?}, not {EXPORT_FORMAT}",
                header.format
            )));
        }
        if header.from_anchor < 0 || header.to_anchor < header.from_anchor {
            return Err(ExportProblem::Malformed(format!(
                "anchors {} to {} are not a range",
                header.from_anchor, header.to_anchor
            )));
        }
        if header.from_anchor == 0 && header.from_anchor_hash != GENESIS {
            return Err(ExportProblem::Malformed(
                "a segment from anchor 0 starts from the genesis".into(),
            ));
        }
        if let Some(previous) = &self.previous {
            let start = (header.from_anchor, header.from_anchor_hash.clone());
            // A tenant's segments carry no anchors: they join by number.
            let joined = match header.scope {
                Scope::Host => start == previous.anchor_head,
                Scope::Tenant => start.0 == previous.anchor_head.0,
            };
            if previous.scope != Some(header.scope) || !joined {
                return Err(ExportProblem::Unjoined(format!(
                    "it starts after anchor {} ({}), the segment before ended at anchor {} ({})",
                    start.0, start.1, previous.anchor_head.0, previous.anchor_head.1
                )));
            }
        }
        self.anchors = AnchorCheck::after(header.from_anchor, &header.from_anchor_hash);
        self.summary.scope = Some(header.scope);
        self.summary.anchor_head = (header.from_anchor, header.from_anchor_hash.clone());
        self.header = Some(header);
        Ok(())
    }

    fn scope(&self) -> Scope {
        self.header.as_ref().map_or(Scope::Host, |h| h.scope)
    }

    fn anchor(&mut self, exported: ExportedAnchor) -> Result<(), ExportProblem> {
        if self.scope() == Scope::Tenant || self.chain.is_some() {
            return Err(ExportProblem::Misplaced(
                "anchors come before the chains, in a host export only",
            ));
        }
        let fields: AnchorFields = serde_json::from_value(exported.anchor.clone())
            .map_err(|e| ExportProblem::Malformed(format!("an anchor: {e}")))?;
        let encoding = Encoding::of_object_name(&fields.encoding)
            .ok_or_else(|| ExportProblem::Form(format!("anchor encoding {:?}", fields.encoding)))?;
        let row = AnchorRow {
            seq: fields.seq,
            at_ms: fields.at,
            chain: &fields.chain,
            place: fields.place,
            head_hash: &fields.head_hash,
        };
        if encoding.anchor_object(&fields.prev_hash, &row) != exported.anchor {
            return Err(ExportProblem::Form(format!(
                "anchor {}'s object is not the one its hash is taken of",
                fields.seq
            )));
        }
        self.anchors.check(&StoredAnchor {
            row,
            prev_hash: &fields.prev_hash,
            anchor_hash: &exported.anchor_hash,
            encoding,
        })?;
        self.anchored
            .entry(fields.chain.clone())
            .or_default()
            .insert(fields.place, (fields.seq, fields.head_hash.clone()));
        self.summary.anchors += 1;
        self.summary.anchor_head = (fields.seq, exported.anchor_hash);
        Ok(())
    }

    fn start_chain(&mut self, exported: ExportedChain) -> Result<(), ExportProblem> {
        self.close_chain()?;
        if !self.seen.insert(exported.chain.clone()) {
            return Err(ExportProblem::Misplaced("a chain started twice"));
        }
        let legacy = exported.chain == LEGACY_CHAIN;
        let encoding = match exported.encoding.map(Encoding::from_number) {
            Some(Some(encoding)) => encoding,
            Some(None) | None if legacy => Encoding::Tagged,
            Some(None) => {
                return Err(ExportProblem::Broken(ChainBreak::of_trail(
                    Problem::ChainEncoding {
                        chain: exported.chain,
                        encoding: exported.encoding.unwrap_or_default(),
                    },
                )));
            }
            None => {
                return Err(ExportProblem::Broken(ChainBreak::of_trail(
                    Problem::UnopenedChain {
                        chain: exported.chain,
                    },
                )));
            }
        };
        let (place, hash) = (exported.start_place, exported.start_hash);
        if place == 0 && !legacy && hash != encoding.genesis(&exported.chain) {
            return Err(ExportProblem::Form(format!(
                "chain {} starts at place 0 but not from its genesis",
                exported.chain
            )));
        }
        if let Some(previous) = &self.previous
            && let Some(end) = previous.ends.get(&exported.chain)
            && (place, &hash) != (end.0, &end.1)
        {
            return Err(ExportProblem::Unjoined(format!(
                "chain {} starts after place {place}, the segment before ended it at place {}",
                exported.chain, end.0
            )));
        }
        let check = if legacy {
            ChainCheck::new()
        } else {
            ChainCheck::resumed(encoding, place, &hash)
        };
        self.chain = Some(OpenChain {
            id: exported.chain,
            encoding,
            check,
            place,
        });
        Ok(())
    }

    fn row(&mut self, exported: ExportedRow) -> Result<(), ExportProblem> {
        let scope = self.scope();
        let Some(chain) = self.chain.as_mut() else {
            return Err(ExportProblem::Misplaced("a row before its chain"));
        };
        if exported.chain != chain.id {
            return Err(ExportProblem::Misplaced("a row outside its chain's lines"));
        }
        let fields: RowFields = serde_json::from_value(exported.row.clone())
            .map_err(|e| ExportProblem::Malformed(format!("row {}: {e}", exported.id)))?;
        if Encoding::of_object_name(&fields.encoding) != Some(chain.encoding) {
            return Err(ExportProblem::Form(format!(
                "row {} names encoding {:?}, its chain is in {:?}",
                exported.id, fields.encoding, chain.encoding
            )));
        }
        let row = fields.chained();
        let link = Link {
            id: exported.id,
            prev_hash: fields.prev_hash.as_deref(),
            row_hash: exported.row_hash.as_deref(),
            row,
        };
        if let Some(prev) = link.prev_hash
            && chain.encoding.row_object(prev, &row) != exported.row
        {
            return Err(ExportProblem::Form(format!(
                "row {}'s object is not the one its hash is taken of",
                exported.id
            )));
        }
        let hash = match (scope, exported.place) {
            (Scope::Tenant, place) => {
                let Some(neighbours) = &exported.neighbours else {
                    return Err(ExportProblem::Malformed(format!(
                        "row {} of a tenant export has no neighbours",
                        exported.id
                    )));
                };
                let after = match &neighbours.next {
                    NextRow::Head => Next::Head,
                    NextRow::Missing => Next::Missing,
                    NextRow::Links { prev_hash } => Next::Links(prev_hash.as_deref()),
                };
                self.tenant.check(&OwnLink {
                    link,
                    chain: &chain.id,
                    encoding: chain.encoding,
                    place,
                    before: neighbours.before_hash.as_deref(),
                    after,
                })?;
                exported.row_hash.clone().unwrap_or_default()
            }
            (Scope::Host, _) if chain.id == LEGACY_CHAIN => {
                chain.check.check(&link)?;
                chain.check.head_hash().to_owned()
            }
            (Scope::Host, place) => {
                let place = place.unwrap_or_default();
                let hash = chain.check.check_placed(&link, place)?;
                let anchored = self.anchored.get(&chain.id).and_then(|a| a.get(&place));
                if let Some((anchor, recorded)) = anchored
                    && *recorded != hash
                {
                    return Err(ExportProblem::Broken(ChainBreak {
                        id: link.id,
                        call_id: link.row.call_id.to_owned(),
                        problem: Problem::Unanchored { anchor: *anchor },
                    }));
                }
                hash
            }
        };
        if let Some(place) = exported.place {
            chain.place = place;
            self.summary
                .ends
                .insert(chain.id.clone(), (place, hash.clone()));
        }
        self.summary.rows += 1;
        Ok(())
    }

    /// Ends the chain being read: in a host export, its rows reach the
    /// last place the segment's anchors record for it.
    fn close_chain(&mut self) -> Result<(), ExportProblem> {
        let Some(chain) = self.chain.take() else {
            return Ok(());
        };
        if self.scope() == Scope::Tenant {
            return Ok(());
        }
        if let Some((&last, _)) = self
            .anchored
            .get(&chain.id)
            .and_then(|a| a.last_key_value())
            && last > chain.place
        {
            return Err(ExportProblem::Broken(ChainBreak::of_trail(
                Problem::Truncated {
                    chain: chain.id,
                    place: last,
                },
            )));
        }
        Ok(())
    }

    fn end(&mut self, end: End) -> Result<(), ExportProblem> {
        self.close_chain()?;
        let header = self.header.as_ref().expect("checked before");
        if self.scope() == Scope::Host
            && let Some(chain) = self.anchored.keys().find(|c| !self.seen.contains(*c))
        {
            return Err(ExportProblem::Broken(ChainBreak::of_trail(
                Problem::Truncated {
                    chain: chain.clone(),
                    place: self.anchored[chain].last_key_value().map_or(0, |(p, _)| *p),
                },
            )));
        }
        if self.scope() == Scope::Host && self.summary.anchor_head.0 != header.to_anchor {
            return Err(ExportProblem::Unjoined(format!(
                "the header says the segment runs to anchor {}, its anchors end at {}",
                header.to_anchor, self.summary.anchor_head.0
            )));
        }
        if (end.rows, end.anchors, end.next_from_anchor)
            != (self.summary.rows, self.summary.anchors, header.to_anchor)
        {
            return Err(ExportProblem::Misplaced(
                "the end's counts are not the lines read",
            ));
        }
        if self.scope() == Scope::Tenant {
            self.summary.anchor_head = (header.to_anchor, String::new());
        }
        self.ended = true;
        Ok(())
    }

    /// The segment's summary, once its end was read. Chains the segment
    /// did not touch keep the ends `previous` recorded.
    pub fn finish(self) -> Result<ExportSummary, ExportBreak> {
        if !self.ended {
            return Err(ExportBreak {
                line: self.line + 1,
                problem: ExportProblem::Misplaced("the export ends before its end line"),
            });
        }
        let mut summary = self.summary;
        if let Some(previous) = self.previous {
            for (chain, end) in previous.ends {
                summary.ends.entry(chain).or_insert(end);
            }
        }
        Ok(summary)
    }
}

impl Default for ExportCheck {
    fn default() -> Self {
        Self::new()
    }
}
