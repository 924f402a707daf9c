//! Discovery over catalog-300: `find_tools` through the whole call path
//! as a client meets it, beside `greet` in the same rounds, and what
//! `tools/list` weighs with discovery on and off.
//!
//! One server (as shipped: a SQLite file, synced, the default discovery
//! threshold) serves catalog-300 and `hello`. One client calls
//! `find_tools` with the evaluation set's queries in turn
//! (`host/discovery/tests/evaluation.toml`) as a service client permitted
//! every catalog tool, and in the same rounds `greet` as the harness's
//! service client. A second server, the same but for its SQLite file in
//! tmpfs (whose syncs cost nothing), is asked the same in the same rounds:
//! what a search costs through the call path with the disk's sync, which
//! every call shares, taken out. The first search after the start builds
//! the caller's index and is timed apart; the rounds measure searches of
//! a kept index, as a running server answers them. Then that caller's
//! `tools/list`, every page, on the first server and on a third whose
//! threshold is above the catalog's size: the bytes of the answers'
//! bodies as served.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::closed_loop::{self, Span, Window};
use crate::one_client::tmpfs_store;
use crate::process::{NEVER_REFUSING, Target};
use crate::rounds::{Rounds, in_rounds};
use crate::support::Server;
use crate::support::bench::Stateless;
use crate::support::catalog_300::{CATALOG_300, SCOPES};
use crate::support::keep_alive::KeepAlive;
use toolhost_fixtures::HELLO;

/// The queries searched, in turn: what people ask for in words.
const EVALUATION: &str = include_str!("../../host/discovery/tests/evaluation.toml");

/// A threshold above catalog-300's size: the whole list, no discovery.
pub const THRESHOLD_OFF: &str = "1000";

/// The loads of [`Found::rounds`], in that order; the last two only on a
/// machine with tmpfs ([`Found::tmpfs`]).
pub const FIND_TOOLS: usize = 0;
pub const GREET: usize = 1;
pub const FIND_TOOLS_TMPFS: usize = 2;
pub const GREET_TMPFS: usize = 3;

/// What part 6 saw.
pub struct Found {
    /// `find_tools` ([`FIND_TOOLS`]) and `greet` ([`GREET`]) at one
    /// client, in rounds, then the same on the store in tmpfs
    /// ([`FIND_TOOLS_TMPFS`], [`GREET_TMPFS`]) if there is one.
    pub rounds: Rounds,
    /// Whether the rounds hold the loads on the store in tmpfs.
    pub tmpfs: bool,
    /// The queries searched in turn.
    pub queries: usize,
    /// The first search after the server started: the index is built.
    pub first: Duration,
    /// `tools/list` at the default threshold.
    pub on: Listed,
    /// `tools/list` at [`THRESHOLD_OFF`].
    pub off: Listed,
}

/// One caller's `tools/list`, every page.
#[derive(Default)]
pub struct Listed {
    pub tools: usize,
    pub pages: usize,
    /// The JSON-RPC answers' bodies, summed.
    pub bytes: usize,
    /// Whether `find_tools` was listed.
    pub discovery: bool,
}

/// Part 6, `rounds` rounds of `span` for each load.
pub fn measure(span: Span, rounds: usize) -> Found {
    let on = serve(&[], None);
    let catalog = on.service_token(SCOPES);
    let queries = queries();
    let started = Instant::now();
    search(&mut KeepAlive::new(&on.url), &catalog, &queries[0]);
    let first = started.elapsed();
    let store = tmpfs_store();
    let fast = (store.as_ref()).map(|(_, url)| serve(&[], Some(url)));
    let fast_catalog = fast.as_ref().map(|s| s.service_token(SCOPES));
    if let (Some(s), Some(token)) = (&fast, &fast_catalog) {
        search(&mut KeepAlive::new(&s.url), token, &queries[0]);
    }

    let find = |server: &Server, token: &str| {
        let one = |conn: &mut KeepAlive, _: usize, n: usize| {
            search(conn, token, &queries[n % queries.len()]);
        };
        closed_loop::run(&server.url, server.pid(), 1, span, &one)
    };
    let greet =
        |server: &Server| closed_loop::greet(&Target::host(server, server.token()), 1, span);
    let find_tools = || find(&on, &catalog);
    let greet_on = || greet(&on);
    let mut loads: Vec<&dyn Fn() -> Window> = vec![&find_tools, &greet_on];
    let (find_fast, greet_fast);
    if let (Some(s), Some(token)) = (&fast, &fast_catalog) {
        find_fast = move || find(s, token);
        greet_fast = move || greet(s);
        loads.extend([&find_fast as &dyn Fn() -> Window, &greet_fast]);
    }
    let rounds = in_rounds(&loads, rounds);
    let listed_on = listed(&on.url, &catalog);
    drop(on);
    drop(fast);

    let off = serve(&["--discovery-threshold", THRESHOLD_OFF], None);
    let listed_off = listed(&off.url, &off.service_token(SCOPES));
    assert!(listed_on.discovery && !listed_off.discovery);
    assert!(
        listed_off.tools >= 300,
        "{} tools listed whole",
        listed_off.tools
    );
    Found {
        rounds,
        tmpfs: store.is_some(),
        queries: queries.len(),
        first,
        on: listed_on,
        off: listed_off,
    }
}

/// catalog-300 and `hello`, with `flags`, rate limits that never refuse,
/// on the store at `database_url` (default: a SQLite file on the disk).
fn serve(flags: &[&str], database_url: Option<&str>) -> Server {
    let mut all = NEVER_REFUSING.to_vec();
    all.extend_from_slice(flags);
    let plugins = [HELLO, CATALOG_300[0], CATALOG_300[1]];
    Server::start_on(&plugins, &all, database_url)
}

/// The evaluation set's queries.
fn queries() -> Vec<String> {
    let set: toml::Table = toml::from_str(EVALUATION).expect("evaluation.toml");
    let rows = set.get("query").and_then(toml::Value::as_array);
    rows.expect("[[query]] rows")
        .iter()
        .map(|q| q.get("text").and_then(toml::Value::as_str))
        .map(|t| t.expect("a query's text").to_owned())
        .collect()
}

/// `find_tools` for `query` on `conn`, which must answer candidates.
fn search(conn: &mut KeepAlive, token: &str, query: &str) {
    let v = conn.call(token, "find_tools", json!({"query": query}));
    let candidates = v["result"]["structuredContent"]["candidates"].as_array();
    assert!(
        v["result"]["isError"] != json!(true) && candidates.is_some_and(|c| !c.is_empty()),
        "find_tools {query:?}: {v}"
    );
}

/// Every page of `tools/list` at `url` as the bearer of `token`.
fn listed(url: &str, token: &str) -> Listed {
    let mut conn = KeepAlive::new(url);
    let mut seen = Listed::default();
    let mut params = json!({});
    loop {
        let request = Stateless::new(token, "tools/list", "", params);
        let (status, body) = conn.post(&request).expect("tools/list answers");
        assert_eq!(status, 200, "tools/list: {body}");
        let page: Value = serde_json::from_str(&body).expect("tools/list's JSON");
        let tools = page["result"]["tools"].as_array().expect("tools");
        seen.tools += tools.len();
        seen.discovery |= tools.iter().any(|t| t["name"] == "find_tools");
        seen.pages += 1;
        seen.bytes += body.len();
        match page["result"]["nextCursor"].as_str() {
            Some(cursor) => params = json!({"cursor": cursor}),
            None => return seen,
        }
    }
}
