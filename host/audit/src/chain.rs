//! The hash chain over the audit trail: how a row's hash is computed from
//! its stored values and the previous row's hash, and how a walk over the
//! rows, in id order, finds the first one that does not fit.
//!
//! `row_hash = SHA-256(encoding)`, where the encoding is [`ENCODING_TAG`],
//! then `prev_hash`, then every stored column of the row except `id` and
//! `row_hash`, in [`ChainedRow`]'s field order, each field written as
//!
//! - NULL: the byte `0x00`;
//! - text: the byte `0x01`, the UTF-8 length as 8 bytes big-endian, the bytes;
//! - integer: the byte `0x02`, the value as 8 bytes big-endian two's complement.
//!
//! The columns added after the chain began (`receipt_sha256`,
//! `client_rounds`, `definition_digest`) are written only when set, in that
//! order, the last two after a tag byte of their own (`0x02`, `0x03`): a
//! row written before a column existed keeps its hash, and no set column
//! can pass for another.
//!
//! Tagged and length-prefixed, so no two different rows share an encoding
//! (`NULL` is not `""`, and no field can swallow the next). Values are
//! hashed exactly as stored (times in unix milliseconds, durations in
//! microseconds, digests as the stored text), so a walk recomputes a hash
//! from the row alone, and an edit that parses to the same value (a digest
//! in upper case, say) still breaks the chain.
//!
//! What the chain proves: that no row was edited, removed or inserted in
//! the middle without recomputing every later hash. Anyone who can write the
//! table can still rewrite it wholesale, or drop its newest rows; compare
//! the head a walk reports ([`ChainSummary::head`]) with one kept elsewhere
//! to catch that.
//!
//! ```
//! use toolhost_audit::chain::{ChainCheck, ChainedRow, GENESIS, Link, row_hash};
//! let row = ChainedRow { call_id: "c1", outcome: "executed", ..ChainedRow::default() };
//! let hash = row_hash(GENESIS, &row).to_string();
//! let mut check = ChainCheck::new();
//! check.check(&Link { id: 1, prev_hash: Some(GENESIS), row_hash: Some(&hash), row }).expect("intact");
//! let edited = ChainedRow { outcome: "denied", ..row };
//! let broken = check.check(&Link { id: 2, prev_hash: Some(&hash), row_hash: Some(&hash), row: edited });
//! assert_eq!(broken.expect_err("edited").id, 2);
//! ```

use std::fmt;

use toolhost_types::Digest;

use crate::encoding::Encoding;

/// The `prev_hash` of the first chained row: 64 zeros.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The chain every row was appended to before each writer had its own
/// (migration 0023): its rows are walked in id order from [`GENESIS`].
pub const LEGACY_CHAIN: &str = "";

/// The first bytes of a writer chain's genesis hash.
const CHAIN_GENESIS_TAG: &[u8] = b"toolhost-audit-chain-genesis-v1\n";

/// The `prev_hash` of the first row of `chain`: [`GENESIS`] for the
/// [`LEGACY_CHAIN`], else the SHA-256 of a tag and the chain's id, so a
/// row cannot be moved to the start of another writer's chain.
pub fn chain_genesis(chain: &str) -> String {
    if chain == LEGACY_CHAIN {
        return GENESIS.to_owned();
    }
    let mut input = CHAIN_GENESIS_TAG.to_vec();
    text(&mut input, Some(chain));
    Digest::of(&input).to_string()
}

/// The first bytes of every encoding. A later change of the encoding gets a
/// new tag, so old and new rows can never be confused.
pub const ENCODING_TAG: &[u8] = b"toolhost-audit-chain-v1\n";

/// One audit row's stored values, in the order the chain hashes them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChainedRow<'a> {
    /// `call_id`.
    pub call_id: &'a str,
    /// `at`: unix milliseconds.
    pub at_ms: i64,
    /// `principal`.
    pub principal: &'a str,
    /// `tenant`.
    pub tenant: &'a str,
    /// `client_id`.
    pub client_id: Option<&'a str>,
    /// `tool`.
    pub tool: &'a str,
    /// `plugin`.
    pub plugin: Option<&'a str>,
    /// `catalog_version`.
    pub catalog_version: Option<&'a str>,
    /// `plugin_digest`, as stored.
    pub plugin_digest: Option<&'a str>,
    /// `argument_digest`, as stored.
    pub argument_digest: &'a str,
    /// `outcome`.
    pub outcome: &'a str,
    /// `error_code`.
    pub error_code: Option<&'a str>,
    /// `duration_us`.
    pub duration_us: i64,
    /// `gate_id`.
    pub gate_id: Option<&'a str>,
    /// `receipt_sha256`: hashed only when set, so rows written before the
    /// column existed keep their hashes.
    pub receipt_sha256: Option<&'a str>,
    /// `client_rounds`, as stored: hashed only when set (after a tag of
    /// its own, so it can never pass for a receipt).
    pub client_rounds: Option<&'a str>,
    /// `definition_digest`, as stored: hashed only when set, after a tag of
    /// its own (migration 0021; older rows keep their hashes).
    pub definition_digest: Option<&'a str>,
}

