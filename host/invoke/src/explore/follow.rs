//! A caller that started a run and asked for progress waits for it on
//! the same request: the run's stored progress is relayed as it changes,
//! from whichever replica runs it, and the call answers when the run ends.

use std::time::Duration;

use tokio_util::sync::CancellationToken;
use toolhost_runs::RunId;
use toolhost_runtime::{ProgressReport, ProgressSink, ToolOutput};
use toolhost_types::Principal;

use super::snapshot;
use crate::{Answer, InvokeError, Toolhost};

/// How often a waiting caller's run is read.
pub(crate) const POLL: Duration = Duration::from_millis(250);

/// Time a waiting caller is given beyond the run's own budget before it
/// is answered with the run as it is (it may still be queued).
const WAIT_GRACE: Duration = Duration::from_secs(30);

impl Toolhost {
    /// Waits for run `id` to end, relaying its progress to `sink`; answers
    /// with the run. The run goes on if the caller stops waiting.
    pub(crate) async fn follow(
        &self,
        who: &Principal,
        id: &RunId,
        sink: &ProgressSink,
        cancel: &CancellationToken,
    ) -> Result<Answer, InvokeError> {
        let mut run = self.visible_run(who, id.as_str()).await?;
        let until = tokio::time::Instant::now() + run.spec.budget.call.timeout + WAIT_GRACE;
        let mut told = None;
        while !run.state.is_terminal() && tokio::time::Instant::now() < until {
            if run.progress.is_some() && run.progress != told {
                if let Some(p) = &run.progress {
                    sink.report(ProgressReport {
                        progress: p.progress,
                        total: p.total,
                        message: p.message.clone(),
                    });
                }
                told = run.progress.clone();
            }
            tokio::select! {
                () = tokio::time::sleep(POLL) => {}
                () = cancel.cancelled() => return Err(InvokeError::Cancelled),
            }
            run = self.visible_run(who, id.as_str()).await?;
        }
        let text = format!("Run {} is {}.", run.id, run.state);
        Ok(Answer::Output(ToolOutput {
            structured: snapshot(&run),
            text: Some(text),
        }))
    }
}
