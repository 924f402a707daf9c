//! A call's plugin log lines as MCP `notifications/message`, for the
//! clients that asked: a 2025-11-25 session that set a level
//! (`logging/setLevel`), or a 2026-07-28 request carrying
//! `io.modelcontextprotocol/logLevel` in its `_meta` (a request without it
//! gets none, as that revision requires). The operator's log is unchanged.
// rmcp marks logging deprecated (SEP-2577); 2025-11-25 clients still use it.
#![allow(deprecated)]

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use toolhost_runtime::{LogLevel, LogLine, LogSink};
use toolhost_secrets::Scanner;

/// Relays one call's log lines at or above a level, in order, to the
/// client that asked for them.
pub(crate) struct LogRelay {
    forwarder: JoinHandle<()>,
}

impl LogRelay {
    /// A sink for the call, and the relay that forwards what it receives at
    /// `min` or above. The plugin logs from its own thread without
    /// blocking; the call's log budget bounds what it can write. A line
    /// leaves the host: a credential or host path in it is replaced by
    /// `[redacted:<kind>]` (`scanner`).
    pub(crate) fn start(
        min: LoggingLevel,
        peer: Peer<RoleServer>,
        scanner: Scanner,
    ) -> (LogSink, Self) {
        let (tx, mut rx) = mpsc::unbounded_channel::<LogLine>();
        let forwarder = tokio::spawn(async move {
            while let Some(line) = rx.recv().await {
                let text = scanner.redact(&line.message).into_owned();
                let param =
                    LoggingMessageNotificationParam::new(level(line.level), Value::String(text))
                        .with_logger(line.plugin);
                if let Err(e) = peer.notify_logging_message(param).await {
                    tracing::debug!(error = %e, "log notification not delivered");
                }
            }
        });
        let sink = LogSink::new(move |line| {
            if rank(level(line.level)) >= rank(min) {
                let _ = tx.send(line);
            }
        });
        (sink, Self { forwarder })
    }

    /// Waits until every line has been sent. Call after the call has ended,
    /// before answering, so no line arrives after the result.
    pub(crate) async fn flush(self) {
        let _ = self.forwarder.await;
    }
}

/// A plugin's level as MCP's (RFC 5424's) level.
fn level(l: LogLevel) -> LoggingLevel {
    match l {
        LogLevel::Trace | LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Warn => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
    }
}

/// MCP's levels, least severe first.
fn rank(l: LoggingLevel) -> u8 {
    match l {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugins_levels_keep_their_order_as_mcp_levels() {
        let ours = [
            LogLevel::Trace,
            LogLevel::Debug,
            LogLevel::Info,
            LogLevel::Warn,
            LogLevel::Error,
        ];
        let ranks: Vec<u8> = ours.iter().map(|l| rank(level(*l))).collect();
        assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "{ranks:?}");
        assert_eq!(level(LogLevel::Warn), LoggingLevel::Warning);
    }
}
