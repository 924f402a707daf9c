//! A caller that started a run and asked for progress waits for it on
//! the same request: the run's stored progress is relayed as it changes,
//! from whichever replica runs it, and the call answers when the run ends.
//!
//! Before it waits, the call names its run in a first progress message,
//! so a client whose request is lost with its replica (the stream cannot
//! be resumed elsewhere) follows the run with `get_exploration_result` on
//! any replica. Progress only ever increases, as MCP requires: a run taken
//! over starts its progress again, and nothing is relayed until it passes
//! what the caller was told.

use std::time::Duration;

use tokio_util::sync::CancellationToken;
use toolhost_runs::{Progress, Run, RunId};
use toolhost_runtime::{ProgressReport, ProgressSink, ToolOutput};
use toolhost_types::Principal;

use toolhost_invoke::{Host, InvokeError};

use crate::Runs;

/// How often a waiting caller's run is read.
const POLL: Duration = Duration::from_millis(250);

/// Time a waiting caller is given beyond the run's own budget before it
/// is answered with the run as it is (it may still be queued).
const WAIT_GRACE: Duration = Duration::from_secs(30);

/// The first progress message of a call that waits for run `id`.
fn started_message(id: &RunId) -> String {
    format!(
        "{id} started; this call answers when it ends. Had this answer been lost, follow it with \
         get_exploration_result {{\"run_id\": \"{id}\"}}"
    )
}

impl Runs {
    /// Waits for run `id` to end, relaying its progress to `sink`; answers
    /// with the run. The run goes on if the caller stops waiting.
    pub(crate) async fn follow(
        &self,
        host: Host<'_>,
        who: &Principal,
        id: &RunId,
        sink: &ProgressSink,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, InvokeError> {
        let first = self.visible_run(host, who, id.as_str()).await?;
        let until = tokio::time::Instant::now() + first.spec.budget.call.timeout + WAIT_GRACE;
        sink.report(ProgressReport {
            progress: 0.0,
            total: None,
            message: Some(started_message(id)),
        });
        let mut told = Progress {
            progress: 0.0,
            total: None,
            message: None,
        };
        let relay = |run: &Run| {
            if let Some(p) = &run.progress
                && p.progress > told.progress
            {
                sink.report(ProgressReport {
                    progress: p.progress,
                    total: p.total,
                    message: p.message.clone(),
                });
                told = p.clone();
            }
        };
        let run = (self.await_run(host, who, first, until, relay, cancel)).await?;
        Ok(crate::run_output(&run))
    }

    /// Reads `run` again every [`POLL`] until it is over or `until` passes,
    /// showing each reading to `seen`; the last reading. A `cancel` stops
    /// the wait (not the run).
    pub(crate) async fn await_run(
        &self,
        host: Host<'_>,
        who: &Principal,
        mut run: Run,
        until: tokio::time::Instant,
        mut seen: impl FnMut(&Run),
        cancel: &CancellationToken,
    ) -> Result<Run, InvokeError> {
        while !run.state.is_terminal() && tokio::time::Instant::now() < until {
            seen(&run);
            tokio::select! {
                () = tokio::time::sleep(POLL) => {}
                () = cancel.cancelled() => return Err(InvokeError::Cancelled),
            }
            run = self.visible_run(host, who, run.id.as_str()).await?;
        }
        Ok(run)
    }
}
