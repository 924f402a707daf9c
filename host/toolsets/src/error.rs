//! Why a change to a tenant's toolsets was refused: nothing changed.

use toolhost_invoke::{InvokeError, Refusal};
use toolhost_policy::MAX_TOOLSETS;

/// A refused change to a tenant's toolsets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolsetError {
    /// The caller's tenant defines no toolset of that name.
    #[error("no toolset {0:?} in your tenant")]
    NotFound(String),
    /// Another change to the tenant's toolsets was written first.
    #[error("another change to your tenant's toolsets came first; list them and try again")]
    Changed,
    /// The tenant defines as many toolsets as it may.
    #[error("a tenant defines at most {MAX_TOOLSETS} toolsets; delete one first")]
    TooMany,
}

impl ToolsetError {
    /// The stable code a client sees.
    pub fn code(&self) -> &'static str {
        match self {
            ToolsetError::NotFound(_) => "TOOLSET_NOT_FOUND",
            ToolsetError::Changed => "TOOLSET_CHANGED",
            ToolsetError::TooMany => "LIMIT_EXCEEDED",
        }
    }
}

impl From<ToolsetError> for InvokeError {
    fn from(e: ToolsetError) -> Self {
        Refusal::new(e.code(), e.to_string()).into()
    }
}
