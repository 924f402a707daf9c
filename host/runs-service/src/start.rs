//! Starting a run: of a catalog tool (a run tool's call, or one named by
//! `start_exploration`), of a candidate revision its author submitted, or
//! (through the authoring service) of a draft. Nothing is written here:
//! the run is the effect written with the starting call's audit row.

use serde_json::{Value, json};
use toolhost_audit::{Effect, argument_digest};
use toolhost_catalog::{LoadedPlugin, ToolRef};
use toolhost_invoke::{Host, InvokeError, Tool};
use toolhost_limits::RunBudget;
use toolhost_policy::{Grants, Use, decide};
use toolhost_runs::{
    MAX_ATTEMPTS, NewRun, RevisionRef, Run, RunClient, RunEffect, RunId, RunInput, RunSource,
    RunSpec, RunState,
};
use toolhost_runtime::{ToolOutput, ToolSpec};
use toolhost_types::{Principal, PrincipalKind};

use crate::view::snapshot;
use crate::{RunError, Runs};

impl Runs {
    /// Queues a run of the catalog tool called `name` (as
    /// `start_exploration` names it) with `args` for `who`: the caller
    /// must be allowed to call it and the arguments must fit its schema, as
    /// a call of it would be checked.
    pub async fn start_named_run(
        &self,
        host: Host<'_>,
        who: &Principal,
        name: &str,
        args: &Value,
    ) -> Result<(ToolOutput, Vec<Effect>), InvokeError> {
        let tool = catalog_tool(host.tool(&who.tenant, name), name)?;
        host.check_arguments(&who.tenant, &Tool::Plugin(tool.clone()), args)?;
        permitted(who, &host.grants(who).await?, tool.spec())?;
        self.start_run(host, who, &tool, args).await
    }

    /// Queues a run of the catalog tool `tool` with `args` for `who`, its
    /// caller and arguments admitted, if the queue has room. Nothing is
    /// written here: the run is the returned effect, written with the
    /// call's audit row.
    pub async fn start_run(
        &self,
        host: Host<'_>,
        who: &Principal,
        tool: &ToolRef,
        args: &Value,
    ) -> Result<(ToolOutput, Vec<Effect>), InvokeError> {
        let catalog_version = host.catalog(&who.tenant).version().to_owned();
        let name = tool.spec().name.to_string();
        self.queue_run(
            host,
            who,
            tool.plugin(),
            &name,
            args,
            RunSource::Active,
            Some(catalog_version),
        )
        .await
    }

    /// Queues a run of `tool` of the revision `revision`, not active yet,
    /// for the one who submitted it: an author tries a candidate in the
    /// exploration sandbox before asking for review. Anyone else is told
    /// the revision does not exist.
    pub(crate) async fn start_candidate_run(
        &self,
        host: Host<'_>,
        who: &Principal,
        revision: &str,
        tool: &str,
        args: &Value,
    ) -> Result<(ToolOutput, Vec<Effect>), InvokeError> {
        let not_found = || InvokeError::InvalidArguments {
            detail: format!("no revision {revision:?} of yours is waiting for review"),
        };
        let live = self.config.catalog.clone().ok_or_else(not_found)?;
        let rev = live
            .store()
            .revision(revision)
            .await
            .map_err(|_| not_found())?
            .filter(|r| r.submitted_by == who.subject)
            .ok_or_else(not_found)?;
        if !matches!(
            rev.state,
            toolhost_catalog::RevisionState::PendingReview
                | toolhost_catalog::RevisionState::Approved
        ) {
            return Err(not_found());
        }
        let (_, plugin) =
            live.load_revision(revision)
                .await
                .map_err(|why| InvokeError::InvalidArguments {
                    detail: format!("revision {revision} does not load: {why}"),
                })?;
        let source = RunSource::Candidate {
            revision: revision.to_owned(),
        };
        let spec = plugin_tool(&plugin, tool)?;
        permitted(who, &host.grants(who).await?, spec)?;
        self.queue_run(host, who, &plugin, tool, args, source, None)
            .await
    }