/// The hash of `row` chained after `prev_hash` (see the module docs).
pub fn row_hash(prev_hash: &str, row: &ChainedRow<'_>) -> Digest {
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(ENCODING_TAG);
    text(&mut out, Some(prev_hash));
    text(&mut out, Some(row.call_id));
    int(&mut out, row.at_ms);
    text(&mut out, Some(row.principal));
    text(&mut out, Some(row.tenant));
    text(&mut out, row.client_id);
    text(&mut out, Some(row.tool));
    text(&mut out, row.plugin);
    text(&mut out, row.catalog_version);
    text(&mut out, row.plugin_digest);
    text(&mut out, Some(row.argument_digest));
    text(&mut out, Some(row.outcome));
    text(&mut out, row.error_code);
    int(&mut out, row.duration_us);
    text(&mut out, row.gate_id);
    if let Some(receipt) = row.receipt_sha256 {
        text(&mut out, Some(receipt));
    }
    if let Some(rounds) = row.client_rounds {
        out.push(ROUNDS_TAG);
        text(&mut out, Some(rounds));
    }
    if let Some(definition) = row.definition_digest {
        out.push(DEFINITION_TAG);
        text(&mut out, Some(definition));
    }
    Digest::of(&out)
}

/// Precedes `client_rounds` in a row's hash input: a set text starts with
/// 0x01, so the rounds never read as a receipt, nor the receipt as rounds.
const ROUNDS_TAG: u8 = 0x02;

/// Precedes `definition_digest` in a row's hash input: neither a set text
/// (0x01) nor the rounds' tag, so it never reads as a receipt or rounds.
const DEFINITION_TAG: u8 = 0x03;

pub(crate) fn text(out: &mut Vec<u8>, value: Option<&str>) {
    match value {
        None => out.push(0x00),
        Some(s) => {
            out.push(0x01);
            out.extend_from_slice(&(s.len() as u64).to_be_bytes());
            out.extend_from_slice(s.as_bytes());
        }
    }
}

pub(crate) fn int(out: &mut Vec<u8>, value: i64) {
    out.push(0x02);
    out.extend_from_slice(&value.to_be_bytes());
}

/// One stored row as a walk sees it: its id, its links and its values.
#[derive(Debug, Clone, Copy)]
pub struct Link<'a> {
    /// The row id (the walk's order).
    pub id: i64,
    /// The stored `prev_hash` (NULL on rows written before the chain).
    pub prev_hash: Option<&'a str>,
    /// The stored `row_hash` (NULL on rows written before the chain).
    pub row_hash: Option<&'a str>,
    /// Everything else.
    pub row: ChainedRow<'a>,
}

/// Where a walk stopped: the first row that does not fit the chain.
/// Problems of the anchor chain or of a chain as a whole name no row: their
/// `id` is 0 and their `call_id` empty.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct ChainBreak {
    /// The row's id (0 when the problem is not a row's).
    pub id: i64,
    /// The row's call id (empty when the problem is not a row's).
    pub call_id: String,
    /// What is wrong with it.
    pub problem: Problem,
}

impl ChainBreak {
    fn describe(&self) -> String {
        if self.id == 0 && self.call_id.is_empty() {
            format!("audit trail broken: {}", self.problem)
        } else {
            format!(
                "audit chain broken at row {} (call {}): {}",
                self.id, self.call_id, self.problem
            )
        }
    }

    /// A break that names no row.
    pub fn of_trail(problem: Problem) -> Self {
        ChainBreak {
            id: 0,
            call_id: String::new(),
            problem,
        }
    }
}

