//! The approval loop as MCP tools (seed 002, "Gates live entirely inside
//! MCP"): `list_pending_approvals` and `decide_approval`, host tools over
//! the one durable gate store, so a person completes the loop from any MCP
//! client; the web page is another renderer of the same rows.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_gates::{Decision, Gate, GateCursor, GateId, GateQuery, GateState, GateStore};
use toolhost_invoke::{
    GatePolicy, HostCall, HostTool, HostToolFuture, InvokeError, host_spec as spec, invalid,
};
use toolhost_policy::{Grants, PolicyStore, Use, decide};
use toolhost_runtime::{ToolOutput, ToolSpec};
use toolhost_types::{Permission, Principal, PrincipalKind, keep_page};

use crate::DecisionError;
use crate::arguments::{bounded, listing, parsed, people_only};

/// Listing gates needs this permission.
pub const READ_PERMISSION: &str = "approvals:read";
/// Deciding gates needs this one (and a user principal).
pub const DECIDE_PERMISSION: &str = "approvals:decide";
/// Names the permission a tool needs (`None`: no such tool).
pub type ToolPermission = Arc<dyn Fn(&str, &str) -> Option<Permission> + Send + Sync>;

/// The most gates one listing returns.
const MAX_LISTED: u32 = 100;

fn output(structured: Value, text: String) -> ToolOutput {
    ToolOutput {
        structured,
        text: Some(text),
        content: Vec::new(),
    }
}

/// The gates `who` may see: their tenant's, for tools they may list.
fn visible(
    who: &Principal,
    grants: &Grants,
    gates: Vec<Gate>,
    tool_permission: &dyn Fn(&str, &str) -> Option<Permission>,
) -> Vec<Gate> {
    gates
        .into_iter()
        .filter(|g| {
            tool_permission(&who.tenant, &g.opened.tool)
                .is_some_and(|p| decide(who, grants, &p, g.opened.risk, Use::List).permits())
        })
        .collect()
}

/// `list_pending_approvals(filter?)`.
pub struct ListPendingApprovals {
    spec: ToolSpec,
    gates: Arc<dyn GateStore>,
    policy: Arc<dyn PolicyStore>,
    policy_clock: GatePolicy,
    tool_permission: ToolPermission,
}

/// `decide_approval(gate_id, decision, reason)`.
pub struct DecideApproval {
    spec: ToolSpec,
    gates: Arc<dyn GateStore>,
    policy: GatePolicy,
}

