//! Why a call did not produce an answer, as the MCP edge needs to know it.

use toolhost_runtime::CallError;

/// A failed call. `code()` is the stable code a client sees.
#[derive(Debug, thiserror::Error)]
pub enum InvokeError {
    /// No tool of that name in the catalog (a stale client catalog, usually).
    #[error("no tool named {tool:?}: list the tools again to refresh your catalog")]
    ToolNotFound {
        /// The name the client asked for.
        tool: String,
    },
    /// The caller may not call this tool (its client's catalog is stale, or
    /// a role was revoked); no plugin code ran.
    #[error("you may not call {tool:?}: list the tools again to see what you may use")]
    PermissionDenied {
        /// The tool's name.
        tool: String,
    },
    /// The arguments are not a JSON object.
    #[error("the arguments must be a JSON object")]
    ArgumentsNotAnObject,
    /// The client cancelled the call; the guest was interrupted.
    #[error("the call was cancelled")]
    Cancelled,
    /// The sandbox or the plugin ended the call.
    #[error(transparent)]
    Call(#[from] CallError),
    /// A host tool's name is already taken (at wiring time, not per call).
    #[error("tool {tool:?} is provided twice")]
    DuplicateTool {
        /// The name.
        tool: String,
    },
    /// The principal's roles could not be read, so nothing is decided.
    #[error("internal error")]
    Policy(#[source] toolhost_policy::PolicyStoreError),
    /// The audit row could not be written, so the answer is withheld.
    #[error("internal error")]
    Audit(#[source] toolhost_audit::AuditError),
}

impl InvokeError {
    /// The stable code a client sees.
    pub fn code(&self) -> &'static str {
        match self {
            InvokeError::ToolNotFound { .. } => "TOOL_NOT_FOUND",
            InvokeError::PermissionDenied { .. } => "PERMISSION_DENIED",
            InvokeError::ArgumentsNotAnObject => "INVALID_ARGUMENTS",
            InvokeError::Cancelled => "CANCELLED",
            InvokeError::Call(e) => e.code(),
            InvokeError::Audit(_) | InvokeError::Policy(_) | InvokeError::DuplicateTool { .. } => {
                "INTERNAL"
            }
        }
    }
}
