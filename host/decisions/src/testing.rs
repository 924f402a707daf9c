//! What the tests of the review tools share: revisions of plugin `hello`
//! in a catalog store in memory, and the person asking.

use std::sync::Arc;

use serde_json::json;
use toolhost_catalog::{Audience, CatalogStore, MemoryStore, Revision, RevisionState};
use toolhost_types::{Digest, Principal, PrincipalKind};

/// A catalog store holding `revisions`, at generation 7 and version 1.2.0.
pub(crate) fn store_of(revisions: Vec<Revision>) -> Arc<dyn CatalogStore> {
    let store = MemoryStore::at(7, "1.2.0");
    for rev in revisions {
        store.put(rev, None);
    }
    Arc::new(store)
}

/// Revision `id` of plugin `hello` at `version` in `state`, with one
/// tool `tool`; `activated`: when it was last active. Each version is
/// signed by its own key (`ops-key-VERSION`); every revision was
/// submitted by `carol` from her authoring session, and one out of
/// review was decided by `dave`.
pub(crate) fn revision(
    id: &str,
    version: &str,
    state: RevisionState,
    tool: &str,
    activated: Option<i64>,
) -> Revision {
    let signer = format!("ops-key-{version}");
    let capabilities = json!({
        "plugin": "hello", "version": version, "signer": signer,
        "tools": {tool: {
            "permission": "hello:read", "description": "Greets.",
            "input_schema": {"type": "object"}, "output_schema": null,
            "risk": "low", "risk_floor": null, "mutating": false,
            "resolves": [], "replaces": null
        }},
        "backends": {}, "limits": {}, "high_risk_tags": [], "imports": [], "entity_kinds": []
    });
    let decided = state != RevisionState::PendingReview;
    Revision {
        id: id.into(),
        plugin: "hello".into(),
        version: version.into(),
        component_digest: Digest::of(id.as_bytes()),
        manifest: String::new(),
        manifest_digest: Digest::of(version.as_bytes()),
        envelope: None,
        signer: Some(signer),
        source: "workspace:carols-session/proposal-1".into(),
        capabilities: capabilities.to_string(),
        state,
        submitted_by: "carol".into(),
        submitted_at_ms: 1,
        reviewed_by: decided.then(|| "dave".into()),
        reviewed_at_ms: decided.then_some(2),
        review_reason: decided.then(|| "dave read it".into()),
        activated_at_ms: activated,
        retired: None,
        audience: Audience::Everyone,
    }
}

/// `bob` of `tenant`, a person or a service, asking from the console.
pub(crate) fn person(kind: PrincipalKind, tenant: &str) -> Principal {
    Principal {
        subject: "bob".into(),
        kind,
        name: "bob".into(),
        tenant: tenant.into(),
        client_id: "toolhost-console".into(),
        scopes: Vec::new(),
        session: "web".into(),
    }
}
