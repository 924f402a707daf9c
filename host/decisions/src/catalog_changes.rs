//! `list_catalog_changes`: what a tenant sees of the catalog it is served,
//! read only. The catalog is the operators' to decide
//! (`list_plugin_reviews` and the decisions need `catalog:review`, held in
//! the operator tenant alone); a tenant's admin still needs to know what
//! is served to their people and what is coming, without learning who in
//! another tenant submitted or decided it.
//!
//! Each revision that affects the tenant is shown by its plugin, version,
//! state and times; one waiting for review also by a summary of its
//! capability diff (each change's kind, effect and bump, and the tool or
//! backend it is about). Never shown: who submitted or reviewed it, why,
//! where it came from (a source names another tenant's authoring session),
//! its signer, or the diff's texts. Rejected revisions are left out: they
//! were never served to anyone.
//!
//! A revision served to chosen tenants only ([`toolhost_catalog::Audience`])
//! affects those tenants alone: the others are never shown it, nor a
//! revision of its plugin waiting for review. A revision waiting for review
//! is shown to a tenant once its plugin has been served to that tenant (an
//! update of what its people use); a plugin never served to it appears once
//! an operator approves it for the tenant, so a plugin meant for another
//! tenant never shows its name here ([`affects`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Map, Value, json};
use toolhost_catalog::decide;
use toolhost_catalog::{CatalogStore, Revision, RevisionState};
use toolhost_invoke::{HostCall, HostTool, HostToolFuture, InvokeError, host_spec, invalid};
use toolhost_runtime::{ToolOutput, ToolSpec};
use toolhost_types::Principal;

use crate::arguments::listing;
use crate::reviews::RevisionFilter;

/// Listing the catalog's changes for one's tenant needs this permission
/// (or an admin role of any tenant): a tenant-level permission, unlike
/// the catalog's own.
pub const CHANGES_PERMISSION: &str = "revisions:read";

/// The states a tenant is shown: coming, served, served before.
const AFFECTING: [RevisionState; 4] = [
    RevisionState::PendingReview,
    RevisionState::Active,
    RevisionState::Approved,
    RevisionState::Withdrawn,
];

/// The most revisions one listing returns.
const MAX_LISTED: usize = 100;

/// The fields of a diff's change a tenant is shown: what kind of change,
/// what it does, and the tool, prompt, resource or backend it is about (a
/// rename's two names). A signer's name, a backend's purpose, a schema's
/// details, a text's old and new words are the operators'.
const SHOWN_OF_A_CHANGE: [&str; 10] = [
    "kind", "effect", "bump", "class", "tool", "name", "prompt", "resource", "from", "to",
];

/// Whether `rev` is served, or may be served, to `tenant`'s principals:
/// in an affecting state, and served to the tenant (one waiting for review:
/// of a plugin in `theirs`, those ever served to the tenant).
fn affects(rev: &Revision, tenant: &str, theirs: &BTreeSet<String>) -> bool {
    match rev.state {
        RevisionState::PendingReview => theirs.contains(&rev.plugin),
        s => {
            let seen = rev.activated_at_ms.is_some() || theirs.contains(&rev.plugin);
            AFFECTING.contains(&s) && rev.audience.includes(tenant) && seen
        }
    }
}

/// The plugins a revision of was ever served to `tenant` (active now,
/// replaced, or withdrawn since).
async fn served_to(
    store: &dyn CatalogStore,
    tenant: &str,
) -> Result<BTreeSet<String>, InvokeError> {
    // Only a revision that was active has an activation time, whatever
    // its state now: one read of every revision answers.
    let all = (store.revisions(None, None).await).map_err(|e| InvokeError::Catalog(e.into()))?;
    let ever_served = |r: &&Revision| r.activated_at_ms.is_some() && r.audience.includes(tenant);
    Ok(all
        .iter()
        .filter(ever_served)
        .map(|r| r.plugin.clone())
        .collect())
}

/// A change of a diff as a tenant sees it: [`SHOWN_OF_A_CHANGE`], and
/// `from`/`to` only for a tool renamed (elsewhere they name signers or
/// limits' values).
fn shown_change(change: &Value) -> Value {
    let renamed = change["kind"] == "tool_renamed";
    let kept: Map<String, Value> = SHOWN_OF_A_CHANGE
        .iter()
        .filter(|k| renamed || !matches!(**k, "from" | "to"))
        .filter_map(|k| Some((k.to_string(), change.get(*k)?.clone())))
        .collect();
    Value::Object(kept)
}

