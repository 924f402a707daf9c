//! What the bench prints: each part's table and its named lines as it
//! ends, then every headline again as one Markdown table for
//! `BENCHMARKS.md`.

use std::path::Path;
use std::time::Duration;

use crate::at_load::AtLoad;
use crate::closed_loop::{Window, quantile};
use crate::discovery::{
    FIND_TOOLS, FIND_TOOLS_TMPFS, Found, GREET, GREET_TMPFS, Listed, THRESHOLD_OFF,
};
use crate::one_client::OneClient;
use crate::owners::Owners;
use crate::rounds::Rounds;
use crate::support::mix::Kind;

/// The targets of parts 1 and 2, in the order `main` gives them.
const CEILING: usize = 0;
const SHIPPED: usize = 1;
const BASELINE: usize = 2;
const NAMES: [&str; 3] = [
    "ceiling: bare rmcp, native greet",
    "toolhost as shipped (this build)",
    "toolhost baseline",
];

/// Issue 48's target for `find_tools` over 300 tools: p99 within 1 ms.
const FIND_TOOLS_TARGET: Duration = Duration::from_millis(1);

/// The headlines so far, as Markdown table rows.
pub struct Report {
    rows: Vec<String>,
    heading: String,
}

impl Report {
    pub fn new(quick: bool, baseline: Option<&Path>) -> Report {
        let mode = if quick { "--quick" } else { "full" };
        let baseline = baseline.map_or("none".into(), |b| b.display().to_string());
        let heading = format!("served bench ({mode}), baseline: {baseline}");
        println!("# {heading}\n");
        Report {
            rows: Vec::new(),
            heading,
        }
    }

    /// Parts 1 and 2 at `clients` clients.
    pub fn cpu_per_call(&mut self, clients: usize, rounds: &Rounds) {
        let at = if clients == 1 {
            "1 client"
        } else {
            "32 clients"
        };
        println!(
            "| server, own process | clients | calls/s | p50 ms | p99 ms | server CPU µs/call |"
        );
        println!("|---|---|---|---|---|---|");
        for (name, w) in NAMES.iter().zip(&rounds.pooled) {
            println!("| {name} | {clients} | {} |", cells(w));
        }
        println!();
        for (t, what) in [
            (SHIPPED, "shipped"),
            (CEILING, "ceiling"),
            (BASELINE, "baseline"),
        ] {
            if let Some(w) = rounds.pooled.get(t) {
                let line = format!("server CPU per {what} greet call, {at}");
                self.line(&line, format!("{:.0} µs", w.cpu_per_request_us()));
            }
        }
        let (r, all) = rounds.cpu_ratio(CEILING, SHIPPED);
        let line = format!("R on server CPU at {at} = ceiling CPU per call / shipped CPU per call");
        self.line(&line, with_rounds(r, &all));
        if rounds.pooled.len() > BASELINE {
            let (r, all) = rounds.cpu_ratio(SHIPPED, BASELINE);
            let line = if clients == 1 {
                "server CPU per call at 1 client, current / baseline"
            } else {
                "server CPU per call, current / baseline"
            };
            self.line(line, with_rounds(r, &all));
        }
        println!();
    }

    /// Part 4: one client's p50 on each store, beside the fsync `floor`.
    pub fn one_client(&mut self, one: &OneClient, floor: Duration) {
        let p50 = |w: &Window| w.quantile(0.5);
        let stores = [
            ("SQLite file, synced (as shipped)", Some(&one.shipped)),
            ("sqlite::memory:", Some(&one.memory)),
            ("SQLite file in tmpfs", one.tmpfs.as_ref()),
        ];
        println!("| one client, store | calls/s | p50 ms | p99 ms | server CPU µs/call |");
        println!("|---|---|---|---|---|");
        for (store, w) in stores {
            let Some(w) = w else { continue };
            println!("| {store} | {} |", cells(w));
        }
        println!();
        let fsync = "fsync floor (4 KiB inside a pre-allocated, synced file, fdatasync; median)";
        self.line(fsync, format!("{} ms", ms(floor)));
        let above = |w: &Window| {
            let d = p50(&one.shipped).as_secs_f64() - p50(w).as_secs_f64();
            format!(
                "{:.3} ms = {:.2} × the fsync floor",
                d * 1e3,
                d / floor.as_secs_f64()
            )
        };
        let memory = "one client: shipped p50 − in-memory p50 (sqlite::memory:)";
        self.line(memory, above(&one.memory));
        if let Some(tmpfs) = &one.tmpfs {
            self.line("one client: shipped p50 − tmpfs-file p50", above(tmpfs));
        }
        println!();
    }

