//! When the audit row's transaction loses: the store names the effect that
//! lost (`AuditError::Lost`), and the host tool that decided that effect
//! says what its caller is told ([`HostTool::lost`](crate::HostTool::lost)).
//! The row then records that answer, and nothing else is written.

use std::sync::Arc;

use toolhost_audit::{AuditEvent, Effect, Outcome};

use crate::tool::HostCall;
use crate::{Answer, HostTool, InvokeError, Toolhost};

impl Toolhost {
    /// The answer of a call whose `effect` lost to another writer, with
    /// the row that says so. A plugin tool's effects (its idempotency key,
    /// its artifact, its entity generations) never race: a lost one is the
    /// host's fault.
    pub(crate) async fn lost(
        &self,
        call: HostCall<'_>,
        mut event: AuditEvent,
        tool: Option<Arc<dyn HostTool>>,
        effect: &Effect,
    ) -> Result<Answer, InvokeError> {
        let answer = match &tool {
            Some(tool) => tool.lost(call, effect).await.map(Answer::Output),
            None => Err(InvokeError::Audit(toolhost_audit::AuditError::Failed(
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