    /// Queues a run of `tool` of `plugin` with `args` for `who`, whose
    /// permission to call it was decided, if the queue has room.
    #[allow(clippy::too_many_arguments)]
    pub async fn queue_run(
        &self,
        host: Host<'_>,
        who: &Principal,
        plugin: &LoadedPlugin,
        tool: &str,
        args: &Value,
        source: RunSource,
        catalog_version: Option<String>,
    ) -> Result<(ToolOutput, Vec<Effect>), InvokeError> {
        let runs = &self.config;
        let spec = plugin_tool(plugin, tool)?;
        let section =
            (plugin.manifest.tools.get(&spec.name)).ok_or_else(|| InvokeError::ToolNotFound {
                tool: tool.to_owned(),
            })?;
        let budget = match &source {
            RunSource::Draft { .. } => run_budget(section)?.at_most(&RunBudget::DRAFT_CEILING),
            _ => run_budget(section)?,
        };
        let (tenant_runs, principal_runs) = runs
            .store
            .active(&who.tenant, &who.subject)
            .await
            .map_err(RunError::Store)?;
        full(principal_runs, runs.limits.per_principal, "this principal")?;
        full(tenant_runs, runs.limits.per_tenant, "this tenant")?;
        let new = NewRun {
            id: RunId::new(),
            tenant: who.tenant.clone(),
            principal: who.subject.clone(),
            principal_kind: kind(who).into(),
            client_id: who.client_id.clone(),
            spec: RunSpec {
                tool: spec.name.to_string(),
                source,
                revision: RevisionRef {
                    id: plugin.revision.clone(),
                    plugin: plugin.manifest.plugin.name.to_string(),
                    version: plugin.manifest.plugin.version.clone(),
                    component_sha256: plugin.plugin.digest().to_string(),
                    manifest_sha256: None,
                    signer: None,
                    catalog_version,
                },
                arguments: if args.is_null() {
                    json!({})
                } else {
                    args.clone()
                },
                argument_digest: argument_digest(args).to_string(),
                budget,
                client: None,
            },
            created_at_ms: host.now_ms(),
            max_attempts: MAX_ATTEMPTS,
            limits: runs.limits,
            input: None,
        };
        let new = self
            .describe_revision(new, plugin.revision.as_deref())
            .await;
        let run = queued(&new);
        let text = format!(
            "Run {} of {} is queued. Follow it with get_exploration_result {{\"run_id\": \"{}\"}}.",
            run.id, run.spec.tool, run.id
        );
        let out = ToolOutput {
            structured: snapshot(&run),
            text: Some(text),
            content: Vec::new(),
        };
        Ok((out, vec![Effect::Run(RunEffect::Queue(Box::new(new)))]))
    }

    /// Fills in the revision's manifest digest and signer from the store.
    async fn describe_revision(&self, mut new: NewRun, revision: Option<&str>) -> NewRun {
        let (Some(live), Some(id)) = (&self.config.catalog, revision) else {
            return new;
        };
        if let Ok(Some(rev)) = live.store().revision(id).await {
            new.spec.revision.manifest_sha256 = Some(rev.manifest_digest.to_string());
            new.spec.revision.signer = rev.signer.clone();
        }
        new
    }
}

/// The catalog tool `found` under `name`, which `start_exploration`
/// names: a plugin tool (served by its plugin, or claimed by a feature).
fn catalog_tool(found: Option<Tool>, name: &str) -> Result<ToolRef, InvokeError> {
    match found {
        Some(t) => match t.catalog_tool() {
            Some(r) => Ok(r.clone()),
            None => Err(toolhost_invoke::invalid(format!(
                "{name} is a host tool: only plugin tools run as explorations"
            ))),
        },
        None => Err(InvokeError::ToolNotFound {
            tool: name.to_owned(),
        }),
    }
}

/// Tool `tool` of `plugin`.
pub fn plugin_tool<'a>(plugin: &'a LoadedPlugin, tool: &str) -> Result<&'a ToolSpec, InvokeError> {
    let found = plugin
        .plugin
        .tools()
        .iter()
        .find(|t| t.name.as_str() == tool);
    found.ok_or_else(|| InvokeError::ToolNotFound {
        tool: tool.to_owned(),
    })
}

/// Whether `who`, holding `grants`, may call `spec`, as a call of it is
/// decided.
pub fn permitted(who: &Principal, grants: &Grants, spec: &ToolSpec) -> Result<(), InvokeError> {
    if !decide(who, grants, &spec.permission, spec.risk, Use::Call).permits() {
        return Err(InvokeError::PermissionDenied {
            tool: spec.name.to_string(),
        });
    }
    Ok(())
}

/// What a caller is told when the run change its call decided lost: the
/// queue filled between the check and the write, or the run moved on. Any
/// other effect never races: its loss is the host's fault.
pub fn run_lost(effect: &Effect) -> InvokeError {
    let Effect::Run(effect) = effect else {
        return InvokeError::Audit(toolhost_audit::AuditError::Failed(
            "an effect that never races lost".into(),
        ));
    };
    match effect {
        RunEffect::Queue(new) => RunError::QueueFull {
            scope: "this principal or tenant",
            limit: new.limits.per_principal,
        },
        RunEffect::Finish(f) => RunError::Changed {
            id: f.id.to_string(),
        },
        RunEffect::AttemptLost { id, .. }
        | RunEffect::HandOver { id, .. }
        | RunEffect::AwaitInput { id, .. } => RunError::Changed { id: id.to_string() },
    }
    .into()
}

