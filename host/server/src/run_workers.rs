//! This process's exploration run workers, and on PostgreSQL the listener
//! that wakes them when any replica queues a run and signals the run a
//! cancel stored on any replica is for.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
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

/// How long a failed listener waits before it is opened again.
const RELISTEN: Duration = Duration::from_secs(1);

/// Starts this process's run workers (none when `run_workers` is 0), and
/// on PostgreSQL a listener that wakes them when any replica queues a run
/// and signals the run of any cancel stored. `stopping` (the graceful
/// stop) ends the workers' claims and hands over what they hold within the
/// shutdown grace; `stopped` (the host's end) ends the listener, which
/// hears cancels until then. The handle ends when every run held is
/// settled or handed over.
pub(crate) fn spawn_workers(
    config: &Config,
    host: &Arc<Toolhost>,
    store: &Arc<Store>,
    features: &Features,
    id: String,
    engine_sha256: String,
    (stopping, stopped): (CancellationToken, CancellationToken),
) -> Option<JoinHandle<()>> {
    if config.run_workers == 0 {
        return None;
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
            grace: config.shutdown_grace,
        },
    );
    let workers = tokio::spawn(worker.run(stopping));
    let (store, runs) = (store.clone(), features.runs.clone());
    let wake = runs.config().wake.clone();
    tokio::spawn(async move {
        // A listener that fails is opened again (the store restarted, say):
        // meanwhile the workers poll and beat.
        loop {
            let mut listener = match store.listen_runs().await {
                Ok(Some(l)) => l,
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!(error = %e, "not listening for queued runs and cancels; polling, and trying again");
                    tokio::select! {
                        () = tokio::time::sleep(RELISTEN) => continue,
                        () = stopped.cancelled() => return,
                    }
                }
            };
            loop {
                tokio::select! {
                    heard = listener.next() => match heard {
                        Ok(RunNotice::CancelRequested(id)) => runs.cancel_heard(&id),
                        Ok(_) => wake.notify_waiters(),
                        Err(e) => {
                            tracing::warn!(error = %e, "run notifications failed; listening again");
                            break;
                        }
                    },
                    () = stopped.cancelled() => return,
                }
            }
            // Whatever was sent meanwhile is lost: look at the queue now.
            wake.notify_waiters();
        }
    });
    Some(workers)
}
