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
use toolhost_catalog::{LoadedPlugin, ToolRef};
use toolhost_policy::Grants;
use toolhost_runtime::{ProgressSink, ToolOutput, ToolSpec};
use toolhost_secrets::Scanner;
use toolhost_types::{Digest, Principal};

use crate::InvokeError;

/// A boxed future a host tool answers with.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a host tool answers: its output, and the state changes to write
/// in the transaction of the call's audit row (so the row and the change
/// are one), empty for a tool that changes nothing.
pub type HostToolFuture<'a> = BoxFuture<'a, Result<(ToolOutput, Vec<Effect>), InvokeError>>;

/// What a host tool's caller is answered once the call's row is written,
/// or once the row lost one of its effects.
pub type AnswerFuture<'a> = BoxFuture<'a, Result<ToolOutput, InvokeError>>;

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
    /// The call's link to its MCP client, if it has one (a run tool's run
    /// may ask it for input when the call is followed as a task).
    pub client: Option<&'a toolhost_runtime::ClientLink>,
    /// Whether a run the call starts is followed as a task.
    pub task: bool,
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

    /// The catalog `tenant` is served now.
    pub fn catalog(self, tenant: &str) -> Arc<toolhost_catalog::Catalog> {
        self.0.catalog(tenant)
    }

    /// The tool called `name`, as a call of it by a principal of `tenant`
    /// would find it.
    pub fn tool(self, tenant: &str, name: &str) -> Option<Tool> {
        self.0.tool(tenant, name)
    }

    /// `who`'s roles in its tenant, read now.
    pub async fn grants(self, who: &Principal) -> Result<toolhost_policy::Grants, InvokeError> {
        self.0.grants(who).await
    }

    /// The tools `who` may see, as `tools/list` would list them (see
    /// [`Toolhost::list`](crate::Toolhost::list)): its tenant's catalog,
    /// its permissions read now.
    pub async fn list(self, who: &Principal) -> Result<crate::Listing, InvokeError> {
        self.0.list(who).await
    }

    /// Checks `args` against `tool`'s bounds and input schema, as a call of
    /// it by a principal of `tenant` would be checked.
    pub fn check_arguments(
        self,
        tenant: &str,
        tool: &Tool,
        args: &Value,
    ) -> Result<(), InvokeError> {
        self.0.check_arguments(tenant, tool, args)
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

    /// The host's clock.
    pub fn clock(self) -> crate::Clock {
        self.0.gate_policy.clock.clone()
    }

    /// Whether `who` administers its tenant, read now (services never
    /// do).
    pub async fn is_tenant_admin(self, who: &Principal) -> Result<bool, InvokeError> {
        Ok(who.kind == toolhost_types::PrincipalKind::User && self.grants(who).await?.is_admin())
    }

    /// Checks `args` against `spec`, a tool of a plugin not served (a
    /// candidate or a draft), as a call of it would be checked: within the
    /// call path's limits, and valid against its input schema.
    pub fn check_draft_arguments(self, spec: &ToolSpec, args: &Value) -> Result<(), InvokeError> {
        crate::bounds::check_draft(&self.0.bounds, spec, args)
    }

    /// The backends `plugin` may reach: the operator's, by the names its
    /// manifest declares.
    pub fn backend_grant(self, plugin: &LoadedPlugin) -> Option<toolhost_runtime::BackendGrant> {
        self.0.grant(plugin)
    }

    /// Calls a tool through the whole call path, with its own audit row
    /// (a feature handing work to a plugin tool, as promotion does).
    pub fn call<'b>(
        self,
        who: &'b Principal,
        req: crate::CallRequest,
        cancel: &'b CancellationToken,
    ) -> BoxFuture<'b, Result<crate::Answer, InvokeError>>
    where
        'a: 'b,
    {
        Box::pin(self.0.call(who, req, cancel))
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

    /// Whether it is served only as a task: a client that cannot follow
    /// one is refused before anything runs. Default: no.
    fn requires_task(&self) -> bool {
        false
    }

    /// Whether every principal may see and call it, whatever its spec's
    /// permission: for a tool whose every answer is already decided per
    /// caller (the discovery tools answer from the caller's own listing).
    /// A tool that reads or changes anything else must stay closed.
    /// Default: no.
    fn open(&self) -> bool {
        false
    }

    /// The catalog tool this one serves in the plugin's stead, when a
    /// feature claimed it ([`ClaimTools`]): the call's row names its
    /// plugin, its input schema checks the arguments, its deprecation is
    /// listed. Default: none.
    fn claimed(&self) -> Option<&ToolRef> {
        None
    }

    /// What the caller is answered once the call's row and `effects` are
    /// written, from what the tool answered (`out`). A tool that started
    /// work its caller may wait for waits here. Default: `out`.
    fn written<'a>(
        &'a self,
        call: HostCall<'a>,
        out: ToolOutput,
        effects: &'a [Effect],
    ) -> AnswerFuture<'a> {
        let _ = (call, effects);
        Box::pin(std::future::ready(Ok(out)))
    }

    /// What the caller is told when the row's transaction lost `effect`,
    /// one this tool decided, to another writer (nothing it decided was
    /// written). Default: a catalog change lost to another decision of the
    /// catalog (`CATALOG_CHANGED`); any other effect never races, so its
    /// loss is the host's fault.
    fn lost<'a>(&'a self, call: HostCall<'a>, effect: &'a Effect) -> AnswerFuture<'a> {
        let _ = call;
        Box::pin(std::future::ready(Err(match effect {
            Effect::Catalog(_) => InvokeError::CatalogChanged,
            _ => InvokeError::Audit(toolhost_audit::AuditError::Failed(
                "an effect that never races lost".into(),
            )),
        })))
    }
}

