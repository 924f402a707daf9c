//! The anchor chain: the one serialized record that ties the writers'
//! chains together.
//!
//! Each process appends its audit rows to chains of its own, with no lock
//! shared with any other writer ([`crate::chain`], design note 0006). About
//! once a second it records each of its chains' heads that moved as an
//! anchor: the chain, the place of its newest row and that row's hash.
//! Anchors are numbered from 1 and hash-chained like rows:
//!
//! `anchor_hash = SHA-256(ANCHOR_TAG, prev_hash, seq, at, chain, place, head_hash)`,
//! each field encoded as in a row's hash (tagged, length-prefixed), or,
//! for anchors written since migration 0024, the SHA-256 of the same
//! values' RFC 8785 object ([`crate::encoding`]). The first anchor's
//! `prev_hash` is [`GENESIS`].
//!
//! So a walk finds a writer chain cut short (its rows end before a place an
//! anchor recorded), rewritten from some row on (the row at an anchored
//! place hashes differently), or removed whole (the anchors still name
//! it); and an anchor edited or removed breaks the anchor chain. The anchor
//! head a walk reports, kept elsewhere, covers every chain up to its last
//! anchor; rows appended after it are covered by the next one.
//!
//! ```
//! use toolhost_audit::anchor::{AnchorCheck, AnchorRow, StoredAnchor};
//! use toolhost_audit::{Encoding, chain::GENESIS};
//! let row = AnchorRow { seq: 1, at_ms: 1, chain: "c", place: 3, head_hash: "ab" };
//! let hash = Encoding::Jcs.anchor_hash(GENESIS, &row).to_string();
//! let mut check = AnchorCheck::new();
//! let anchor = StoredAnchor { row, prev_hash: GENESIS, anchor_hash: &hash, encoding: Encoding::Jcs };
//! check.check(&anchor).expect("intact");
//! assert_eq!(check.count(), 1);
//! ```

use toolhost_types::Digest;

use crate::chain::{ChainBreak, GENESIS, Problem, int, text};
use crate::encoding::Encoding;

/// The first bytes of every anchor's hash input.
pub const ANCHOR_TAG: &[u8] = b"toolhost-audit-anchor-v1\n";

/// One anchor's values, in the order its hash covers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnchorRow<'a> {
    /// Its number in the anchor chain, from 1.
    pub seq: i64,
    /// When it was written: unix milliseconds.
    pub at_ms: i64,
    /// The writer chain whose head it records.
    pub chain: &'a str,
    /// The place (`chain_seq`) of that chain's newest row.
    pub place: i64,
    /// That row's `row_hash`.
    pub head_hash: &'a str,
}

/// The hash of `row` chained after the anchor whose hash is `prev_hash`.
pub fn anchor_hash(prev_hash: &str, row: &AnchorRow<'_>) -> Digest {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(ANCHOR_TAG);
    text(&mut out, Some(prev_hash));
    int(&mut out, row.seq);
    int(&mut out, row.at_ms);
    text(&mut out, Some(row.chain));
    int(&mut out, row.place);
    text(&mut out, Some(row.head_hash));
    Digest::of(&out)
}

/// One stored anchor as a walk reads it.
#[derive(Debug, Clone, Copy)]
pub struct StoredAnchor<'a> {
    /// Its values.
    pub row: AnchorRow<'a>,
    /// The stored `prev_hash`.
    pub prev_hash: &'a str,
    /// The stored `anchor_hash`.
    pub anchor_hash: &'a str,
    /// How it is hashed.
    pub encoding: Encoding,
}

/// A walk over the anchors in number order. Pure; the store reads them.
#[derive(Debug, Clone, Default)]
pub struct AnchorCheck {
    count: u64,
    head: Option<(i64, String)>,
}

impl AnchorCheck {
    /// A walk that has seen no anchor yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A walk that starts after anchor `seq`, whose hash is `hash`
    /// (checked elsewhere: an export resumed from there). At 0, `hash` is
    /// [`GENESIS`].
    pub fn after(seq: i64, hash: &str) -> Self {
        AnchorCheck {
            count: 0,
            head: (seq > 0).then(|| (seq, hash.to_owned())),
        }
    }

