//! The call path's metrics, through the `metrics` facade (the server
//! installs a Prometheus recorder; without one these are no-ops).

use std::time::Duration;

use toolhost_audit::Outcome;

/// Records one finished call: a counter by tool and outcome, a latency
/// histogram, and counters for sandbox breaches by code.
pub(crate) fn record_call(
    tool: &str,
    outcome: Outcome,
    code: Option<&str>,
    breach: bool,
    took: Duration,
) {
    let tool = tool.to_owned();
    metrics::counter!("toolhost_calls_total", "tool" => tool.clone(), "outcome" => outcome.as_str())
        .increment(1);
    metrics::histogram!("toolhost_call_duration_seconds", "tool" => tool)
        .record(took.as_secs_f64());
    if let (true, Some(code)) = (breach, code) {
        let name = if code == "TRAPPED" {
            "toolhost_traps_total"
        } else {
            "toolhost_limit_hits_total"
        };
        metrics::counter!(name, "code" => code.to_owned()).increment(1);
    }
}
