//! What a subject is now: the plugin's active revision, or the domain
//! object's current state as its plugin reports it. A session is bound to
//! it when opened; promotion refuses once it moved (the diff a person
//! reviewed would be stale).

use std::sync::Arc;

use serde_json::Value;
use toolhost_catalog::LoadedPlugin;
use toolhost_policy::{Use, decide};
use toolhost_runtime::{AuthoringKind, CallContext};
use toolhost_types::{PluginName, Principal};
use toolhost_workspace::{BoundObject, Session, Subject};

use crate::Work;
use crate::WorkspaceError;
use toolhost_invoke::InvokeError;

/// The version a plugin subject with no active revision is bound to.
pub(crate) const NO_ACTIVE_REVISION: &str = "none";

/// Most namesakes a `SUBJECT_AMBIGUOUS` refusal lists.
const MAX_NAMESAKES: usize = 10;

/// A subject as it is now.
pub(crate) struct Bound {
    /// The entity (or active revision) it resolved to.
    pub bound_to: Option<BoundObject>,
    /// Its version.
    pub version: String,
    /// A domain object's current state (`None` for a plugin subject).
    pub current: Option<Value>,
}

/// A domain subject's plugin and kind.
pub(crate) struct Domain {
    pub plugin: Arc<LoadedPlugin>,
    pub kind: AuthoringKind,
}

impl Domain {
    /// The input schema of the kind's promoting tool: the shape a
    /// normalized object has, and the fields in it that carry authority.
    pub(crate) fn promoting_schema(&self) -> Result<&Value, WorkspaceError> {
        self.plugin
            .plugin
            .tools()
            .iter()
            .find(|t| t.name.as_str() == self.kind.promoted_by)
            .map(|t| &t.input_schema)
            .ok_or_else(|| WorkspaceError::SubjectInvalid {
                detail: format!(
                    "plugin {} names no tool {:?} to promote with",
                    self.plugin.manifest.plugin.name, self.kind.promoted_by
                ),
            })
    }
}

