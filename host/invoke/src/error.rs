//! Why a call did not produce an answer, as the MCP edge needs to know it.

use toolhost_gates::ConsumeError;
use toolhost_runtime::CallError;
use toolhost_types::StoreUnavailable;

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
    /// No prompt of that name that the caller may use (unknown and
    /// forbidden read the same).
    #[error("no prompt named {name:?}: list the prompts again")]
    PromptNotFound {
        /// The name asked for.
        name: String,
    },
    /// The arguments are not a JSON object.
    #[error("the arguments must be a JSON object")]
    ArgumentsNotAnObject,
    /// The arguments are over one of the host's request limits; no plugin
    /// code ran.
    #[error("{}", toolhost_limits::describe(limit, *value, *max, path))]
    LimitExceeded {
        /// The limit's name, e.g. `max_array_len`.
        limit: &'static str,
        /// What the arguments measure there.
        value: u64,
        /// The limit's value.
        max: u64,
        /// Where, e.g. `$.items[3].name`.
        path: String,
    },
    /// The plugin tool's input schema does not compile, so its calls are
    /// refused (the catalog admitted it as JSON; the validator is stricter).
    #[error("internal error")]
    InputSchema {
        /// The tool.
        tool: String,
        /// The validator's complaint.
        detail: String,
    },
    /// An argument the host owns (`gate_id`, `idempotency_key`, or a host
    /// tool's) is malformed.
    #[error("invalid arguments: {detail}")]
    InvalidArguments {
        /// Which and why.
        detail: String,
    },
    /// The gate a retry names cannot be used; nothing ran.
    #[error("{0}")]
    Gate(#[source] toolhost_gates::ConsumeError),
    /// The idempotency key was used for another request.
    #[error("idempotency key {key:?} was used for another request of this tool")]
    IdempotencyKeyReused {
        /// The key.
        key: String,
    },
    /// The same request with this key is still running.
    #[error("idempotency key {key:?}: the same request is still running; retry shortly")]
    IdempotencyInProgress {
        /// The key.
        key: String,
    },
    /// The gate store failed, so nothing is decided.
    #[error("internal error")]
    Gates(#[source] toolhost_gates::GateStoreError),
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
    /// The answer (or the plan a gate would show, or a question) holds a
    /// credential or a host path: it was withheld, and only the kind is said.
    #[error("{}", secret_exposure(kind, *ran))]
    SecretExposure {
        /// What was found, e.g. `jwt` or `backend_secret`.
        kind: String,
        /// Whether the tool ran (its answer was withheld after) or nothing
        /// ran (a plan or a question was withheld).
        ran: bool,
    },
    /// No artifact by that URI that the caller may read (whether it never
    /// existed, expired, or is another tenant's is not said).
    #[error("resource {uri:?} not found")]
    ArtifactNotFound {
        /// The URI asked for.
        uri: String,
    },
    /// The artifact store failed.
    #[error("internal error")]
    Artifacts(#[source] toolhost_artifacts::ArtifactStoreError),
    /// The audit row could not be written, so the answer is withheld.
    #[error("internal error")]
    Audit(#[source] toolhost_audit::AuditError),
    /// A catalog decision was refused (not pending, self-approval, no
    /// reason, nothing to roll back to).
    #[error("{0}")]
    Catalog(#[source] toolhost_catalog::decide::DecideError),
    /// Another decision changed the catalog while this one was made:
    /// nothing was written.
    #[error(
        "the catalog changed while this decision was made; nothing was written: list the reviews again and decide again"
    )]
    CatalogChanged,
    /// A feature above the call path refused the call: its own code,
    /// words and details (see [`Refusal`]).
    #[error(transparent)]
    Refused(Box<Refusal>),

    /// [`Toolhost::read`](crate::Toolhost::read) of a tool that is not a
    /// host tool changing nothing: a bug of the reader's, not the user's.
    #[error("internal error")]
    NotARead {
        /// The tool's name.
        tool: String,
    },
}

impl InvokeError {
    /// Whether the failure is the host's own (a store failed): the caller
    /// gets an opaque internal error.
    pub fn is_internal(&self) -> bool {
        if self.store_unavailable().is_some() {
            return false;
        }
        matches!(
            self,
            InvokeError::Audit(_)
                | InvokeError::Artifacts(_)
                | InvokeError::InputSchema { .. }
                | InvokeError::Policy(_)
                | InvokeError::Gates(_)
                | InvokeError::Gate(ConsumeError::Store(_))
                | InvokeError::NotARead { .. }
        ) || matches!(self, InvokeError::Refused(r) if r.code == "INTERNAL")
            || matches!(self, InvokeError::Catalog(e) if e.code() == "INTERNAL")
    }

    /// The unreachable store behind this failure, if that is why. The
    /// caller sees `STORE_UNAVAILABLE`, retryable: nothing the call would
    /// have recorded is half there, and a reply never goes out without its
    /// audit row (a call that ran and could not record its row has its
    /// answer withheld).
    pub fn store_unavailable(&self) -> Option<&toolhost_types::StoreUnavailable> {
        use toolhost_catalog::CatalogStoreError;
        use toolhost_catalog::decide::DecideError as CatalogDecide;
        match self {
            InvokeError::Audit(e) => e.unavailable(),
            InvokeError::Artifacts(e) => e.unavailable(),
            InvokeError::Refused(r) => r.unavailable.as_ref(),
            InvokeError::Gates(e) | InvokeError::Gate(ConsumeError::Store(e)) => e.unavailable(),
            InvokeError::Policy(toolhost_policy::PolicyStoreError::Unavailable(u))
            | InvokeError::Catalog(CatalogDecide::Store(CatalogStoreError::Unavailable(u))) => {
                Some(u)
            }
            _ => None,
        }
    }

    /// The stable code a client sees.
    pub fn code(&self) -> &'static str {
        if self.store_unavailable().is_some() {
            return "STORE_UNAVAILABLE";
        }
        match self {
            InvokeError::ToolNotFound { .. } => "TOOL_NOT_FOUND",
            InvokeError::PermissionDenied { .. } => "PERMISSION_DENIED",
            InvokeError::ArgumentsNotAnObject | InvokeError::InvalidArguments { .. } => {
                "INVALID_ARGUMENTS"
            }
            InvokeError::LimitExceeded { .. } => "LIMIT_EXCEEDED",
            InvokeError::Gate(e) => match e {
                ConsumeError::NotFound(_) => "GATE_NOT_FOUND",
                ConsumeError::Pending(_) => "GATE_PENDING",
                ConsumeError::Denied(_) => "GATE_DENIED",
                ConsumeError::Consumed(_) => "GATE_CONSUMED",
                ConsumeError::Expired(_) => "GATE_EXPIRED",
                ConsumeError::Mismatch { .. } => "GATE_MISMATCH",
                ConsumeError::Store(_) => "INTERNAL",
            },
            InvokeError::Refused(r) => r.code,
            InvokeError::IdempotencyKeyReused { .. } => "IDEMPOTENCY_KEY_REUSED",
            InvokeError::IdempotencyInProgress { .. } => "IDEMPOTENCY_IN_PROGRESS",
            InvokeError::Cancelled => "CANCELLED",
            InvokeError::SecretExposure { .. } => "SECRET_EXPOSURE",
            InvokeError::ArtifactNotFound { .. } => "RESOURCE_NOT_FOUND",
            InvokeError::Call(e) => e.code(),
            InvokeError::Catalog(e) => e.code(),
            InvokeError::CatalogChanged => "CATALOG_CHANGED",
            InvokeError::PromptNotFound { .. } => "PROMPT_NOT_FOUND",
            InvokeError::Audit(_)
            | InvokeError::Artifacts(_)
            | InvokeError::InputSchema { .. }
            | InvokeError::Policy(_)
            | InvokeError::Gates(_)
            | InvokeError::DuplicateTool { .. }
            | InvokeError::NotARead { .. } => "INTERNAL",
        }
    }
}

impl InvokeError {
    /// What a caller can act on beyond the code and message, merged into
    /// the error object it sees: a feature's details (the current version
    /// of a conflict, every problem of an invalid proposal), or when the
    /// store was unreachable, when to try again.
    pub fn details(&self) -> Option<serde_json::Value> {
        use serde_json::json;
        match self {
            InvokeError::Refused(r) if r.unavailable.is_none() => r.details.clone(),
            _ if self.store_unavailable().is_some() => {
                Some(json!({"retryable": true, "retry_after_ms": STORE_RETRY_AFTER_MS}))
            }
            _ => None,
        }
    }
}

/// How long a caller is asked to wait before trying a call again when the
/// store was unreachable (`retry_after_ms` beside `STORE_UNAVAILABLE`).
pub const STORE_RETRY_AFTER_MS: u64 = 1000;

/// What a caller reads when the store was unreachable: the driver's words
/// stay in the host's log.
pub const STORE_UNAVAILABLE_MESSAGE: &str =
    "the host's store is unreachable; try the call again shortly";

/// The words of [`InvokeError::SecretExposure`]: a caller must know whether
/// the tool ran, so it does not run a write twice.
fn secret_exposure(kind: &str, ran: bool) -> String {
    let why = "a credential or a host path must not leave the host";
    if ran {
        format!("the tool ran, but its answer was withheld: it contained a {kind} ({why})")
    } else {
        format!(
            "the call was stopped before the tool acted: what it would show contained a {kind} ({why})"
        )
    }
}

/// A refusal of a feature above the call path (people's decisions, and
/// the rooms to come), as the caller sees it: a stable code, the words, and
/// what the caller can act on. Each feature maps its own typed errors into
/// one, so the call path carries them all as [`InvokeError::Refused`]
/// without a variant per feature.
#[derive(Debug)]
pub struct Refusal {
    code: &'static str,
    message: String,
    details: Option<serde_json::Value>,
    unavailable: Option<StoreUnavailable>,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl Refusal {
    /// A refusal with `code` (stable, `UPPER_SNAKE`) and `message` (what
    /// the caller reads).
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: None,
            unavailable: None,
            source: None,
        }
    }

    /// What the caller can act on beyond the words, merged into the error
    /// object it sees.
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The feature's store failed: the caller sees an opaque `INTERNAL`,
    /// or `STORE_UNAVAILABLE` (retryable) when `unavailable` says the store
    /// was unreachable; `source` stays in the host's log.
    pub fn store(
        source: impl std::error::Error + Send + Sync + 'static,
        unavailable: Option<StoreUnavailable>,
    ) -> Self {
        Self {
            code: "INTERNAL",
            message: "internal error".into(),
            details: None,
            unavailable,
            source: Some(Box::new(source)),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Refusal {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<Refusal> for InvokeError {
    fn from(r: Refusal) -> Self {
        InvokeError::Refused(Box::new(r))
    }
}
