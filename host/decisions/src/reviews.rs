//! Plugin reviews as MCP tools: `list_plugin_reviews`,
//! `decide_plugin_review` and `rollback_plugin`, host tools over the
//! catalog's store. They are the same decisions as `toolhost plugin
//! review …` and `toolhost plugin rollback` (`toolhost_catalog::decide`),
//! so a reviewer can work from any MCP client (or the console); the
//! decision is written with the call's own audit row, in one transaction.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_audit::Effect;
use toolhost_catalog::decide::{self, Decider, Verdict};
use toolhost_catalog::{Audience, CatalogStore, Revision, RevisionState};
use toolhost_invoke::{
    HostCall, HostTool, HostToolFuture, InvokeError, host_spec as spec, invalid,
};
use toolhost_review::MAX_AUDIENCE;
use toolhost_runtime::{ToolOutput, ToolSpec};
use toolhost_types::Principal;

use crate::arguments::{MAX_REASON, bounded, parsed, people_only};
use crate::tenants::{KnownTenants, all_known};

/// Listing and deciding reviews needs this permission, and a user
/// principal: a service never reviews. It is host-level
/// (`toolhost_policy::host_level`): held only in the operator tenant,
/// through a role or that tenant's admin role; another tenant's admin
/// never holds it.
pub const REVIEW_PERMISSION: &str = "catalog:review";

/// The most revisions one listing returns.
const MAX_LISTED: usize = 50;

/// `who` as the catalog's decisions name them.
pub(crate) fn decider(who: &Principal, may_approve_own: bool) -> Decider {
    Decider {
        principal: who.subject.clone(),
        tenant: who.tenant.clone(),
        client_id: Some(who.client_id.clone()),
        may_approve_own,
    }
}

/// Where a revision came from, as a reviewer sees it: a plugin
/// directory's manifest by file name only (the host's own paths never
/// leave it; the secret scanner would withhold the whole answer).
fn shown_source(source: &str) -> String {
    match source.strip_prefix("dir:") {
        Some(path) => {
            let name = std::path::Path::new(path)
                .file_name()
                .map_or_else(|| "?".into(), |n| n.to_string_lossy());
            format!("dir:{name}")
        }
        None => source.to_owned(),
    }
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
        "source": shown_source(&rev.source),
        "signer": rev.signer,
        "component_sha256": rev.component_digest.to_string(),
        "manifest_sha256": rev.manifest_digest.to_string(),
        "submitted_by": rev.submitted_by,
        "submitted_at_ms": rev.submitted_at_ms,
        "audience": audience(&rev.audience),
        "widens": diff.widens(),
        "diff": diff,
    }))
}

/// Who a revision is served to, as the tools show it: `null` for every
/// tenant, else the tenants' ids.
pub(crate) fn audience(a: &Audience) -> Value {
    a.tenants().map_or(Value::Null, |t| json!(t))
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

/// What a review tool answers: its output, and the catalog change to
/// write with the call's row.
type Decided = Result<(ToolOutput, Vec<Effect>), InvokeError>;

/// Which revisions a listing names: those in a state, of a plugin (both
/// optional).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RevisionFilter {
    #[serde(default)]
    pub(crate) state: Option<String>,
    #[serde(default)]
    pub(crate) plugin: Option<String>,
}

impl HostTool for ListPluginReviews {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(async move { Ok((self.run(c.who, c.args).await?, Vec::new())) })
    }
}

impl ListPluginReviews {
    async fn run(&self, who: &Principal, args: &Value) -> Result<ToolOutput, InvokeError> {
        people_only(who, &self.spec)?;
        let args: RevisionFilter = parsed(args)?;
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
    }
}

/// `decide_plugin_review(revision, decision, reason)`.
pub struct DecidePluginReview {
    spec: ToolSpec,
    store: Arc<dyn CatalogStore>,
    may_approve_own: bool,
    tenants: KnownTenants,
}

