//! The gate tables' rows read back into `toolhost_gates` values, and what a
//! refused compare-and-set means, read off the row it missed. Pure; the SQL
//! lives in `sql.rs`, the statements are run by `gates.rs`.

use toolhost_gates::{
    ConsumeError, DecideError, Gate, GateId, GateState, IdempotencyClaim, NewGate,
};
use toolhost_types::Risk;

use crate::fields::{Fields, corrupt};

/// A `gates` row (the columns of `sql::gate_columns!`).
pub(super) fn gate(row: &impl Fields) -> Result<Gate, sqlx::Error> {
    let id = row.text("id")?;
    let bad = |column, value: &str, problem: &str| corrupt("gates", &id, column, value, problem);
    let (targets, risk, state) = (row.text("targets")?, row.text("risk")?, row.text("state")?);
    let opened = NewGate {
        id: id.parse().map_err(|e: String| bad("id", &id, &e))?,
        tenant: row.text("tenant")?,
        principal: row.text("principal")?,
        client_id: row.text("client_id")?,
        tool: row.text("tool")?,
        tool_version: row.text("tool_version")?,
        argument_digest: row.text("argument_digest")?,
        targets: serde_json::from_str(&targets)
            .map_err(|e| bad("targets", &targets, &e.to_string()))?,
        risk: risk_named(&risk).ok_or_else(|| bad("risk", &risk, "not a risk"))?,
        summary: row.text("summary")?,
        reason_required: row.flag("reason_required")?,
        created_at: row.int("created_at")?,
        expires_at: row.int("expires_at")?,
    };
    Ok(Gate {
        opened,
        state: GateState::parse(&state).ok_or_else(|| bad("state", &state, "not a gate state"))?,
        decided_by: row.maybe_text("decided_by")?,
        reason: row.maybe_text("reason")?,
        decided_at: row.maybe_int("decided_at")?,
        consumed_at: row.maybe_int("consumed_at")?,
    })
}

/// The risk stored as `name` (its `Display`).
fn risk_named(name: &str) -> Option<Risk> {
    [Risk::Low, Risk::Medium, Risk::High]
        .into_iter()
        .find(|r| r.to_string() == name)
}

/// Why `decide` changed no row, given the gate as read just after.
pub(super) fn refused_decision(id: &GateId, found: Option<Gate>) -> DecideError {
    match found {
        None => DecideError::NotFound(id.clone()),
        // Still pending yet not decidable: expired at `now`, or superseded
        // by a newer gate after it expired (a state moves only forward, so
        // it was pending when the update missed it too).
        Some(gate) if gate.state == GateState::Pending => DecideError::Expired(id.clone()),
        Some(gate) => DecideError::Decided {
            id: id.clone(),
            state: gate.state.as_str(),
        },
    }
}

/// The call a retry wants to run with a gate.
pub(super) struct Call<'a> {
    pub(super) principal: &'a str,
    pub(super) tool: &'a str,
    pub(super) tool_version: &'a str,
    pub(super) argument_digest: &'a str,
}

impl Call<'_> {
    /// The first of the gate's fields this call differs in, by the names
    /// [`ConsumeError::Mismatch`] uses: the caller before the call.
    fn differs_from(&self, gate: &NewGate) -> Option<&'static str> {
        [
            ("principal", self.principal, &gate.principal),
            ("tool", self.tool, &gate.tool),
            ("tool version", self.tool_version, &gate.tool_version),
            ("arguments", self.argument_digest, &gate.argument_digest),
        ]
        .into_iter()
        .find(|(_, wanted, opened)| wanted != opened)
        .map(|(what, ..)| what)
    }
}

/// Why `consume` changed no row at `now`, given the gate as read just after.
/// A gate opened for another call says so before saying anything about
/// its state.
pub(super) fn refused_consumption(
    id: &GateId,
    found: Option<Gate>,
    call: &Call<'_>,
    now: i64,
) -> ConsumeError {
    let Some(gate) = found else {
        return ConsumeError::NotFound(id.clone());
    };
    if let Some(what) = call.differs_from(&gate.opened) {
        return ConsumeError::Mismatch {
            id: id.clone(),
            what,
        };
    }
    match gate.state {
        _ if gate.expired(now) => ConsumeError::Expired(id.clone()),
        GateState::Pending => ConsumeError::Pending(id.clone()),
        GateState::Denied => ConsumeError::Denied(id.clone()),
        GateState::Consumed => ConsumeError::Consumed(id.clone()),
        // Confirmed, live and matching, yet the update missed it: it was
        // still pending then and was confirmed in between. A retry succeeds.
        GateState::Confirmed => ConsumeError::Pending(id.clone()),
    }
}

/// An `idempotency_keys` row: request digest, state, result.
pub(super) type KeyRow = (String, String, Option<String>);