    /// Part 6: `find_tools` against `greet` at one client, then the list's
    /// bytes with discovery on and off.
    pub fn discovery(&mut self, found: &Found) {
        let queries = format!("find_tools ({} queries in turn)", found.queries);
        let in_tmpfs = format!("{queries}, store in tmpfs");
        let mut loads = vec![
            (FIND_TOOLS, queries.as_str()),
            (GREET, "greet (the baseline)"),
        ];
        if found.tmpfs {
            loads.push((FIND_TOOLS_TMPFS, in_tmpfs.as_str()));
            loads.push((GREET_TMPFS, "greet, store in tmpfs"));
        }
        println!(
            "| one client, catalog-300 and hello | calls/s | p50 ms | p99 ms | server CPU µs/call |"
        );
        println!("|---|---|---|---|---|");
        for (l, name) in loads {
            println!("| {name} | {} |", cells(&found.rounds.pooled[l]));
        }
        println!();
        self.find_tools(found, FIND_TOOLS, GREET, "store on the disk, synced");
        if found.tmpfs {
            self.find_tools(found, FIND_TOOLS_TMPFS, GREET_TMPFS, "store in tmpfs");
        }
        let first = "the first find_tools after the start (the index built)";
        self.line(first, format!("{} ms", ms(found.first)));
        let list = "tools/list of catalog-300, every tool permitted";
        self.line(&format!("{list}, default threshold"), listed(&found.on));
        let off = format!("{list}, threshold {THRESHOLD_OFF} (all pages)");
        self.line(&off, listed(&found.off));
        println!();
    }

    /// Part 6's headlines on load `find` (`find_tools` on the store
    /// `store` names): against the target, then as ratios to load
    /// `greet`'s in the same rounds, on the same server.
    fn find_tools(&mut self, found: &Found, find: usize, greet: usize, store: &str) {
        let (f, g) = (find, greet);
        let find = &found.rounds.pooled[f];
        let p99 = find.quantile(0.99);
        let verdict = if p99 <= FIND_TOOLS_TARGET {
            "within"
        } else {
            "over"
        };
        self.line(
            &format!(
                "find_tools over catalog-300 at 1 client, {store}: p50, p99 (target: p99 ≤ 1 ms)"
            ),
            format!(
                "{} ms, {} ms ({verdict} the target)",
                ms(find.quantile(0.5)),
                ms(p99)
            ),
        );
        for (what, q) in [("p50", 0.5), ("p99", 0.99)] {
            let of = |w: &Window| w.quantile(q).as_secs_f64();
            let (r, all) = found.rounds.ratio(f, g, of);
            let line = format!("find_tools {what} / greet {what} at 1 client, {store}");
            self.line(&line, with_rounds(r, &all));
        }
        let (r, all) = found.rounds.cpu_ratio(f, g);
        let line = format!("find_tools server CPU per call / greet's at 1 client, {store}");
        self.line(&line, with_rounds(r, &all));
    }

