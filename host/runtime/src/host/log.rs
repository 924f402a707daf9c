//! `toolhost:plugin/log`: plugin log lines into the host's `tracing`, tagged
//! with the plugin and call, bounded by the call's log budget; and to the
//! call's [`LogSink`], if its caller asked for them (the MCP edge turns them
//! into `notifications/message`).

use std::fmt;
use std::sync::Arc;

use toolhost_limits::ByteSize;

use super::HostCallMeter;
use crate::bindings::toolhost::plugin::log::{Host, Level};
use crate::error::Breach;

/// How severe a plugin's log line is, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// The finest detail.
    Trace,
    /// Detail for whoever debugs the plugin.
    Debug,
    /// What the plugin is doing.
    Info,
    /// Something looks wrong; the call goes on.
    Warn,
    /// Something failed.
    Error,
}

impl From<Level> for LogLevel {
    fn from(level: Level) -> Self {
        match level {
            Level::Trace => LogLevel::Trace,
            Level::Debug => LogLevel::Debug,
            Level::Info => LogLevel::Info,
            Level::Warn => LogLevel::Warn,
            Level::Error => LogLevel::Error,
        }
    }
}

/// One line a plugin logged during a call, as written (within the call's
/// log budget); whoever shows it to a client redacts it first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// Its level.
    pub level: LogLevel,
    /// The plugin that wrote it.
    pub plugin: String,
    /// Its text.
    pub message: String,
}

/// Where a call's log lines go besides the operator's log.
#[derive(Clone)]
pub struct LogSink(Arc<dyn Fn(LogLine) + Send + Sync>);

impl LogSink {
    /// A sink calling `f` for each line, in order, from the call's thread:
    /// `f` must not block (hand the line to a channel).
    pub fn new(f: impl Fn(LogLine) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }
}

impl fmt::Debug for LogSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LogSink")
    }
}

/// The log capability of one call.
pub(crate) struct LogCapability {
    plugin: String,
    call_id: String,
    left: u64,
    limit: ByteSize,
    meter: HostCallMeter,
    sink: Option<LogSink>,
}

impl LogCapability {
    pub(crate) fn new(plugin: &str, call_id: &str, limit: ByteSize, meter: HostCallMeter) -> Self {
        Self {
            plugin: plugin.to_owned(),
            call_id: call_id.to_owned(),
            left: limit.as_u64(),
            limit,
            meter,
            sink: None,
        }
    }

    /// The capability that also hands each line to `sink`.
    pub(crate) fn with_sink(mut self, sink: Option<LogSink>) -> Self {
        self.sink = sink;
        self
    }
}

impl Host for LogCapability {
    fn log(&mut self, level: Level, message: String) -> wasmtime::Result<()> {
        self.meter.charge()?;
        let size = message.len() as u64;
        if size > self.left {
            self.left = 0;
            return Err(Breach::Log { limit: self.limit }.into());
        }
        self.left -= size;
        let (plugin, call) = (self.plugin.as_str(), self.call_id.as_str());
        match level {
            Level::Trace => tracing::trace!(target: "plugin", plugin, call, "{message}"),
            Level::Debug => tracing::debug!(target: "plugin", plugin, call, "{message}"),
            Level::Info => tracing::info!(target: "plugin", plugin, call, "{message}"),
            Level::Warn => tracing::warn!(target: "plugin", plugin, call, "{message}"),
            Level::Error => tracing::error!(target: "plugin", plugin, call, "{message}"),
        }
        if let Some(sink) = &self.sink {
            (sink.0)(LogLine {
                level: level.into(),
                plugin: self.plugin.clone(),
                message,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capability(log: u64, calls: u32) -> LogCapability {
        LogCapability::new("p", "c", ByteSize::b(log), HostCallMeter::new(calls))
    }

    fn breach(r: wasmtime::Result<()>) -> Breach {
        r.expect_err("a breach")
            .downcast_ref::<Breach>()
            .copied()
            .expect("the error is a Breach")
    }

    #[test]
    fn lines_within_the_budget_are_accepted() {
        let mut log = capability(10, 10);
        assert!(log.log(Level::Info, "12345".into()).is_ok());
        assert!(log.log(Level::Warn, "12345".into()).is_ok());
    }

    #[test]
    fn the_line_that_overflows_the_byte_budget_traps() {
        let mut log = capability(8, 10);
        assert!(log.log(Level::Info, "12345".into()).is_ok());
        assert_eq!(
            breach(log.log(Level::Info, "12345".into())),
            Breach::Log {
                limit: ByteSize::b(8)
            }
        );
    }

    #[test]
    fn lines_within_the_budget_reach_the_sink_in_order_and_the_overflowing_one_does_not() {
        let heard = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = {
            let heard = heard.clone();
            LogSink::new(move |line| heard.lock().expect("lock").push(line))
        };
        let mut log = capability(10, 10).with_sink(Some(sink));
        assert!(log.log(Level::Warn, "first".into()).is_ok());
        assert!(log.log(Level::Trace, "again".into()).is_ok());
        assert!(log.log(Level::Error, "over".into()).is_err());
        let heard = heard.lock().expect("lock");
        let lines: Vec<(LogLevel, &str, &str)> = heard
            .iter()
            .map(|l| (l.level, l.plugin.as_str(), l.message.as_str()))
            .collect();
        assert_eq!(
            lines,
            [
                (LogLevel::Warn, "p", "first"),
                (LogLevel::Trace, "p", "again")
            ]
        );
    }

    #[test]
    fn each_line_is_a_host_call() {
        let mut log = capability(1000, 1);
        assert!(log.log(Level::Debug, String::new()).is_ok());
        assert_eq!(
            breach(log.log(Level::Debug, String::new())),
            Breach::HostCalls { limit: 1 }
        );
    }
}
