//! `toolhost audit …`: the operator's view of the audit trail, against the
//! server's store (the same `--database-url`). Read-only: a running host
//! keeps appending while these run.
//!
//! - `verify` walks every row in id order and recomputes the hash chain:
//!   `ok: N rows verified` and exit 0, or `audit chain broken at row <id>
//!   (call <call_id>): <what>` on stderr and exit 1. Rows written before the
//!   chain existed (migration 0006) are counted and said to be unverifiable.
//!   It then notes each gate consumed (over 15 minutes ago) by a call that
//!   has no row: a call the host stopped during (exit status unchanged).
//! - `tail` prints the newest rows; `search` the newest rows matching its
//!   filters. Both print them oldest first, like `tail(1)`.

use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::{Context, anyhow};
use clap::Subcommand;
use toolhost_audit::Outcome;
use toolhost_storage::{AuditQuery, AuditRecord};

use crate::admin::{StoreArg, open};

/// `toolhost audit …`
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Recompute the hash chain over every row. Exits 1 at the first row
    /// that was edited, or whose predecessor was removed.
    Verify {
        #[command(flatten)]
        store: StoreArg,
    },
    /// The newest calls: id, time, tenant, principal, client, tool,
    /// outcome, error code, duration.
    Tail {
        /// How many rows.
        #[arg(long, default_value_t = 20)]
        limit: u32,
        #[command(flatten)]
        store: StoreArg,
    },
    /// The newest calls matching every filter given, printed as `tail` does.
    Search {
        /// Only this tenant's calls.
        #[arg(long)]
        tenant: Option<String>,
        /// Only this principal's calls (its subject id).
        #[arg(long)]
        principal: Option<String>,
        /// Only calls of this tool.
        #[arg(long)]
        tool: Option<String>,
        /// Only calls made through this OAuth client (`toolhost-console`:
        /// the admin console's).
        #[arg(long)]
        client: Option<String>,
        /// Only calls that ended so: executed, needs_clarification,
        /// approval_required, denied, limit_rejected or error.
        #[arg(long, value_parser = outcome)]
        outcome: Option<Outcome>,
        /// Only calls started at or after this time: RFC 3339 in UTC
        /// (`2026-05-01T12:00:00Z`), or a duration ago (`90m`, `2days`).
        #[arg(long, value_parser = since)]
        since: Option<SystemTime>,
        /// At most this many rows, the newest.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        #[command(flatten)]
        store: StoreArg,
    },
}