    /// Checks the next anchor: numbered one after the last, linked to its
    /// hash (the first to [`GENESIS`]), and hashing to its stored hash.
    pub fn check(&mut self, anchor: &StoredAnchor<'_>) -> Result<(), ChainBreak> {
        let seq = anchor.row.seq;
        let (expected_seq, expected_prev) = match &self.head {
            Some((last, hash)) => (last + 1, hash.as_str()),
            None => (1, GENESIS),
        };
        if seq != expected_seq || anchor.prev_hash != expected_prev {
            return Err(ChainBreak::of_trail(Problem::AnchorUnlinked {
                anchor: seq,
            }));
        }
        let computed = (anchor.encoding)
            .anchor_hash(anchor.prev_hash, &anchor.row)
            .to_string();
        if computed != anchor.anchor_hash {
            return Err(ChainBreak::of_trail(Problem::AnchorEdited { anchor: seq }));
        }
        self.count += 1;
        self.head = Some((seq, computed));
        Ok(())
    }

    /// Anchors checked so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The last anchor checked: its number and hash.
    pub fn head(&self) -> Option<&(i64, String)> {
        self.head.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three anchors chained from the genesis: (row, prev, hash) each.
    fn anchors() -> Vec<(AnchorRow<'static>, String, String)> {
        let mut prev = GENESIS.to_owned();
        (1..=3)
            .map(|seq| {
                let row = AnchorRow {
                    seq,
                    at_ms: 1_764_000_000_000 + seq,
                    chain: "writer-a",
                    place: seq * 10,
                    head_hash: "ab",
                };
                let hash = anchor_hash(&prev, &row).to_string();
                let out = (row, prev.clone(), hash.clone());
                prev = hash;
                out
            })
            .collect()
    }

    fn walk(rows: &[(AnchorRow<'_>, String, String)]) -> Result<AnchorCheck, ChainBreak> {
        let mut check = AnchorCheck::new();
        for (row, prev, hash) in rows {
            check.check(&StoredAnchor {
                row: *row,
                prev_hash: prev,
                anchor_hash: hash,
                encoding: Encoding::Tagged,
            })?;
        }
        Ok(check)
    }

    #[test]
    fn intact_anchors_verify_and_report_the_newest() {
        let rows = anchors();
        let check = walk(&rows).expect("intact");
        assert_eq!(check.count(), 3);
        assert_eq!(check.head(), Some(&(3, rows[2].2.clone())));
    }

    #[test]
    fn an_edited_anchor_is_named() {
        let mut rows = anchors();
        rows[1].0.place = 11;
        let broken = walk(&rows).expect_err("edited");
        assert_eq!(broken.problem, Problem::AnchorEdited { anchor: 2 });
        assert!(
            broken
                .to_string()
                .starts_with("audit trail broken: anchor 2")
        );
    }

    #[test]
    fn a_removed_or_reordered_anchor_breaks_the_link() {
        let mut rows = anchors();
        rows.remove(1);
        let broken = walk(&rows).expect_err("removed");
        assert_eq!(broken.problem, Problem::AnchorUnlinked { anchor: 3 });

        let mut rows = anchors();
        rows.swap(1, 2);
        assert_eq!(
            walk(&rows).expect_err("reordered").problem,
            Problem::AnchorUnlinked { anchor: 3 }
        );

        // The first one removed: the second does not start from the genesis.
        let mut rows = anchors();
        rows.remove(0);
        assert_eq!(
            walk(&rows).expect_err("first removed").problem,
            Problem::AnchorUnlinked { anchor: 2 }
        );
    }

    #[test]
    fn every_field_changes_the_hash() {
        let base = AnchorRow {
            seq: 1,
            at_ms: 2,
            chain: "c",
            place: 3,
            head_hash: "h",
        };
        let original = anchor_hash(GENESIS, &base);
        for edited in [
            AnchorRow { seq: 9, ..base },
            AnchorRow { at_ms: 9, ..base },
            AnchorRow { chain: "d", ..base },
            AnchorRow { place: 9, ..base },
            AnchorRow {
                head_hash: "g",
                ..base
            },
        ] {
            assert_ne!(anchor_hash(GENESIS, &edited), original, "{edited:?}");
        }
        assert_ne!(anchor_hash("1", &base), original);
    }
}