impl DecidePluginReview {
    /// The tool over `store`; `may_approve_own`: whether a submitter may
    /// approve their own revision (the policy's call, default no); an
    /// approval for chosen tenants names only tenants `tenants` knows.
    pub fn new(store: Arc<dyn CatalogStore>, may_approve_own: bool, tenants: KnownTenants) -> Self {
        let input = json!({
            "type": "object",
            "properties": {
                "revision": {"type": "string", "description": "The revision's id (list_plugin_reviews)."},
                "decision": {"type": "string", "enum": ["approve", "approve_transfers", "reject"],
                             "description": "approve_transfers approves a revision whose diff takes names from another plugin (each a `transfer` change): that plugin stops serving them. A plain approve of such a revision is refused."},
                "reason": {"type": "string", "minLength": 1, "maxLength": MAX_REASON,
                           "description": "Why: recorded with the decision."},
                "tenants": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": toolhost_review::MAX_TENANT_LEN},
                            "minItems": 1, "maxItems": MAX_AUDIENCE,
                            "description": "Approve for these tenants only (default: every tenant). The others are not served the revision and never see it."}
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
            tenants,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecideArgs {
    revision: String,
    decision: String,
    reason: String,
    #[serde(default)]
    tenants: Vec<String>,
}

impl HostTool for DecidePluginReview {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(self.run(c.who, c.args))
    }
}

impl DecidePluginReview {
    async fn run(&self, who: &Principal, args: &Value) -> Decided {
        people_only(who, &self.spec)?;
        let args: DecideArgs = parsed(args)?;
        let verdict = match args.decision.as_str() {
            "approve" => Verdict::Approve,
            "approve_transfers" => Verdict::ApproveTransfers,
            "reject" => Verdict::Reject,
            other => {
                return Err(invalid(format!(
                    "decision {other:?} is not approve, approve_transfers or reject"
                )));
            }
        };
        bounded(&args.reason)?;
        let served_to =
            Audience::of(args.tenants.iter().cloned()).map_err(|e| invalid(e.to_string()))?;
        let named = served_to.tenants().into_iter().flatten();
        all_known(&self.tenants, named.map(String::as_str)).await?;
        let decider = decider(who, self.may_approve_own);
        let d = decide::review(
            &*self.store,
            &args.revision,
            verdict,
            &served_to,
            &decider,
            &args.reason,
        )
        .await
        .map_err(InvokeError::Catalog)?;
        let word = if verdict.approves() {
            format!("approved for {served_to}: active on every replica within about a second")
        } else {
            "rejected".to_owned()
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
                "audience": verdict.approves().then(|| audience(&served_to)),
                "diff": d.diff,
            }),
            text: Some(text),
            content: Vec::new(),
        };
        Ok((out, vec![Effect::Catalog(d.effect)]))
    }
}

/// `rollback_plugin(plugin, reason)`: the plugin's most recently active
/// earlier revision made active again, as `toolhost plugin rollback` does.
/// The revision active now steps down to approved (a rollback target in
/// turn); tools the rollback drops stay listed, deprecated, for a minor
/// version. `NOT_FOUND` when there is no earlier revision to go back to.
pub struct RollbackPlugin {
    spec: ToolSpec,
    store: Arc<dyn CatalogStore>,
}

impl RollbackPlugin {
    /// The tool over `store`.
    pub fn new(store: Arc<dyn CatalogStore>) -> Self {
        let input = json!({
            "type": "object",
            "properties": {
                "plugin": {"type": "string", "minLength": 1, "description": "The plugin's name."},
                "reason": {"type": "string", "minLength": 1, "maxLength": MAX_REASON,
                           "description": "Why: recorded with the rollback."}
            },
            "required": ["plugin", "reason"],
            "additionalProperties": false
        });
        let spec = spec(
            "rollback_plugin",
            "Roll back a plugin",
            "Makes the most recently active earlier revision of a plugin active again, on every replica within about a second; the revision active now steps down and can be made active again the same way. Needs a person and a reason; the rollback is audited.",
            input,
            REVIEW_PERMISSION,
            true,
        );
        Self { spec, store }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RollbackArgs {
    plugin: String,
    reason: String,
}

impl HostTool for RollbackPlugin {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(self.run(c.who, c.args))
    }
}

impl RollbackPlugin {
    async fn run(&self, who: &Principal, args: &Value) -> Decided {
        people_only(who, &self.spec)?;
        let args: RollbackArgs = parsed(args)?;
        bounded(&args.reason)?;
        let d = decide::rollback(
            &*self.store,
            &args.plugin,
            &decider(who, false),
            &args.reason,
        )
        .await
        .map_err(InvokeError::Catalog)?;
        let active = d
            .effect
            .moves
            .iter()
            .find(|m| m.to == RevisionState::Active.as_str())
            .map(|m| m.revision.clone());
        let text = format!(
            "{} rolled back to revision {}: active on every replica within about a second; catalog {}.",
            args.plugin,
            active.as_deref().unwrap_or("?"),
            d.effect.version
        );
        tracing::info!(plugin = %args.plugin, by = %who.subject, revision = ?active, "plugin rolled back");
        let out = ToolOutput {
            structured: json!({
                "plugin": args.plugin,
                "revision": active,
                "catalog_version": d.effect.version,
                "diff": d.diff,
            }),
            text: Some(text),
            content: Vec::new(),
        };
        Ok((out, vec![Effect::Catalog(d.effect)]))
    }
}

#[cfg(test)]
mod tests {
    use toolhost_types::PrincipalKind;

    use super::*;
    use crate::testing::{self, revision, store_of};

