//! The `audit` table's rows: how an [`AuditEvent`] becomes column values and
//! back. Pure conversions; the SQL that moves them lives in `store.rs`.

use std::borrow::Cow;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::{ColumnIndex, Decode, Row, Type};
use toolhost_audit::chain::{ChainedRow, Link};
use toolhost_audit::{AuditEvent, ClientRound, Outcome, kept_text};
use toolhost_types::Digest;

use crate::StorageError;

/// One stored audit row: the event as recorded, plus its row id.
///
/// Read back, `event.at` is truncated to the millisecond and
/// `event.duration` to the microsecond: the precision the table keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    /// The row id: increasing in recording order, but not contiguous
    /// (PostgreSQL spends a sequence value on a refused insert).
    pub id: i64,
    /// The event, field for field.
    pub event: AuditEvent,
}

/// The column values of one event, in the table's units. Texts a caller
/// chose (the tool's name as called, a presented gate id, the client id)
/// are kept bounded ([`kept_text`]).
pub(crate) struct Columns<'a> {
    pub call_id: &'a str,
    pub at_ms: i64,
    pub principal: &'a str,
    pub tenant: &'a str,
    pub client_id: Option<Cow<'a, str>>,
    pub tool: Cow<'a, str>,
    pub plugin: Option<&'a str>,
    pub catalog_version: Option<&'a str>,
    pub plugin_digest: Option<String>,
    pub argument_digest: String,
    pub outcome: &'static str,
    pub error_code: Option<&'a str>,
    pub duration_us: i64,
    pub gate_id: Option<Cow<'a, str>>,
    pub receipt_sha256: Option<&'a str>,
    pub client_rounds: Option<String>,
    pub definition_digest: Option<String>,
}

impl<'a> Columns<'a> {
    pub(crate) fn of(e: &'a AuditEvent) -> Self {
        Columns {
            call_id: &e.call_id,
            at_ms: unix_millis(e.at),
            principal: &e.principal,
            tenant: &e.tenant,
            client_id: e.client_id.as_deref().map(kept_text),
            tool: kept_text(&e.tool),
            plugin: e.plugin.as_deref(),
            catalog_version: e.catalog_version.as_deref(),
            plugin_digest: e.plugin_digest.map(|d| d.to_string()),
            argument_digest: e.argument_digest.to_string(),
            outcome: e.outcome.as_str(),
            error_code: e.error_code.as_deref(),
            // Saturates past 292,000 years: a row with a wrong duration beats no row.
            duration_us: i64::try_from(e.duration.as_micros()).unwrap_or(i64::MAX),
            gate_id: e.gate_id.as_deref().map(kept_text),
            receipt_sha256: e.receipt_sha256.as_deref(),
            client_rounds: ClientRound::to_column(&e.client_rounds),
            definition_digest: e.definition_digest.map(|d| d.to_string()),
        }
    }

    /// These values as the hash chain sees them.
    pub(crate) fn chained(&self) -> ChainedRow<'_> {
        ChainedRow {
            call_id: self.call_id,
            at_ms: self.at_ms,
            principal: self.principal,
            tenant: self.tenant,
            client_id: self.client_id.as_deref(),
            tool: &self.tool,
            plugin: self.plugin,
            catalog_version: self.catalog_version,
            plugin_digest: self.plugin_digest.as_deref(),
            argument_digest: &self.argument_digest,
            outcome: self.outcome,
            error_code: self.error_code,
            duration_us: self.duration_us,
            gate_id: self.gate_id.as_deref(),
            receipt_sha256: self.receipt_sha256,
            client_rounds: self.client_rounds.as_deref(),
            definition_digest: self.definition_digest.as_deref(),
        }
    }
}

/// One row's column values as stored, before they are checked.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    id: i64,
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
    prev_hash: Option<String>,
    row_hash: Option<String>,
}

