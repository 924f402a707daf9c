//! Hostile fixture `t-escape-backend`: `reach` sends a request through the
//! host's `backend` import to a backend of the caller's choosing and with
//! the caller's path, method and headers, and reports what the host
//! answered. The manifest declares only `decoy`: every other name must be
//! refused, and no path may leave the declared backend's base URL. The
//! report also counts the JWTs (`eyJ0eXAi` or `eyJhbGci`: `{"typ"` or
//! `{"alg"` in base64url) in the plugin's whole linear memory once the
//! answer is in: a host that
//! sends a backend who acts (an assertion, a person's token) must leave
//! none of them where the plugin can read.
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
    /// JWT starts anywhere in this instance's memory afterwards.
    jwts_in_memory: usize,
}

fn reach(_ctx: &Ctx, args: ReachArgs) -> Result<ReachReport, ToolError> {
    let method = if args.post { Method::Post } else { Method::Get };
    let mut request = Request::new(args.backend, method, args.path);
    for (name, value) in args.headers {
        request = request.header(name, value);
    }
    let mut report = match backend::send(request) {
        Ok(r) => ReachReport {
            ok: true,
            status: Some(r.status),
            body: Some(String::from_utf8_lossy(&r.body).into_owned()),
            error: None,
            jwts_in_memory: 0,
        },
        Err(e) => ReachReport {
            ok: false,
            status: None,
            body: None,
            error: Some(e.to_string()),
            jwts_in_memory: 0,
        },
    };
    // A JWT's start whichever header member comes first (`{"typ"` or
    // `{"alg"`, base64url). Built reversed at run time, so the plugin's own
    // data holds no copy; the one searched with is not counted.
    for reversed in ["iAXe0Jye", "icGbhJye"] {
        let mut needle = String::with_capacity(reversed.len());
        needle.extend(reversed.chars().rev());
        let at = Some(needle.as_ptr() as usize);
        report.jwts_in_memory += fixture_kit::copies_in_memory(needle.as_bytes(), at);
    }
    Ok(report)
}
