//! A gate: one risky invocation waiting for (or holding) a person's decision.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use toolhost_types::Risk;

/// A gate's id: `gate_` and 32 lowercase hex characters, minted by the host.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct GateId(String);

impl GateId {
    /// A new random id.
    pub fn mint(random: [u8; 16]) -> Self {
        let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
        GateId(format!("gate_{hex}"))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for GateId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for GateId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let hex = s
            .strip_prefix("gate_")
            .ok_or_else(|| format!("{s:?} is not a gate id"))?;
        let ok = hex.len() == 32
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !ok {
            return Err(format!("{s:?} is not a gate id"));
        }
        Ok(GateId(s.to_owned()))
    }
}

impl TryFrom<String> for GateId {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<GateId> for String {
    fn from(id: GateId) -> String {
        id.0
    }
}

/// Where a gate is in its life. Only these transitions exist, each a
/// compare-and-set in the store: `pending → confirmed | denied`,
/// `confirmed → consumed`. A gate past `expires_at` is expired whatever its
/// stored state says (except `consumed` and `denied`, which are final).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateState {
    /// Waiting for a person.
    Pending,
    /// A person confirmed it; the original call may run once.
    Confirmed,
    /// A person denied it; the call never runs.
    Denied,
    /// The call ran with it.
    Consumed,
}

impl GateState {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            GateState::Pending => "pending",
            GateState::Confirmed => "confirmed",
            GateState::Denied => "denied",
            GateState::Consumed => "consumed",
        }
    }

    /// The state named `s`.
    pub fn parse(s: &str) -> Option<Self> {
        [
            GateState::Pending,
            GateState::Confirmed,
            GateState::Denied,
            GateState::Consumed,
        ]
        .into_iter()
        .find(|g| g.as_str() == s)
    }
}

/// A person's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Let the call run (once).
    Confirm,
    /// Never run it.
    Deny,
}

impl Decision {
    /// The state a pending gate moves to.
    pub fn state(self) -> GateState {
        match self {
            Decision::Confirm => GateState::Confirmed,
            Decision::Deny => GateState::Denied,
        }
    }
}

/// A thing the gated call would act on, as its plan named it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// e.g. `environment`.
    pub kind: String,
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its tags (`prod`).
    pub tags: Vec<String>,
}

/// What the host knows when it opens a gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGate {
    /// The new gate's id.
    pub id: GateId,
    /// The caller's tenant.
    pub tenant: String,
    /// The caller (subject).
    pub principal: String,
    /// The caller's OAuth client.
    pub client_id: String,
    /// The tool.
    pub tool: String,
    /// The plugin's component digest: a gate approves one reviewed version.
    pub tool_version: String,
    /// SHA-256 of the canonical arguments (host-owned arguments removed).
    pub argument_digest: String,
    /// What the call would act on.
    pub targets: Vec<Target>,
    /// Its risk.
    pub risk: Risk,
    /// The plan's one-line summary, for the person deciding.
    pub summary: String,
    /// Whether confirming needs a reason (high risk).
    pub reason_required: bool,
    /// When it was opened, unix milliseconds.
    pub created_at: i64,
    /// When it stops being decidable or consumable, unix milliseconds.
    pub expires_at: i64,
}

/// A gate as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gate {
    /// Everything known when it was opened.
    pub opened: NewGate,
    /// Its stored state.
    pub state: GateState,
    /// Who decided it.
    pub decided_by: Option<String>,
    /// Their reason.
    pub reason: Option<String>,
    /// When, unix milliseconds.
    pub decided_at: Option<i64>,
    /// When the call ran with it, unix milliseconds.
    pub consumed_at: Option<i64>,
}

impl Gate {
    /// Its id.
    pub fn id(&self) -> &GateId {
        &self.opened.id
    }

    /// Whether it is past its expiry at `now` without having reached a
    /// final state.
    pub fn expired(&self, now: i64) -> bool {
        now >= self.opened.expires_at
            && matches!(self.state, GateState::Pending | GateState::Confirmed)
    }

    /// The gate as tools and pages show it at `now`: the contract's
    /// `{gate_id, targets, risk, reason_required, expires_at}` and the rest
    /// a person deciding needs. Times are RFC 3339 (UTC).
    pub fn view(&self, now: i64) -> serde_json::Value {
        let o = &self.opened;
        serde_json::json!({
            "gate_id": o.id.as_str(),
            "tool": o.tool,
            "targets": o.targets,
            "risk": o.risk,
            "reason_required": o.reason_required,
            "expires_at": rfc3339(o.expires_at),
            "summary": o.summary,
            "state": self.shown_state(now),
            "requested_by": o.principal,
            "requested_at": rfc3339(o.created_at),
            "decided_by": self.decided_by,
            "reason": self.reason,
            "decided_at": self.decided_at.map(rfc3339),
        })
    }

    /// The state a person sees at `now`: `expired` when it is.
    pub fn shown_state(&self, now: i64) -> &'static str {
        if self.expired(now) {
            "expired"
        } else {
            self.state.as_str()
        }
    }
}

/// Unix milliseconds as RFC 3339 (UTC, seconds).
pub fn rfc3339(ms: i64) -> String {
    let t =
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_seconds(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_ids_are_minted_and_parsed_strictly() {
        let id = GateId::mint([0xab; 16]);
        assert_eq!(id.as_str().len(), 5 + 32);
        assert_eq!(id.as_str().parse::<GateId>(), Ok(id.clone()));
        for bad in [
            "",
            "gate_",
            "gate_xyz",
            "GATE_abababababababababababababababab",
            "x",
        ] {
            assert!(bad.parse::<GateId>().is_err(), "{bad}");
        }
    }

    #[test]
    fn states_round_trip_and_decisions_map_to_states() {
        for s in ["pending", "confirmed", "denied", "consumed"] {
            assert_eq!(GateState::parse(s).map(GateState::as_str), Some(s));
        }
        assert_eq!(Decision::Confirm.state(), GateState::Confirmed);
        assert_eq!(Decision::Deny.state(), GateState::Denied);
    }
}
