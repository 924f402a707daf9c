//! The `runs` rows read back into `toolhost_runs` values, and the column
//! values a run is written with. Pure; the SQL lives in `sql.rs`, the
//! statements are run by `runs.rs` and `effects.rs`.

use serde::de::DeserializeOwned;
use toolhost_runs::{Beat, Claim, Progress, Run, RunId, RunSpec, RunState};

use crate::fields::{Fields, corrupt};

/// Most a run's time budget may be, in milliseconds, as stored: far beyond
/// any ceiling (`RunBudget::CEILING` is an hour), and small enough that
/// `now + timeout_ms` cannot overflow in SQL (which would fail the claim on
/// PostgreSQL and turn the value into a float on SQLite).
const MAX_TIMEOUT_MS: i64 = i64::MAX / 4;

/// The budget's wall time of `spec`, in the `timeout_ms` column's units.
pub(crate) fn timeout_ms(spec: &RunSpec) -> i64 {
    i64::try_from(spec.budget.call.timeout.as_millis())
        .unwrap_or(i64::MAX)
        .min(MAX_TIMEOUT_MS)
}

/// `value` as the JSON a column stores; an encode error for the effect or
/// operation to fail with (run values are plain data, so never in practice).
pub(crate) fn json(value: &impl serde::Serialize) -> Result<String, sqlx::Error> {
    serde_json::to_string(value).map_err(|e| sqlx::Error::Encode(Box::new(e)))
}

/// A new random lease token: 128 bits of OS randomness, lower-case hex.
pub(super) fn lease_token() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random source is available");
    hex::encode(bytes)
}

/// A `runs` row (the columns of `sql::run_columns!`).
pub(super) fn run(row: &impl Fields) -> Result<Run, sqlx::Error> {
    let id = row.text("id")?;
    let bad = |column, value: &str, problem: &str| corrupt("runs", &id, column, value, problem);
    let count = |column| {
        let n = row.int(column)?;
        u32::try_from(n).map_err(|_| bad(column, &n.to_string(), "not a count"))
    };
    let state = row.text("state")?;
    Ok(Run {
        id: RunId::parse(&id).ok_or_else(|| bad("id", &id, "not a run id"))?,
        tenant: row.text("tenant")?,
        principal: row.text("principal")?,
        principal_kind: row.text("principal_kind")?,
        client_id: row.text("client_id")?,
        spec: parsed(&id, "spec", &row.text("spec")?)?,
        state: RunState::parse(&state).ok_or_else(|| bad("state", &state, "not a run state"))?,
        attempt: count("attempt")?,
        max_attempts: count("max_attempts")?,
        audited_attempts: count("audited_attempts")?,
        created_at_ms: row.int("created_at")?,
        started_at_ms: row.maybe_int("started_at")?,
        finished_at_ms: row.maybe_int("finished_at")?,
        deadline_at_ms: row.maybe_int("deadline_at")?,
        cancel_requested_at_ms: row.maybe_int("cancel_requested_at")?,
        lease_owner: row.maybe_text("lease_owner")?,
        lease_until_ms: row.maybe_int("lease_until")?,
        progress: maybe_parsed::<Progress>(&id, "progress", row.maybe_text("progress")?)?,
        outcome: maybe_parsed(&id, "outcome", row.maybe_text("outcome")?)?,
        receipt: row.maybe_text("receipt")?,
        receipt_sha256: row.maybe_text("receipt_sha256")?,
        handed_over: {
            let mask = row.int("handed_over")?;
            u64::try_from(mask).map_err(|_| bad("handed_over", &mask.to_string(), "not a mask"))?
        },
        input: maybe_parsed(&id, "input", row.maybe_text("input")?)?,
        parked_at_ms: row.maybe_int("parked_at")?,
    })
}

/// A held run's row and the token of its lease.
pub(super) fn claim(row: &impl Fields) -> Result<Claim, sqlx::Error> {
    let run = run(row)?;
    let lease_token = row.maybe_text("lease_token")?.ok_or_else(|| {
        let id = run.id.as_str();
        corrupt("runs", id, "lease_token", "NULL", "a held run has a lease")
    })?;
    Ok(Claim { run, lease_token })
}

/// The `ACTIVE` counts: unsettled runs of the tenant, and of the principal.
pub(super) fn counts(row: &impl Fields) -> Result<(i64, i64), sqlx::Error> {
    Ok((row.int("of_tenant")?, row.int("of_principal")?))
}

/// What a renewed lease's row says.
pub(super) fn beat(row: &impl Fields) -> Result<Beat, sqlx::Error> {
    Ok(Beat {
        cancel_requested_at_ms: row.maybe_int("cancel_requested_at")?,
    })
}

fn parsed<T: DeserializeOwned>(id: &str, column: &str, text: &str) -> Result<T, sqlx::Error> {
    serde_json::from_str(text).map_err(|e| corrupt("runs", id, column, text, &e.to_string()))
}

fn maybe_parsed<T: DeserializeOwned>(
    id: &str,
    column: &str,
    text: Option<String>,
) -> Result<Option<T>, sqlx::Error> {
    text.map(|t| parsed(id, column, &t)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_is_stored_in_milliseconds_and_never_overflows_a_deadline() {
        let mut spec = RunSpec {
            tool: "explore".into(),
            source: toolhost_runs::RunSource::Active,
            revision: toolhost_runs::RevisionRef {
                id: None,
                plugin: "p".into(),
                version: "0.1.0".into(),
                component_sha256: "aa".into(),
                manifest_sha256: None,
                signer: None,
                catalog_version: None,
            },
            arguments: serde_json::json!({}),
            argument_digest: "bb".into(),
            budget: toolhost_limits::RunBudget::DEFAULT,
            client: None,
        };
        assert_eq!(timeout_ms(&spec), 600_000);
        spec.budget.call.timeout = std::time::Duration::MAX;
        assert_eq!(timeout_ms(&spec), MAX_TIMEOUT_MS);
        assert!(1_764_000_000_000i64.checked_add(MAX_TIMEOUT_MS).is_some());
    }

    #[test]
    fn lease_tokens_are_128_random_bits_in_hex() {
        let (a, b) = (lease_token(), lease_token());
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
        );
    }
}
