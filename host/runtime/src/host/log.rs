//! `toolhost:plugin/log`: plugin log lines into the host's `tracing`, tagged
//! with the plugin and call, bounded by the call's log budget.

use toolhost_limits::ByteSize;

use super::HostCallMeter;
use crate::bindings::toolhost::plugin::log::{Host, Level};
use crate::error::Breach;

/// The log capability of one call.
pub(crate) struct LogCapability {
    plugin: String,
    call_id: String,
    left: u64,
    limit: ByteSize,
    meter: HostCallMeter,
}

impl LogCapability {
    pub(crate) fn new(plugin: &str, call_id: &str, limit: ByteSize, meter: HostCallMeter) -> Self {
        Self {
            plugin: plugin.to_owned(),
            call_id: call_id.to_owned(),
            left: limit.as_u64(),
            limit,
            meter,
        }
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
    fn each_line_is_a_host_call() {
        let mut log = capability(1000, 1);
        assert!(log.log(Level::Debug, String::new()).is_ok());
        assert_eq!(
            breach(log.log(Level::Debug, String::new())),
            Breach::HostCalls { limit: 1 }
        );
    }
}
