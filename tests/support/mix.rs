//! The soak's mix of requests (`benches/soak.rs`, and the open-loop load
//! of `benches/served.rs`): mostly plain calls, some that need a
//! clarification, some a gate's whole life, a few exploration runs. Each
//! request goes through a caller the bench chooses (a connection per
//! request, or a keep-alive client), and says whether it got the answer
//! it should.

use serde_json::{Value, json};

use super::bench::Backend;
use super::oauth::{approver, user_token};
use super::{DEMO_PASSWORD, Server};
use toolhost_fixtures::{HELLO, TESTBENCH};

/// What one request of the mix is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A plain call (`greet`): seventeen in twenty.
    Call,
    /// A call that needs a clarification (`run_by_tag` without an
    /// environment: the host asks which).
    Clarification,
    /// A gate's whole life: a production run opens a gate, a second
    /// person confirms it, the retry runs (three calls).
    Gate,
    /// An exploration run, queued and run by the host's workers.
    Run,
}

impl Kind {
    /// Every kind, in the order reports list them.
    pub const ALL: [Kind; 4] = [Kind::Call, Kind::Clarification, Kind::Gate, Kind::Run];

    /// The soak's schedule: the `n`th request of client `c` of 32. One in
    /// twenty is a gate, one a clarification; every fiftieth request of
    /// clients 0 and 1 is a run (one in 800 overall).
    pub fn of(c: usize, n: usize) -> Kind {
        match (c, n % 50, (c + n) % 20) {
            (0 | 1, 0, _) => Kind::Run,
            (_, _, 0) => Kind::Gate,
            (_, _, 1) => Kind::Clarification,
            _ => Kind::Call,
        }
    }
}

/// The bearer tokens the mix's requests carry.
pub struct Callers {
    /// The demo admin's: clarifications, gates opened and retried, runs.
    pub demo: String,
    /// A second admin's, `ann`: she confirms the gates.
    pub ann: String,
    /// The harness's service client's: plain calls.
    pub greeter: String,
}

impl Callers {
    /// Signs the demo admin in, adds and signs in `ann`, on `server`.
    pub fn sign_in(server: &Server) -> Callers {
        Callers {
            demo: user_token(server, "demo", DEMO_PASSWORD),
            ann: approver(server),
            greeter: server.token().to_owned(),
        }
    }
}

/// One request of `kind` through `caller` (a `tools/call` of a tool with
/// arguments as the bearer of a token: the JSON-RPC answer); `name` is
/// who `greet` greets. `Err` with the answer that was not what it should be.
pub fn request(
    caller: &mut impl FnMut(&str, &str, Value) -> Value,
    kind: Kind,
    who: &Callers,
    name: &str,
) -> Result<(), Value> {
    let production = json!({"tags": ["smoke"], "environment": "prod", "project": "payments"});
    let judged = |v: Value, ok: bool| if ok { Ok(()) } else { Err(v) };
    match kind {
        Kind::Call => {
            let v = caller(&who.greeter, "greet", json!({"name": name}));
            let ok = v["result"]["isError"] == json!(false);
            judged(v, ok)
        }
        Kind::Clarification => {
            let ask = json!({"tags": ["smoke"], "project": "payments"});
            let v = caller(&who.demo, "run_by_tag", ask);
            let ok = v["result"]["structuredContent"]["ask_user"].is_string();
            judged(v, ok)
        }
        Kind::Gate => gate_life(caller, who, production),
        Kind::Run => {
            let start =
                json!({"tool": "explore_environments", "arguments": {"project": "payments"}});
            let v = caller(&who.demo, "start_exploration", start);
            let ok = v["result"]["structuredContent"]["run_id"].is_string();
            judged(v, ok)
        }
    }
}

/// A gate's life: opened by calling `run_by_tag` with `production`,
/// confirmed by `ann`, retried. Clients asking the same thing share one
/// pending gate: each confirms and retries it, and one of them runs it.
fn gate_life(
    caller: &mut impl FnMut(&str, &str, Value) -> Value,
    who: &Callers,
    production: Value,
) -> Result<(), Value> {
    let opened = caller(&who.demo, "run_by_tag", production.clone());
    let Some(gate) = opened["result"]["structuredContent"]["approval_required"]["gate_id"].as_str()
    else {
        return Err(opened);
    };
    let decide = json!({"gate_id": gate, "decision": "confirm", "reason": "soak"});
    let decided = caller(&who.ann, "decide_approval", decide);
    let said = &decided["result"]["structuredContent"];
    if said["state"] != json!("confirmed") && said["error"]["code"] != json!("GATE_DECIDED") {
        return Err(decided);
    }
    let mut retry = production;
    retry["gate_id"] = json!(gate);
    let v = caller(&who.demo, "run_by_tag", retry);
    let said = &v["result"]["structuredContent"];
    let ok = said["queued"].is_array() || said["error"]["code"] == json!("GATE_CONSUMED");
    if ok { Ok(()) } else { Err(v) }
}

/// The host as the mix needs it: `hello` and `testbench` (reaching
/// `backend`, also the exploration backend), two run workers, the run
/// quotas out of the way, and `rate_flags` for its rate limits.
pub fn mixed_server(backend: &Backend, rate_flags: &[&str]) -> Server {
    let mut flags: Vec<String> = backend.flags().to_vec();
    flags.extend(
        [
            "--exploration-backend",
            "testbench",
            "--run-workers",
            "2",
            "--runs-per-principal",
            "100000",
            "--runs-per-tenant",
            "100000",
        ]
        .map(str::to_owned),
    );
    flags.extend(rate_flags.iter().map(|f| (*f).to_owned()));
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    Server::start_with(&[TESTBENCH, HELLO], &flags)
}
