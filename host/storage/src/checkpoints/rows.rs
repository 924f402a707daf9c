//! The `checkpoints` rows read back into `toolhost_gates` values, and what a
//! refused decision means, read off the row it missed. Pure; the SQL lives
//! in `sql.rs`, the statements are run by `checkpoints.rs`.

use toolhost_gates::{Checkpoint, CheckpointError, NewCheckpoint};

use crate::fields::{Fields, corrupt};

/// A `checkpoints` row (the columns of `sql::checkpoint_columns!`).
pub(super) fn checkpoint(row: &impl Fields) -> Result<Checkpoint, sqlx::Error> {
    let id = row.text("id")?;
    let bad =
        |column, value: &str, problem: &str| corrupt("checkpoints", &id, column, value, problem);
    let version = row.int("version")?;
    let version = u32::try_from(version)
        .map_err(|_| bad("version", &version.to_string(), "not a version number"))?;
    let disposition = row.maybe_text("disposition")?;
    let disposition = disposition
        .map(|d| d.parse().map_err(|e: String| bad("disposition", &d, &e)))
        .transpose()?;
    let opened = NewCheckpoint {
        tenant: row.text("tenant")?,
        plugin: row.text("plugin")?,
        subject: row.text("subject")?,
        title: row.text("title")?,
        evidence: row.text("evidence")?,
        opened_by: row.text("opened_by")?,
        created_at: row.int("created_at")?,
        id,
    };
    Ok(Checkpoint {
        opened,
        version,
        disposition,
        decided_by: row.maybe_text("decided_by")?,
        reason: row.maybe_text("reason")?,
        decided_at: row.maybe_int("decided_at")?,
    })
}

/// Why a decision at `expected` version changed no row, given the
/// checkpoint as read just after. A decided checkpoint says so whatever
/// version the decider saw: "decided already" tells a person more than
/// "list it again".
pub(super) fn refused_decision(
    id: &str,
    expected: u32,
    found: Option<Checkpoint>,
) -> CheckpointError {
    match found {
        None => CheckpointError::NotFound(id.to_owned()),
        Some(c) if c.disposition.is_some() => CheckpointError::Decided(id.to_owned()),
        // Waiting at another version. (Waiting at `expected` cannot miss:
        // only a decision changes a row, and it is final.)
        Some(c) => CheckpointError::VersionConflict {
            id: id.to_owned(),
            expected,
            current: c.version,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolhost_gates::Disposition;

    fn checkpoint(version: u32, disposition: Option<Disposition>) -> Checkpoint {
        Checkpoint {
            opened: NewCheckpoint {
                id: "chk_1".into(),
                tenant: "acme".into(),
                plugin: "testbench".into(),
                subject: "execution:ex-3".into(),
                title: "Is the alert real?".into(),
                evidence: "p99 up 40%".into(),
                opened_by: "u-alice".into(),
                created_at: 0,
            },
            version,
            disposition,
            decided_by: disposition.map(|_| "u-bob".into()),
            reason: None,
            decided_at: disposition.map(|_| 5),
        }
    }

    #[test]
    fn a_refused_decision_is_missing_decided_or_stale() {
        use CheckpointError as E;
        let refused = |expected, found| refused_decision("chk_1", expected, found);
        assert!(matches!(refused(1, None), E::NotFound(id) if id == "chk_1"));
        let decided = || Some(checkpoint(2, Some(Disposition::Confirm)));
        assert!(matches!(refused(1, decided()), E::Decided(_)));
        assert!(matches!(refused(2, decided()), E::Decided(_)));
        assert!(matches!(
            refused(3, Some(checkpoint(1, None))),
            E::VersionConflict {
                expected: 3,
                current: 1,
                ..
            }
        ));
    }
}
