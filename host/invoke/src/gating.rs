//! Gates on the call path (seed 002, MCPX-FR-005/018): a risky call plans
//! first, and its effective risk decides whether it runs, or stops with an
//! `approval_required` gate until a person decides; the retry that carries
//! a confirmed gate consumes it atomically and runs once.
//!
//! Also the arguments the host owns: `gate_id` and `idempotency_key` are
//! taken out of a gateable tool's arguments before the plugin sees them.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use toolhost_audit::{Effect, KeyRef};
use toolhost_catalog::ToolRef;
use toolhost_gates::{GateId, IdempotencyKey, NewGate, Target};
use toolhost_runtime::Plan;
use toolhost_types::{Principal, Risk};

use crate::{Answer, InvokeError};

/// The argument a retry names its confirmed gate with.
pub const GATE_ID_ARG: &str = "gate_id";
/// The argument a client names a mutation's idempotency key with.
pub const IDEMPOTENCY_KEY_ARG: &str = "idempotency_key";
/// How long a gate can be decided and then used, unless configured: long
/// enough for a person to be found, short enough that a stale approval
/// does not linger.
pub const DEFAULT_GATE_TTL: Duration = Duration::from_secs(60 * 60);
/// The longest idempotency key accepted.
const MAX_KEY_LEN: usize = 255;

/// The host's clock, injectable for tests (gate expiry).
pub type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// How gates behave.
#[derive(Clone)]
pub struct GatePolicy {
    /// How long a gate lives.
    pub ttl: Duration,
    /// Whether the person who raised a gate may decide it.
    pub allow_self_approval: bool,
    /// Now.
    pub clock: Clock,
}

impl Default for GatePolicy {
    fn default() -> Self {
        Self {
            ttl: DEFAULT_GATE_TTL,
            allow_self_approval: false,
            clock: Arc::new(SystemTime::now),
        }
    }
}

impl GatePolicy {
    /// Now, in unix milliseconds.
    pub fn now_ms(&self) -> i64 {
        millis((self.clock)())
    }
}

