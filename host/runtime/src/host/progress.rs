//! `toolhost:plugin/progress`: a long call's progress, relayed to whoever
//! the call's context names (the MCP edge turns it into
//! `notifications/progress`), bounded by the host-call budget.

use std::fmt;
use std::sync::Arc;

use super::HostCallMeter;
use crate::bindings::toolhost::plugin::progress::Host;

/// Longest progress message relayed; longer ones are cut (at a character
/// boundary). Progress is a status line, not a channel for data.
pub const MAX_PROGRESS_MESSAGE: usize = 1024;

/// One progress report from a plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressReport {
    /// How far the call has come.
    pub progress: f64,
    /// The value at completion, when known.
    pub total: Option<f64>,
    /// A short status line.
    pub message: Option<String>,
}

/// Where a call's progress reports go.
#[derive(Clone)]
pub struct ProgressSink(Arc<dyn Fn(ProgressReport) + Send + Sync>);

impl ProgressSink {
    /// A sink calling `f` for each report, in order, from the call's thread:
    /// `f` must not block (hand the report to a channel).
    pub fn new(f: impl Fn(ProgressReport) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Hands `report` on (what the host relays of a run it follows).
    pub fn report(&self, report: ProgressReport) {
        (self.0)(report)
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// The progress capability of one call.
pub(crate) struct ProgressCapability {
    sink: Option<ProgressSink>,
    meter: HostCallMeter,
}

impl ProgressCapability {
    pub(crate) fn new(sink: Option<ProgressSink>, meter: HostCallMeter) -> Self {
        Self { sink, meter }
    }
}

fn cut(mut message: String) -> String {
    if message.len() > MAX_PROGRESS_MESSAGE {
        let mut end = MAX_PROGRESS_MESSAGE;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
    }
    message
}

impl Host for ProgressCapability {
    fn report(
        &mut self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> wasmtime::Result<()> {
        self.meter.charge()?;
        let finite = progress.is_finite() && total.is_none_or(f64::is_finite);
        if let (Some(sink), true) = (&self.sink, finite) {
            (sink.0)(ProgressReport {
                progress,
                total,
                message: message.map(cut),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    fn capture(calls: u32) -> (ProgressCapability, Arc<Mutex<Vec<ProgressReport>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let seen = seen.clone();
            ProgressSink::new(move |r| seen.lock().expect("not poisoned").push(r))
        };
        (
            ProgressCapability::new(Some(sink), HostCallMeter::new(calls)),
            seen,
        )
    }

    #[test]
    fn reports_reach_the_sink_in_order() {
        let (mut p, seen) = capture(10);
        p.report(1.0, Some(3.0), Some("one".into()))
            .expect("within budget");
        p.report(2.0, Some(3.0), None).expect("within budget");
        let seen = seen.lock().expect("lock");
        assert_eq!(
            seen.iter().map(|r| r.progress).collect::<Vec<_>>(),
            [1.0, 2.0]
        );
        assert_eq!(seen[0].message.as_deref(), Some("one"));
    }

    #[test]
    fn long_messages_are_cut_and_non_finite_numbers_dropped() {
        let (mut p, seen) = capture(10);
        p.report(1.0, None, Some("é".repeat(MAX_PROGRESS_MESSAGE)))
            .expect("ok");
        p.report(f64::NAN, None, None).expect("ok");
        p.report(1.0, Some(f64::INFINITY), None).expect("ok");
        let seen = seen.lock().expect("lock");
        assert_eq!(seen.len(), 1);
        assert!(
            seen[0]
                .message
                .as_ref()
                .is_some_and(|m| m.len() <= MAX_PROGRESS_MESSAGE)
        );
    }

    #[test]
    fn each_report_is_a_host_call_and_without_a_sink_reports_are_dropped() {
        let mut p = ProgressCapability::new(None, HostCallMeter::new(1));
        assert!(p.report(1.0, None, None).is_ok());
        let err = p.report(2.0, None, None).expect_err("over budget");
        assert!(err.downcast_ref::<crate::error::Breach>().is_some());
    }
}