/// The summary of `rev`'s capability diff against the active revision.
async fn summary(store: &dyn CatalogStore, rev: &Revision) -> Result<Value, InvokeError> {
    let diff = decide::review_diff(store, rev)
        .await
        .map_err(InvokeError::Catalog)?;
    let as_json = serde_json::to_value(&diff).expect("a diff serializes");
    let changes: Vec<Value> = as_json["changes"]
        .as_array()
        .map(|c| c.iter().map(shown_change).collect())
        .unwrap_or_default();
    Ok(json!({
        "bump": as_json["bump"],
        "widens": diff.widens(),
        "count": changes.len(),
        "changes": changes,
    }))
}

/// What a tenant sees of `rev`.
async fn view(
    store: &dyn CatalogStore,
    rev: &Revision,
    pinned: &BTreeMap<String, String>,
) -> Result<Value, InvokeError> {
    let pin = pinned.get(&rev.plugin);
    let served = match pin {
        Some(id) => id == &rev.id,
        None => rev.state == RevisionState::Active,
    };
    let diff = match rev.state {
        RevisionState::PendingReview => summary(store, rev).await?,
        _ => Value::Null,
    };
    Ok(json!({
        "revision": rev.id,
        "plugin": rev.plugin,
        "version": rev.version,
        "state": rev.state.as_str(),
        "submitted_at_ms": rev.submitted_at_ms,
        "decided_at_ms": rev.reviewed_at_ms,
        "activated_at_ms": rev.activated_at_ms,
        "served": served,
        "pinned": pin == Some(&rev.id),
        "diff": diff,
    }))
}

/// `list_catalog_changes(state?, plugin?)`.
pub struct ListCatalogChanges {
    spec: ToolSpec,
    store: Arc<dyn CatalogStore>,
}

impl ListCatalogChanges {
    /// The tool over `store`.
    pub fn new(store: Arc<dyn CatalogStore>) -> Self {
        let input = json!({
            "type": "object",
            "properties": {
                "state": {"type": "string", "enum": AFFECTING.map(RevisionState::as_str),
                          "description": "Only revisions in this state (default: all four)."},
                "plugin": {"type": "string", "description": "Only this plugin's revisions."}
            },
            "additionalProperties": false
        });
        let spec = host_spec(
            "list_catalog_changes",
            "Catalog changes",
            "Lists the plugin revisions that affect your tenant, read only: those waiting for the host's operators to review (with a summary of what each changes), the ones served now and the ones served before. Reviewing is the operators'.",
            input,
            CHANGES_PERMISSION,
            false,
        );
        Self { spec, store }
    }
}

impl HostTool for ListCatalogChanges {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(async move { Ok((self.run(c.who, c.args).await?, Vec::new())) })
    }
}

