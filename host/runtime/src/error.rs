//! Typed failures of loading a plugin and of calling it.
//!
//! `wasmtime::Error` never leaves this room: every trap, breached cap and
//! plugin-reported error becomes a [`CallError`] with a stable code.

use std::time::Duration;

use toolhost_limits::ByteSize;

/// Why a call did not produce an answer. `code()` is stable and part of the
/// host's wire contract; messages are safe to show the caller (no host
/// paths, no secrets, no wasm internals beyond the trap kind).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The plugin does not export this tool.
    #[error("the plugin has no tool {0:?}")]
    UnknownTool(String),
    /// The plugin refused the arguments.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The plugin found no such thing.
    #[error("not found: {0}")]
    NotFound(String),
    /// The tool ran and reported a failure.
    #[error("the tool failed: {0}")]
    ToolFailed(String),
    /// The call ran past its time budget (guest execution or the call as a whole).
    #[error("the call ran past its time limit of {limit:?}")]
    Timeout {
        /// The budget in force.
        limit: Duration,
    },
    /// The guest tried to grow its memory past the budget and died of it.
    #[error("the plugin exceeded its memory limit of {}", limit.display().iec())]
    MemoryLimit {
        /// The budget in force.
        limit: ByteSize,
    },
    /// Instances, tables or table elements beyond the budget.
    #[error("the plugin exceeded a resource limit: {detail}")]
    ResourceLimit {
        /// Which limit.
        detail: String,
    },
    /// The guest's call stack overflowed (e.g. unbounded recursion).
    #[error("the plugin overflowed its stack")]
    StackOverflow,
    /// The answer was larger than the output budget.
    #[error("the plugin's answer of {size} bytes exceeds the output limit of {}", limit.display().iec())]
    OutputLimit {
        /// The budget in force.
        limit: ByteSize,
        /// The answer's size.
        size: u64,
    },
    /// The guest logged more than its log budget.
    #[error("the plugin exceeded its log limit of {}", limit.display().iec())]
    LogLimit {
        /// The budget in force.
        limit: ByteSize,
    },
    /// The guest made more host calls than its budget.
    #[error("the plugin exceeded its host-call limit of {limit}")]
    HostCallLimit {
        /// The budget in force.
        limit: u32,
    },
    /// The guest trapped (a panic, `unreachable`, a fault).
    #[error("the plugin trapped: {detail}")]
    Trapped {
        /// The trap kind, e.g. "wasm `unreachable` instruction executed".
        detail: String,
    },
    /// The answer broke the contract (e.g. `structured` is not JSON).
    #[error("the plugin's answer is invalid: {detail}")]
    InvalidOutput {
        /// What was wrong.
        detail: String,
    },
    /// A stateless request asked for what its client did not declare
    /// (`sampling`): MCP's -32021, Missing Required Client Capability.
    #[error("the client did not declare the {capability} capability this call needs")]
    MissingClientCapability {
        /// The capability, e.g. `sampling`.
        capability: String,
    },
    /// Not a failure: the call stopped for the client's input, these
    /// requests (key → `{"method", "params"}`). [`Runtime::call`](crate::Runtime::call)
    /// answers it as [`Reply::NeedsInput`](crate::Reply::NeedsInput).
    #[error("the call needs the client's input")]
    InputRequired {
        /// The requests, by the plugin's key.
        requests: std::collections::BTreeMap<String, serde_json::Value>,
    },
    /// The plugin ended the call with a JSON-RPC error of its own (the
    /// `protocol.raise` import): the MCP edge answers the request with
    /// this error instead of a tool result. Not a breach: it is the
    /// plugin's answer. `code` is the plugin's own or -32602, never one of
    /// the host's (-32768..=-31000: raising one is a
    /// [`CallError::ContractViolation`]); `message` is at most 1 KiB, its
    /// secrets redacted.
    #[error("the plugin raised JSON-RPC error {code}: {message}")]
    Protocol {
        /// The JSON-RPC error code.
        code: i32,
        /// The error's message.
        message: String,
    },
    /// Not a failure of the plugin: it sent a request to a backend that
    /// acts with each person's own connection, and the caller has not
    /// connected it (or the connection was revoked or could not be
    /// refreshed). The call stopped there; the MCP edge asks the person to
    /// connect at `url`, and the call can run again once they have.
    #[error("backend {backend:?} needs the person's connection: connect at {url}")]
    ConnectionRequired {
        /// The backend.
        backend: String,
        /// The host's page where the person connects it.
        url: String,
    },
    /// The plugin used a capability outside what its manifest declares
    /// (a resolver kind not in `resolves`, …): a bug in the plugin.
    #[error("the plugin broke its contract: {detail}")]
    ContractViolation {
        /// What it did.
        detail: String,
    },
    /// A host-side failure; details are logged, not returned.
    #[error("internal error")]
    Internal,
}