impl ListPendingApprovals {
    /// The tool over `gates`. `tool_permission` names the permission a
    /// tool needs (a gate is listed only to who may see its tool).
    pub fn new(
        gates: Arc<dyn GateStore>,
        policy: Arc<dyn PolicyStore>,
        clock: GatePolicy,
        tool_permission: ToolPermission,
    ) -> Self {
        let input = json!({
            "type": "object",
            "properties": {
                "filter": {
                    "type": "object",
                    "description": "Narrow the list. Default: gates waiting for a decision.",
                    "properties": {
                        "state": {"enum": ["pending", "confirmed", "denied", "consumed", "all"]},
                        "tool": {"type": "string", "maxLength": 128},
                    },
                    "additionalProperties": false,
                },
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LISTED, "description": "At most this many gates (default and most: 100)."},
                "cursor": {"type": "string", "maxLength": 200, "description": "The next_cursor of the page before: the gates older than it."},
            },
            "additionalProperties": false,
        });
        let spec = spec(
            "list_pending_approvals",
            "List pending approvals",
            "Lists approval gates of your tenant (by default those waiting for a decision), raised by any client or person, with their targets, risk, summary and expiry, newest first; next_cursor, when there are older gates, reads on. Decide one with decide_approval.",
            input,
            READ_PERMISSION,
            false,
        );
        Self {
            spec,
            gates,
            policy,
            policy_clock: clock,
            tool_permission,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    #[serde(default)]
    filter: Filter,
    limit: Option<u32>,
    cursor: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Filter {
    state: Option<String>,
    tool: Option<String>,
}

impl HostTool for ListPendingApprovals {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(async move { Ok((self.run(c.who, c.args).await?, Vec::new())) })
    }
}

impl ListPendingApprovals {
    async fn run(&self, who: &Principal, args: &Value) -> Result<ToolOutput, InvokeError> {
        let args: ListArgs = listing(args)?;
        let states: Vec<GateState> = match args.filter.state.as_deref() {
            None | Some("pending") => vec![GateState::Pending],
            Some("all") => Vec::new(),
            Some(s) => {
                vec![GateState::parse(s).ok_or_else(|| invalid(format!("unknown state {s:?}")))?]
            }
        };
        let grants = match who.kind {
            PrincipalKind::User => self
                .policy
                .grants(&who.tenant, &who.subject)
                .await
                .map_err(InvokeError::Policy)?,
            PrincipalKind::Service => Grants::none(),
        };
        let limit = args.limit.unwrap_or(MAX_LISTED).clamp(1, MAX_LISTED);
        let before = args
            .cursor
            .as_deref()
            .map(str::parse::<GateCursor>)
            .transpose()
            .map_err(|e| invalid(format!("cursor: {e}")))?;
        // One more than the page: whether there is another beyond it.
        let query = GateQuery {
            states: &states,
            tool: args.filter.tool.as_deref(),
            before: before.as_ref(),
            limit: limit + 1,
        };
        let mut gates = self
            .gates
            .page(&who.tenant, query)
            .await
            .map_err(InvokeError::Gates)?;
        let more = keep_page(&mut gates, limit as usize, false);
        // The place of the last gate read, shown or not: the next page
        // starts below it whatever this one hid.
        let next = gates
            .last()
            .filter(|_| more)
            .map(|g| GateCursor::of(g).to_string());
        let now = self.policy_clock.now_ms();
        let shown: Vec<Value> = visible(who, &grants, gates, self.tool_permission.as_ref())
            .into_iter()
            .filter(|g| !(states == [GateState::Pending] && g.expired(now)))
            .map(|g| g.view(now))
            .collect();
        let text = match &next {
            Some(_) => format!("{} gate(s); older ones follow next_cursor", shown.len()),
            None => format!("{} gate(s)", shown.len()),
        };
        let mut listed = json!({"gates": shown});
        if let Some(next) = next {
            listed["next_cursor"] = json!(next);
        }
        Ok(output(listed, text))
    }
}

impl DecideApproval {
    /// The tool over `gates`, deciding under `policy`.
    pub fn new(gates: Arc<dyn GateStore>, policy: GatePolicy) -> Self {
        let input = json!({
            "type": "object",
            "required": ["gate_id", "decision"],
            "properties": {
                "gate_id": {"type": "string", "description": "The gate, as approval_required or list_pending_approvals named it."},
                "decision": {"enum": ["confirm", "deny"], "description": "confirm: the original call may run once when retried with gate_id. deny: it never runs."},
                "reason": {"type": "string", "maxLength": 1000, "description": "Why. Required to confirm a gate with reason_required (high risk)."},
            },
            "additionalProperties": false,
        });
        let spec = spec(
            "decide_approval",
            "Decide an approval",
            "Confirms or denies an approval gate, recording who decided and why. Only a person (not a service) may decide, and not the person who raised it. Confirmed: the original call runs once when retried with the same arguments and gate_id. Denied: it never runs.",
            input,
            DECIDE_PERMISSION,
            true,
        );
        Self {
            spec,
            gates,
            policy,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecideArgs {
    gate_id: String,
    decision: Decision,
    #[serde(default)]
    reason: String,
}

impl HostTool for DecideApproval {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(async move { Ok((self.run(c.who, c.args).await?, Vec::new())) })
    }
}

impl DecideApproval {
    async fn run(&self, who: &Principal, args: &Value) -> Result<ToolOutput, InvokeError> {
        people_only(who, &self.spec)?;
        let args: DecideArgs = parsed(args)?;
        let id: GateId = args.gate_id.parse().map_err(invalid)?;
        let reason = args.reason.trim();
        bounded(reason)?;
        let gate = self
            .gates
            .get(&who.tenant, &id)
            .await
            .map_err(InvokeError::Gates)?
            .ok_or_else(|| {
                DecisionError::Gate(toolhost_gates::DecideError::NotFound(id.clone()))
            })?;
        if gate.opened.principal == who.subject && !self.policy.allow_self_approval {
            return Err(DecisionError::SelfApproval {
                gate: id.to_string(),
            }
            .into());
        }
        if args.decision == Decision::Confirm && gate.opened.reason_required && reason.is_empty() {
            return Err(DecisionError::ReasonRequired {
                gate: id.to_string(),
            }
            .into());
        }
        let now = self.policy.now_ms();
        let decided = self
            .gates
            .decide(&who.tenant, &id, args.decision, &who.subject, reason, now)
            .await
            .map_err(DecisionError::Gate)?;
        tracing::info!(gate = %id, tool = %decided.opened.tool, by = %who.subject,
                state = decided.state.as_str(), "approval decided");
        let text = match args.decision {
            Decision::Confirm => format!(
                "Gate {id} confirmed: retry {} with the same arguments and gate_id to run it once.",
                decided.opened.tool
            ),
            Decision::Deny => {
                format!("Gate {id} denied: {} will not run.", decided.opened.tool)
            }
        };
        Ok(output(decided.view(now), text))
    }
}
