//! Telling clients what changed: list changes when the served catalog
//! changes, and `notifications/resources/updated` for the plugin resources
//! they subscribed to, in both eras.
//!
//! - 2025-11-25: `resources/subscribe` and `resources/unsubscribe` keep a
//!   session's URIs ([`Subscribed`]); one task per session
//!   ([`tell_session`]) sends what changed until the session ends.
//! - 2026-07-28: a `subscriptions/listen` stream names its URIs in its
//!   filter ([`accepted`]); [`listen`] sends what changed until the
//!   client cancels it.
//!
//! An update reaches a subscriber only if the call that told of it was in
//! the subscriber's tenant and the subscriber may read the resource now
//! (checked again for each update: a revoked permission stops them).
//! Updates told on other replicas arrive on the same broadcast
//! (`Toolhost::resource_updated_elsewhere`, fed by the server's relay).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use rmcp::model::{ErrorData, ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{Peer, RoleServer, SubscriptionContext};
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;
use toolhost_invoke::{ResourceUpdate, Toolhost};
use toolhost_types::{Digest, Principal};

/// Most URIs one session or listen stream subscribes to.
pub const MAX_SUBSCRIPTIONS: usize = 64;

/// How often a session's task looks whether its session has ended
/// (between changes it has nothing else to wake it).
const SESSION_CHECK: std::time::Duration = std::time::Duration::from_secs(30);

/// The resources one 2025-11-25 session subscribed to, and who subscribed.
#[derive(Debug, Default)]
pub(crate) struct Subscribed {
    who: Option<Principal>,
    uris: BTreeSet<String>,
}

/// One session's subscriptions, shared by its handler and its task.
pub(crate) type SessionSubscriptions = Arc<Mutex<Subscribed>>;

fn locked(s: &SessionSubscriptions) -> std::sync::MutexGuard<'_, Subscribed> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

/// `resources/subscribe`: `who` subscribes to `uri`, a plugin resource they
/// may read (anything else is not found, the same words whichever the
/// reason). Subscribing again is a no-op.
pub(crate) async fn subscribe(
    host: &Toolhost,
    subs: &SessionSubscriptions,
    who: &Principal,
    uri: &str,
) -> Result<(), ErrorData> {
    let readable = host
        .may_read_resource(who, uri)
        .await
        .map_err(|e| crate::convert::rpc_failure(&e, "subscribing to a resource"))?;
    if !readable {
        return Err(ErrorData::resource_not_found(
            format!("resource {uri:?} not found"),
            Some(json!({"uri": uri})),
        ));
    }
    let mut subs = locked(subs);
    if !subs.uris.contains(uri) && subs.uris.len() >= MAX_SUBSCRIPTIONS {
        return Err(ErrorData::invalid_params(
            format!("a session subscribes to at most {MAX_SUBSCRIPTIONS} resources"),
            Some(json!({"uri": uri})),
        ));
    }
    subs.uris.insert(uri.to_owned());
    subs.who = Some(who.clone());
    Ok(())
}

/// `resources/unsubscribe`: idempotent.
pub(crate) fn unsubscribe(subs: &SessionSubscriptions, uri: &str) {
    locked(subs).uris.remove(uri);
}

/// Whether `update` goes to `who`, subscribed to `uris`: their tenant's,
/// subscribed, and readable by them now.
async fn passes(
    host: &Toolhost,
    update: &ResourceUpdate,
    who: &Principal,
    subscribed: bool,
) -> bool {
    if !subscribed || update.tenant != who.tenant {
        return false;
    }
    match host.may_read_resource(who, &update.uri).await {
        Ok(may) => may,
        Err(e) => {
            tracing::warn!(error = %e, "checking a subscriber's permission failed; the update is not sent");
            false
        }
    }
}

/// The next update, past any this subscriber fell too far behind to get
/// (it reads again anyway); none once the host is gone. Cancel-safe.
async fn next_update(
    updates: &mut tokio::sync::broadcast::Receiver<ResourceUpdate>,
) -> Option<ResourceUpdate> {
    loop {
        match updates.recv().await {
            Ok(update) => return Some(update),
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(missed, "a subscriber fell behind the resource updates");
            }
            Err(RecvError::Closed) => return None,
        }
    }
}

/// Whether the catalog `tenant` is served changed since `seen` (which it
/// then holds): a change of another tenant's catalog alone is not told,
/// so no session learns that a plugin it is not served moved. Unknown
/// tenant (a session not yet initialized): every change is told.
fn own_catalog_changed(host: &Toolhost, tenant: Option<&str>, seen: &mut Option<Digest>) -> bool {
    let Some(tenant) = tenant else {
        return true;
    };
    let now = host.catalog(tenant).contents_digest();
    if seen.as_ref() == Some(&now) {
        return false;
    }
    *seen = Some(now);
    true
}