/// What is wrong with the row a walk stopped at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// Its values do not hash to its `row_hash`: edited after it was written.
    Edited {
        /// The stored `row_hash`.
        stored: String,
        /// The hash of its values as they are now.
        computed: String,
    },
    /// Its `prev_hash` is not the previous chained row's `row_hash` (or, on
    /// the first chained row, not [`GENESIS`]): a row before it was removed,
    /// or edited and re-hashed.
    Unlinked {
        /// The stored `prev_hash`.
        stored: Option<String>,
        /// What it should be.
        expected: String,
    },
    /// It has no `row_hash` although the chain began at an earlier row: its
    /// hash was removed, or it was inserted behind the host's back.
    Unhashed {
        /// The first chained row's id.
        chain_start: i64,
    },
    /// (A tenant's walk.) No row holds the place beside it in the chain:
    /// the row before it or after it was removed.
    Gap {
        /// The empty place (`chain_seq`).
        place: i64,
    },
    /// (A tenant's walk.) The row after it in the chain does not link to
    /// its `row_hash`: it was replaced after the next row was written.
    Unfollowed {
        /// The next row's place (`chain_seq`).
        place: i64,
    },
    /// (A tenant's walk.) It has a `row_hash` but no place in the chain:
    /// it was inserted, or its place erased, behind the host's back.
    Unplaced,
    /// Its writer chain was never opened (no `audit_chains` row names it):
    /// the row, or its chain's opening, was written behind the host's back.
    UnopenedChain {
        /// The chain's id.
        chain: String,
    },
    /// Anchor `anchor` recorded another hash for the row at this place: the
    /// row and every later one of its chain were rewritten.
    Unanchored {
        /// The anchor's sequence number.
        anchor: i64,
    },
    /// An anchor recorded place `place` of `chain`, which its rows no longer
    /// reach: its newest rows (or all of them) were removed.
    Truncated {
        /// The chain's id.
        chain: String,
        /// The place the anchor recorded.
        place: i64,
    },
    /// The anchor's values do not hash to its stored hash: it was edited.
    AnchorEdited {
        /// The anchor's sequence number.
        anchor: i64,
    },
    /// The anchor does not link to the anchor before it (or the first one
    /// to the genesis), or no anchor holds the number before it: an anchor
    /// was removed, or edited and re-hashed.
    AnchorUnlinked {
        /// The anchor's sequence number.
        anchor: i64,
    },
    /// Chain `chain` was opened with an encoding no host knows: its
    /// opening was edited (or written by a later build).
    ChainEncoding {
        /// The chain's id.
        chain: String,
        /// The stored encoding number.
        encoding: i64,
    },
    /// An anchor names an encoding no host knows (as [`Problem::ChainEncoding`]).
    AnchorEncoding {
        /// The anchor's sequence number.
        anchor: i64,
        /// The stored encoding number.
        encoding: i64,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Edited { stored, computed } => write!(
                f,
                "its values hash to {computed}, not to its row_hash {stored}: the row was edited"
            ),
            Problem::Unlinked { stored, expected } if expected == GENESIS => write!(
                f,
                "prev_hash is {}, but the chain's first row must start from the genesis {GENESIS}: \
                 an earlier row was removed",
                stored.as_deref().unwrap_or("NULL")
            ),
            Problem::Unlinked { stored, expected } => write!(
                f,
                "prev_hash is {}, not the previous row's row_hash {expected}: a row before it \
                 was removed, or edited and re-hashed",
                stored.as_deref().unwrap_or("NULL")
            ),
            Problem::Unhashed { chain_start } => write!(
                f,
                "no row_hash, although the chain began at row {chain_start}: its hash was removed \
                 or it was inserted outside the host"
            ),
            Problem::Gap { place } => write!(
                f,
                "no row holds place {place} of the chain, beside it: a row was removed"
            ),
            Problem::Unfollowed { place } => write!(
                f,
                "the row at place {place} of the chain does not link to its row_hash: it was \
                 replaced after the next row was written"
            ),
            Problem::Unplaced => write!(
                f,
                "it has a row_hash but no place in the chain: it was inserted outside the host"
            ),
            Problem::UnopenedChain { chain } => write!(
                f,
                "its chain {chain} was never opened by a writer: it was inserted outside the host"
            ),
            Problem::Unanchored { anchor } => write!(
                f,
                "anchor {anchor} recorded another hash for this place of its chain: this row and \
                 the later ones were rewritten"
            ),
            Problem::Truncated { chain, place } => write!(
                f,
                "an anchor recorded place {place} of chain {chain}, which its rows no longer \
                 reach: its newest rows were removed"
            ),
            Problem::AnchorEdited { anchor } => write!(
                f,
                "anchor {anchor}'s values do not hash to its anchor_hash: it was edited"
            ),
            Problem::AnchorUnlinked { anchor } => write!(
                f,
                "anchor {anchor} does not follow the anchor before it: an anchor was removed, \
                 or edited and re-hashed"
            ),
            Problem::ChainEncoding { chain, encoding } => write!(
                f,
                "chain {chain} names encoding {encoding}, which this build does not know: its \
                 opening was edited, or a later build wrote it"
            ),
            Problem::AnchorEncoding { anchor, encoding } => write!(
                f,
                "anchor {anchor} names encoding {encoding}, which this build does not know: it \
                 was edited, or a later build wrote it"
            ),
        }
    }
}