/// An `idempotency_keys` row.
pub(super) fn key(row: &impl Fields) -> Result<KeyRow, sqlx::Error> {
    Ok((
        row.text("request_digest")?,
        row.text("state")?,
        row.maybe_text("result")?,
    ))
}

/// What a claim for `request_digest` finds in the key's row `held`; `key`
/// names it in the error for a row this build cannot read.
pub(super) fn held_claim(
    key: &str,
    request_digest: &str,
    held: KeyRow,
) -> Result<IdempotencyClaim, sqlx::Error> {
    let (digest, state, result) = held;
    if digest != request_digest {
        return Ok(IdempotencyClaim::Reused);
    }
    match (state.as_str(), result) {
        ("running", _) => Ok(IdempotencyClaim::InProgress),
        ("done", Some(result)) => Ok(IdempotencyClaim::Done(result)),
        _ => Err(corrupt(
            "idempotency_keys",
            key,
            "state",
            &state,
            "not running, nor done with a result",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(state: GateState, expires_at: i64) -> Gate {
        Gate {
            opened: NewGate {
                id: GateId::mint([7; 16]),
                tenant: "acme".into(),
                principal: "u-alice".into(),
                client_id: "cli".into(),
                tool: "deploy".into(),
                tool_version: "v1".into(),
                argument_digest: "d1".into(),
                targets: vec![],
                risk: Risk::High,
                summary: "deploy".into(),
                reason_required: true,
                created_at: 0,
                expires_at,
            },
            state,
            decided_by: None,
            reason: None,
            decided_at: None,
            consumed_at: None,
        }
    }

    const CALL: Call<'static> = Call {
        principal: "u-alice",
        tool: "deploy",
        tool_version: "v1",
        argument_digest: "d1",
    };

    #[test]
    fn every_stored_risk_reads_back() {
        for risk in [Risk::Low, Risk::Medium, Risk::High] {
            assert_eq!(risk_named(&risk.to_string()), Some(risk));
        }
        assert_eq!(risk_named("HIGH"), None);
    }

    #[test]
    fn a_refused_consumption_names_the_first_difference_then_the_state() {
        use ConsumeError as E;
        let id = GateId::mint([7; 16]);
        let other = |f: fn(&mut Call<'static>)| {
            let mut call = CALL;
            f(&mut call);
            refused_consumption(&id, Some(gate(GateState::Confirmed, 10)), &call, 5)
        };
        let what = |e| match e {
            E::Mismatch { what, .. } => what,
            e => panic!("{e:?}"),
        };
        assert_eq!(what(other(|c| c.principal = "u-bob")), "principal");
        assert_eq!(what(other(|c| c.tool = "x")), "tool");
        assert_eq!(what(other(|c| c.tool_version = "v2")), "tool version");
        assert_eq!(what(other(|c| c.argument_digest = "d2")), "arguments");
        let both = |c: &mut Call<'static>| (c.principal, c.tool) = ("u-bob", "x");
        assert_eq!(what(other(both)), "principal");

        let refused = |state, now| refused_consumption(&id, Some(gate(state, 10)), &CALL, now);
        assert!(matches!(refused(GateState::Pending, 5), E::Pending(_)));
        assert!(matches!(refused(GateState::Pending, 10), E::Expired(_)));
        assert!(matches!(refused(GateState::Confirmed, 10), E::Expired(_)));
        assert!(matches!(refused(GateState::Denied, 50), E::Denied(_)));
        assert!(matches!(refused(GateState::Consumed, 50), E::Consumed(_)));
        assert!(matches!(
            refused_consumption(&id, None, &CALL, 5),
            E::NotFound(_)
        ));
    }

    #[test]
    fn a_refused_decision_is_missing_expired_or_decided() {
        let id = GateId::mint([7; 16]);
        let refused = |state| refused_decision(&id, Some(gate(state, 10)));
        assert!(matches!(
            refused_decision(&id, None),
            DecideError::NotFound(_)
        ));
        assert!(matches!(
            refused(GateState::Pending),
            DecideError::Expired(_)
        ));
        for state in [GateState::Confirmed, GateState::Denied, GateState::Consumed] {
            assert!(
                matches!(refused(state), DecideError::Decided { state: s, .. } if s == state.as_str())
            );
        }
    }

    #[test]
    fn a_held_key_answers_by_digest_then_state() {
        let row = |digest: &str, state: &str, result: Option<&str>| {
            (
                digest.to_owned(),
                state.to_owned(),
                result.map(str::to_owned),
            )
        };
        let claim = |held| held_claim("k", "d1", held).expect("a readable row");
        assert_eq!(
            claim(row("d2", "done", Some("{}"))),
            IdempotencyClaim::Reused
        );
        assert_eq!(
            claim(row("d1", "running", None)),
            IdempotencyClaim::InProgress
        );
        assert_eq!(
            claim(row("d1", "done", Some("{}"))),
            IdempotencyClaim::Done("{}".into())
        );
        assert!(held_claim("k", "d1", row("d1", "lost", None)).is_err());
    }
}
