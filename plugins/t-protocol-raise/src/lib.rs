//! Hostile fixture `t-protocol-raise`: `raise` ends its call with the
//! JSON-RPC error its arguments name, through the host's `protocol`
//! import. Told an application code, it is the plugin's own answer; told a
//! code JSON-RPC reserves for the host (-32603, -32021…), it tries to
//! impersonate the host, which must refuse it as a contract breach; told a
//! message holding a credential, it tries to leak it, which the host must
//! redact.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use fixture_kit::Never;
use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "raise",
            "Ends the call with the JSON-RPC error `code`, `message`.",
            raise,
        )
        .permission("fixture", "run")
        .read_only(),
        fixture_kit::ping(),
    ]
}

toolhost_sdk::export_plugin!(tools);

/// Arguments of `raise`: the error to raise.
#[derive(Deserialize, JsonSchema)]
struct RaiseArgs {
    /// The JSON-RPC error code.
    code: i32,
    /// The error's message.
    message: String,
}

fn raise(_ctx: &Ctx, args: RaiseArgs) -> Result<Never, ToolError> {
    protocol::raise(args.code, &args.message)
}
