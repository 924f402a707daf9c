//! The tools the host serves: plugin tools from the catalog, and tools the
//! host provides itself, and the one seam a host tool runs through
//! ([`HostTool::call`] with a [`HostCall`]): the features above the call
//! path (people's decisions, runs, authoring) each install theirs.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolhost_audit::Effect;
use toolhost_catalog::ToolRef;
use toolhost_runtime::{ProgressSink, ToolOutput, ToolSpec};
use toolhost_secrets::Scanner;
use toolhost_types::Principal;

use crate::InvokeError;

/// What a host tool answers: its output, and the state changes to write
/// in the transaction of the call's audit row (so the row and the change
/// are one), empty for a tool that changes nothing.
pub type HostToolFuture<'a> =
    Pin<Box<dyn Future<Output = Result<(ToolOutput, Vec<Effect>), InvokeError>> + Send + 'a>>;

/// One call of a host tool: who calls with what, where progress goes, when
/// to stop, and the host it runs on.
pub struct HostCall<'a> {
    /// The caller, admitted by the call path (its permission and the
    /// arguments' bounds and schema are checked).
    pub who: &'a Principal,
    /// The arguments, a JSON object.
    pub args: &'a Value,
    /// Where progress reports go, if the caller asked for them.
    pub progress: Option<&'a ProgressSink>,
    /// Cancelled when the caller gives up; the call path also stops
    /// waiting then.
    pub cancel: &'a CancellationToken,
    /// The host the tool runs on.
    pub host: Host<'a>,
}

/// The narrow public handle on the host that a host tool gets: the catalog
/// served now, the caller's grants, the call path's argument checks, the
/// sandbox runtime, the clock and the secret scanner.
#[derive(Clone, Copy)]
pub struct Host<'a>(&'a crate::Toolhost);

impl<'a> Host<'a> {
    pub(crate) fn new(host: &'a crate::Toolhost) -> Self {
        Self(host)
    }

    /// The features that still live in this crate reach the whole host.
    pub(crate) fn toolhost(self) -> &'a crate::Toolhost {
        self.0
    }

    /// The catalog served now.
    pub fn catalog(self) -> Arc<toolhost_catalog::Catalog> {
        self.0.catalog()
    }

    /// The tool called `name`, as a call of it would find it.
    pub fn tool(self, name: &str) -> Option<Tool> {
        self.0.tool(name)
    }

    /// `who`'s roles in its tenant, read now.
    pub async fn grants(self, who: &Principal) -> Result<toolhost_policy::Grants, InvokeError> {
        self.0.grants(who).await
    }

    /// Checks `args` against `tool`'s bounds and input schema, as a call of
    /// it would be checked.
    pub fn check_arguments(self, tool: &Tool, args: &Value) -> Result<(), InvokeError> {
        self.0.check_arguments(tool, args)
    }

    /// The sandbox runtime.
    pub fn runtime(self) -> &'a Arc<toolhost_runtime::Runtime> {
        &self.0.runtime
    }

    /// The host's clock, in milliseconds since the epoch.
    pub fn now_ms(self) -> i64 {
        self.0.gate_policy.now_ms()
    }

    /// The scanner that keeps credentials and host paths from leaving.
    pub fn scanner(self) -> &'a Scanner {
        &self.0.scanner
    }
}

/// A tool implemented by the host itself: it runs outside the sandbox, so
/// only the host's own code may implement it, never a plugin.
pub trait HostTool: Send + Sync + 'static {
    /// How it is listed.
    fn spec(&self) -> &ToolSpec;

    /// Runs it. The changes it decides are returned, not made: the call
    /// path writes them with the call's audit row.
    fn call<'a>(&'a self, call: HostCall<'a>) -> HostToolFuture<'a>;

    /// Whether a call starts a run the client may follow as a task (MCP
    /// Tasks): it answers at once with the run. Default: no.
    fn is_task(&self) -> bool {
        false
    }
}

/// A tool the host serves.
#[derive(Clone)]
pub enum Tool {
    /// Provided by a sandboxed plugin.
    Plugin(ToolRef),
    /// Provided by the host.
    Host(Arc<dyn HostTool>),
}

impl Tool {
    /// How it is listed.
    pub fn spec(&self) -> &ToolSpec {
        match self {
            Tool::Plugin(t) => t.spec(),
            Tool::Host(t) => t.spec(),
        }
    }

    /// Set when a newer revision renamed or removed the tool: it stays
    /// listed and callable until the catalog version it names.
    pub fn deprecation(&self) -> Option<&toolhost_catalog::Deprecation> {
        match self {
            Tool::Plugin(t) => t.deprecation(),
            Tool::Host(_) => None,
        }
    }

    /// Whether calls are planned and may be gated: such a tool's arguments
    /// also take the host-owned `gate_id` and `idempotency_key`.
    pub fn gateable(&self) -> bool {
        match self {
            Tool::Plugin(t) => crate::gating::gateable(t),
            Tool::Host(_) => false,
        }
    }

    /// Whether a call queues an exploration run (its manifest entry has a
    /// `run` table) and answers with the run.
    pub fn is_run(&self) -> bool {
        match self {
            Tool::Plugin(t) => is_run_tool(t),
            Tool::Host(_) => false,
        }
    }

    /// Whether a call starts a run a client may follow as a task: a run
    /// tool, or a host tool that starts runs.
    pub fn is_task(&self) -> bool {
        match self {
            Tool::Plugin(_) => self.is_run(),
            Tool::Host(t) => t.is_task(),
        }
    }

    /// Whether a call may be answered with a clarification: the tool
    /// resolves names of things (its manifest entry declares `resolves`).
    pub fn resolves(&self) -> bool {
        match self {
            Tool::Plugin(t) => t
                .plugin()
                .manifest
                .tools
                .get(&t.spec().name)
                .is_some_and(|s| !s.resolves.is_empty()),
            Tool::Host(_) => false,
        }
    }
}

/// The reviewed manifest entry of a catalog tool.
pub(crate) fn section(tool: &ToolRef) -> &toolhost_catalog::ToolSection {
    tool.plugin()
        .manifest
        .tools
        .get(&tool.spec().name)
        .expect("the catalog only holds tools its manifest declares")
}

/// Whether `tool` is a run tool: its manifest entry has a `run` table.
pub(crate) fn is_run_tool(tool: &ToolRef) -> bool {
    section(tool).run.is_some()
}

/// The spec of a host tool: low risk, no output schema, annotations from
/// whether it changes state. Names and permissions are literals.
pub fn host_spec(
    name: &str,
    title: &str,
    description: &str,
    input: Value,
    permission: &str,
    mutating: bool,
) -> ToolSpec {
    ToolSpec {
        name: name.parse().expect("a valid tool name literal"),
        title: Some(title.into()),
        description: description.into(),
        input_schema: input,
        output_schema: None,
        annotations: toolhost_runtime::Annotations {
            read_only: Some(!mutating),
            destructive: Some(false),
            idempotent: Some(!mutating),
            open_world: Some(false),
        },
        permission: permission.parse().expect("a valid permission literal"),
        risk: toolhost_types::Risk::Low,
        mutating,
    }
}

/// A host tool's malformed arguments.
pub fn invalid(detail: impl Into<String>) -> InvokeError {
    InvokeError::InvalidArguments {
        detail: detail.into(),
    }
}