    #[test]
    fn a_plugin_directory_source_shows_its_file_name_not_the_hosts_path() {
        assert_eq!(
            shown_source("dir:/srv/toolhost/plugins/hello.toml"),
            "dir:hello.toml"
        );
        assert_eq!(shown_source("http"), "http");
        assert_eq!(
            shown_source("oci:registry/hello@sha256:ab"),
            "oci:registry/hello@sha256:ab"
        );
    }

    /// Plugin `hello` with 2.0 active (tool `greet`) and 1.0 before it
    /// (tool `hello`), and a 0.9 approved but never active.
    fn store() -> Arc<dyn CatalogStore> {
        store_of(vec![
            revision("rev-2", "2.0.0", RevisionState::Active, "greet", Some(300)),
            revision(
                "rev-1",
                "1.0.0",
                RevisionState::Approved,
                "hello",
                Some(200),
            ),
            revision("rev-0", "0.9.0", RevisionState::Approved, "hello", None),
        ])
    }

    fn person(kind: PrincipalKind) -> Principal {
        testing::person(kind, "acme")
    }

    async fn roll_back(
        who: &Principal,
        args: Value,
    ) -> Result<(ToolOutput, Vec<Effect>), InvokeError> {
        RollbackPlugin::new(store()).run(who, &args).await
    }

    #[tokio::test]
    async fn a_rollback_makes_the_last_active_earlier_revision_active_with_its_effect() {
        let args = json!({"plugin": "hello", "reason": "2.0 breaks the nightly job"});
        let (out, effects) = roll_back(&person(PrincipalKind::User), args)
            .await
            .expect("rolled back");
        assert_eq!(out.structured["revision"], "rev-1");
        assert_eq!(out.structured["plugin"], "hello");
        let [Effect::Catalog(effect)] = effects.as_slice() else {
            panic!("one catalog effect, got {}", effects.len());
        };
        assert!(effect.changes_served);
        assert_eq!(effect.expected_generation, 7);
        assert_eq!(out.structured["catalog_version"], effect.version.as_str());
        let moves: Vec<_> = effect
            .moves
            .iter()
            .map(|m| (m.revision.as_str(), m.from.as_str(), m.to.as_str()))
            .collect();
        assert_eq!(
            moves,
            [
                ("rev-2", "active", "approved"),
                ("rev-1", "approved", "active")
            ]
        );
        // Going back from `greet` to `hello` drops `greet`: it stays
        // listed, deprecated, until the next minor version.
        assert!(
            effect.moves[0]
                .retired
                .as_ref()
                .is_some_and(|(t, _)| t.contains("greet"))
        );
    }

    #[tokio::test]
    async fn a_rollback_is_refused_to_services_without_a_reason_and_with_nothing_to_go_back_to() {
        let user = person(PrincipalKind::User);
        let refusals = [
            (
                person(PrincipalKind::Service),
                json!({"plugin": "hello", "reason": "why"}),
                "PERMISSION_DENIED",
            ),
            (
                user.clone(),
                json!({"plugin": "hello", "reason": "  "}),
                "INVALID_ARGUMENTS",
            ),
            (
                user.clone(),
                json!({"plugin": "hello", "reason": "x".repeat(MAX_REASON + 1)}),
                "INVALID_ARGUMENTS",
            ),
            (
                user.clone(),
                json!({"plugin": "hello"}),
                "INVALID_ARGUMENTS",
            ),
            (
                user.clone(),
                json!({"plugin": "hello", "reason": "why", "to": "rev-0"}),
                "INVALID_ARGUMENTS",
            ),
            (
                user,
                json!({"plugin": "absent", "reason": "why"}),
                "NOT_FOUND",
            ),
        ];
        for (who, args, code) in refusals {
            let e = roll_back(&who, args.clone()).await.expect_err("refused");
            assert_eq!(e.code(), code, "{args}");
        }
    }

    #[test]
    fn a_rollback_writes_only_through_the_call_path() {
        // A host tool answers its changes as effects, written with the
        // call's row; a mutating one is never a console read.
        let tool = RollbackPlugin::new(store());
        assert!(tool.spec().mutating);
        assert_eq!(tool.spec().name.as_str(), "rollback_plugin");
        assert_eq!(tool.spec().permission.to_string(), REVIEW_PERMISSION);
    }

    #[test]
    fn every_review_tool_needs_a_host_level_permission() {
        let tools: [Box<dyn HostTool>; 3] = [
            Box::new(ListPluginReviews::new(store())),
            Box::new(DecidePluginReview::new(
                store(),
                false,
                crate::tenants::these(&[]),
            )),
            Box::new(RollbackPlugin::new(store())),
        ];
        for tool in tools {
            let permission = &tool.spec().permission;
            assert!(
                toolhost_policy::host_level(permission),
                "{}: {permission}",
                tool.spec().name
            );
        }
    }
}
