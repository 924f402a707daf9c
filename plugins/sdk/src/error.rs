//! The errors a tool reports, and how they cross the WIT boundary.

use std::fmt;

use crate::bindings::toolhost::plugin::types::ToolError as WitToolError;

/// A failure the tool reports to its caller. The host relays it as a tool
/// error (MCP `isError`) with a stable code per variant; the text is shown to
/// the caller, so it must not leak secrets or another tenant's data.
///
/// A plugin that must stop (a broken invariant) panics instead: with
/// `panic = "abort"` that traps, and the host discards the instance.
/// (`unknown-tool` is not here: the SDK answers it when the host asks for a
/// tool the plugin does not list.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    /// The arguments do not fit the tool's input schema or meaning. The SDK
    /// reports JSON that does not deserialize into the arguments type this
    /// way, with serde's message.
    InvalidArguments(String),
    /// A named thing does not exist (or is not the caller's tenant's).
    NotFound(String),
    /// The tool ran and failed.
    Failed(String),
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::InvalidArguments(m) => write!(f, "invalid arguments: {m}"),
            ToolError::NotFound(m) => write!(f, "not found: {m}"),
            ToolError::Failed(m) => write!(f, "failed: {m}"),
        }
    }
}

impl std::error::Error for ToolError {}

impl From<ToolError> for WitToolError {
    fn from(e: ToolError) -> Self {
        match e {
            ToolError::InvalidArguments(m) => WitToolError::InvalidArguments(m),
            ToolError::NotFound(m) => WitToolError::NotFound(m),
            ToolError::Failed(m) => WitToolError::Failed(m),
        }
    }
}