/// A feature that serves some catalog tools itself: asked about every tool
/// of every catalog the host serves, it answers the host tool that stands
/// in for a tool it claims (see [`HostTool::claimed`]). The runs feature
/// claims every tool whose manifest entry has a `run` table.
pub trait ClaimTools: Send + Sync + 'static {
    /// The host tool serving `tool`, if this feature claims it.
    fn claim(&self, tool: &ToolRef) -> Option<Arc<dyn HostTool>>;
}

/// A tool the host serves.
#[derive(Clone)]
pub enum Tool {
    /// Provided by a sandboxed plugin.
    Plugin(ToolRef),
    /// Provided by the host, with the digest of its definition: a claimed
    /// tool's is its catalog tool's, the host's own was taken when it was
    /// installed ([`Toolhost::with_host_tool`](crate::Toolhost::with_host_tool)).
    Host(Arc<dyn HostTool>, Digest),
}

impl Tool {
    /// How it is listed.
    pub fn spec(&self) -> &ToolSpec {
        match self {
            Tool::Plugin(t) => t.spec(),
            Tool::Host(t, _) => t.spec(),
        }
    }

    /// The digest of its reviewed definition, as `tools/list` names it and
    /// its calls' audit rows record it: a catalog tool's was taken when its
    /// catalog was built ([`ToolRef::definition_digest`]).
    pub fn definition_digest(&self) -> Digest {
        match self {
            Tool::Plugin(t) => *t.definition_digest(),
            Tool::Host(_, d) => *d,
        }
    }

    /// Set when a newer revision renamed or removed the tool: it stays
    /// listed and callable until the catalog version it names.
    pub fn deprecation(&self) -> Option<&toolhost_catalog::Deprecation> {
        self.catalog_tool().and_then(ToolRef::deprecation)
    }

    /// The catalog tool it serves: a plugin tool, or the one a host tool
    /// claimed.
    pub fn catalog_tool(&self) -> Option<&ToolRef> {
        match self {
            Tool::Plugin(t) => Some(t),
            Tool::Host(t, _) => t.claimed(),
        }
    }

    /// Whether calls are planned and may be gated: such a tool's arguments
    /// also take the host-owned `gate_id` and `idempotency_key`.
    pub fn gateable(&self) -> bool {
        self.catalog_tool().is_some_and(crate::gating::gateable)
    }

    /// Whether a call starts a run a client may follow as a task (a host
    /// tool that starts runs, such as a claimed run tool).
    pub fn is_task(&self) -> bool {
        match self {
            Tool::Plugin(_) => false,
            Tool::Host(t, _) => t.is_task(),
        }
    }

    /// Whether it is served only as a task (a run tool whose manifest says
    /// `task = "required"`).
    pub fn requires_task(&self) -> bool {
        match self {
            Tool::Plugin(_) => false,
            Tool::Host(t, _) => t.requires_task(),
        }
    }

    /// The words its manifest tags it with, which a catalog search finds
    /// it by (a host tool's own have none).
    pub fn tags(&self) -> &[String] {
        match self.catalog_tool() {
            Some(t) => section(t).tags.as_slice(),
            None => &[],
        }
    }

    /// Whether it is within the toolsets `grants` are narrowed to (see
    /// [`Grants::reaches_tool`]): a catalog tool by its name, plugin and
    /// tags, the host's own by its name.
    pub fn within(&self, grants: &Grants) -> bool {
        // Unbound (nearly every caller): no manifest lookup on the listing.
        if grants.within().is_none() {
            return true;
        }
        let plugin = (self.catalog_tool()).map(|t| t.plugin().manifest.plugin.name.as_str());
        grants.reaches_tool(self.spec().name.as_str(), plugin, self.tags())
    }

    /// Whether every principal may see and call it ([`HostTool::open`]; a
    /// tool a feature claimed never is).
    pub fn open(&self) -> bool {
        matches!(self, Tool::Host(t, _) if t.open() && t.claimed().is_none())
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
            Tool::Host(..) => false,
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

/// Whether `plugin`'s prompts and resources are within the toolsets
/// `grants` are narrowed to (see [`Grants::reaches_plugin`]): one of its
/// tools in `catalog` is.
pub(crate) fn plugin_within(
    catalog: &toolhost_catalog::Catalog,
    grants: &Grants,
    plugin: &LoadedPlugin,
) -> bool {
    let name = plugin.manifest.plugin.name.as_str();
    grants.reaches_plugin(name, || {
        (catalog.tools())
            .filter(|t| t.plugin().manifest.plugin.name.as_str() == name)
            .any(|t| Tool::Plugin(t.clone()).within(grants))
    })
}
