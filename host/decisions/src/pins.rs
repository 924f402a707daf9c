//! `pin_plugin`: holds a tenant to one served revision of a plugin while
//! the catalog moves on for the others, or lets it follow the catalog
//! again: the decision `toolhost plugin pin` makes
//! (`toolhost_catalog::decide::pin`), written with the call's audit row.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_audit::Effect;
use toolhost_catalog::CatalogStore;
use toolhost_catalog::decide;
use toolhost_invoke::{HostCall, HostTool, HostToolFuture, InvokeError, host_spec as spec};
use toolhost_review::MAX_TENANT_LEN;
use toolhost_runtime::{ToolOutput, ToolSpec};
use toolhost_types::Principal;

use crate::arguments::{MAX_REASON, bounded, parsed, people_only};
use crate::reviews::{REVIEW_PERMISSION, decider};
use crate::tenants::{KnownTenants, all_known};

/// `pin_plugin(tenant, plugin, revision?, reason)`.
pub struct PinPlugin {
    spec: ToolSpec,
    store: Arc<dyn CatalogStore>,
    tenants: KnownTenants,
}

impl PinPlugin {
    /// The tool over `store`, pinning only tenants `tenants` knows.
    pub fn new(store: Arc<dyn CatalogStore>, tenants: KnownTenants) -> Self {
        let input = json!({
            "type": "object",
            "properties": {
                "tenant": {"type": "string", "minLength": 1, "maxLength": MAX_TENANT_LEN,
                           "description": "The tenant to pin (or unpin)."},
                "plugin": {"type": "string", "minLength": 1, "maxLength": 128,
                           "description": "The plugin's name."},
                "revision": {"type": ["string", "null"], "minLength": 1, "maxLength": 64,
                             "description": "The revision to serve the tenant: one that was served (active now, or replaced) and whose audience includes the tenant. Left out or null: the tenant follows the catalog again."},
                "reason": {"type": "string", "minLength": 1, "maxLength": MAX_REASON,
                           "description": "Why: recorded with the decision."}
            },
            "required": ["tenant", "plugin", "reason"],
            "additionalProperties": false
        });
        let spec = spec(
            "pin_plugin",
            "Pin a tenant to a plugin revision",
            "Serves one tenant a chosen revision of a plugin, whatever becomes active for the other tenants, on every replica within about a second; without a revision, lets the tenant follow the catalog again. Needs a person and a reason; audited.",
            input,
            REVIEW_PERMISSION,
            true,
        );
        Self {
            spec,
            store,
            tenants,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PinArgs {
    tenant: String,
    plugin: String,
    #[serde(default)]
    revision: Option<String>,
    reason: String,
}

impl HostTool for PinPlugin {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(self.run(c.who, c.args))
    }
}

impl PinPlugin {
    async fn run(
        &self,
        who: &Principal,
        args: &Value,
    ) -> Result<(ToolOutput, Vec<Effect>), InvokeError> {
        people_only(who, &self.spec)?;
        let args: PinArgs = parsed(args)?;
        bounded(&args.reason)?;
        all_known(&self.tenants, [args.tenant.as_str()]).await?;
        let d = decide::pin(
            &*self.store,
            &args.tenant,
            &args.plugin,
            args.revision.as_deref(),
            &decider(who, false),
            &args.reason,
        )
        .await
        .map_err(InvokeError::Catalog)?;
        let text = match &args.revision {
            Some(r) => format!(
                "Tenant {} pinned to revision {r} of {}; catalog {}.",
                args.tenant, args.plugin, d.effect.version
            ),
            None => format!(
                "Tenant {} follows the catalog for {} again; catalog {}.",
                args.tenant, args.plugin, d.effect.version
            ),
        };
        tracing::info!(tenant = %args.tenant, plugin = %args.plugin, revision = ?args.revision, by = %who.subject, "plugin pin decided");
        let out = ToolOutput {
            structured: json!({
                "tenant": args.tenant,
                "plugin": args.plugin,
                "revision": args.revision,
                "catalog_version": d.effect.version,
            }),
            text: Some(text),
            content: Vec::new(),
        };
        Ok((out, vec![Effect::Catalog(d.effect)]))
    }
}

#[cfg(test)]
mod tests {
    use toolhost_catalog::decide::Decider;
    use toolhost_catalog::{Audience, RevisionState};

    use super::*;
    use crate::testing::{revision, store_of};

    /// `hello` 2.0 active, 1.0 served before it, 0.9 approved but never
    /// served, 0.8 rejected, and 1.5 served to tenant `acme` alone.
    fn store() -> Arc<dyn CatalogStore> {
        let acme_only = toolhost_catalog::Revision {
            audience: Audience::of(["acme"]).expect("valid"),
            ..revision(
                "rev-15",
                "1.5.0",
                RevisionState::Approved,
                "greet",
                Some(250),
            )
        };
        store_of(vec![
            revision("rev-2", "2.0.0", RevisionState::Active, "greet", Some(300)),
            revision(
                "rev-1",
                "1.0.0",
                RevisionState::Approved,
                "greet",
                Some(200),
            ),
            revision("rev-09", "0.9.0", RevisionState::Approved, "greet", None),
            revision("rev-08", "0.8.0", RevisionState::Rejected, "greet", None),
            acme_only,
        ])
    }

    fn operator() -> Decider {
        Decider {
            principal: "u-ops".into(),
            tenant: "ops".into(),
            client_id: None,
            may_approve_own: false,
        }
    }

    async fn pin(tenant: &str, plugin: &str, id: Option<&str>) -> Result<decide::Decision, String> {
        decide::pin(
            &*store(),
            tenant,
            plugin,
            id,
            &operator(),
            "keep 1.0 a week",
        )
        .await
        .map_err(|e| e.code().to_owned())
    }

    #[tokio::test]
    async fn a_tenant_is_pinned_only_to_a_revision_that_was_served_to_it() {
        let d = pin("demo", "hello", Some("rev-1")).await.expect("pinned");
        let p = &d.effect.pins[0];
        let got = (p.tenant.as_str(), p.plugin.as_str(), p.revision.as_deref());
        assert_eq!(got, ("demo", "hello", Some("rev-1")));
        assert!(d.effect.changes_served && d.effect.moves.is_empty());
        assert_eq!(
            d.effect.version, "1.2.1",
            "a patch: what one tenant is served changed"
        );
        assert_eq!(d.event.tool, "pin_plugin");
        assert!(pin("acme", "hello", Some("rev-15")).await.is_ok());
        assert!(
            pin("demo", "hello", Some("rev-2")).await.is_ok(),
            "the active one"
        );

        let refused = [
            (
                pin("demo", "hello", Some("rev-15")).await,
                "NOT_IN_AUDIENCE",
            ),
            (pin("demo", "hello", Some("rev-09")).await, "NOT_SERVABLE"),
            (pin("demo", "hello", Some("rev-08")).await, "NOT_SERVABLE"),
            (pin("demo", "hello", Some("nope")).await, "NOT_FOUND"),
            (pin("demo", "other", Some("rev-1")).await, "NOT_FOUND"),
            (pin("demo", "hello", None).await, "NOT_FOUND"),
            (pin("", "hello", Some("rev-1")).await, "INVALID_ARGUMENTS"),
            (
                pin("a tenant", "hello", Some("rev-1")).await,
                "INVALID_ARGUMENTS",
            ),
        ];
        for (got, code) in refused {
            assert_eq!(got.err().as_deref(), Some(code));
        }
    }
}
