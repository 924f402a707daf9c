//! Ending a call with a JSON-RPC error, through the host's `protocol`
//! import.
//!
//! A tool's own failure is a [`ToolError`](crate::ToolError): the client
//! gets a result with `isError`, which its model reads. [`raise`] is for the
//! rarer answer that belongs to the protocol: the request itself cannot be
//! taken, and the client (or the Tasks extension, which reports a task
//! `failed` only for a JSON-RPC error) must see an error response.
//!
//! The host's rules: `code` is the plugin's own, outside `-32768..=-31000`
//! (the range JSON-RPC reserves, then the block the host takes for its own
//! codes), or exactly [`INVALID_PARAMS`]; any other code of the host's
//! fails the call as `CONTRACT_VIOLATION`, so a plugin never passes for the
//! host. The message is cut at 1 KiB and any secret in it
//! is redacted; raising counts against the call's host-call budget. The
//! call's audit row records it as `PROTOCOL_ERROR`.
//!
//! ```no_run
//! use toolhost_sdk::protocol;
//! /// This plugin's "job not found" (an application-defined code).
//! const NO_SUCH_JOB: i32 = -30001;
//! protocol::raise(NO_SUCH_JOB, "no such job: 42");
//! ```

/// JSON-RPC's "invalid params": the one reserved code a plugin may raise.
pub const INVALID_PARAMS: i32 = -32602;

/// Ends the call with the JSON-RPC error `code`, `message`. Never returns:
/// the host stops the instance at once (whatever the call did before
/// stands, e.g. a backend write). Outside wasm (unit tests) it panics with
/// the error, so a test can expect it with `#[should_panic]`.
pub fn raise(code: i32, message: &str) -> ! {
    #[cfg(target_arch = "wasm32")]
    {
        crate::bindings::toolhost::plugin::protocol::raise(code, message);
        // The host never returns from `raise`; if one did, the call must
        // still end here rather than go on as if it had not raised.
        std::process::abort()
    }
    #[cfg(not(target_arch = "wasm32"))]
    panic!("[protocol] JSON-RPC error {code}: {message}")
}
