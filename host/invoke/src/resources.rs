//! The resources and resource templates plugins export
//! (`resources/list`, `resources/templates/list`, `resources/read`) and
//! the completion of template variables, under the same rules as prompts:
//! listed and read only by callers holding their permission (anything else
//! reads as not found), read in a fresh sandbox without side effects,
//! screened for secrets, one audit row per read (tool `resource:NAME`).
//!
//! A tool call may tell of an update to a resource its plugin exports
//! (the `notify` import): the update goes out on the host's broadcast of
//! [`ResourceUpdate`]s, tagged with the caller's tenant, for the MCP edge
//! to pass on to the subscribers who may read it.

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use toolhost_audit::Outcome;
use toolhost_catalog::LoadedPlugin;
use toolhost_policy::{Grants, Use, decide};
use toolhost_runtime::{CallContext, ResourceContents, ResourceSpec, TemplateSpec, UpdateSink};
use toolhost_types::{Digest, Permission, Principal, Risk};

use crate::prompts::Row;
use crate::tool::plugin_within;
use crate::{InvokeError, Toolhost};

/// A resource a caller may read, with its plugin.
#[derive(Clone)]
pub struct ResourceRef {
    /// The plugin exporting it.
    pub plugin: Arc<LoadedPlugin>,
    /// The resource.
    pub spec: ResourceSpec,
}

/// A template a caller may read through, with its plugin.
#[derive(Clone)]
pub struct TemplateRef {
    /// The plugin exporting it.
    pub plugin: Arc<LoadedPlugin>,
    /// The template.
    pub spec: TemplateSpec,
}

/// How many updates the broadcast keeps for a slow listener (one that
/// falls further behind misses the oldest and reads again anyway).
pub(crate) const UPDATES_BUFFER: usize = 1024;

/// A resource a tool call said changed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResourceUpdate {
    /// The tenant of the call that told of it: only its subscribers hear.
    pub tenant: String,
    /// The resource's URI.
    pub uri: String,
}

/// Passes resource updates between replicas: what a call tells on one
/// reaches the subscribers on every other.
pub trait UpdateRelay: Send + Sync {
    /// Hands `update`, told on this replica, to the others. Called from the
    /// call's thread: must not block (spawn the send).
    fn relay(&self, update: &ResourceUpdate);
}

/// Whether `plugin` exports `uri`: a resource at it, or a template it
/// matches.
fn exports(plugin: &LoadedPlugin, uri: &str) -> bool {
    let p = &plugin.plugin;
    p.resources().iter().any(|r| r.uri == uri)
        || p.resource_templates()
            .iter()
            .any(|t| t.matches(uri).is_some())
}

fn permits(who: &Principal, grants: &Grants, p: &Permission, how: Use) -> bool {
    decide(who, grants, p, Risk::Low, how).permits()
}

impl Toolhost {
    /// Every resource update tool calls tell of from now on, on this
    /// replica, for every tenant: a listener passes on only its own.
    pub fn resource_updates(&self) -> tokio::sync::broadcast::Receiver<ResourceUpdate> {
        self.resource_updates.subscribe()
    }

    /// Passes on an update told on another replica to this one's
    /// subscribers.
    pub fn resource_updated_elsewhere(&self, update: ResourceUpdate) {
        // Nobody listening here is nobody to tell.
        let _ = self.resource_updates.send(update);
    }

    /// Whether `who` may read the plugin resource at `uri` (a resource or
    /// template they hold the permission of serves it): what a
    /// subscription to it needs, checked again before each update.
    pub async fn may_read_resource(&self, who: &Principal, uri: &str) -> Result<bool, InvokeError> {
        Ok(self.serving(who, uri).await?.is_some())
    }

    /// Where a call of `plugin` for a caller in `tenant` tells of resource
    /// updates: only URIs the plugin exports, free of secrets.
    pub(crate) fn update_sink(&self, plugin: &Arc<LoadedPlugin>, tenant: &str) -> UpdateSink {
        let plugin = plugin.clone();
        let tenant = tenant.to_owned();
        let scanner = self.scanner().clone();
        let updates = self.resource_updates.clone();
        let relay = self.update_relay.clone();
        UpdateSink::new(move |uri| {
            if !exports(&plugin, uri) {
                return Err(format!(
                    "{uri:?} is not a resource this plugin exports (nor matches one of its templates)"
                ));
            }
            if let Some(found) = scanner.find(uri) {
                return Err(format!(
                    "the URI carries a secret ({})",
                    found.kind.as_str()
                ));
            }
            let update = ResourceUpdate {
                tenant: tenant.clone(),
                uri: uri.to_owned(),
            };
            if let Some(relay) = &relay {
                relay.relay(&update);
            }
            // Nobody listening is not the plugin's failure.
            let _ = updates.send(update);
            tracing::debug!(plugin = %plugin.manifest.plugin.name, uri, "resource updated");
            Ok(())
        })
    }

