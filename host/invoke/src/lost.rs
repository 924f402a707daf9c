//! When the audit row's transaction loses: the store names the effect that
//! lost (`AuditError::Lost`), and the feature that decided that effect says
//! what its caller is told. The row then records that answer, and nothing
//! else is written.

use toolhost_audit::{AuditEvent, Effect, Outcome};
use toolhost_runs::{RunEffect, RunId};
use toolhost_types::Principal;

use crate::explore::RunError;
use crate::{Answer, InvokeError, Toolhost};

impl Toolhost {
    /// The answer of a call whose `effect` lost to another writer, with
    /// the row that says so.
    pub(crate) async fn lost(
        &self,
        who: &Principal,
        mut event: AuditEvent,
        effect: &Effect,
    ) -> Result<Answer, InvokeError> {
        let answer = match effect {
            // The key went to another request (or this one: its answer),
            // or the session moved past the version the request named.
            Effect::Workspace(w) => self.workspace_lost(who, w).await.map(Answer::Output),
            Effect::Run(r) => Err(run_lost(r)),
            // Another decision changed the catalog first.
            Effect::Catalog(_) => Err(InvokeError::CatalogChanged),
            // An idempotency key, an artifact or an entity generation
            // never races: a lost one is the host's fault.
            _ => Err(InvokeError::Audit(toolhost_audit::AuditError::Failed(
                "an effect that never races lost".into(),
            ))),
        };
        match &answer {
            Ok(_) => event.error_code = None,
            Err(e) => {
                event.outcome = Outcome::Error;
                event.error_code = Some(e.code().into());
            }
        }
        self.audit
            .record(&event)
            .await
            .map_err(InvokeError::Audit)
            .and(answer)
    }
}

/// What a caller is told when the run change its call decided lost: the
/// queue filled between the check and the write, or the run moved on.
fn run_lost(effect: &RunEffect) -> InvokeError {
    match effect {
        RunEffect::Queue(new) => RunError::QueueFull {
            scope: "this principal or tenant",
            limit: new.limits.per_principal,
        },
        RunEffect::Finish(f) => RunError::Changed {
            id: f.id.to_string(),
        },
        RunEffect::AttemptLost { id, .. } => RunError::Changed { id: id.to_string() },
    }
    .into()
}

/// The run a call's effects queue, if any.
pub(crate) fn queued_run(effects: &[Effect]) -> Option<RunId> {
    effects.iter().find_map(|e| match e {
        Effect::Run(RunEffect::Queue(new)) => Some(new.id.clone()),
        _ => None,
    })
}

/// The receipt of a run a call's effects settle (a queued run cancelled):
/// the call's row links it.
pub(crate) fn settled_receipt(effects: &[Effect]) -> Option<String> {
    effects.iter().find_map(|e| match e {
        Effect::Run(RunEffect::Finish(f)) => Some(f.receipt_sha256.clone()),
        _ => None,
    })
}
