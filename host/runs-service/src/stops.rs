//! [`RunStops`]: how a cancel reaches the worker that runs the run on this
//! replica at once, instead of at its next heartbeat. A worker holds a
//! [`StopSignal`] for each run it executes; a cancel asked here (or heard
//! from another replica through the store) signals it, and the worker
//! reads the run's row straight away and, if the cancel is stored there,
//! stops its guest at the next epoch tick.
//!
//! A signal is a hint to look, never the cancel itself: the stored
//! request decides, so a stray signal costs one heartbeat and nothing else.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use toolhost_runs::RunId;

/// The runs this replica's workers execute now, each with its signal.
#[derive(Default)]
pub(crate) struct RunStops {
    held: Mutex<HashMap<RunId, Arc<Notify>>>,
}

impl RunStops {
    /// The signal of run `id`, held until the returned guard drops.
    pub(crate) fn hold(self: &Arc<Self>, id: &RunId) -> StopSignal {
        let notify = Arc::new(Notify::new());
        self.lock().insert(id.clone(), notify.clone());
        StopSignal {
            stops: self.clone(),
            id: id.clone(),
            notify,
        }
    }

    /// Tells the worker holding run `id`, if it runs here, to look for a
    /// cancel now. A signal sent before the worker waits is kept for it.
    pub(crate) fn signal(&self, id: &RunId) {
        if let Some(notify) = self.lock().get(id) {
            notify.notify_one();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RunId, Arc<Notify>>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A worker's hold on one run's signal; dropping it lets the signal go.
pub(crate) struct StopSignal {
    stops: Arc<RunStops>,
    id: RunId,
    notify: Arc<Notify>,
}

impl StopSignal {
    /// Waits for the next signal (or returns at once for one sent since
    /// the last wait).
    pub(crate) async fn signalled(&self) {
        self.notify.notified().await;
    }
}

impl Drop for StopSignal {
    fn drop(&mut self) {
        let mut held = self.stops.lock();
        // A later attempt of the same run on this replica holds its own.
        if held
            .get(&self.id)
            .is_some_and(|n| Arc::ptr_eq(n, &self.notify))
        {
            held.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn id(n: u8) -> RunId {
        RunId::parse(&format!("run_{}", format!("{n:02x}").repeat(16))).expect("a run id")
    }

    #[tokio::test]
    async fn a_signal_reaches_the_run_held_even_before_its_worker_waits() {
        let stops = Arc::new(RunStops::default());
        let held = stops.hold(&id(1));
        stops.signal(&id(1));
        let heard = tokio::time::timeout(Duration::from_secs(5), held.signalled()).await;
        assert!(heard.is_ok(), "the signal sent first is kept");
    }

    #[tokio::test]
    async fn another_run_s_signal_is_not_heard_and_a_dropped_hold_is_forgotten() {
        let stops = Arc::new(RunStops::default());
        let held = stops.hold(&id(1));
        stops.signal(&id(2));
        let heard = tokio::time::timeout(Duration::from_millis(50), held.signalled()).await;
        assert!(heard.is_err(), "run 2's signal is not run 1's");
        let again = stops.hold(&id(1));
        drop(held);
        assert_eq!(stops.lock().len(), 1, "the newer hold stays");
        drop(again);
        assert!(stops.lock().is_empty());
    }
}
