//! How a row's or an anchor's hash input is written: the two encodings a
//! trail may hold, and which one each chain and anchor uses.
//!
//! - [`Encoding::Tagged`] (stored as 1): the tagged, length-prefixed bytes
//!   every row and anchor had before migration 0024 (the module docs of
//!   [`crate::chain`] and [`crate::anchor`] give them). The legacy chain is
//!   always in it, and so is every chain or anchor a host of an older
//!   build writes.
//! - [`Encoding::Jcs`] (stored as 2): the SHA-256 of the RFC 8785 (JCS)
//!   text of one JSON object, so a third party re-derives every hash with
//!   any JCS implementation and SHA-256, with nothing of toolhost's:
//!
//!   | hashed | object |
//!   |---|---|
//!   | a row | `{"encoding": "toolhost-audit-row-v2", "prev_hash", "call_id", "at", "principal", "tenant", "client_id", "tool", "plugin", "catalog_version", "plugin_digest", "argument_digest", "outcome", "error_code", "duration_us", "gate_id", "receipt_sha256", "client_rounds", "definition_digest"}` |
//!   | a chain's genesis (the first row's `prev_hash`) | `{"encoding": "toolhost-audit-chain-genesis-v2", "chain"}` |
//!   | an anchor | `{"encoding": "toolhost-audit-anchor-v2", "prev_hash", "seq", "at", "chain", "place", "head_hash"}` |
//!
//!   Every key is always present, `null` when the column is; values are as
//!   stored (times in unix milliseconds, durations in microseconds, digests
//!   as their stored text). Hashes are lower-case hex. The `encoding` key
//!   keeps the three kinds (and a later version) apart.
//!
//! A host of this build opens its chains and writes its anchors in
//! [`Encoding::CURRENT`]. Which encoding a chain or an anchor uses is
//! stored beside it; changing that number makes the walk recompute the
//! hash the other way, which then does not match.

use serde::Serialize;
use serde_json::Value;
use toolhost_types::Digest;

use crate::anchor::AnchorRow;
use crate::chain::ChainedRow;

/// How a chain's rows, or an anchor, are hashed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// 1: tagged, length-prefixed bytes.
    #[default]
    Tagged,
    /// 2: the SHA-256 of an RFC 8785 (JCS) object.
    Jcs,
}

/// The `encoding` of a row's JCS object.
pub const ROW_V2: &str = "toolhost-audit-row-v2";
/// The `encoding` of a chain genesis's JCS object.
pub const GENESIS_V2: &str = "toolhost-audit-chain-genesis-v2";
/// The `encoding` of an anchor's JCS object.
pub const ANCHOR_V2: &str = "toolhost-audit-anchor-v2";
/// The `encoding` an export names for a row in [`Encoding::Tagged`].
pub const ROW_V1: &str = "toolhost-audit-row-v1";
/// The `encoding` an export names for an anchor in [`Encoding::Tagged`].
pub const ANCHOR_V1: &str = "toolhost-audit-anchor-v1";

impl Encoding {
    /// What a host of this build writes.
    pub const CURRENT: Encoding = Encoding::Jcs;

    /// The number stored for it.
    pub fn number(self) -> i64 {
        match self {
            Encoding::Tagged => 1,
            Encoding::Jcs => 2,
        }
    }

    /// The encoding stored as `n`, if any.
    pub fn from_number(n: i64) -> Option<Encoding> {
        match n {
            1 => Some(Encoding::Tagged),
            2 => Some(Encoding::Jcs),
            _ => None,
        }
    }

    /// The hash of `row` chained after `prev_hash`.
    pub fn row_hash(self, prev_hash: &str, row: &ChainedRow<'_>) -> Digest {
        match self {
            Encoding::Tagged => crate::chain::row_hash(prev_hash, row),
            Encoding::Jcs => jcs_digest(&JcsRow::of(ROW_V2, prev_hash, row)),
        }
    }

    /// The `prev_hash` of writer chain `chain`'s first row.
    pub fn genesis(self, chain: &str) -> String {
        match self {
            Encoding::Tagged => crate::chain::chain_genesis(chain),
            Encoding::Jcs => jcs_digest(&JcsGenesis {
                encoding: GENESIS_V2,
                chain,
            })
            .to_string(),
        }
    }

