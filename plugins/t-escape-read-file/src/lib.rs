//! Hostile fixture `t-escape-read-file`: `read_file` tries
//! `std::fs::read_to_string(path)`. The host grants no filesystem, so the
//! answer must be `{"ok": false, "error": …}`: the WASI error happened inside
//! the guest and nothing leaked.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "read_file",
            "Tries to read a file by path and reports what happened.",
            read_file,
        )
        .permission("fixture", "run")
        .read_only(),
        fixture_kit::ping(),
    ]
}

toolhost_sdk::export_plugin!(tools);

/// Arguments of `read_file`.
#[derive(Deserialize, JsonSchema)]
struct ReadArgs {
    /// The path to read (`/etc/passwd`, a temp file the test wrote …).
    path: String,
}

/// What happened: `{"ok": false, "error": …}` or `{"ok": true, "content": …}`.
#[derive(Serialize, JsonSchema)]
struct ReadReport {
    ok: bool,
    /// The file's content, if the guest could read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<String>,
    /// The I/O error's text, if it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// The I/O error's kind (`NotFound`, `PermissionDenied` …), if it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
}

fn read_file(_ctx: &Ctx, args: ReadArgs) -> Result<ReadReport, ToolError> {
    Ok(match std::fs::read_to_string(&args.path) {
        Ok(content) => ReadReport {
            ok: true,
            content: Some(content),
            error: None,
            kind: None,
        },
        Err(e) => ReadReport {
            ok: false,
            content: None,
            error: Some(e.to_string()),
            kind: Some(format!("{:?}", e.kind())),
        },
    })
}