impl CallError {
    /// The stable code a client sees.
    pub fn code(&self) -> &'static str {
        match self {
            CallError::UnknownTool(_) => "UNKNOWN_TOOL",
            CallError::InvalidArguments(_) => "INVALID_ARGUMENTS",
            CallError::NotFound(_) => "NOT_FOUND",
            CallError::ToolFailed(_) => "TOOL_FAILED",
            CallError::Timeout { .. } => "TIMEOUT",
            CallError::MemoryLimit { .. } => "MEMORY_LIMIT",
            CallError::ResourceLimit { .. } => "RESOURCE_LIMIT",
            CallError::StackOverflow => "STACK_OVERFLOW",
            CallError::OutputLimit { .. } => "OUTPUT_LIMIT",
            CallError::LogLimit { .. } => "LOG_LIMIT",
            CallError::HostCallLimit { .. } => "HOST_CALL_LIMIT",
            CallError::Trapped { .. } => "TRAPPED",
            CallError::InvalidOutput { .. } => "INVALID_OUTPUT",
            CallError::Protocol { .. } => "PROTOCOL_ERROR",
            CallError::ConnectionRequired { .. } => "CONNECTION_REQUIRED",
            CallError::ContractViolation { .. } => "CONTRACT_VIOLATION",
            CallError::MissingClientCapability { .. } => "MISSING_CLIENT_CAPABILITY",
            CallError::InputRequired { .. } => "INPUT_REQUIRED",
            CallError::Internal => "INTERNAL",
        }
    }

    /// Whether the sandbox ended the call (a trap or a breached cap), as
    /// opposed to the plugin answering with an error of its own.
    pub fn is_breach(&self) -> bool {
        !matches!(
            self,
            CallError::UnknownTool(_)
                | CallError::InvalidArguments(_)
                | CallError::NotFound(_)
                | CallError::ToolFailed(_)
                | CallError::Protocol { .. }
                | CallError::ConnectionRequired { .. }
        )
    }
}

/// Why a plugin could not be loaded. Messages name the offending value.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Not a valid component, or one this engine cannot compile.
    #[error("plugin {plugin}: not a loadable component: {detail}")]
    Compile {
        /// The plugin.
        plugin: String,
        /// wasmtime's reason.
        detail: String,
    },
    /// The component imports something the host does not grant.
    #[error("plugin {plugin}: imports what the host does not grant: {detail}")]
    Imports {
        /// The plugin.
        plugin: String,
        /// wasmtime's reason, naming the import.
        detail: String,
    },
    /// The component does not export the `toolhost:plugin/tool` interface.
    #[error("plugin {plugin}: does not export the plugin contract: {detail}")]
    Exports {
        /// The plugin.
        plugin: String,
        /// wasmtime's reason.
        detail: String,
    },
    /// `describe` failed or returned a tool spec the host refuses.
    #[error("plugin {plugin}: describe: {detail}")]
    Describe {
        /// The plugin.
        plugin: String,
        /// What was refused, naming the tool and value.
        detail: String,
    },
    /// Its tenant already holds its share of the compile queue: retry
    /// once one of its compiles has finished.
    #[error(
        "plugin {plugin}: this tenant already has {share} components compiling or waiting to; retry when one is done"
    )]
    Busy {
        /// The plugin.
        plugin: String,
        /// The tenant's share of the queue.
        share: usize,
    },
    /// The precompiled cache directory could not be prepared.
    #[error("runtime: cache directory: {0}")]
    Cache(#[from] std::io::Error),
}

/// A cap breached inside a host import or the epoch callback: raised as the
/// trap that ends the instance, then recognised by `classify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Breach {
    #[error("time limit reached")]
    Timeout,
    #[error("log limit of {limit} reached")]
    Log { limit: ByteSize },
    #[error("host-call limit of {limit} reached")]
    HostCalls { limit: u32 },
}

/// A plugin stepped outside its declared capabilities inside a host import:
/// raised as the trap that ends the instance, then recognised by `classify`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ContractBreach(pub(crate) String);