    /// The hash of `anchor` chained after the anchor whose hash is `prev_hash`.
    pub fn anchor_hash(self, prev_hash: &str, anchor: &AnchorRow<'_>) -> Digest {
        match self {
            Encoding::Tagged => crate::anchor::anchor_hash(prev_hash, anchor),
            Encoding::Jcs => jcs_digest(&JcsAnchor::of(ANCHOR_V2, prev_hash, anchor)),
        }
    }

    /// `row` after `prev_hash` as the JSON object an export shows: for
    /// [`Encoding::Jcs`], exactly what its hash is taken of; for
    /// [`Encoding::Tagged`], the same keys with the `encoding` naming the
    /// tagged bytes (whose hash a reader recomputes as the chain module says).
    pub fn row_object(self, prev_hash: &str, row: &ChainedRow<'_>) -> Value {
        let name = match self {
            Encoding::Tagged => ROW_V1,
            Encoding::Jcs => ROW_V2,
        };
        serde_json::to_value(JcsRow::of(name, prev_hash, row)).expect("plain data")
    }

    /// `anchor` as the JSON object an export shows (as [`Self::row_object`]).
    pub fn anchor_object(self, prev_hash: &str, anchor: &AnchorRow<'_>) -> Value {
        let name = match self {
            Encoding::Tagged => ANCHOR_V1,
            Encoding::Jcs => ANCHOR_V2,
        };
        serde_json::to_value(JcsAnchor::of(name, prev_hash, anchor)).expect("plain data")
    }

    /// The encoding an export's object names in its `encoding` key.
    pub fn of_object_name(name: &str) -> Option<Encoding> {
        match name {
            ROW_V1 | ANCHOR_V1 => Some(Encoding::Tagged),
            ROW_V2 | ANCHOR_V2 => Some(Encoding::Jcs),
            _ => None,
        }
    }
}

/// The SHA-256 of `value`'s RFC 8785 text.
fn jcs_digest(value: &impl Serialize) -> Digest {
    let text = serde_json_canonicalizer::to_vec(value).expect("plain data serializes");
    Digest::of(&text)
}

/// A row's hashed object (the order of the fields is JCS's to decide).
#[derive(Serialize)]
struct JcsRow<'a> {
    encoding: &'static str,
    prev_hash: &'a str,
    call_id: &'a str,
    at: i64,
    principal: &'a str,
    tenant: &'a str,
    client_id: Option<&'a str>,
    tool: &'a str,
    plugin: Option<&'a str>,
    catalog_version: Option<&'a str>,
    plugin_digest: Option<&'a str>,
    argument_digest: &'a str,
    outcome: &'a str,
    error_code: Option<&'a str>,
    duration_us: i64,
    gate_id: Option<&'a str>,
    receipt_sha256: Option<&'a str>,
    client_rounds: Option<&'a str>,
    definition_digest: Option<&'a str>,
}

impl<'a> JcsRow<'a> {
    fn of(encoding: &'static str, prev_hash: &'a str, r: &ChainedRow<'a>) -> Self {
        JcsRow {
            encoding,
            prev_hash,
            call_id: r.call_id,
            at: r.at_ms,
            principal: r.principal,
            tenant: r.tenant,
            client_id: r.client_id,
            tool: r.tool,
            plugin: r.plugin,
            catalog_version: r.catalog_version,
            plugin_digest: r.plugin_digest,
            argument_digest: r.argument_digest,
            outcome: r.outcome,
            error_code: r.error_code,
            duration_us: r.duration_us,
            gate_id: r.gate_id,
            receipt_sha256: r.receipt_sha256,
            client_rounds: r.client_rounds,
            definition_digest: r.definition_digest,
        }
    }
}

#[derive(Serialize)]
struct JcsGenesis<'a> {
    encoding: &'static str,
    chain: &'a str,
}

#[derive(Serialize)]
struct JcsAnchor<'a> {
    encoding: &'static str,
    prev_hash: &'a str,
    seq: i64,
    at: i64,
    chain: &'a str,
    place: i64,
    head_hash: &'a str,
}