impl Work<'_> {
    /// What `subject` is now, for `who`.
    pub(crate) async fn bind(
        &self,
        who: &Principal,
        subject: &Subject,
    ) -> Result<Bound, InvokeError> {
        match subject {
            Subject::Plugin { name } => self.bind_plugin(name).await,
            Subject::Domain {
                plugin,
                kind,
                object,
            } => {
                let domain = self.domain(who, plugin, kind).await?;
                let id = self.resolve_object(who, &domain, object).await?;
                self.domain_now(who, &domain, id).await
            }
        }
    }

    /// What `session`'s subject is now, to rebind it: the same entity it
    /// was bound to (a domain object, by its id: a rename or a namesake
    /// does not move the session to another object), or the plugin's
    /// active revision now.
    pub(crate) async fn rebind(
        &self,
        who: &Principal,
        session: &Session,
    ) -> Result<Bound, InvokeError> {
        match (&session.subject, &session.bound_to) {
            (Subject::Domain { plugin, kind, .. }, Some(bound)) => {
                let domain = self.domain(who, plugin, kind).await?;
                self.domain_now(who, &domain, bound.clone()).await
            }
            (subject, _) => self.bind(who, subject).await,
        }
    }

    /// A plugin subject is bound to its active revision (none for a plugin
    /// the catalog has never served).
    async fn bind_plugin(&self, name: &PluginName) -> Result<Bound, InvokeError> {
        let live = self.workspace()?.catalog.clone().ok_or_else(|| WorkspaceError::SubjectInvalid {
            detail: "this host serves plugins from a directory: plugin subjects need the catalog store".into(),
        })?;
        let active = toolhost_catalog::decide::active(&**live.store(), name.as_str())
            .await
            .map_err(|e| InvokeError::Catalog(e.into()))?;
        Ok(match active {
            Some(rev) => Bound {
                version: rev.id.clone(),
                bound_to: Some(BoundObject {
                    id: rev.id,
                    name: format!("{} {}", rev.plugin, rev.version),
                }),
                current: None,
            },
            None => Bound {
                version: NO_ACTIVE_REVISION.into(),
                bound_to: None,
                current: None,
            },
        })
    }

    /// The served plugin and its authoring kind `kind`; `who` must be
    /// allowed to call the kind's promoting tool (whoever could not promote
    /// an object may not author it).
    pub(crate) async fn domain(
        &self,
        who: &Principal,
        plugin: &PluginName,
        kind: &str,
    ) -> Result<Domain, InvokeError> {
        let served = self
            .host
            .catalog(&who.tenant)
            .plugins_arc()
            .find(|p| &p.manifest.plugin.name == plugin)
            .ok_or_else(|| WorkspaceError::SubjectInvalid {
                detail: format!("no plugin named {plugin} is served"),
            })?;
        let kind = served
            .plugin
            .authoring_kinds()
            .iter()
            .find(|k| k.name == kind)
            .cloned()
            .ok_or_else(|| WorkspaceError::SubjectInvalid {
                detail: format!(
                    "plugin {plugin} authors no {kind:?} (it authors {:?})",
                    served
                        .plugin
                        .authoring_kinds()
                        .iter()
                        .map(|k| &k.name)
                        .collect::<Vec<_>>()
                ),
            })?;
        let spec = served
            .plugin
            .tools()
            .iter()
            .find(|t| t.name.as_str() == kind.promoted_by)
            .ok_or_else(|| WorkspaceError::SubjectInvalid {
                detail: format!(
                    "plugin {plugin} names no tool {:?} to promote with",
                    kind.promoted_by
                ),
            })?;
        let grants = self.host.grants(who).await?;
        if !decide(who, &grants, &spec.permission, spec.risk, Use::Call).permits() {
            return Err(InvokeError::PermissionDenied {
                tool: kind.promoted_by.clone(),
            });
        }
        Ok(Domain {
            plugin: served,
            kind,
        })
    }

    /// The entity `object` names (an id, or a name matched exactly,
    /// ignoring case), among the plugin's entities of the kind's subject
    /// kind that belong to `who`'s tenant.
    async fn resolve_object(
        &self,
        who: &Principal,
        domain: &Domain,
        object: &str,
    ) -> Result<BoundObject, InvokeError> {
        let plugin = &domain.plugin;
        let ctx = CallContext::new(&who.tenant, &who.subject)
            .with_backends(self.host.backend_grant(plugin));
        let rows = self
            .host
            .runtime()
            .snapshot(
                &plugin.plugin,
                &ctx,
                &domain.kind.subject_kind,
                &plugin.budget,
            )
            .await?;
        let by_id = object.parse::<i64>().ok();
        let wanted = object.trim().to_lowercase();
        let found: Vec<_> = rows
            .into_iter()
            .filter(|e| e.tenant == who.tenant)
            .filter(|e| Some(e.id) == by_id || e.name.trim().to_lowercase() == wanted)
            .collect();
        match found.as_slice() {
            [one] => Ok(BoundObject {
                id: one.id.to_string(),
                name: one.name.clone(),
            }),
            [] => Err(WorkspaceError::SubjectNotFound {
                kind: domain.kind.subject_kind.clone(),
                object: object.to_owned(),
            }
            .into()),
            many => Err(WorkspaceError::SubjectAmbiguous {
                kind: domain.kind.subject_kind.clone(),
                object: object.to_owned(),
                candidates: many
                    .iter()
                    .take(MAX_NAMESAKES)
                    .map(|e| format!("{} (id {})", e.name, e.id))
                    .collect(),
            }
            .into()),
        }
    }

    /// The object `bound`'s current state, as the plugin reports it
    /// (read-only: GET and HEAD only).
    pub(crate) async fn domain_now(
        &self,
        who: &Principal,
        domain: &Domain,
        bound: BoundObject,
    ) -> Result<Bound, InvokeError> {
        let plugin = &domain.plugin;
        let id: i64 = bound
            .id
            .parse()
            .map_err(|_| WorkspaceError::SubjectInvalid {
                detail: format!("object id {:?} is not an entity id", bound.id),
            })?;
        let ctx = CallContext::new(&who.tenant, &who.subject)
            .with_backends(self.host.backend_grant(plugin));
        let current = self
            .host
            .runtime()
            .authoring_current(&plugin.plugin, &ctx, &domain.kind.name, id, &plugin.budget)
            .await?;
        Ok(Bound {
            bound_to: Some(bound),
            version: current.version,
            current: Some(current.body),
        })
    }
}
