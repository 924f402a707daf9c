//! Hostile fixture `t-escape-read-env`: `read_env` reports
//! `std::env::var(name)` and how many environment variables and command-line
//! arguments the guest sees. The host grants none, so the variable must be
//! absent and both counts zero.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "read_env",
            "Reads an environment variable, and counts variables and arguments.",
            read_env,
        )
        .permission("fixture", "run")
        .read_only(),
        fixture_kit::ping(),
    ]
}

toolhost_sdk::export_plugin!(tools);

/// Arguments of `read_env`.
#[derive(Deserialize, JsonSchema)]
struct EnvArgs {
    /// The variable to read (`HOME`, `PATH`, a secret the test set …).
    name: String,
}

/// What the guest sees of its environment.
#[derive(Serialize, JsonSchema)]
struct EnvReport {
    /// The variable's value, if the guest could read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<String>,
    /// Why it could not (`environment variable not found` …).
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// `std::env::vars().count()`.
    vars: usize,
    /// `std::env::args().count()`.
    args: usize,
}

fn read_env(_ctx: &Ctx, args: EnvArgs) -> Result<EnvReport, ToolError> {
    let (value, error) = match std::env::var(&args.name) {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(e.to_string())),
    };
    Ok(EnvReport {
        value,
        error,
        vars: std::env::vars_os().count(),
        args: std::env::args_os().count(),
    })
}