impl Stored {
    /// Reads the columns of an `audit` row by name, on either engine.
    pub(crate) fn read<'r, R>(row: &'r R) -> Result<Stored, sqlx::Error>
    where
        R: Row,
        &'static str: ColumnIndex<R>,
        i64: Decode<'r, R::Database> + Type<R::Database>,
        String: Decode<'r, R::Database> + Type<R::Database>,
    {
        Ok(Stored {
            id: row.try_get("id")?,
            call_id: row.try_get("call_id")?,
            at: row.try_get("at")?,
            principal: row.try_get("principal")?,
            tenant: row.try_get("tenant")?,
            client_id: row.try_get("client_id")?,
            tool: row.try_get("tool")?,
            plugin: row.try_get("plugin")?,
            catalog_version: row.try_get("catalog_version")?,
            plugin_digest: row.try_get("plugin_digest")?,
            argument_digest: row.try_get("argument_digest")?,
            outcome: row.try_get("outcome")?,
            error_code: row.try_get("error_code")?,
            duration_us: row.try_get("duration_us")?,
            gate_id: row.try_get("gate_id")?,
            receipt_sha256: row.try_get("receipt_sha256")?,
            client_rounds: row.try_get("client_rounds")?,
            definition_digest: row.try_get("definition_digest")?,
            prev_hash: row.try_get("prev_hash")?,
            row_hash: row.try_get("row_hash")?,
        })
    }

    /// The row as a walk over the hash chain sees it: exactly the stored
    /// text, nothing parsed, so any edit shows.
    pub(crate) fn link(&self) -> Link<'_> {
        Link {
            id: self.id,
            prev_hash: self.prev_hash.as_deref(),
            row_hash: self.row_hash.as_deref(),
            row: ChainedRow {
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
            },
        }
    }

    /// The record these values stand for, or [`StorageError::Corrupt`]
    /// naming the first column this build cannot read back.
    pub(crate) fn into_record(self) -> Result<AuditRecord, StorageError> {
        let id = self.id;
        let corrupt = |column, value: &dyn ToString, problem: &str| StorageError::Corrupt {
            id,
            column,
            value: value.to_string(),
            problem: problem.to_owned(),
        };
        let digest = |column, text: &str| {
            text.parse::<Digest>()
                .map_err(|_| corrupt(column, &text, "not a SHA-256 in hex"))
        };
        let event = AuditEvent {
            at: from_unix_millis(self.at).ok_or_else(|| corrupt("at", &self.at, "out of range"))?,
            plugin_digest: match &self.plugin_digest {
                Some(text) => Some(digest("plugin_digest", text)?),
                None => None,
            },
            definition_digest: match &self.definition_digest {
                Some(text) => Some(digest("definition_digest", text)?),
                None => None,
            },
            argument_digest: digest("argument_digest", &self.argument_digest)?,
            outcome: Outcome::parse(&self.outcome)
                .ok_or_else(|| corrupt("outcome", &self.outcome, "not an outcome"))?,
            client_rounds: ClientRound::from_column(self.client_rounds.as_deref()).map_err(
                |_| {
                    let text = self.client_rounds.clone().unwrap_or_default();
                    corrupt("client_rounds", &text, "not a list of client rounds")
                },
            )?,
            duration: u64::try_from(self.duration_us)
                .map(Duration::from_micros)
                .map_err(|_| corrupt("duration_us", &self.duration_us, "negative"))?,
            call_id: self.call_id,
            principal: self.principal,
            tenant: self.tenant,
            client_id: self.client_id,
            tool: self.tool,
            plugin: self.plugin,
            catalog_version: self.catalog_version,
            error_code: self.error_code,
            gate_id: self.gate_id,
            receipt_sha256: self.receipt_sha256,
        };
        Ok(AuditRecord { id, event })
    }
}

/// Milliseconds since the unix epoch, negative before it; saturates at the
/// ends of `i64` (± 292 million years).
pub(crate) fn unix_millis(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
    }
}

/// The instant `ms` milliseconds after (or before) the unix epoch, if the
/// platform's `SystemTime` can hold it.
pub(crate) fn from_unix_millis(ms: i64) -> Option<SystemTime> {
    let offset = Duration::from_millis(ms.unsigned_abs());
    if ms >= 0 {
        UNIX_EPOCH.checked_add(offset)
    } else {
        UNIX_EPOCH.checked_sub(offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip_through_unix_millis_on_both_sides_of_the_epoch() {
        for ms in [0, 1, 1_764_000_000_123, -1, -86_400_000] {
            let t = from_unix_millis(ms).expect("small offsets fit in SystemTime");
            assert_eq!(unix_millis(t), ms);
        }
    }

    fn stored() -> Stored {
        Stored {
            id: 7,
            call_id: "c".into(),
            at: 1_000,
            principal: "p".into(),
            tenant: "t".into(),
            client_id: None,
            tool: "x".into(),
            plugin: None,
            catalog_version: None,
            plugin_digest: None,
            argument_digest: Digest::of(b"{}").to_string(),
            outcome: "denied".into(),
            error_code: Some("DENIED".into()),
            duration_us: 5,
            gate_id: None,
            receipt_sha256: None,
            client_rounds: None,
            definition_digest: None,
            prev_hash: None,
            row_hash: None,
        }
    }

    #[test]
    fn a_well_formed_row_becomes_its_event() {
        let record = stored().into_record().expect("a well-formed row");
        assert_eq!(record.id, 7);
        assert_eq!(record.event.outcome, Outcome::Denied);
        assert_eq!(record.event.at, UNIX_EPOCH + Duration::from_secs(1));
        assert_eq!(record.event.duration, Duration::from_micros(5));
    }

    #[test]
    fn an_unreadable_value_names_its_row_and_column() {
        let cases = [
            (
                Stored {
                    outcome: "maybe".into(),
                    ..stored()
                },
                "outcome",
            ),
            (
                Stored {
                    duration_us: -1,
                    ..stored()
                },
                "duration_us",
            ),
            (
                Stored {
                    argument_digest: "abc".into(),
                    ..stored()
                },
                "argument_digest",
            ),
            (
                Stored {
                    plugin_digest: Some("zz".into()),
                    ..stored()
                },
                "plugin_digest",
            ),
            (
                Stored {
                    definition_digest: Some("sha256:ab".into()),
                    ..stored()
                },
                "definition_digest",
            ),
        ];
        for (row, want) in cases {
            match row.into_record() {
                Err(StorageError::Corrupt { id: 7, column, .. }) => assert_eq!(column, want),
                other => panic!("{want}: expected Corrupt, got {other:?}"),
            }
        }
    }

    #[test]
    fn unix_millis_truncates_below_the_millisecond() {
        let t = UNIX_EPOCH + Duration::from_micros(1_500);
        assert_eq!(unix_millis(t), 1);
    }
}
