//! Progress of a long call, through the host's `progress` import.
//!
//! The host relays each report to the MCP client as
//! `notifications/progress` when the client asked for progress, and drops
//! it otherwise; each report counts against the call's host-call budget,
//! and a message is cut at 1 KiB. Outside wasm (unit tests) reports go to
//! stderr.

/// Reports that the call has come to `progress` (of `total`, when known),
/// with an optional one-line `message`. `progress` should increase.
pub fn report(progress: f64, total: Option<f64>, message: Option<&str>) {
    #[cfg(target_arch = "wasm32")]
    crate::bindings::toolhost::plugin::progress::report(progress, total, message);
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("[progress] {progress}/{total:?} {message:?}");
}