impl ListCatalogChanges {
    async fn run(&self, who: &Principal, args: &Value) -> Result<ToolOutput, InvokeError> {
        let args: RevisionFilter = listing(args)?;
        let state = match args.state.as_deref() {
            None => None,
            Some(s) => {
                let state: RevisionState = s.parse().map_err(invalid)?;
                if !AFFECTING.contains(&state) {
                    return Err(invalid(format!("state {state} affects no tenant")));
                }
                Some(state)
            }
        };
        let revisions = self
            .store
            .revisions(args.plugin.as_deref(), state)
            .await
            .map_err(|e| InvokeError::Catalog(e.into()))?;
        let theirs = served_to(&*self.store, &who.tenant).await?;
        let pins = self.store.pins().await;
        let pinned: BTreeMap<String, String> = (pins
            .map_err(|e| InvokeError::Catalog(e.into()))?)
        .into_iter()
        .filter(|p| p.tenant == who.tenant)
        .map(|p| (p.plugin, p.revision))
        .collect();
        let mut shown = Vec::new();
        for rev in revisions
            .iter()
            .filter(|r| affects(r, &who.tenant, &theirs))
        {
            if shown.len() == MAX_LISTED {
                break;
            }
            shown.push(view(&*self.store, rev, &pinned).await?);
        }
        let text = format!("{} revision(s) affect tenant {}", shown.len(), who.tenant);
        Ok(ToolOutput {
            structured: json!({"tenant": who.tenant, "revisions": shown}),
            text: Some(text),
            content: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use toolhost_catalog::Audience;
    use toolhost_types::PrincipalKind;

    use super::*;
    use crate::testing::{person, revision, store_of};

    async fn listed(args: Value) -> Result<Value, InvokeError> {
        let store = store_of(vec![
            revision(
                "rev-3",
                "3.0.0",
                RevisionState::PendingReview,
                "greet",
                None,
            ),
            revision("rev-2", "2.0.0", RevisionState::Active, "greet", Some(300)),
            revision(
                "rev-1",
                "1.0.0",
                RevisionState::Approved,
                "hello",
                Some(200),
            ),
            revision("rev-x", "0.5.0", RevisionState::Rejected, "hello", None),
        ]);
        let who = person(PrincipalKind::User, "acme");
        let out = ListCatalogChanges::new(store).run(&who, &args).await?;
        Ok(out.structured)
    }

    #[tokio::test]
    async fn a_tenant_sees_what_is_coming_served_and_was_served_and_nobodys_identifiers() {
        let out = listed(json!({})).await.expect("listed");
        let states: Vec<(&str, &str)> = out["revisions"]
            .as_array()
            .expect("revisions")
            .iter()
            .map(|r| {
                (
                    r["revision"].as_str().unwrap_or(""),
                    r["state"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            states,
            [
                ("rev-3", "pending_review"),
                ("rev-2", "active"),
                ("rev-1", "approved")
            ],
            "a rejected revision was never served: {out:#}"
        );
        // `testing::revision` is submitted by `carol` from her session,
        // decided by `dave` with a reason, signed by `ops-key-VERSION`.
        let text = out.to_string();
        for hidden in ["carol", "dave", "ops-key", "workspace:"] {
            assert!(!text.contains(hidden), "{hidden} shown: {out:#}");
        }
        for rev in out["revisions"].as_array().expect("revisions") {
            for key in [
                "submitted_by",
                "reviewed_by",
                "review_reason",
                "source",
                "signer",
            ] {
                assert!(rev.get(key).is_none(), "{key} shown: {rev:#}");
            }
        }
        assert_eq!(out["tenant"], "acme");
    }

    /// Plugin `hello` served to tenant `beta` alone (2.0, and 3.0 waiting
    /// for review): shown to beta, and to acme not at all.
    #[tokio::test]
    async fn a_plugin_served_to_another_tenant_alone_is_never_shown() {
        let beta = Audience::of(["beta"]).expect("valid");
        let store = store_of(vec![
            revision(
                "rev-3",
                "3.0.0",
                RevisionState::PendingReview,
                "greet",
                None,
            ),
            Revision {
                audience: beta.clone(),
                ..revision("rev-2", "2.0.0", RevisionState::Active, "greet", Some(300))
            },
            Revision {
                audience: beta,
                ..revision(
                    "rev-1",
                    "1.0.0",
                    RevisionState::Withdrawn,
                    "greet",
                    Some(200),
                )
            },
        ]);
        let tool = ListCatalogChanges::new(store);
        let ids = |out: ToolOutput| -> Vec<String> {
            let revisions = out.structured["revisions"].as_array().cloned();
            (revisions.unwrap_or_default().iter())
                .filter_map(|r| r["revision"].as_str().map(str::to_owned))
                .collect()
        };
        for (tenant, want) in [("beta", &["rev-3", "rev-2", "rev-1"][..]), ("acme", &[])] {
            let who = person(PrincipalKind::User, tenant);
            let out = tool.run(&who, &json!({})).await.expect("listed");
            assert_eq!(ids(out), want, "{tenant}");
        }
    }

    #[tokio::test]
    async fn a_pending_revision_carries_a_summary_of_its_diff() {
        let out = listed(json!({"state": "pending_review"}))
            .await
            .expect("listed");
        let diff = &out["revisions"][0]["diff"];
        assert_eq!(diff["bump"], "patch", "{diff:#}");
        let kinds: Vec<&str> = diff["changes"]
            .as_array()
            .expect("changes")
            .iter()
            .filter_map(|c| c["kind"].as_str())
            .collect();
        assert!(kinds.contains(&"signer_changed"), "{diff:#}");
        for c in diff["changes"].as_array().expect("changes") {
            assert!(c.get("from").is_none() && c.get("to").is_none(), "{c}");
        }
    }

    #[tokio::test]
    async fn a_state_that_affects_no_tenant_is_refused() {
        let e = listed(json!({"state": "rejected"}))
            .await
            .expect_err("refused");
        assert_eq!(e.code(), "INVALID_ARGUMENTS");
        let e = listed(json!({"state": "nonsense"}))
            .await
            .expect_err("refused");
        assert_eq!(e.code(), "INVALID_ARGUMENTS");
    }

    #[test]
    fn the_listing_reads_only_and_needs_a_tenant_level_permission() {
        let tool = ListCatalogChanges::new(store_of(Vec::new()));
        assert!(!tool.spec().mutating);
        let permission = &tool.spec().permission;
        assert_eq!(permission.to_string(), CHANGES_PERMISSION);
        assert!(!toolhost_policy::host_level(permission));
    }
}