/// Lets the run `effects` queue ask `client`, the client of the call that
/// starts it when that call is followed as a task. Only a stateless
/// (2026-07-28) request's client can be asked: it answers the run's
/// requests with `tasks/update`; answers that call already carried
/// (`inputResponses`: it was asked before the run existed) are the run's
/// first. Any other run cannot ask.
pub fn let_ask(effects: &mut [Effect], client: Option<&toolhost_runtime::ClientLink>) {
    let Some(link) = client.filter(|l| l.refusal.is_none()) else {
        return;
    };
    let toolhost_runtime::ClientChannel::Rounds(answers) = &link.channel else {
        return;
    };
    for effect in effects {
        if let Effect::Run(RunEffect::Queue(new)) = effect {
            new.spec.client = Some(RunClient {
                elicitation: link.supports.elicitation,
                sampling: link.supports.sampling,
                roots: link.supports.roots,
            });
            if !answers.is_empty() {
                new.input = Some(RunInput {
                    answers: answers.clone(),
                    ..RunInput::default()
                });
            }
        }
    }
}

/// Before a run of `tool` followed as a task exists, lets its plugin's
/// plan ask the client of `call` (a stateless request): what it asks and
/// has no answer yet ends the call `input_required`, with no run queued;
/// the client's next round carries the answers, which the run gets
/// ([`let_ask`]). The plan runs with nothing to reach (no backends) and
/// cannot act; anything else it answers is the run's to find again, so
/// only its questions count here.
pub async fn ask_first(
    call: &toolhost_invoke::HostCall<'_>,
    tool: &ToolRef,
) -> Result<(), InvokeError> {
    let Some(link) = call.client.filter(|l| call.task && l.refusal.is_none()) else {
        return Ok(());
    };
    if !matches!(link.channel, toolhost_runtime::ClientChannel::Rounds(_)) {
        return Ok(());
    }
    let plugin = tool.plugin();
    let mut link = link.clone();
    link.sampling = plugin
        .manifest
        .sampling
        .map(|s| toolhost_runtime::SamplingGrant {
            messages: s.messages,
            tokens: s.max_tokens,
        });
    let ctx = toolhost_runtime::CallContext::new(&call.who.tenant, &call.who.subject)
        .with_client(Some(link));
    let args = call.args.to_string();
    let planned = (call.host.runtime())
        .plan(
            &plugin.plugin,
            &ctx,
            &tool.spec().name.to_string(),
            &args,
            &plugin.budget,
        )
        .await;
    match planned {
        Ok(toolhost_runtime::Planned::NeedsInput(requests)) => Err(InvokeError::Call(
            toolhost_runtime::CallError::InputRequired { requests },
        )),
        Err(e @ toolhost_runtime::CallError::MissingClientCapability { .. }) => {
            Err(InvokeError::Call(e))
        }
        _ => Ok(()),
    }
}

/// The run `effects` queue, if any.
pub fn queued_run(effects: &[Effect]) -> Option<RunId> {
    effects.iter().find_map(|e| match e {
        Effect::Run(RunEffect::Queue(new)) => Some(new.id.clone()),
        _ => None,
    })
}

/// The budget of a run of `tool`: the run defaults, moved by its manifest
/// entry's `run` table.
fn run_budget(section: &toolhost_catalog::ToolSection) -> Result<RunBudget, InvokeError> {
    let o = section.run.clone().unwrap_or_default();
    toolhost_catalog::run_budget(&o).map_err(|e| InvokeError::InvalidArguments {
        detail: format!("the tool's run budget: {e}"),
    })
}

fn full(count: u32, limit: u32, scope: &'static str) -> Result<(), InvokeError> {
    if count >= limit {
        return Err(RunError::QueueFull { scope, limit }.into());
    }
    Ok(())
}

fn kind(who: &Principal) -> &'static str {
    match who.kind {
        PrincipalKind::User => "user",
        PrincipalKind::Service => "service",
    }
}

/// The row a queued run will have.
fn queued(new: &NewRun) -> Run {
    Run {
        id: new.id.clone(),
        tenant: new.tenant.clone(),
        principal: new.principal.clone(),
        principal_kind: new.principal_kind.clone(),
        client_id: new.client_id.clone(),
        spec: new.spec.clone(),
        state: RunState::Queued,
        attempt: 0,
        max_attempts: new.max_attempts,
        created_at_ms: new.created_at_ms,
        started_at_ms: None,
        finished_at_ms: None,
        deadline_at_ms: None,
        cancel_requested_at_ms: None,
        lease_owner: None,
        lease_until_ms: None,
        audited_attempts: 0,
        progress: None,
        outcome: None,
        receipt: None,
        receipt_sha256: None,
        handed_over: 0,
        input: new.input.clone(),
        parked_at_ms: None,
    }
}
