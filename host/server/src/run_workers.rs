//! This process's exploration run workers, and on PostgreSQL the listener
//! that wakes them when any replica queues a run and signals the run a
//! cancel stored on any replica is for.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use toolhost_invoke::Toolhost;
use toolhost_runs_service::{RunWorker, Sessions, WorkerConfig};
use toolhost_storage::{RunNotice, Store};

use crate::compose::Features;
use crate::config::Config;

/// How often an idle worker reads the queue: on SQLite (one host) a run
/// queued here wakes it at once; this covers runs queued by the CLI or
/// another process. With PostgreSQL NOTIFY, a lost notification.
const POLL: Duration = Duration::from_secs(2);

/// Starts this process's run workers (none when `run_workers` is 0), and
/// on PostgreSQL a listener that wakes them when any replica queues a run
/// and signals the run of any cancel stored.
pub(crate) fn spawn_workers(
    config: &Config,
    host: &Arc<Toolhost>,
    store: &Arc<Store>,
    features: &Features,
    id: String,
    engine_sha256: String,
    stop: CancellationToken,
) {
    if config.run_workers == 0 {
        return;
    }
    let sessions: Arc<dyn Sessions> = features.authoring.clone();
    let worker = RunWorker::new(
        host.clone(),
        features.runs.clone(),
        store.clone(),
        Some(sessions),
        WorkerConfig {
            id,
            slots: config.run_workers,
            lease: config.run_lease,
            poll: POLL,
            engine_sha256,
        },
    );
    tokio::spawn(worker.run(stop.clone()));
    let (store, runs) = (store.clone(), features.runs.clone());
    let wake = runs.config().wake.clone();
    tokio::spawn(async move {
        let mut listener = match store.listen_runs().await {
            Ok(Some(l)) => l,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(error = %e, "not listening for queued runs; polling");
                return;
            }
        };
        loop {
            tokio::select! {
                heard = listener.next() => match heard {
                    Ok(RunNotice::CancelRequested(id)) => runs.cancel_heard(&id),
                    Ok(_) => wake.notify_waiters(),
                    Err(e) => {
                        tracing::warn!(error = %e, "run notifications failed; polling");
                        return;
                    }
                },
                () = stop.cancelled() => return,
            }
        }
    });
}