/// Unix milliseconds of `t` (0 before the epoch).
pub fn millis(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The host-owned arguments of one call, taken out of its arguments.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct HostArguments {
    pub(crate) gate_id: Option<GateId>,
    pub(crate) idempotency_key: Option<String>,
}

/// Splits `gate_id` and `idempotency_key` off `args` (an object). Either
/// present but not a well-formed string is `INVALID_ARGUMENTS`.
pub(crate) fn split(args: &Value) -> Result<(Value, HostArguments), InvokeError> {
    let Value::Object(map) = args else {
        return Ok((args.clone(), HostArguments::default()));
    };
    let mut map = map.clone();
    let mut host = HostArguments::default();
    if let Some(v) = map.remove(GATE_ID_ARG) {
        let id = v
            .as_str()
            .and_then(|s| s.parse::<GateId>().ok())
            .ok_or_else(|| InvokeError::InvalidArguments {
                detail: format!("{GATE_ID_ARG} must be a gate id such as gate_0123…"),
            })?;
        host.gate_id = Some(id);
    }
    if let Some(v) = map.remove(IDEMPOTENCY_KEY_ARG) {
        let key = v
            .as_str()
            .filter(|k| {
                !k.is_empty() && k.len() <= MAX_KEY_LEN && k.bytes().all(|b| b.is_ascii_graphic())
            })
            .ok_or_else(|| InvokeError::InvalidArguments {
                detail: format!(
                    "{IDEMPOTENCY_KEY_ARG} must be 1–{MAX_KEY_LEN} printable ASCII characters"
                ),
            })?;
        host.idempotency_key = Some(key.to_owned());
    }
    Ok((Value::Object(map), host))
}

/// Whether calls of `tool` are planned, may be gated, and accept the
/// host-owned arguments: it changes state, or its review says it is risky.
pub(crate) fn gateable(tool: &ToolRef) -> bool {
    let spec = tool.spec();
    spec.mutating || spec.risk == Risk::High || section_risk(tool).is_some()
}

fn section_risk(tool: &ToolRef) -> Option<Risk> {
    tool.plugin()
        .manifest
        .tools
        .get(&tool.spec().name)
        .and_then(|s| s.risk)
}

/// The call's risk: the highest of the tool's described risk, its
/// reviewed floor, the plan's own class, and the plugin's risk rules over
/// the plan's targets.
pub(crate) fn effective_risk(tool: &ToolRef, plan: &Plan) -> Risk {
    let rules = &tool.plugin().manifest.risk.high_when_tagged;
    let tagged = plan
        .targets
        .iter()
        .any(|t| t.tags.iter().any(|tag| rules.contains(tag)));
    let by_rule = if tagged { Risk::High } else { Risk::Low };
    [
        tool.spec().risk,
        section_risk(tool).unwrap_or(Risk::Low),
        plan.risk,
        by_rule,
    ]
    .into_iter()
    .max()
    .unwrap_or(Risk::High)
}

/// The gate a call of `tool` by `who` with `digest` would open now.
pub(crate) fn new_gate(
    who: &Principal,
    tool: &ToolRef,
    digest: &str,
    plan: &Plan,
    risk: Risk,
    policy: &GatePolicy,
) -> NewGate {
    let mut random = [0u8; 16];
    getrandom::fill(&mut random).expect("the OS random source is available");
    let now = policy.now_ms();
    NewGate {
        id: GateId::mint(random),
        tenant: who.tenant.clone(),
        principal: who.subject.clone(),
        client_id: who.client_id.clone(),
        tool: tool.spec().name.to_string(),
        tool_version: tool.plugin().plugin.digest().to_string(),
        argument_digest: digest.to_owned(),
        targets: plan
            .targets
            .iter()
            .map(|t| Target {
                kind: t.kind.clone(),
                id: t.id.clone(),
                name: t.name.clone(),
                tags: t.tags.clone(),
            })
            .collect(),
        risk,
        summary: plan.summary.clone(),
        reason_required: risk == Risk::High,
        created_at: now,
        expires_at: now.saturating_add(i64::try_from(policy.ttl.as_millis()).unwrap_or(i64::MAX)),
    }
}

/// The idempotency key of a call.
pub(crate) fn key(who: &Principal, tool: &str, key: String) -> IdempotencyKey {
    IdempotencyKey {
        tenant: who.tenant.clone(),
        principal: who.subject.clone(),
        tool: tool.to_owned(),
        key,
    }
}

/// What the call's audit row does with the idempotency key the call held:
/// stores the outcome of a call that ran under it, or releases it (a
/// failure, a question or a gate: the request may be retried).
pub(crate) fn settle(key: IdempotencyKey, answer: &Result<Answer, InvokeError>) -> Effect {
    let key = KeyRef {
        tenant: key.tenant,
        principal: key.principal,
        tool: key.tool,
        key: key.key,
    };
    match crate::results::stored(answer) {
        Some(result) => Effect::FinishKey { key, result },
        None => Effect::ReleaseKey { key },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn host_arguments_are_taken_out_and_checked() {
        let id = "gate_0123456789abcdef0123456789abcdef";
        let (rest, host) =
            split(&json!({"env": "prod", "gate_id": id, "idempotency_key": "k-1"})).expect("valid");
        assert_eq!(rest, json!({"env": "prod"}));
        assert_eq!(host.gate_id.map(|g| g.to_string()).as_deref(), Some(id));
        assert_eq!(host.idempotency_key.as_deref(), Some("k-1"));
        for bad in [
            json!({"gate_id": 7}),
            json!({"gate_id": "gate_x"}),
            json!({"idempotency_key": ""}),
            json!({"idempotency_key": "a b"}),
        ] {
            assert!(
                matches!(split(&bad), Err(InvokeError::InvalidArguments { .. })),
                "{bad}"
            );
        }
        assert_eq!(
            split(&json!({"a": 1})).expect("valid").1,
            HostArguments::default()
        );
    }
}
