//! Asking a person to connect a backend (issue 46): a call that reached a
//! backend acting with each person's own connection, for a person who has
//! not connected it, stopped with `CONNECTION_REQUIRED`. The person is
//! sent to the host's connect page by URL-mode elicitation (MCP
//! 2025-11-25):
//!
//! - a 2025-11-25 session whose client declared URL elicitation is asked
//!   in the session (`elicitation/create`, mode `url`); once the person
//!   accepts, the call waits for the connection to appear in the store
//!   (made on any replica), tells the client the elicitation is complete,
//!   and runs again, like a clarification;
//! - any other client is answered MCP's `URLElicitationRequiredError`
//!   (-32042), whose data names the elicitation (and the host's code and
//!   backend); it calls again once the person has connected.
//!
//! The connect page is the host's own: the URL names only the backend, and
//! the page connects whoever is signed in to the host there. Nothing of
//! the person's tokens ever passes through here.

use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, CustomNotification, ElicitationAction, ErrorCode, ErrorData,
    ProtocolVersion, ServerNotification,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::json;
use toolhost_invoke::Toolhost;
use toolhost_types::Principal;

/// MCP's `URLElicitationRequiredError` (2025-11-25).
pub(crate) const URL_ELICITATION_REQUIRED: i32 = -32042;
/// The host's code for the stop, in the error's data and the audit row.
pub(crate) const CONNECTION_REQUIRED: &str = "CONNECTION_REQUIRED";
/// How long an accepted elicitation waits for the person to connect.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// How often the store is asked whether the connection is made.
const POLL: Duration = Duration::from_millis(500);

/// What the person is shown.
fn message(backend: &str) -> String {
    format!(
        "This tool reaches {backend} as you. Connect your {backend} account on the host's \
         page, then the call goes on."
    )
}

/// Whether the person can be asked in the session: a 2025-11-25 (or
/// earlier) session whose client declared URL elicitation.
pub(crate) fn in_session(
    version: Option<&ProtocolVersion>,
    caps: Option<&ClientCapabilities>,
) -> bool {
    let url = caps
        .and_then(|c| c.elicitation.as_ref())
        .is_some_and(|e| e.url.is_some());
    let stateless = version.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    url && !stateless
}

/// The -32042 error naming the elicitation that connects `backend` at `url`.
pub(crate) fn required(backend: &str, url: &str) -> ErrorData {
    let elicitation = json!({
        "mode": "url",
        "elicitationId": elicitation_id(),
        "url": url,
        "message": message(backend),
    });
    ErrorData::new(
        ErrorCode(URL_ELICITATION_REQUIRED),
        format!("{CONNECTION_REQUIRED}: connect {backend} at {url}, then call again"),
        Some(json!({
            "elicitations": [elicitation],
            "code": CONNECTION_REQUIRED,
            "backend": backend,
        })),
    )
}

/// A fresh elicitation id: 128 random bits, hex.
fn elicitation_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// How asking in the session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asked {
    /// The person connected: run the call again.
    Connected,
    /// They declined, cancelled, or did not connect in time.
    NotConnected,
}

/// Asks the person in the session to connect `backend` at `url`, and waits
/// for the connection (at most [`CONNECT_TIMEOUT`], or until the request
/// is cancelled).
pub(crate) async fn ask(
    ctx: &RequestContext<RoleServer>,
    host: &Toolhost,
    who: &Principal,
    (backend, url): (&str, &str),
) -> Asked {
    let Ok(parsed) = url::Url::parse(url) else {
        return Asked::NotConnected;
    };
    let id = elicitation_id();
    let asked = ctx
        .peer
        .elicit_url_with_timeout(message(backend), parsed, id.clone(), Some(CONNECT_TIMEOUT))
        .await;
    match asked {
        Ok(ElicitationAction::Accept) => {}
        Ok(other) => {
            tracing::info!(backend, action = ?other, "the person did not open the connect page");
            return Asked::NotConnected;
        }
        Err(e) => {
            tracing::info!(error = %e, backend, "the connect elicitation was not answered");
            return Asked::NotConnected;
        }
    }
    let waited = tokio::time::timeout(CONNECT_TIMEOUT, async {
        loop {
            if host.connected(who, backend).await {
                return true;
            }
            tokio::select! {
                () = ctx.ct.cancelled() => return false,
                () = tokio::time::sleep(POLL) => {}
            }
        }
    });
    if !waited.await.unwrap_or(false) {
        return Asked::NotConnected;
    }
    let complete = CustomNotification::new(
        "notifications/elicitation/complete",
        Some(json!({ "elicitationId": id })),
    );
    if let Err(e) = (ctx.peer)
        .send_notification(ServerNotification::CustomNotification(complete))
        .await
    {
        tracing::debug!(error = %e, "telling the client the elicitation is complete failed");
    }
    Asked::Connected
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ElicitationCapability, UrlElicitationCapability};

    #[test]
    fn only_a_session_whose_client_takes_url_elicitation_is_asked_in_it() {
        let (modern, legacy) = (ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25);
        let form_only = ClientCapabilities::default();
        let mut url = ClientCapabilities::default();
        url.elicitation =
            Some(ElicitationCapability::new().with_url(UrlElicitationCapability::new()));
        let mut form = ClientCapabilities::default();
        form.elicitation = Some(ElicitationCapability::default());
        assert!(in_session(Some(&legacy), Some(&url)));
        assert!(
            !in_session(Some(&modern), Some(&url)),
            "no session to ask in"
        );
        assert!(!in_session(Some(&legacy), Some(&form)));
        assert!(!in_session(Some(&legacy), Some(&form_only)));
        assert!(!in_session(None, None));
    }

    #[test]
    fn the_error_is_mcps_url_elicitation_required_with_the_hosts_code() {
        let url = "https://host.example/admin/connections/crm/connect";
        let e = required("crm", url);
        assert_eq!(e.code.0, -32042);
        let data = e.data.expect("data");
        assert_eq!(data["code"], CONNECTION_REQUIRED);
        assert_eq!(data["backend"], "crm");
        let asked = &data["elicitations"][0];
        assert_eq!(asked["mode"], "url");
        assert_eq!(asked["url"], url);
        assert_eq!(asked["elicitationId"].as_str().map(str::len), Some(32));
        let other = required("crm", url).data.expect("data");
        assert_ne!(
            asked["elicitationId"],
            other["elicitations"][0]["elicitationId"]
        );
    }
}
