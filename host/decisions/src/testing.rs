//! What the tests of the review tools share: revisions of plugin `hello`
//! in a catalog store in memory, and the person asking.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolhost_catalog::{
    Audience, CatalogFuture, CatalogState, CatalogStore, CatalogStoreError, NewRevision, Pin,
    Revision, RevisionState, SignerRecord, Submitted,
};
use toolhost_types::{Digest, Principal, PrincipalKind};

/// The revisions of a catalog, in memory: what a decision reads.
struct Revisions(Mutex<Vec<Revision>>);

fn unused<'a, T: Send + 'a>() -> CatalogFuture<'a, T> {
    Box::pin(async { Err(CatalogStoreError::Failed("not used here".into())) })
}

impl CatalogStore for Revisions {
    fn catalog_state(&self) -> CatalogFuture<'_, CatalogState> {
        let state = CatalogState {
            generation: 7,
            version: "1.2.0".into(),
        };
        Box::pin(async move { Ok(state) })
    }
    fn submit(&self, _: NewRevision) -> CatalogFuture<'_, Submitted> {
        unused()
    }
    fn revision<'a>(&'a self, id: &'a str) -> CatalogFuture<'a, Option<Revision>> {
        let found = self.all().into_iter().find(|r| r.id == id);
        Box::pin(async move { Ok(found) })
    }
    fn revisions<'a>(
        &'a self,
        plugin: Option<&'a str>,
        state: Option<RevisionState>,
    ) -> CatalogFuture<'a, Vec<Revision>> {
        let mut found: Vec<Revision> = self.all();
        found.retain(|r| plugin.is_none_or(|p| r.plugin == p));
        found.retain(|r| state.is_none_or(|s| r.state == s));
        Box::pin(async move { Ok(found) })
    }
    fn served(&self) -> CatalogFuture<'_, Vec<Revision>> {
        let active = self.revisions(None, Some(RevisionState::Active));
        Box::pin(active)
    }
    fn pins(&self) -> CatalogFuture<'_, Vec<Pin>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn blob<'a>(&'a self, _: &'a Digest) -> CatalogFuture<'a, Option<Vec<u8>>> {
        unused()
    }
    fn trust_signer(&self, _: SignerRecord) -> CatalogFuture<'_, ()> {
        unused()
    }
    fn revoke_signer<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: &'a str,
        _: i64,
    ) -> CatalogFuture<'a, ()> {
        unused()
    }
    fn signers(&self) -> CatalogFuture<'_, Vec<SignerRecord>> {
        unused()
    }
}

impl Revisions {
    fn all(&self) -> Vec<Revision> {
        self.0.lock().expect("not poisoned").clone()
    }
}

/// A catalog store holding `revisions`.
pub(crate) fn store_of(revisions: Vec<Revision>) -> Arc<dyn CatalogStore> {
    Arc::new(Revisions(Mutex::new(revisions)))
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