/// Runs an `audit` command.
pub async fn audit(command: AuditCommand) -> anyhow::Result<ExitCode> {
    match command {
        AuditCommand::Verify { store } => verify(&store).await,
        AuditCommand::Tail { limit, store } => {
            print_rows(&open(&store).await?.recent(limit).await?);
            Ok(ExitCode::SUCCESS)
        }
        AuditCommand::Search {
            tenant,
            principal,
            tool,
            client,
            outcome,
            since,
            limit,
            store,
        } => {
            let query = AuditQuery {
                tenant,
                principal,
                tool,
                outcome,
                since,
                limit,
                client_id: client,
                ..AuditQuery::default()
            };
            print_rows(&open(&store).await?.search(&query).await?);
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn verify(store: &StoreArg) -> anyhow::Result<ExitCode> {
    let store = open(store).await?;
    let walked = store
        .verify_chain()
        .await
        .context("reading the audit trail")?;
    let summary = match walked {
        Ok(summary) => summary,
        Err(broken) => {
            eprintln!("{broken}");
            return Ok(ExitCode::FAILURE);
        }
    };
    println!("ok: {} rows verified", summary.verified);
    println!(
        "{} writer chains and the legacy chain walked, {} anchors checked",
        summary.chains, summary.anchors
    );
    if summary.unchained > 0 {
        println!(
            "{} older rows predate the hash chain (migration 0006) and cannot be verified",
            summary.unchained
        );
    }
    if let Some((id, hash)) = summary.head {
        println!("head: row {id} {hash}");
    }
    if let Some((seq, hash)) = summary.anchor_head {
        // Kept elsewhere, the anchor head also catches a rewrite or a
        // truncation of any chain up to that anchor.
        println!("anchor head: {seq} {hash}");
    }
    // A call that has not settled within the lease never will.
    let lease = i64::try_from(toolhost_invoke::IDEMPOTENCY_LEASE.as_millis()).unwrap_or(i64::MAX);
    let before = toolhost_invoke::millis(std::time::SystemTime::now()).saturating_sub(lease);
    let unaudited = store
        .unaudited_gates(before, UNAUDITED_SHOWN)
        .await
        .context("reading consumed gates")?;
    for g in &unaudited {
        println!(
            "note: gate {} (tenant {}) was consumed by call {} at {}, which has no audit row: the host stopped during that call",
            g.gate_id,
            g.tenant,
            g.call_id,
            humantime::format_rfc3339_millis(
                std::time::UNIX_EPOCH
                    + std::time::Duration::from_millis(g.consumed_at.max(0) as u64)
            )
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// At most this many unaudited gates are listed by `verify`.
const UNAUDITED_SHOWN: u32 = 100;

/// `records` (newest first, as the store returns them) as a table, oldest first.
fn print_rows(records: &[AuditRecord]) {
    println!(
        "{:<8} {:<24} {:<12} {:<24} {:<24} {:<20} {:<19} {:<20} {:<12} DEFINITION",
        "ID", "TIME", "TENANT", "PRINCIPAL", "CLIENT", "TOOL", "OUTCOME", "ERROR CODE", "DURATION"
    );
    for r in records.iter().rev() {
        let e = &r.event;
        // The definition digest as tools/list names it, to compare with a pin.
        let definition = e.definition_digest.map(|d| format!("sha256:{d}"));
        println!(
            "{:<8} {:<24} {:<12} {:<24} {:<24} {:<20} {:<19} {:<20} {:<12} {}",
            r.id,
            humantime::format_rfc3339_millis(e.at).to_string(),
            e.tenant,
            e.principal,
            e.client_id.as_deref().unwrap_or("-"),
            e.tool,
            e.outcome.as_str(),
            e.error_code.as_deref().unwrap_or("-"),
            millis(e.duration),
            definition.as_deref().unwrap_or("-"),
        );
        // What the call asked its client, on a line of its own.
        if !e.client_rounds.is_empty() {
            let asked: Vec<String> = (e.client_rounds.iter())
                .map(|r| format!("{} ({}) {}", r.key, r.method, r.outcome))
                .collect();
            println!("{:<8} asked the client: {}", "", asked.join(", "));
        }
    }
}

/// `1.234ms`: the stored microseconds, readable.
fn millis(d: Duration) -> String {
    format!("{}.{:03}ms", d.as_millis(), d.subsec_micros() % 1000)
}

fn outcome(s: &str) -> anyhow::Result<Outcome> {
    Outcome::parse(s).ok_or_else(|| {
        anyhow!(
            "expected executed, needs_clarification, approval_required, denied, \
             limit_rejected or error"
        )
    })
}

fn since(s: &str) -> anyhow::Result<SystemTime> {
    if let Ok(t) = humantime::parse_rfc3339_weak(s) {
        return Ok(t);
    }
    let ago = humantime::parse_duration(s)
        .map_err(|_| anyhow!("expected RFC 3339 in UTC (2026-05-01T12:00:00Z) or a duration"))?;
    SystemTime::now()
        .checked_sub(ago)
        .ok_or_else(|| anyhow!("{s} ago is before the clock can count"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_in_milliseconds_to_the_microsecond() {
        assert_eq!(millis(Duration::from_micros(1_234)), "1.234ms");
        assert_eq!(millis(Duration::from_micros(5)), "0.005ms");
        assert_eq!(millis(Duration::from_micros(2_000_001)), "2000.001ms");
    }

    #[test]
    fn since_takes_a_utc_time_or_a_duration_ago() {
        let t = since("2026-05-01T12:00:00Z").expect("RFC 3339");
        assert_eq!(
            humantime::format_rfc3339_seconds(t).to_string(),
            "2026-05-01T12:00:00Z"
        );
        let ago = since("90m").expect("a duration");
        let age = SystemTime::now().duration_since(ago).expect("in the past");
        assert!((Duration::from_secs(5399)..Duration::from_secs(5410)).contains(&age));
        assert!(since("yesterday-ish").is_err());
    }

    #[test]
    fn outcomes_are_parsed_by_their_stored_names() {
        assert_eq!(outcome("limit_rejected").ok(), Some(Outcome::LimitRejected));
        assert!(outcome("Executed").is_err());
    }
}
