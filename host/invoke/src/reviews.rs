//! Plugin reviews as MCP tools: `list_plugin_reviews` and
//! `decide_plugin_review`, host tools over the catalog's store. They are the
//! same decisions as `toolhost plugin review …` (`toolhost_catalog::decide`),
//! so a reviewer can work from any MCP client; the decision is written with
//! the call's own audit row, in one transaction.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_audit::Effect;
use toolhost_catalog::decide::{self, Decider, Verdict};
use toolhost_catalog::{CatalogStore, Revision, RevisionState};
use toolhost_runtime::{ToolOutput, ToolSpec};
use toolhost_types::{Principal, PrincipalKind};

use crate::tool::{host_spec as spec, invalid};
use crate::{HostEffectsFuture, HostTool, HostToolFuture, InvokeError};

/// Listing and deciding reviews needs this permission (or an admin role),
/// and a user principal: a service never reviews.
pub const REVIEW_PERMISSION: &str = "catalog:review";

/// The most revisions one listing returns.
const MAX_LISTED: usize = 50;

/// The longest reason accepted.
const MAX_REASON: usize = 1000;

fn people_only(who: &Principal, spec: &ToolSpec) -> Result<(), InvokeError> {
    if who.kind != PrincipalKind::User {
        return Err(InvokeError::PermissionDenied {
            tool: spec.name.to_string(),
        });
    }
    Ok(())
}

/// What a reviewer sees of a revision, with the host's capability diff.
async fn view(store: &dyn CatalogStore, rev: &Revision) -> Result<Value, InvokeError> {
    let diff = decide::review_diff(store, rev)
        .await
        .map_err(InvokeError::Catalog)?;
    Ok(json!({
        "revision": rev.id,
        "plugin": rev.plugin,
        "version": rev.version,
        "state": rev.state.as_str(),
        "source": rev.source,
        "signer": rev.signer,
        "component_sha256": rev.component_digest.to_string(),
        "manifest_sha256": rev.manifest_digest.to_string(),
        "submitted_by": rev.submitted_by,
        "submitted_at_ms": rev.submitted_at_ms,
        "widens": diff.widens(),
        "diff": diff,
    }))
}

/// `list_plugin_reviews(state?, plugin?)`.
pub struct ListPluginReviews {
    spec: ToolSpec,
    store: Arc<dyn CatalogStore>,
}

impl ListPluginReviews {
    /// The tool over `store`.
    pub fn new(store: Arc<dyn CatalogStore>) -> Self {
        let input = json!({
            "type": "object",
            "properties": {
                "state": {"type": "string", "enum": RevisionState::ALL.map(RevisionState::as_str),
                          "description": "Which revisions (default pending_review)."},
                "plugin": {"type": "string", "description": "Only this plugin's revisions."}
            },
            "additionalProperties": false
        });
        let spec = spec(
            "list_plugin_reviews",
            "Plugin reviews",
            "Lists plugin revisions waiting for review (or in another state), each with the capability diff the host computed against the active revision: tools added, removed or renamed, schema changes (breaking or additive), permissions, backends, limits, risk rules, imports, signer.",
            input,
            REVIEW_PERMISSION,
            false,
        );
        Self { spec, store }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    plugin: Option<String>,
}

impl HostTool for ListPluginReviews {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, who: &'a Principal, args: &'a Value) -> HostToolFuture<'a> {
        Box::pin(async move {
            people_only(who, &self.spec)?;
            let args: ListArgs =
                serde_json::from_value(args.clone()).map_err(|e| invalid(e.to_string()))?;
            let state: RevisionState = args
                .state
                .as_deref()
                .unwrap_or("pending_review")
                .parse()
                .map_err(invalid)?;
            let revisions = self
                .store
                .revisions(args.plugin.as_deref(), Some(state))
                .await
                .map_err(|e| InvokeError::Catalog(e.into()))?;
            let mut reviews = Vec::new();
            for rev in revisions.iter().take(MAX_LISTED) {
                reviews.push(view(&*self.store, rev).await?);
            }
            let text = format!("{} revision(s) {state}", reviews.len());
            Ok(ToolOutput {
                structured: json!({"reviews": reviews}),
                text: Some(text),
                content: Vec::new(),
            })
        })
    }
}

/// `decide_plugin_review(revision, decision, reason)`.
pub struct DecidePluginReview {
    spec: ToolSpec,
    store: Arc<dyn CatalogStore>,
    may_approve_own: bool,
}

impl DecidePluginReview {
    /// The tool over `store`; `may_approve_own`: whether a submitter may
    /// approve their own revision (the policy's call, default no).
    pub fn new(store: Arc<dyn CatalogStore>, may_approve_own: bool) -> Self {
        let input = json!({
            "type": "object",
            "properties": {
                "revision": {"type": "string", "description": "The revision's id (list_plugin_reviews)."},
                "decision": {"type": "string", "enum": ["approve", "reject"]},
                "reason": {"type": "string", "minLength": 1, "maxLength": MAX_REASON,
                           "description": "Why: recorded with the decision."}
            },
            "required": ["revision", "decision", "reason"],
            "additionalProperties": false
        });
        let spec = spec(
            "decide_plugin_review",
            "Decide a plugin review",
            "Approves (activates on every replica) or rejects a pending plugin revision. Needs a person other than its submitter and a reason; the decision is audited.",
            input,
            REVIEW_PERMISSION,
            true,
        );
        Self {
            spec,
            store,
            may_approve_own,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecideArgs {
    revision: String,
    decision: String,
    reason: String,
}

impl HostTool for DecidePluginReview {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, _who: &'a Principal, _args: &'a Value) -> HostToolFuture<'a> {
        // Deciding writes with the call's audit row: only through
        // `call_with_effects`, which the call path uses.
        Box::pin(async move {
            Err(invalid(
                "decide_plugin_review runs only through the call path",
            ))
        })
    }

    fn call_with_effects<'a>(
        &'a self,
        who: &'a Principal,
        args: &'a Value,
    ) -> HostEffectsFuture<'a> {
        Box::pin(async move {
            people_only(who, &self.spec)?;
            let args: DecideArgs =
                serde_json::from_value(args.clone()).map_err(|e| invalid(e.to_string()))?;
            let verdict = match args.decision.as_str() {
                "approve" => Verdict::Approve,
                "reject" => Verdict::Reject,
                other => {
                    return Err(invalid(format!(
                        "decision {other:?} is not approve or reject"
                    )));
                }
            };
            if args.reason.len() > MAX_REASON {
                return Err(invalid(format!("reason is longer than {MAX_REASON} bytes")));
            }
            let decider = Decider {
                principal: who.subject.clone(),
                tenant: who.tenant.clone(),
                client_id: Some(who.client_id.clone()),
                may_approve_own: self.may_approve_own,
            };
            let d = decide::review(
                &*self.store,
                &args.revision,
                verdict,
                &decider,
                &args.reason,
            )
            .await
            .map_err(InvokeError::Catalog)?;
            let word = if verdict == Verdict::Approve {
                "approved: active on every replica within about a second"
            } else {
                "rejected"
            };
            let text = format!(
                "Revision {} {word}; catalog {}.",
                args.revision, d.effect.version
            );
            tracing::info!(revision = %args.revision, by = %who.subject, decision = %args.decision, "plugin review decided");
            let out = ToolOutput {
                structured: json!({
                    "revision": args.revision,
                    "decision": args.decision,
                    "catalog_version": d.effect.version,
                    "diff": d.diff,
                }),
                text: Some(text),
                content: Vec::new(),
            };
            Ok((out, vec![Effect::Catalog(d.effect)]))
        })
    }
}
