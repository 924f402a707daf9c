//! Exploration runs outside MCP: the operator's `toolhost runs …` commands
//! on the store (the workers are `run_workers`'s) (`list`, `show`, `cancel`, `receipt`: it prints a run's receipt
//! and checks its digest).

use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use toolhost_runs::{Receipt, RunId, RunStore};
use toolhost_storage::Store;

use crate::admin::{ShowArgs, StoreArg, open};

/// `toolhost runs …`
#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// A tenant's newest runs: id, state, tool, principal, attempt.
    List {
        /// The tenant.
        #[arg(long, default_value = "demo")]
        tenant: String,
        /// How many.
        #[arg(long, default_value_t = 20)]
        limit: u32,
        #[command(flatten)]
        store: StoreArg,
    },
    /// One run, as JSON.
    Show(ShowArgs),
    /// Asks a run to stop: a running run stops at its guest's next epoch
    /// tick once its worker hears the cancel (at once on PostgreSQL, told
    /// by NOTIFY; at its next heartbeat, within a second, on SQLite); a
    /// queued one is settled `cancelled` by the next worker that picks it
    /// up.
    Cancel {
        /// The run's id.
        id: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Prints a finished run's receipt and checks it against the digest
    /// the run recorded (exit 1 if it does not match).
    Receipt {
        /// The run's id.
        id: String,
        #[command(flatten)]
        store: StoreArg,
    },
}

/// Runs a `runs` command.
pub async fn runs(command: RunsCommand) -> anyhow::Result<ExitCode> {
    match command {
        RunsCommand::List {
            tenant,
            limit,
            store,
        } => {
            let store = open(&store).await?;
            for r in store.runs(&tenant, None, limit).await? {
                println!(
                    "{} {} {} {} attempt {}",
                    r.id, r.state, r.spec.tool, r.principal, r.attempt
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        RunsCommand::Show(ShowArgs { id, store }) => {
            let (store, id) = (open(&store).await?, parse(&id)?);
            let run = found(&store, &id).await?;
            let shown = serde_json::json!({
                "run_id": run.id.as_str(), "tenant": run.tenant, "principal": run.principal,
                "tool": run.spec.tool, "state": run.state.as_str(), "attempt": run.attempt,
                "created_at_ms": run.created_at_ms, "started_at_ms": run.started_at_ms,
                "finished_at_ms": run.finished_at_ms, "progress": run.progress,
                "outcome": run.outcome, "receipt_sha256": run.receipt_sha256,
            });
            println!("{}", serde_json::to_string_pretty(&shown)?);
            Ok(ExitCode::SUCCESS)
        }
        RunsCommand::Cancel { id, store } => {
            let (store, id) = (open(&store).await?, parse(&id)?);
            let run = found(&store, &id).await?;
            let now = toolhost_invoke::millis(std::time::SystemTime::now());
            let run = store
                .request_cancel(&run.tenant, &id, now)
                .await?
                .context("the run vanished")?;
            println!("{} {}", run.id, run.state);
            Ok(ExitCode::SUCCESS)
        }
        RunsCommand::Receipt { id, store } => {
            let (store, id) = (open(&store).await?, parse(&id)?);
            let run = found(&store, &id).await?;
            let (Some(text), Some(sha)) = (&run.receipt, &run.receipt_sha256) else {
                eprintln!("run {id} is {}: it has no receipt yet", run.state);
                return Ok(ExitCode::FAILURE);
            };
            match Receipt::verify(text, sha) {
                Ok(receipt) => {
                    let linked = store.audit_rows_with_receipt(sha).await?;
                    println!("{}", serde_json::to_string_pretty(&receipt)?);
                    println!(
                        "ok: receipt sha256 {sha} verified; linked from {linked} audit row(s)"
                    );
                    Ok(if linked == 1 {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::FAILURE
                    })
                }
                Err(e) => {
                    eprintln!("receipt of run {id} does not verify: {e}");
                    Ok(ExitCode::FAILURE)
                }
            }
        }
    }
}

fn parse(id: &str) -> anyhow::Result<RunId> {
    RunId::parse(id).with_context(|| format!("{id:?} is not a run id (run_ and 32 hex digits)"))
}

async fn found(store: &Store, id: &RunId) -> anyhow::Result<toolhost_runs::Run> {
    store
        .run_any(id)
        .await?
        .with_context(|| format!("no run {id}"))
}