    /// The resources at fixed URIs `who` may read, by URI.
    pub async fn resources(&self, who: &Principal) -> Result<Vec<ResourceRef>, InvokeError> {
        let grants = self.grants(who).await?;
        let catalog = self.catalog(&who.tenant);
        let out: Vec<ResourceRef> = (catalog.resources())
            .filter(|(_, spec)| permits(who, &grants, &spec.permission, Use::List))
            .filter(|(plugin, _)| plugin_within(&catalog, &grants, plugin))
            .map(|(plugin, spec)| ResourceRef {
                plugin: plugin.clone(),
                spec: spec.clone(),
            })
            .collect();
        Ok(out)
    }

    /// The resource templates `who` may read through, by template.
    pub async fn resource_templates(
        &self,
        who: &Principal,
    ) -> Result<Vec<TemplateRef>, InvokeError> {
        let grants = self.grants(who).await?;
        let catalog = self.catalog(&who.tenant);
        let out: Vec<TemplateRef> = (catalog.resource_templates())
            .filter(|(_, spec)| permits(who, &grants, &spec.permission, Use::List))
            .filter(|(plugin, _)| plugin_within(&catalog, &grants, plugin))
            .map(|(plugin, spec)| TemplateRef {
                plugin: plugin.clone(),
                spec: spec.clone(),
            })
            .collect();
        Ok(out)
    }

    /// The plugin and name of what serves `uri` for `who`: a resource at
    /// that URI, else a template it matches (the first, by template).
    /// Never a plugin for a URI in the host's own scheme (`toolhost:`),
    /// whatever the catalog holds.
    async fn serving(
        &self,
        who: &Principal,
        uri: &str,
    ) -> Result<Option<(Arc<LoadedPlugin>, String)>, InvokeError> {
        let claim = toolhost_catalog::Claim::of_uri(uri);
        if claim
            .scheme()
            .is_some_and(|s| toolhost_catalog::RESERVED_SCHEMES.contains(&s))
        {
            return Ok(None);
        }
        if let Some(r) = self
            .resources(who)
            .await?
            .into_iter()
            .find(|r| r.spec.uri == uri)
        {
            return Ok(Some((r.plugin, r.spec.name)));
        }
        let templates = self.resource_templates(who).await?;
        let matched = templates
            .into_iter()
            .find(|t| t.spec.matches(uri).is_some());
        Ok(matched.map(|t| (t.plugin, t.spec.name)))
    }

    /// The contents at `uri` from the plugin that serves it, for `who`:
    /// `None` when no plugin resource or template `who` may read serves
    /// it (the caller may try its artifacts). Screened and audited.
    pub async fn read_plugin_resource(
        &self,
        who: &Principal,
        uri: &str,
    ) -> Result<Option<Vec<ResourceContents>>, InvokeError> {
        let Some((plugin, name)) = self.serving(who, uri).await? else {
            return Ok(None);
        };
        let started = Instant::now();
        let ctx = CallContext::new(&who.tenant, &who.subject).with_backends(self.grant(&plugin));
        let acting = crate::call::acting(who, uri, &ctx.call_id.to_string());
        let ctx = ctx.with_acting(Some(acting));
        let read = self
            .runtime
            .read_resource(&plugin.plugin, &ctx, uri, &plugin.budget)
            .await
            .map_err(InvokeError::Call)
            .and_then(|contents| {
                let texts = contents.iter().flat_map(|c| {
                    [
                        c.uri.clone(),
                        String::from_utf8_lossy(c.body.bytes()).into_owned(),
                    ]
                });
                match texts.into_iter().find_map(|t| self.scanner().find(&t)) {
                    Some(found) => Err(InvokeError::SecretExposure {
                        kind: found.kind.as_str().to_owned(),
                        ran: true,
                    }),
                    None => Ok(contents),
                }
            });
        let digest = json!({"uri": self.scanner().redact(uri)}).to_string();
        let label = format!("resource:{name}");
        let row = Row {
            who,
            label: &label,
            plugin: Some(&plugin),
            digest: Digest::of(digest.as_bytes()),
            started,
            rounds: Vec::new(),
        };
        self.record_row(row, read.as_ref().map(|_| Outcome::Executed))
            .await?;
        read.map(Some)
    }

    /// Completions of variable `var` of the template `uri_template`
    /// starting with `value`, for `who`: the names of the kind it completes
    /// from, in `who`'s tenant; none when it completes from none. An
    /// unknown (or forbidden) template answers none too.
    pub async fn complete_template_variable(
        &self,
        who: &Principal,
        uri_template: &str,
        var: &str,
        value: &str,
    ) -> Result<(Vec<String>, usize), InvokeError> {
        let templates = self.resource_templates(who).await?;
        let Some(t) = templates
            .into_iter()
            .find(|t| t.spec.uri_template == uri_template)
        else {
            return Ok((Vec::new(), 0));
        };
        let Some((_, kind)) = t.spec.completes.iter().find(|(v, _)| v == var) else {
            return Ok((Vec::new(), 0));
        };
        self.completions(who, &t.plugin, kind, value).await
    }
}
