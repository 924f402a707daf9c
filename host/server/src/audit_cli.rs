//! `toolhost audit …`: the operator's view of the audit trail, against the
//! server's store (the same `--database-url`). Read-only: a running host
//! keeps appending while these run.
//!
//! - `verify` walks the anchors, the legacy chain and every writer chain
//!   and recomputes their hashes: `ok: N rows verified` and exit 0, or
//!   `audit chain broken at row <id> (call <call_id>): <what>` (or `audit
//!   trail broken: <what>` for an anchor or a chain as a whole) on stderr
//!   and exit 1. Rows written before the chain existed (migration 0006)
//!   are counted and said to be unverifiable. It then notes each gate
//!   consumed (over 15 minutes ago) by a call that has no row: a call the
//!   host stopped during (exit status unchanged). `verify --file EXPORT…`
//!   checks exports instead, offline.
//! - `export` writes a segment of the trail as JSON lines
//!   (`toolhost_audit::export`), resumable from an anchor.
//! - `tail` prints the newest rows; `search` the newest rows matching its
//!   filters. Both print them oldest first, like `tail(1)`.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::{Context, anyhow};
use clap::Subcommand;
use toolhost_audit::Outcome;
use toolhost_audit::export::{ExportCheck, ExportLine, ExportSummary};
use toolhost_storage::{AuditQuery, AuditRecord, ExportRequest};

use crate::admin::{StoreArg, open};

/// `toolhost audit …`
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Recompute the hash chain over every row, every writer chain and the
    /// anchors. Exits 1 at the first row that was edited, removed or
    /// reordered, or anchor that was edited. With `--file`, checks exports
    /// instead, offline, without the store.
    Verify {
        /// An export (`toolhost audit export`) to check instead of the
        /// store; given more than once, segments checked in order, each
        /// joined to the one before.
        #[arg(long = "file", value_name = "EXPORT")]
        files: Vec<PathBuf>,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Write the audit trail as JSON lines: every chain with the anchors,
    /// or one tenant's rows (`--tenant`), after an anchor up to the newest.
    /// Its last line names the anchor the next export resumes from.
    Export {
        /// Only this tenant's rows, each with its neighbours' hashes (what
        /// its admin may see), and no anchors.
        #[arg(long)]
        tenant: Option<String>,
        /// Start after this anchor: 0 for the whole trail, or the
        /// `next_from_anchor` of the export before.
        #[arg(long, default_value_t = 0)]
        from_anchor: i64,
        /// Write here instead of standard output (replaced if it exists).
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
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
        AuditCommand::Verify { files, store } if files.is_empty() => verify(&store).await,
        AuditCommand::Verify { files, .. } => Ok(verify_files(&files)),
        AuditCommand::Export {
            tenant,
            from_anchor,
            output,
            store,
        } => {
            let request = ExportRequest {
                tenant,
                from_anchor,
            };
            export(&store, &request, output.as_deref()).await
        }
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

/// Writes the segment `request` names to `output` (standard output if none).
async fn export(
    store: &StoreArg,
    request: &ExportRequest,
    output: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let store = open(store).await?;
    let sink: Box<dyn Write> = match output {
        Some(path) => Box::new(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut sink = BufWriter::new(sink);
    let mut write = |line: &ExportLine| -> std::io::Result<()> {
        serde_json::to_writer(&mut sink, line)?;
        sink.write_all(b"\n")
    };
    store
        .export_audit(request, &mut write)
        .await
        .context("exporting the audit trail")?;
    sink.flush().context("writing the export")?;
    Ok(ExitCode::SUCCESS)
}

/// Checks `files`, exports, in order, each joined to the one before:
/// `ok: …` and exit 0, or the first line that does not fit and exit 1.
fn verify_files(files: &[PathBuf]) -> ExitCode {
    let mut previous: Option<ExportSummary> = None;
    for file in files {
        match verify_file(file, previous.take()) {
            Ok(summary) => {
                println!(
                    "ok: {}: {} rows and {} anchors verified, up to anchor {}",
                    file.display(),
                    summary.rows,
                    summary.anchors,
                    summary.anchor_head.0
                );
                if !summary.anchor_head.1.is_empty() {
                    println!(
                        "anchor head: {} {}",
                        summary.anchor_head.0, summary.anchor_head.1
                    );
                }
                previous = Some(summary);
            }
            Err(problem) => {
                eprintln!("{}: {problem}", file.display());
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// One export checked, after `previous` if any.
fn verify_file(path: &Path, previous: Option<ExportSummary>) -> anyhow::Result<ExportSummary> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut check = match previous {
        Some(previous) => ExportCheck::after(previous),
        None => ExportCheck::new(),
    };
    for line in BufReader::new(file).lines() {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        check.line(&line)?;
    }
    Ok(check.finish()?)
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