/// What an intact walk found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChainSummary {
    /// Rows whose hash and link were checked.
    pub verified: u64,
    /// Rows before the first chained row, written before the chain existed
    /// (migration 0006): they carry no hash, so nothing about them is proven.
    pub unchained: u64,
    /// The newest chained row's id and `row_hash`, if any: keep it elsewhere
    /// to detect a later rewrite or truncation.
    pub head: Option<(i64, String)>,
    /// Writer chains walked (the legacy chain not counted).
    pub chains: u64,
    /// Anchors checked.
    pub anchors: u64,
    /// The newest anchor's number and hash: it commits to every writer
    /// chain's anchored head, so kept elsewhere it catches a rewrite or a
    /// truncation of any of them.
    pub anchor_head: Option<(i64, String)>,
}

/// A walk over the rows in id order: feed each to [`ChainCheck::check`],
/// then take [`ChainCheck::summary`]. Pure; the store does the reading.
#[derive(Debug, Clone, Default)]
pub struct ChainCheck {
    summary: ChainSummary,
    chain_start: Option<i64>,
    /// The first row's `prev_hash`; [`GENESIS`] when empty.
    genesis: String,
    /// How the chain's rows are hashed.
    encoding: Encoding,
    /// The place of the row [`Self::genesis`] is the hash of (0: none, the
    /// chain's own genesis).
    first_place: i64,
}

impl ChainCheck {
    /// A walk of the [`LEGACY_CHAIN`] that has seen no row yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A walk of writer chain `chain`, whose rows are hashed in
    /// `encoding`, from its genesis ([`Encoding::genesis`]), fed rows in
    /// place order through [`ChainCheck::check_placed`].
    pub fn for_chain(chain: &str, encoding: Encoding) -> Self {
        ChainCheck {
            genesis: encoding.genesis(chain),
            encoding,
            ..Self::default()
        }
    }

    /// A walk of a writer chain hashed in `encoding` that starts after
    /// place `place`, whose row hashes to `hash` (a part of a chain whose
    /// earlier rows were checked elsewhere: an export resumed from there).
    /// At place 0, `hash` must be the chain's genesis.
    pub fn resumed(encoding: Encoding, place: i64, hash: &str) -> Self {
        ChainCheck {
            genesis: hash.to_owned(),
            encoding,
            first_place: place,
            ..Self::default()
        }
    }

    /// Checks the next row of a writer chain: it holds the next place
    /// (`place`, 1 for the first) and is chained and hashed as
    /// [`ChainCheck::check`] requires. Returns its hash.
    pub fn check_placed(&mut self, link: &Link<'_>, place: i64) -> Result<String, ChainBreak> {
        let expected = self.first_place + self.summary.verified as i64 + 1;
        if place != expected {
            return Err(ChainBreak {
                id: link.id,
                call_id: link.row.call_id.to_owned(),
                problem: Problem::Gap { place: expected },
            });
        }
        if link.row_hash.is_none() {
            return Err(ChainBreak {
                id: link.id,
                call_id: link.row.call_id.to_owned(),
                problem: Problem::Unhashed {
                    chain_start: self.chain_start.unwrap_or(link.id),
                },
            });
        }
        self.check(link)?;
        Ok(self.head_hash().to_owned())
    }

    /// The hash of the last row checked (the genesis before any).
    pub fn head_hash(&self) -> &str {
        match &self.summary.head {
            Some((_, hash)) => hash,
            None if self.genesis.is_empty() => GENESIS,
            None => &self.genesis,
        }
    }

    /// Checks the next row. Rows without a hash are accepted only before
    /// the first chained row; after a break the walk should stop (later
    /// rows are checked against a chain that is already broken).
    pub fn check(&mut self, link: &Link<'_>) -> Result<(), ChainBreak> {
        let broken = |problem| ChainBreak {
            id: link.id,
            call_id: link.row.call_id.to_owned(),
            problem,
        };
        let Some(stored) = link.row_hash else {
            return match self.chain_start {
                None if link.prev_hash.is_none() => {
                    self.summary.unchained += 1;
                    Ok(())
                }
                start => Err(broken(Problem::Unhashed {
                    chain_start: start.unwrap_or(link.id),
                })),
            };
        };
        let expected = self.head_hash().to_owned();
        let computed = linked_and_hashed(link, &expected, stored, self.encoding).map_err(broken)?;
        self.chain_start.get_or_insert(link.id);
        self.summary.verified += 1;
        self.summary.head = Some((link.id, computed));
        Ok(())
    }

    /// What the walk has verified so far.
    pub fn summary(self) -> ChainSummary {
        self.summary
    }
}

/// One of a tenant's rows as a tenant's walk sees it: its own values and
/// links, its place in the chain, and of its neighbours in the one chain
/// (whoever's rows they are) only their hashes, never their values.
#[derive(Debug, Clone, Copy)]
pub struct OwnLink<'a> {
    /// The row.
    pub link: Link<'a>,
    /// The chain it was appended to ([`LEGACY_CHAIN`] or a writer's).
    pub chain: &'a str,
    /// How that chain's rows are hashed.
    pub encoding: Encoding,
    /// Its place in the chain (`chain_seq`); `None` on rows from before it.
    pub place: Option<i64>,
    /// The `row_hash` of the row at `place - 1`; `None` if no row is there.
    pub before: Option<&'a str>,
    /// The row at `place + 1`.
    pub after: Next<'a>,
}