impl<'a> JcsAnchor<'a> {
    fn of(encoding: &'static str, prev_hash: &'a str, a: &AnchorRow<'a>) -> Self {
        JcsAnchor {
            encoding,
            prev_hash,
            seq: a.seq,
            at: a.at_ms,
            chain: a.chain,
            place: a.place,
            head_hash: a.head_hash,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SHA-256 of `bytes` in hex: the hash a third party takes of a JCS text.
    fn sha256_hex(bytes: &[u8]) -> String {
        Digest::of(bytes).to_string()
    }

    fn row() -> ChainedRow<'static> {
        ChainedRow {
            call_id: "c1",
            at_ms: 1_764_000_000_123,
            principal: "user:ann",
            tenant: "acme",
            tool: "greet",
            argument_digest: "ab",
            outcome: "executed",
            duration_us: 42,
            ..ChainedRow::default()
        }
    }

    #[test]
    fn a_jcs_rows_hash_is_the_sha256_of_its_rfc_8785_text() {
        // The text written out by hand, keys in code-unit order.
        let text = concat!(
            r#"{"argument_digest":"ab","at":1764000000123,"call_id":"c1","catalog_version":null,"#,
            r#""client_id":null,"client_rounds":null,"definition_digest":null,"duration_us":42,"#,
            r#""encoding":"toolhost-audit-row-v2","error_code":null,"gate_id":null,"#,
            r#""outcome":"executed","plugin":null,"plugin_digest":null,"prev_hash":"p","#,
            r#""principal":"user:ann","receipt_sha256":null,"tenant":"acme","tool":"greet"}"#
        );
        assert_eq!(
            Encoding::Jcs.row_hash("p", &row()).to_string(),
            sha256_hex(text.as_bytes())
        );
        // And the export's object is that text, parsed.
        let object = Encoding::Jcs.row_object("p", &row());
        assert_eq!(
            serde_json_canonicalizer::to_string(&object).expect("jcs"),
            text
        );
    }

    #[test]
    fn the_two_encodings_never_share_a_hash() {
        assert_ne!(
            Encoding::Jcs.row_hash("p", &row()),
            Encoding::Tagged.row_hash("p", &row())
        );
        assert_ne!(Encoding::Jcs.genesis("c"), Encoding::Tagged.genesis("c"));
        let anchor = AnchorRow {
            seq: 1,
            at_ms: 2,
            chain: "c",
            place: 3,
            head_hash: "h",
        };
        assert_ne!(
            Encoding::Jcs.anchor_hash("p", &anchor),
            Encoding::Tagged.anchor_hash("p", &anchor)
        );
        assert_eq!(
            Encoding::Jcs.genesis("c").to_string(),
            sha256_hex(br#"{"chain":"c","encoding":"toolhost-audit-chain-genesis-v2"}"#)
        );
    }

    #[test]
    fn every_field_changes_a_jcs_rows_hash_and_null_is_not_empty() {
        let base = row();
        let original = Encoding::Jcs.row_hash("p", &base);
        for edited in [
            ChainedRow {
                client_id: Some(""),
                ..base
            },
            ChainedRow { at_ms: 1, ..base },
            ChainedRow {
                definition_digest: Some("d"),
                ..base
            },
            ChainedRow {
                receipt_sha256: Some("d"),
                ..base
            },
            ChainedRow {
                client_rounds: Some("d"),
                ..base
            },
        ] {
            assert_ne!(Encoding::Jcs.row_hash("p", &edited), original, "{edited:?}");
        }
        assert_ne!(Encoding::Jcs.row_hash("q", &base), original);
    }

    #[test]
    fn stored_numbers_and_export_names_map_back() {
        for e in [Encoding::Tagged, Encoding::Jcs] {
            assert_eq!(Encoding::from_number(e.number()), Some(e));
        }
        assert_eq!(Encoding::from_number(3), None);
        assert_eq!(Encoding::of_object_name(ROW_V2), Some(Encoding::Jcs));
        assert_eq!(Encoding::of_object_name(ANCHOR_V1), Some(Encoding::Tagged));
    }
}
