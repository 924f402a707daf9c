//! A call's link to its MCP client, for the plugin's `client` import: what
//! the client declared, and how a request reaches it. A 2025-11-25 session
//! is asked live, on the call's own stream ([`PeerAsker`]); a 2026-07-28
//! request answers `input_required` and is run again with the answers the
//! client sends back, sealed with the rest of the request state
//! (`ask.rs`).

use std::collections::BTreeMap;

#[allow(deprecated)] // sampling: 2025-11-25 clients still use it
use rmcp::model::CreateMessageRequestParams;
use rmcp::model::{ClientCapabilities, ElicitRequestParams, ErrorData, ProtocolVersion};
use rmcp::service::{Peer, RequestContext, RoleServer, ServiceError};
use serde_json::Value;
use toolhost_runtime::{
    AskClient, AskError, AskFuture, CLIENT_ASK_TIMEOUT, ClientChannel, ClientLink, ClientSupport,
};

/// The link for a call in `ctx`: live in a session, by rounds (with
/// `answers`, the answers given so far) on 2026-07-28.
pub(crate) fn link(
    ctx: &RequestContext<RoleServer>,
    answers: BTreeMap<String, Value>,
) -> ClientLink {
    let supports = support(ctx.client_capabilities().as_ref());
    let channel = if stateless(ctx.protocol_version().as_ref()) {
        ClientChannel::Rounds(answers)
    } else {
        ClientChannel::Live(std::sync::Arc::new(PeerAsker {
            peer: ctx.peer.clone(),
        }))
    };
    ClientLink::new(supports, channel)
}

fn stateless(version: Option<&ProtocolVersion>) -> bool {
    version.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// What `caps` declares. Elicitation declared as `{}` means form.
fn support(caps: Option<&ClientCapabilities>) -> ClientSupport {
    let Some(caps) = caps else {
        return ClientSupport::default();
    };
    ClientSupport {
        elicitation: caps
            .elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none()),
        sampling: caps.sampling.is_some(),
        roots: caps.roots.is_some(),
    }
}

/// A stateless call that asked for `capability` its client did not
/// declare: -32021, naming it in `requiredCapabilities`.
pub(crate) fn missing_capability(capability: &str) -> ErrorData {
    let required: ClientCapabilities =
        serde_json::from_value(serde_json::json!({ capability: {} })).unwrap_or_default();
    ErrorData::missing_required_client_capability(required)
}

/// Asks a 2025-11-25 session's client, from inside the call.
struct PeerAsker {
    peer: Peer<RoleServer>,
}

impl AskClient for PeerAsker {
    fn ask(&self, request: Value) -> AskFuture<'_> {
        Box::pin(async move {
            let method = request["method"].as_str().unwrap_or_default().to_owned();
            let params = request.get("params").cloned().unwrap_or(Value::Null);
            let bad = |e: serde_json::Error| AskError::Failed(format!("{method}: {e}"));
            match method.as_str() {
                "elicitation/create" => {
                    let params: ElicitRequestParams =
                        serde_json::from_value(params).map_err(bad)?;
                    let asked = self
                        .peer
                        .create_elicitation_with_timeout(params, Some(CLIENT_ASK_TIMEOUT));
                    to_json(asked.await)
                }
                #[allow(deprecated)] // sampling: 2025-11-25 clients still use it
                "sampling/createMessage" => {
                    let params: CreateMessageRequestParams =
                        serde_json::from_value(params).map_err(bad)?;
                    within(self.peer.create_message(params)).await
                }
                "roots/list" => {
                    #[allow(deprecated)] // roots: 2025-11-25 clients still use it
                    let asked = self.peer.list_roots();
                    within(asked).await
                }
                other => Err(AskError::Failed(format!("no such request {other:?}"))),
            }
        })
    }
}

/// `asked`, within [`CLIENT_ASK_TIMEOUT`], as JSON.
async fn within<T: serde::Serialize>(
    asked: impl Future<Output = Result<T, ServiceError>>,
) -> Result<Value, AskError> {
    match tokio::time::timeout(CLIENT_ASK_TIMEOUT, asked).await {
        Ok(answer) => to_json(answer),
        Err(_) => Err(AskError::Timeout),
    }
}

fn to_json<T: serde::Serialize>(answer: Result<T, ServiceError>) -> Result<Value, AskError> {
    match answer {
        Ok(a) => serde_json::to_value(a).map_err(|e| AskError::Failed(e.to_string())),
        Err(ServiceError::Timeout { .. }) => Err(AskError::Timeout),
        Err(e) => Err(AskError::Failed(e.to_string())),
    }
}
