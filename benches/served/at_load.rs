//! Latency at a realistic load: the soak's mix (`tests/support/mix.rs`)
//! on the host as the soak serves it, first closed-loop at 32 clients
//! (its capacity, in requests per second), then open-loop at half that
//! rate, each request's latency counted from when it was due.

use std::time::Duration;

use crate::closed_loop::{self, Span, Window};
use crate::open_loop::{self, Schedule};
use crate::process::NEVER_REFUSING;
use crate::support::bench::Backend;
use crate::support::keep_alive::KeepAlive;
use crate::support::mix::{Callers, Kind, mixed_server, request};

/// The clients of the capacity measurement, as in the soak.
const CLIENTS: usize = 32;

/// What the load saw.
pub struct AtLoad {
    /// The closed loop: the mix's capacity.
    pub capacity: Window,
    /// The rate the open loop kept: half the capacity.
    pub rate: f64,
    /// The open loop.
    pub schedule: Schedule,
}

/// The host as soaked (testbench as the exploration backend, two run
/// workers, run quotas out of the way), with rate limits that never
/// refuse; `capacity` and `open` are how long each loop runs.
pub fn measure(capacity: Span, open: Duration) -> AtLoad {
    let backend = Backend::start();
    let server = mixed_server(&backend, &NEVER_REFUSING);
    let who = Callers::sign_in(&server);
    let closed = |conn: &mut KeepAlive, c: usize, n: usize| {
        mixed(conn, Kind::of(c, n), &who, &format!("served {c} {n}"));
    };
    let capacity = closed_loop::run(&server.url, server.pid(), CLIENTS, capacity, &closed);
    let rate = capacity.per_sec() / 2.0;
    // The open loop's i-th request is what the soak's client i % 32 sends
    // as its (i / 32)-th: the same mix.
    let open_request = |conn: &mut KeepAlive, i: usize| {
        let kind = Kind::of(i % CLIENTS, i / CLIENTS);
        mixed(conn, kind, &who, &format!("served {i}"));
        kind
    };
    let schedule = open_loop::run(&server.url, rate, open, &open_request);
    AtLoad {
        capacity,
        rate,
        schedule,
    }
}

/// One request of the mix on `conn`, which must get the answer it should.
fn mixed(conn: &mut KeepAlive, kind: Kind, who: &Callers, name: &str) {
    let mut caller = |token: &str, tool: &str, arguments| conn.call(token, tool, arguments);
    if let Err(answer) = request(&mut caller, kind, who, name) {
        panic!("a {kind:?} request got a wrong answer: {answer}");
    }
}
