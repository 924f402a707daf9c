//! A call's progress reports as MCP `notifications/progress`, for clients
//! that sent a progress token.

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use toolhost_runtime::{ProgressReport, ProgressSink};
use toolhost_secrets::Scanner;

/// Relays one call's reports, in order, to the client that asked for them.
pub(crate) struct ProgressRelay {
    forwarder: JoinHandle<()>,
}

impl ProgressRelay {
    /// A sink for the call, and the relay that forwards what it receives.
    /// The plugin reports from its own thread without blocking; the
    /// channel's length is bounded by the call's host-call budget.
    /// A report's message leaves the host: a credential or host path in it
    /// is replaced by `[redacted:<kind>]` (`scanner`).
    pub(crate) fn start(
        token: ProgressToken,
        peer: Peer<RoleServer>,
        scanner: Scanner,
    ) -> (ProgressSink, Self) {
        let (tx, mut rx) = mpsc::unbounded_channel::<ProgressReport>();
        let forwarder = tokio::spawn(async move {
            while let Some(r) = rx.recv().await {
                let mut param = ProgressNotificationParam::new(token.clone(), r.progress);
                param.total = r.total;
                param.message = r.message.map(|m| scanner.redact(&m).into_owned());
                if let Err(e) = peer.notify_progress(param).await {
                    tracing::debug!(error = %e, "progress notification not delivered");
                }
            }
        });
        let sink = ProgressSink::new(move |r| {
            let _ = tx.send(r);
        });
        (sink, Self { forwarder })
    }

    /// Waits until every report has been sent. Call after the call (and
    /// with it every clone of the sink) has ended, before answering, so no
    /// progress arrives after the result.
    pub(crate) async fn flush(self) {
        let _ = self.forwarder.await;
    }
}
