//! Hostile fixture `t-flood-imports`: `flood` calls one host import, named
//! by its `import` argument, in an endless loop, ignoring every answer.
//! Each turn varies what it passes (a counter in the line, subject, name,
//! key, path or URI), so nothing the host deduplicates ends the loop early.
//! The host must end the call at its host-call budget (or the log budget,
//! for `log`, if that comes first), keep what the flood leaves behind
//! bounded, and serve the next call as if nothing happened.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use fixture_kit::Never;
use toolhost_sdk::backend::{self, Method, Request};
use toolhost_sdk::client::Input;
use toolhost_sdk::prelude::*;

/// The entity kind `flood resolver` resolves (the manifest declares it).
const KIND: &str = "thing";
/// The backend `flood backend` sends to (the manifest declares it).
const BACKEND: &str = "flood";

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "flood",
            "Calls one host import in an endless loop, ignoring its answers.",
            flood,
        )
        .permission("fixture", "run"),
        fixture_kit::ping(),
    ]
}

/// Lists no things: the host's tests give the resolver rows of their own.
fn entities() -> Entities {
    Entities::new([KIND], |_ctx, _kind| Ok(Vec::new()))
}

toolhost_sdk::export_plugin!(tools, entities = entities);

/// The host import to flood, as the WIT names it.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
enum Import {
    /// `log.log`: an info line.
    Log,
    /// `progress.report`.
    Progress,
    /// `resolver.resolve`: a thing by a name.
    Resolver,
    /// `backend.send`: a GET on the `flood` backend.
    Backend,
    /// `checkpoint.open`: a new subject each time.
    Checkpoint,
    /// `artifacts.put`: a new name each time.
    Artifacts,
    /// `client.supports`.
    ClientSupports,
    /// `client.ask`: the client's roots, under a new key each time.
    ClientAsk,
    /// `notify.resource-updated`: a new URI each time.
    Notify,
}

/// Arguments of `flood`.
#[derive(Deserialize, JsonSchema)]
struct FloodArgs {
    /// Which import to call.
    import: Import,
}

fn flood(_ctx: &Ctx, args: FloodArgs) -> Result<Never, ToolError> {
    let mut n: u64 = 0;
    loop {
        call_once(args.import, n);
        n = n.wrapping_add(1);
    }
}

/// Calls `import` once, its arguments told apart by `n`; drops the answer.
fn call_once(import: Import, n: u64) {
    match import {
        Import::Log => log::info(&format!("flood {n}")),
        Import::Progress => progress::report(n as f64, None, Some(&format!("flood {n}"))),
        Import::Resolver => {
            let _ = resolve(Query::new(KIND, KIND, Some(format!("thing {n}").into())));
        }
        Import::Backend => {
            let _ = backend::send(Request::new(BACKEND, Method::Get, format!("/flood/{n}")));
        }
        Import::Checkpoint => {
            let _ = checkpoint::open(&format!("flood:{n}"), "A flood", "Opened in a loop.");
        }
        Import::Artifacts => {
            let _ = artifacts::put(&format!("flood-{n}"), "text/plain", b"flood");
        }
        Import::ClientSupports => {
            let _ = client::supports();
        }
        Import::ClientAsk => {
            let _ = client::ask(vec![Input::roots(format!("roots-{n}"))]);
        }
        Import::Notify => {
            let _ = toolhost_sdk::resources::updated(&format!("flood://updates/{n}"));
        }
    }
}
