//! Hostile fixture `t-run-escape`: what an exploration run must not be
//! able to do, and a run that never ends.
//!
//! - `escape` (a run tool) tries, in order: a GET on `prod` (a backend the
//!   operator did not mark for exploration), a POST on `sandbox` (one it
//!   did: GET and HEAD only), reading `/etc/passwd`, reading environment
//!   variables (all of them, and `HOME`), and a TCP connection to
//!   `127.0.0.1:<port>`; then a GET on `sandbox`, which must succeed. It
//!   reports every outcome and never fails or panics, so the answer shows
//!   each refusal and that the run still worked after them.
//! - `spin` (a run tool) reports progress once, then computes forever
//!   without a host call: cancelling the run must interrupt it at an epoch
//!   tick.
//! - `put_outside` (not a run tool) tries to keep an artifact and answers
//!   the host's refusal.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

use fixture_kit::{Never, NoArgs};
use toolhost_sdk::backend::{self, Response};
use toolhost_sdk::prelude::*;

/// Where `escape` connects when the test names no port: one where nothing
/// should listen, so even a granted network shows only a refusal.
const DEFAULT_PORT: u16 = 1;

/// How long the TCP attempt may take: a sandbox without network fails at
/// once; this bounds the run if the host ever granted one.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "escape",
            "Run tool: tries a non-exploration backend, a POST, the host's files, its environment and a socket, then one allowed GET; reports each.",
            escape,
        )
        .permission("fixture", "run")
        .read_only(),
        Tool::new(
            "spin",
            "Run tool: reports progress once, then loops forever without a host call.",
            spin,
        )
        .permission("fixture", "run")
        .read_only(),
        Tool::new(
            "put_outside",
            "Tries to keep an artifact outside a run; answers the host's refusal.",
            put_outside,
        )
        .permission("fixture", "run")
        .read_only(),
        fixture_kit::ping(),
    ]
}

toolhost_sdk::export_plugin!(tools);

/// Arguments of `escape`.
#[derive(Deserialize, JsonSchema)]
struct EscapeArgs {
    /// The port on 127.0.0.1 to connect to (a listener the test watches);
    /// default 1.
    #[serde(default)]
    port: Option<u16>,
}

/// One attempt: what was tried and what came of it.
#[derive(Serialize, JsonSchema)]
struct Attempt {
    /// What was tried, e.g. `prod GET`.
    what: &'static str,
    /// Whether it got through (a backend answered, with any status; a file
    /// or variable was read; a socket connected).
    ok: bool,
    /// What came back, or the error's text.
    outcome: String,
}

/// The answer of `escape`: every attempt, in order.
#[derive(Serialize, JsonSchema)]
struct EscapeReport {
    attempts: Vec<Attempt>,
}

fn escape(_ctx: &Ctx, args: EscapeArgs) -> Result<EscapeReport, ToolError> {
    let port = args.port.unwrap_or(DEFAULT_PORT);
    let scenario = r#"{"project_id":1,"name":"written by a run","tags":[]}"#;
    let post = backend::Request::new("sandbox", backend::Method::Post, "/api/scenarios")
        .header("content-type", "application/json")
        .body(scenario);
    let attempts = vec![
        answered("prod GET", backend::get("prod", "/api/projects")),
        answered("sandbox POST", backend::send(post)),
        read_passwd(),
        env_vars(),
        env_home(),
        connect(port),
        answered("sandbox GET", backend::get("sandbox", "/api/projects")),
    ];
    Ok(EscapeReport { attempts })
}

/// A backend request's attempt: any answer got through.
fn answered(what: &'static str, answer: Result<Response, ToolError>) -> Attempt {
    match answer {
        Ok(r) => Attempt {
            what,
            ok: true,
            outcome: format!("answered {} ({} bytes)", r.status, r.body.len()),
        },
        Err(e) => refused(what, e),
    }
}

/// The host's password file: there is no filesystem to read it from.
fn read_passwd() -> Attempt {
    match std::fs::read("/etc/passwd") {
        Ok(bytes) => Attempt {
            what: "read /etc/passwd",
            ok: true,
            outcome: format!("read {} bytes", bytes.len()),
        },
        Err(e) => refused("read /etc/passwd", io_error(&e)),
    }
}

/// `vars_os`, not `vars`: a variable that is not Unicode would panic.
fn env_vars() -> Attempt {
    let names: Vec<String> = (std::env::vars_os())
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect();
    Attempt {
        what: "env vars",
        ok: !names.is_empty(),
        outcome: format!("{} variable(s): {}", names.len(), names.join(", ")),
    }
}

/// One variable every host process has.
fn env_home() -> Attempt {
    match std::env::var_os("HOME") {
        Some(value) => Attempt {
            what: "env HOME",
            ok: true,
            outcome: format!("HOME={}", value.to_string_lossy()),
        },
        None => refused("env HOME", "HOME is not set"),
    }
}

/// A TCP connection to the host's loopback.
fn connect(port: u16) -> Attempt {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
        Ok(_) => Attempt {
            what: "tcp connect",
            ok: true,
            outcome: format!("connected to {addr}"),
        },
        Err(e) => refused("tcp connect", io_error(&e)),
    }
}

/// An attempt that did not get through.
fn refused(what: &'static str, why: impl ToString) -> Attempt {
    Attempt {
        what,
        ok: false,
        outcome: why.to_string(),
    }
}

/// An I/O error with its kind (`Unsupported`, `PermissionDenied` …).
fn io_error(e: &std::io::Error) -> String {
    format!("{:?}: {e}", e.kind())
}

fn spin(_ctx: &Ctx, _args: NoArgs) -> Result<Never, ToolError> {
    progress::report(1.0, None, Some("spinning until the run is cancelled"));
    // `black_box` keeps the optimizer from proving the loop does nothing.
    let mut i: u64 = 0;
    loop {
        i = std::hint::black_box(i.wrapping_add(1));
    }
}

/// The answer of `put_outside`.
#[derive(Serialize, JsonSchema)]
struct PutReport {
    /// Whether the host kept the artifact (it must not).
    kept: bool,
    /// What the host kept, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    artifact: Option<ArtifactInfo>,
    /// The refusal's text, if it refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

fn put_outside(_ctx: &Ctx, _args: NoArgs) -> Result<PutReport, ToolError> {
    Ok(
        match artifacts::put("outside.txt", "text/plain", b"kept outside a run") {
            Ok(artifact) => PutReport {
                kept: true,
                artifact: Some(artifact),
                error: None,
            },
            Err(e) => PutReport {
                kept: false,
                artifact: None,
                error: Some(e.to_string()),
            },
        },
    )
}
