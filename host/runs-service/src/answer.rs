//! A client's answers to what a run waits on (`tasks/update`): taken for
//! the requests pending only, bounded, stored by compare-and-swap, and the
//! run queued again once nothing is pending.

use std::collections::BTreeMap;

use serde_json::Value;
use toolhost_invoke::{Host, InvokeError};
use toolhost_runs::RunState;
use toolhost_types::Principal;

use crate::{RunError, Runs};

/// How often an answer is tried again when another one was stored first.
const TRIES: usize = 4;

/// What became of a client's answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answered {
    /// None of them answered a pending request (unknown keys, answered
    /// already, or the run waits on nothing): nothing changed.
    Ignored,
    /// Some were taken; the run still waits on others.
    Taken,
    /// Every request is answered: the run is queued again.
    Resumed,
}

impl Runs {
    /// Takes `responses` (answers by the requests' keys) from `who` for the
    /// run `id`. Only the one who started the run answers it: anyone else
    /// is told it does not exist. Keys not pending are ignored, as the
    /// Tasks extension asks; an answer too large, or one too many, takes
    /// nothing and says why.
    pub async fn answer_input(
        &self,
        host: Host<'_>,
        who: &Principal,
        id: &str,
        responses: &BTreeMap<String, Value>,
    ) -> Result<Answered, InvokeError> {
        for _ in 0..TRIES {
            let run = self.visible_run(host, who, id).await?;
            if !run.owned_by(&who.tenant, &who.subject) {
                return Err(RunError::NotFound { id: id.to_owned() }.into());
            }
            let Some(asked) = run
                .input
                .clone()
                .filter(|_| run.state == RunState::InputRequired)
            else {
                return Ok(Answered::Ignored);
            };
            let mut answered = asked.clone();
            let taken = answered
                .answer(responses)
                .map_err(|e| toolhost_invoke::invalid(e.to_string()))?;
            if taken == 0 {
                return Ok(Answered::Ignored);
            }
            let stored = (self.config.store)
                .answer_input(&run.tenant, &run.id, &asked, &answered, host.now_ms())
                .await
                .map_err(RunError::Store)?;
            if !stored {
                continue;
            }
            if !answered.is_answered() {
                return Ok(Answered::Taken);
            }
            // The workers here look at once (PostgreSQL also tells every
            // replica's, through the queue's trigger).
            self.config.wake.notify_waiters();
            return Ok(Answered::Resumed);
        }
        Err(RunError::Changed { id: id.to_owned() }.into())
    }
}
