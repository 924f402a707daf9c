//! The host's background tasks, in one set that stops in one place.

use std::future::Future;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The background tasks of one host: each feature and edge adds its own
/// as it starts, and [`stop`](Self::stop) ends them all.
#[derive(Default)]
pub(crate) struct Background {
    tasks: Vec<JoinHandle<()>>,
    stopping: CancellationToken,
}

impl Background {
    /// Runs `task` until the host stops (it is aborted then).
    pub(crate) fn spawn(&mut self, task: impl Future<Output = ()> + Send + 'static) {
        self.tasks.push(tokio::spawn(task));
    }

    /// Cancelled when the host stops, for the tasks that end on their own
    /// terms (a run worker ends its attempt's step first).
    pub(crate) fn stopping(&self) -> CancellationToken {
        self.stopping.clone()
    }

    /// Stops every task.
    pub(crate) fn stop(self) {
        self.stopping.cancel();
        for task in self.tasks {
            task.abort();
        }
    }
}
