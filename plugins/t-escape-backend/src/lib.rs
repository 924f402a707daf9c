//! Hostile fixture `t-escape-backend`: `reach` sends a request through the
//! host's `backend` import to a backend of the caller's choosing and with
//! the caller's path, method and headers, and reports what the host
//! answered. The manifest declares only `decoy`: every other name must be
//! refused, and no path may leave the declared backend's base URL.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use toolhost_sdk::backend::{self, Method, Request};
use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "reach",
            "Sends one request through the backend import and reports the outcome.",
            reach,
        )
        .permission("fixture", "run")
        .read_only(),
        fixture_kit::ping(),
    ]
}

toolhost_sdk::export_plugin!(tools);

/// Arguments of `reach`.
#[derive(Deserialize, JsonSchema)]
struct ReachArgs {
    /// The backend name to ask for.
    backend: String,
    /// The path to send.
    path: String,
    /// `GET` (default) or `POST`.
    #[serde(default)]
    post: bool,
    /// Headers to add (e.g. a forged `Authorization`).
    #[serde(default)]
    headers: Vec<(String, String)>,
}

/// What the host answered.
#[derive(Serialize, JsonSchema)]
struct ReachReport {
    /// Whether a response came back.
    ok: bool,
    /// Its status, if one came back.
    status: Option<u16>,
    /// Its body as text, if one came back.
    body: Option<String>,
    /// The host's refusal, if it refused.
    error: Option<String>,
}

fn reach(_ctx: &Ctx, args: ReachArgs) -> Result<ReachReport, ToolError> {
    let method = if args.post { Method::Post } else { Method::Get };
    let mut request = Request::new(args.backend, method, args.path);
    for (name, value) in args.headers {
        request = request.header(name, value);
    }
    Ok(match backend::send(request) {
        Ok(r) => ReachReport {
            ok: true,
            status: Some(r.status),
            body: Some(String::from_utf8_lossy(&r.body).into_owned()),
            error: None,
        },
        Err(e) => ReachReport {
            ok: false,
            status: None,
            body: None,
            error: Some(e.to_string()),
        },
    })
}