/// The row after a tenant's row in the chain, as a tenant's walk sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next<'a> {
    /// There is none: the row is the chain's head.
    Head,
    /// The chain goes on, but no row holds the next place.
    Missing,
    /// The next row, with its `prev_hash`.
    Links(Option<&'a str>),
}

/// What an intact walk of one tenant's rows found. Nothing host-wide:
/// neither how many rows the chain holds nor its head.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TenantSummary {
    /// The tenant's rows whose hash and both links were checked.
    pub verified: u64,
    /// The tenant's rows from before the chain (nothing proven of them).
    pub unchained: u64,
    /// The tenant's newest checked row: its call id and `row_hash`.
    pub newest: Option<(String, String)>,
}

/// A walk over one tenant's rows in id order: each row's values hash to
/// its `row_hash` from its `prev_hash` (not edited), and it is still linked
/// into the one chain where it stands: the row before it ends in its
/// `prev_hash` (or it is first, from the genesis) and the row after it, if
/// any, starts from its `row_hash`. A tenant's row removed with a row of
/// the tenant beside it is found; one removed between two other tenants'
/// rows is found only by the whole walk ([`ChainCheck`], `toolhost audit
/// verify`), which is the operator's. Pure; the store does the reading.
#[derive(Debug, Clone, Default)]
pub struct TenantCheck {
    summary: TenantSummary,
    chained: bool,
}

impl TenantCheck {
    /// A walk that has seen no row yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks the tenant's next row.
    pub fn check(&mut self, own: &OwnLink<'_>) -> Result<(), ChainBreak> {
        let link = &own.link;
        let broken = |problem| ChainBreak {
            id: link.id,
            call_id: link.row.call_id.to_owned(),
            problem,
        };
        let Some(stored) = link.row_hash else {
            if !self.chained && link.prev_hash.is_none() && own.place.is_none() {
                self.summary.unchained += 1;
                return Ok(());
            }
            return Err(broken(Problem::Unhashed {
                chain_start: link.id,
            }));
        };
        let Some(place) = own.place else {
            return Err(broken(Problem::Unplaced));
        };
        let expected = match (place, own.before) {
            (1, _) => own.encoding.genesis(own.chain),
            (_, Some(before)) => before.to_owned(),
            (_, None) => return Err(broken(Problem::Gap { place: place - 1 })),
        };
        let computed = linked_and_hashed(link, &expected, stored, own.encoding).map_err(broken)?;
        match own.after {
            Next::Head => {}
            Next::Missing => return Err(broken(Problem::Gap { place: place + 1 })),
            Next::Links(next) if next != Some(stored) => {
                return Err(broken(Problem::Unfollowed { place: place + 1 }));
            }
            Next::Links(_) => {}
        }
        self.chained = true;
        self.summary.verified += 1;
        self.summary.newest = Some((link.row.call_id.to_owned(), computed));
        Ok(())
    }

    /// What the walk has verified so far.
    pub fn summary(self) -> TenantSummary {
        self.summary
    }
}