/// Sends a 2025-11-25 session what changed: the three lists when the served
/// catalog changes (plugins bring tools, prompts and resources), and the
/// resources it subscribed to when a call tells of an update, until the
/// session ends.
pub(crate) async fn tell_session(
    host: Arc<Toolhost>,
    peer: Peer<RoleServer>,
    subs: SessionSubscriptions,
) {
    let mut changes = host.catalog_changes();
    changes.mark_unchanged();
    let mut updates = host.resource_updates();
    let tenant = || locked(&subs).who.as_ref().map(|w| w.tenant.clone());
    let mut seen = tenant().map(|t| host.catalog(&t).contents_digest());
    loop {
        let told = tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    return;
                }
                if !own_catalog_changed(&host, tenant().as_deref(), &mut seen) {
                    continue;
                }
                async {
                    peer.notify_tool_list_changed().await?;
                    peer.notify_prompt_list_changed().await?;
                    peer.notify_resource_list_changed().await
                }
                .await
            }
            update = next_update(&mut updates) => {
                let Some(update) = update else { return };
                let (who, subscribed) = {
                    let s = locked(&subs);
                    (s.who.clone(), s.uris.contains(&update.uri))
                };
                let Some(who) = who else { continue };
                if !passes(&host, &update, &who, subscribed).await {
                    continue;
                }
                peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(update.uri))
                    .await
            }
            () = tokio::time::sleep(SESSION_CHECK) => {
                if peer.is_transport_closed() {
                    return;
                }
                continue;
            }
        };
        if let Err(e) = told {
            tracing::debug!(error = %e, "a session ended; nothing more is sent to it");
            return;
        }
    }
}

/// What a 2026-07-28 `subscriptions/listen` stream is offered of what it
/// asks: tool-list changes always (the catalog is live), prompt- and
/// resource-list changes and up to [`MAX_SUBSCRIPTIONS`] resource URIs
/// when asked. Whether the listener may read a URI is checked per update.
pub(crate) fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::builder().tools_list_changed();
    if requested.prompts_list_changed == Some(true) {
        accepted = accepted.prompts_list_changed();
    }
    if requested.resources_list_changed == Some(true) {
        accepted = accepted.resources_list_changed();
    }
    if let Some(uris) = &requested.resource_subscriptions {
        let uris: BTreeSet<&String> = uris.iter().collect();
        accepted =
            accepted.resource_subscriptions(uris.into_iter().take(MAX_SUBSCRIPTIONS).cloned());
    }
    accepted.build()
}

/// Sends `who`'s listen stream what changed until it is cancelled.
pub(crate) async fn listen(host: &Toolhost, who: &Principal, context: &SubscriptionContext) {
    let mut changes = host.catalog_changes();
    changes.mark_unchanged();
    let mut updates = host.resource_updates();
    let mut seen = Some(host.catalog(&who.tenant).contents_digest());
    let uris: BTreeSet<String> = context
        .accepted()
        .resource_subscriptions
        .iter()
        .flatten()
        .cloned()
        .collect();
    loop {
        let sink = context.sink();
        tokio::select! {
            () = context.cancelled() => return,
            changed = changes.changed() => {
                if changed.is_err() {
                    return;
                }
                if !own_catalog_changed(host, Some(&who.tenant), &mut seen) {
                    continue;
                }
                if let Err(e) = sink.notify_tool_list_changed().await {
                    tracing::debug!(error = %e, "a subscription ended");
                    return;
                }
                // Each sent only to a listener that asked for it.
                let _ = sink.notify_prompt_list_changed().await;
                let _ = sink.notify_resource_list_changed().await;
            }
            update = next_update(&mut updates) => {
                let Some(update) = update else { return };
                if passes(host, &update, who, uris.contains(&update.uri)).await
                    && let Err(e) = sink.notify_resource_updated(update.uri).await
                {
                    tracing::debug!(error = %e, "a subscription ended");
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listener_is_offered_what_it_asks_within_bounds() {
        let many: Vec<String> = (0..100).map(|i| format!("test://r/{i:03}")).collect();
        let requested = SubscriptionFilter::builder()
            .prompts_list_changed()
            .resource_subscriptions(many.clone())
            .build();
        let got = accepted(&requested);
        assert_eq!(got.tools_list_changed, Some(true));
        assert_eq!(got.prompts_list_changed, Some(true));
        assert_eq!(got.resources_list_changed, None);
        let uris = got.resource_subscriptions.expect("uris accepted");
        assert_eq!(uris.len(), MAX_SUBSCRIPTIONS);
        assert_eq!(uris[..], many[..MAX_SUBSCRIPTIONS]);
        let bare = accepted(&SubscriptionFilter::default());
        assert_eq!(bare.resource_subscriptions, None);
        assert_eq!(bare.prompts_list_changed, None);
    }
}