    /// Part 3: the capacity, then the open loop per kind.
    pub fn at_load(&mut self, load: &AtLoad, floor: Duration) {
        let c = &load.capacity;
        let capacity = "capacity: the soak's mix, closed loop, 32 clients";
        self.line(capacity, format!("{:.0} requests/s", c.per_sec()));
        println!(
            "  (p50 {} ms, p99 {} ms, server CPU {:.0} µs per request)",
            ms(c.quantile(0.5)),
            ms(c.quantile(0.99)),
            c.cpu_per_request_us()
        );
        let s = &load.schedule;
        println!(
            "open loop at {:.0} requests/s (half the capacity) for {:.0} s: {} requests, {:.0}/s kept, \
             {} taken more than 1 ms late (every sender busy)",
            load.rate,
            s.elapsed.as_secs_f64(),
            s.done.len(),
            s.done.len() as f64 / s.elapsed.as_secs_f64(),
            s.late
        );
        println!("\n| kind (open loop, half capacity) | requests | p50 ms | p99 ms | p99 / p50 |");
        println!("|---|---|---|---|---|");
        for kind in Kind::ALL {
            let took = s.latencies(kind);
            if took.is_empty() {
                continue;
            }
            let (p50, p99) = (quantile(&took, 0.5), quantile(&took, 0.99));
            let ratio = p99.as_secs_f64() / p50.as_secs_f64();
            println!(
                "| {kind:?} | {} | {} | {} | {ratio:.1} |",
                took.len(),
                ms(p50),
                ms(p99)
            );
            let line = format!("open loop at half capacity, {kind:?}: p50, p99 (p99 / p50)");
            self.row(
                &line,
                format!("{} ms, {} ms ({ratio:.1})", ms(p50), ms(p99)),
            );
        }
        let calls = s.latencies(Kind::Call);
        let p99 = quantile(&calls, 0.99).as_secs_f64() / floor.as_secs_f64();
        println!();
        self.line("plain-call p99 / fsync floor", format!("{p99:.1}"));
    }

    /// Part 5: what the idle server spends per second.
    pub fn idle(&mut self, per_second: Duration) {
        self.line(
            "idle server CPU, ms per second",
            format!("{:.2}", per_second.as_secs_f64() * 1e3),
        );
        println!();
    }

    /// Part 5: the shipped server's CPU by owner at 32 clients.
    pub fn owners(&mut self, owners: &Result<Owners, String>) {
        let owners = match owners {
            Ok(o) => o,
            Err(why) => {
                self.line("server CPU by owner", format!("not measured: {why}"));
                return;
            }
        };
        let per_call = owners.window.cpu_per_request_us();
        println!("| owner (perf, 32 clients) | share of server CPU | µs per call |");
        println!("|---|---|---|");
        for (owner, share) in &owners.shares {
            println!(
                "| {owner} | {:.1}% | {:.0} |",
                share * 100.0,
                share * per_call
            );
        }
        println!();
        println!("| function (perf, 32 clients) | object | share | µs per call |");
        println!("|---|---|---|---|");
        for (share, dso, symbol) in &owners.top {
            let symbol: String = symbol.chars().take(100).collect();
            println!(
                "| `{symbol}` | {dso} | {:.1}% | {:.0} |",
                share * 100.0,
                share * per_call
            );
        }
        println!();
        let top: Vec<String> = owners
            .shares
            .iter()
            .take(4)
            .map(|(o, s)| format!("{o} {:.0}", s * per_call))
            .collect();
        self.line(
            "server CPU by owner, µs per call (largest four)",
            format!("{} of {per_call:.0}", top.join(", ")),
        );
        println!();
    }

    /// Every headline, as one Markdown table.
    pub fn summary(&self) {
        println!("\n## Summary for BENCHMARKS.md ({})\n", self.heading);
        println!("| measure | value |");
        println!("|---|---|");
        for row in &self.rows {
            println!("{row}");
        }
    }

    /// Prints `name: value` and keeps it for the summary.
    fn line(&mut self, name: &str, value: String) {
        println!("{name}: {value}");
        self.row(name, value);
    }

    fn row(&mut self, name: &str, value: String) {
        self.rows.push(format!("| {name} | {value} |"));
    }
}

/// A window's `calls/s | p50 ms | p99 ms | server CPU µs/call` cells.
fn cells(w: &Window) -> String {
    format!(
        "{:.0} | {} | {} | {:.0}",
        w.per_sec(),
        ms(w.quantile(0.5)),
        ms(w.quantile(0.99)),
        w.cpu_per_request_us()
    )
}

/// `T tools in N pages, B bytes`.
fn listed(l: &Listed) -> String {
    let pages = if l.pages == 1 { "page" } else { "pages" };
    format!(
        "{} tools in {} {pages}, {} bytes",
        l.tools, l.pages, l.bytes
    )
}

/// `median (rounds a, b, c)`.
fn with_rounds(median: f64, all: &[f64]) -> String {
    let all: Vec<String> = all.iter().map(|r| format!("{r:.2}")).collect();
    format!("{median:.2} (rounds {})", all.join(", "))
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}