/// `link`'s row follows `expected` and hashes to `stored` in `encoding`:
/// the row's hash as computed, or what is wrong.
fn linked_and_hashed(
    link: &Link<'_>,
    expected: &str,
    stored: &str,
    encoding: Encoding,
) -> Result<String, Problem> {
    if link.prev_hash != Some(expected) {
        return Err(Problem::Unlinked {
            stored: link.prev_hash.map(str::to_owned),
            expected: expected.to_owned(),
        });
    }
    let computed = encoding.row_hash(expected, &link.row).to_string();
    if computed != stored {
        return Err(Problem::Edited {
            stored: stored.to_owned(),
            computed,
        });
    }
    Ok(computed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(call_id: &str) -> ChainedRow<'_> {
        ChainedRow {
            call_id,
            at_ms: 1_764_000_000_123,
            principal: "alice",
            tenant: "acme",
            client_id: Some("client-1"),
            tool: "greet",
            plugin: Some("hello"),
            catalog_version: Some("1.0.0"),
            plugin_digest: None,
            argument_digest: "ab",
            outcome: "executed",
            error_code: None,
            duration_us: 42,
            gate_id: None,
            receipt_sha256: None,
            client_rounds: None,
            definition_digest: None,
        }
    }

    /// `rows` chained from the genesis: (prev_hash, row_hash) of each.
    fn chain(rows: &[ChainedRow<'_>]) -> Vec<(String, String)> {
        let mut prev = GENESIS.to_owned();
        rows.iter()
            .map(|r| {
                let hash = row_hash(&prev, r).to_string();
                (std::mem::replace(&mut prev, hash.clone()), hash)
            })
            .collect()
    }

    fn walk<'a>(links: impl IntoIterator<Item = Link<'a>>) -> Result<ChainSummary, ChainBreak> {
        let mut check = ChainCheck::new();
        for link in links {
            check.check(&link)?;
        }
        Ok(check.summary())
    }

    fn links<'a>(rows: &'a [ChainedRow<'a>], hashes: &'a [(String, String)]) -> Vec<Link<'a>> {
        rows.iter()
            .zip(hashes)
            .enumerate()
            .map(|(i, (row, (prev, hash)))| Link {
                id: i as i64 + 1,
                prev_hash: Some(prev),
                row_hash: Some(hash),
                row: *row,
            })
            .collect()
    }

    /// A chain of (call id, tenant) rows, as the store holds it: each row's
    /// link and place, some removed (`None`).
    fn placed<'a>(
        rows: &'a [ChainedRow<'a>],
        hashes: &'a [(String, String)],
    ) -> Vec<Option<(i64, Link<'a>)>> {
        links(rows, hashes)
            .into_iter()
            .enumerate()
            .map(|(i, l)| Some((i as i64 + 1, l)))
            .collect()
    }

    /// Walks `tenant`'s rows of `chain` as the store would hand them over.
    fn walk_tenant(
        chain: &[Option<(i64, Link<'_>)>],
        tenant: &str,
    ) -> Result<TenantSummary, ChainBreak> {
        let at = |place: i64| {
            chain
                .iter()
                .flatten()
                .find(|(p, _)| *p == place)
                .map(|(_, l)| *l)
        };
        let last = chain.iter().flatten().map(|(p, _)| *p).max().unwrap_or(0);
        let mut check = TenantCheck::new();
        for (place, link) in chain
            .iter()
            .flatten()
            .filter(|(_, l)| l.row.tenant == tenant)
        {
            let after = match at(place + 1) {
                Some(next) => Next::Links(next.prev_hash),
                None if *place >= last => Next::Head,
                None => Next::Missing,
            };
            check.check(&OwnLink {
                chain: LEGACY_CHAIN,
                encoding: Encoding::Tagged,
                link: *link,
                place: Some(*place),
                before: at(place - 1).and_then(|l| l.row_hash),
                after,
            })?;
        }
        Ok(check.summary())
    }

    fn of(call_id: &'static str, tenant: &'static str) -> ChainedRow<'static> {
        ChainedRow {
            tenant,
            ..row(call_id)
        }
    }

    /// Five rows of two tenants, interleaved: acme's a, c, d and
    /// globex's b, e.
    fn acme_and_globex() -> [ChainedRow<'static>; 5] {
        [
            of("a", "acme"),
            of("b", "globex"),
            of("c", "acme"),
            of("d", "acme"),
            of("e", "globex"),
        ]
    }

    #[test]
    fn a_tenants_walk_checks_its_rows_and_their_links_and_reports_nothing_host_wide() {
        let rows = acme_and_globex();
        let hashes = chain(&rows);
        let chain = placed(&rows, &hashes);
        let acme = walk_tenant(&chain, "acme").expect("intact");
        assert_eq!(acme.verified, 3);
        assert_eq!(acme.newest, Some(("d".to_owned(), hashes[3].1.clone())));
        assert_eq!(
            walk_tenant(&chain, "initech").expect("none"),
            TenantSummary::default()
        );

        // One of acme's rows edited: acme's walk stops there.
        let mut edited = chain.clone();
        if let Some((_, l)) = &mut edited[2] {
            l.row.outcome = "denied";
        }
        let broken = walk_tenant(&edited, "acme").expect_err("edited");
        assert_eq!(broken.call_id, "c");
        assert!(matches!(broken.problem, Problem::Edited { .. }), "{broken}");
        // Another tenant's row edited: not acme's to see (the whole walk finds it).
        let mut theirs = chain.clone();
        if let Some((_, l)) = &mut theirs[1] {
            l.row.outcome = "denied";
        }
        assert_eq!(
            walk_tenant(&theirs, "acme")
                .expect("acme's rows intact")
                .verified,
            3
        );
        assert!(walk(theirs.iter().flatten().map(|(_, l)| *l)).is_err());
    }

    #[test]
    fn a_tenants_walk_finds_a_removed_or_replaced_row_beside_its_own() {
        let rows = acme_and_globex();
        let hashes = chain(&rows);
        let chain = placed(&rows, &hashes);
        let gap = |removed: usize, expected_call: &str, expected_place: i64| {
            let mut holed = chain.clone();
            holed[removed] = None;
            let broken = walk_tenant(&holed, "acme").expect_err("a gap");
            assert_eq!(broken.call_id, expected_call);
            assert_eq!(
                broken.problem,
                Problem::Gap {
                    place: expected_place
                },
                "{broken}"
            );
        };
        gap(2, "d", 3); // acme's own c, after globex's b
        gap(1, "a", 2); // globex's b, beside acme's a
        gap(3, "c", 4); // acme's own d, before globex's e

        // c edited and re-hashed in place: its own hash fits, d no longer follows it.
        let forged = ChainedRow {
            outcome: "denied",
            ..rows[2]
        };
        let forged_hash = row_hash(&hashes[2].0, &forged).to_string();
        let mut replaced = chain.clone();
        replaced[2] = Some((
            3,
            Link {
                id: 3,
                prev_hash: Some(&hashes[2].0),
                row_hash: Some(&forged_hash),
                row: forged,
            },
        ));
        let broken = walk_tenant(&replaced, "acme").expect_err("replaced");
        assert_eq!(
            (broken.call_id.as_str(), &broken.problem),
            ("c", &Problem::Unfollowed { place: 4 })
        );

        // A hashed row with no place was not written by the host.
        let mut check = TenantCheck::new();
        let l = links(&rows, &hashes)[0];
        let unplaced = check.check(&OwnLink {
            chain: LEGACY_CHAIN,
            encoding: Encoding::Tagged,
            link: l,
            place: None,
            before: None,
            after: Next::Head,
        });
        assert_eq!(unplaced.expect_err("unplaced").problem, Problem::Unplaced);
    }

    #[test]
    fn every_field_and_the_previous_hash_change_the_hash() {
        let base = row("c");
        let edits: [fn(&mut ChainedRow<'static>); 17] = [
            |r| r.call_id = "d",
            |r| r.at_ms = 1,
            |r| r.principal = "bob",
            |r| r.tenant = "globex",
            |r| r.client_id = None,
            |r| r.tool = "add",
            |r| r.plugin = None,
            |r| r.catalog_version = Some("1.0.1"),
            |r| r.plugin_digest = Some("ab"),
            |r| r.argument_digest = "AB",
            |r| r.outcome = "denied",
            |r| r.error_code = Some(""),
            |r| r.duration_us = 43,
            |r| r.gate_id = Some("gate_1"),
            |r| r.receipt_sha256 = Some("cd"),
            |r| r.client_rounds = Some("[]"),
            |r| r.definition_digest = Some("ef"),
        ];
        let original = row_hash(GENESIS, &base);
        for edit in edits {
            let mut edited = base;
            edit(&mut edited);
            assert_ne!(row_hash(GENESIS, &edited), original, "{edited:?}");
        }
        assert_ne!(row_hash(&"1".repeat(64), &base), original);
    }

    #[test]
    fn a_row_without_the_later_columns_hashes_as_it_did_before_they_existed() {
        // Pinned from the encoding before `definition_digest` (migration
        // 0021): rows written then must keep verifying.
        assert_eq!(
            row_hash(GENESIS, &row("c")).to_string(),
            "3aba7c88447d9c678a339b52b6c7a989a5e58d9ae74e7e5e75b9761f1a10b201"
        );
        let later = ChainedRow {
            receipt_sha256: Some("cd"),
            client_rounds: Some("[]"),
            ..row("c")
        };
        assert_eq!(
            row_hash(GENESIS, &later).to_string(),
            "32d4d6eb438b17193552a77e2ab1bd0a476e5540caededfec758469e6503ddc3"
        );
    }

    /// Asserts that rows `a` and `b` hash apart.
    fn hash_apart(a: &ChainedRow, b: &ChainedRow) {
        assert_ne!(row_hash(GENESIS, a), row_hash(GENESIS, b), "{a:?} ~ {b:?}");
    }

    #[test]
    fn the_rounds_never_pass_for_a_receipt() {
        let (receipt, rounds) = (row("c"), row("c"));
        hash_apart(
            &ChainedRow {
                receipt_sha256: Some("x"),
                ..receipt
            },
            &ChainedRow {
                client_rounds: Some("x"),
                ..rounds
            },
        );
    }

    #[test]
    fn the_definition_never_passes_for_the_rounds_or_a_receipt() {
        let definition = ChainedRow {
            definition_digest: Some("x"),
            ..row("c")
        };
        for other in [
            ChainedRow {
                receipt_sha256: Some("x"),
                ..row("c")
            },
            ChainedRow {
                client_rounds: Some("x"),
                ..row("c")
            },
        ] {
            hash_apart(&definition, &other);
        }
    }

    #[test]
    fn adjacent_fields_cannot_trade_bytes() {
        let traded = |principal, tenant| ChainedRow {
            principal,
            tenant,
            ..row("x")
        };
        hash_apart(&traded("ab", "c"), &traded("a", "bc"));
        let error = |error_code| ChainedRow {
            error_code,
            ..row("x")
        };
        hash_apart(&error(None), &error(Some("")));
    }

    #[test]
    fn an_intact_chain_verifies_and_reports_its_head() {
        let rows = [row("a"), row("b"), row("c")];
        let hashes = chain(&rows);
        let summary = walk(links(&rows, &hashes)).expect("intact");
        assert_eq!(summary.verified, 3);
        assert_eq!(summary.unchained, 0);
        assert_eq!(summary.head, Some((3, hashes[2].1.clone())));
        assert_eq!(walk([]).expect("empty"), ChainSummary::default());
    }

    #[test]
    fn an_edited_row_breaks_the_chain_at_that_row() {
        let rows = [row("a"), row("b"), row("c")];
        let hashes = chain(&rows);
        let mut links = links(&rows, &hashes);
        links[1].row.outcome = "error";
        let broken = walk(links).expect_err("edited");
        assert_eq!((broken.id, broken.call_id.as_str()), (2, "b"));
        assert!(matches!(broken.problem, Problem::Edited { .. }), "{broken}");
        assert!(
            broken
                .to_string()
                .starts_with("audit chain broken at row 2 (call b): ")
        );
    }

    #[test]
    fn a_removed_row_breaks_the_chain_at_the_next_row() {
        let rows = [row("a"), row("b"), row("c")];
        let hashes = chain(&rows);
        let mut links = links(&rows, &hashes);
        links.remove(1);
        let broken = walk(links).expect_err("removed");
        assert_eq!(broken.id, 3);
        assert!(
            matches!(broken.problem, Problem::Unlinked { .. }),
            "{broken}"
        );

        let mut links = self::links(&rows, &hashes);
        links.remove(0);
        let broken = walk(links).expect_err("first removed");
        assert_eq!(broken.id, 2);
        assert!(broken.to_string().contains("genesis"), "{broken}");
    }

    #[test]
    fn rows_before_the_chain_are_counted_but_not_after_it_began() {
        let rows = [row("a"), row("b")];
        let hashes = chain(&rows);
        let legacy = |id| Link {
            id,
            prev_hash: None,
            row_hash: None,
            row: row("old"),
        };
        let mut chained = links(&rows, &hashes);
        chained.iter_mut().for_each(|l| l.id += 10);
        let summary = walk([legacy(1), legacy(2)].into_iter().chain(chained.clone()))
            .expect("legacy rows, then a chain");
        assert_eq!((summary.verified, summary.unchained), (2, 2));

        let broken = walk(chained.into_iter().chain([legacy(20)])).expect_err("unhashed");
        assert_eq!(broken.problem, Problem::Unhashed { chain_start: 11 });
    }

    #[test]
    fn a_writer_chain_starts_from_its_own_genesis_and_takes_every_place_in_order() {
        assert_eq!(chain_genesis(LEGACY_CHAIN), GENESIS);
        assert_ne!(chain_genesis("a"), chain_genesis("b"));
        for encoding in [Encoding::Tagged, Encoding::Jcs] {
            let rows = [row("a"), row("b"), row("c")];
            let mut prev = encoding.genesis("w1");
            let hashes: Vec<(String, String)> = rows
                .iter()
                .map(|r| {
                    let hash = encoding.row_hash(&prev, r).to_string();
                    (std::mem::replace(&mut prev, hash.clone()), hash)
                })
                .collect();
            let links = links(&rows, &hashes);
            let mut check = ChainCheck::for_chain("w1", encoding);
            for (place, link) in (1..).zip(&links) {
                check.check_placed(link, place).expect("intact");
            }
            assert_eq!(check.head_hash(), hashes[2].1);

            // The same rows read as another writer's chain: not from its genesis.
            let broken = ChainCheck::for_chain("w2", encoding)
                .check_placed(&links[0], 1)
                .expect_err("another chain's genesis");
            assert!(matches!(broken.problem, Problem::Unlinked { .. }));

            // Read in the other encoding: every hash differs.
            let other = match encoding {
                Encoding::Tagged => Encoding::Jcs,
                Encoding::Jcs => Encoding::Tagged,
            };
            let mut check = ChainCheck::for_chain("w1", other);
            assert!(check.check_placed(&links[0], 1).is_err(), "{encoding:?}");

            // A place skipped: the gap is named at the row after it.
            let mut check = ChainCheck::for_chain("w1", encoding);
            check.check_placed(&links[0], 1).expect("first");
            let gap = check.check_placed(&links[2], 3).expect_err("a gap");
            assert_eq!((gap.id, gap.problem), (3, Problem::Gap { place: 2 }));
        }
    }
}
