//! The tools the host serves: plugin tools from the catalog, and tools the
//! host provides itself (approvals, checkpoints, benchmark baselines).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;
use toolhost_catalog::ToolRef;
use toolhost_runtime::{ToolOutput, ToolSpec};

use toolhost_types::Principal;

use crate::InvokeError;

/// The future a host tool returns.
pub type HostToolFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ToolOutput, InvokeError>> + Send + 'a>>;

/// What a host tool that changes state answers: its output, and the state
/// changes to write in the transaction of the call's audit row.
pub type HostEffectsFuture<'a> = Pin<
    Box<
        dyn Future<Output = Result<(ToolOutput, Vec<toolhost_audit::Effect>), InvokeError>>
            + Send
            + 'a,
    >,
>;

/// A tool implemented by the host itself: it runs outside the sandbox, so
/// only the host's own code may implement it, never a plugin.
pub trait HostTool: Send + Sync + 'static {
    /// How it is listed.
    fn spec(&self) -> &ToolSpec;
    /// Runs it with `args` (a JSON object).
    fn call<'a>(&'a self, who: &'a Principal, args: &'a Value) -> HostToolFuture<'a>;
    /// Runs it, returning the changes it decided instead of making them:
    /// the call path writes them with the call's audit row, so the row and
    /// the change are one transaction. Default: [`call`](Self::call), with
    /// no changes left to write.
    fn call_with_effects<'a>(
        &'a self,
        who: &'a Principal,
        args: &'a Value,
    ) -> HostEffectsFuture<'a> {
        Box::pin(async move { Ok((self.call(who, args).await?, Vec::new())) })
    }

    /// Runs it on `host` (a tool that drives the host itself, such as
    /// `start_exploration`, needs its catalog and call path). Default:
    /// [`call_with_effects`](Self::call_with_effects).
    fn call_on<'a>(
        &'a self,
        host: &'a crate::Toolhost,
        who: &'a Principal,
        args: &'a Value,
    ) -> HostEffectsFuture<'a> {
        let _ = host;
        self.call_with_effects(who, args)
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
            Tool::Plugin(t) => crate::explore::is_run_tool(t),
            Tool::Host(_) => false,
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

/// Implements [`HostTool`] for `$tool`, a host tool that is a newtype over
/// its [`ToolSpec`] and whose inherent `run(host, who, args)` needs the
/// host itself (its call path, catalog and stores): the exploration and
/// workspace tools.
macro_rules! on_the_host {
    ($tool:ty) => {
        impl $crate::HostTool for $tool {
            fn spec(&self) -> &toolhost_runtime::ToolSpec {
                &self.0
            }
            fn call<'a>(
                &'a self,
                _: &'a toolhost_types::Principal,
                _: &'a serde_json::Value,
            ) -> $crate::HostToolFuture<'a> {
                Box::pin(async {
                    Err($crate::tool::invalid(
                        "this tool runs only on the host's call path",
                    ))
                })
            }
            fn call_on<'a>(
                &'a self,
                host: &'a $crate::Toolhost,
                who: &'a toolhost_types::Principal,
                args: &'a serde_json::Value,
            ) -> $crate::HostEffectsFuture<'a> {
                Box::pin(self.run(host, who, args))
            }
        }
    };
}
pub(crate) use on_the_host;

/// The spec of a host tool: low risk, no output schema, annotations from
/// whether it changes state. Names and permissions are literals.
pub(crate) fn host_spec(
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
pub(crate) fn invalid(detail: impl Into<String>) -> InvokeError {
    InvokeError::InvalidArguments {
        detail: detail.into(),
    }
}
