//! A run that joins a session: `start_exploration` with a
//! `session_id` queues the run (of the served tool, or with `proposal_id`
//! of the proposal's draft) and links it to the session in one step of
//! the session's version, so its receipt is the session's evidence.

use std::sync::Arc;

use serde_json::{Value, json};
use toolhost_audit::Effect;
use toolhost_catalog::intake::IntakeError;
use toolhost_catalog::{CatalogError, LoadedPlugin};
use toolhost_runs::RunSource;
use toolhost_runtime::{Payer, ToolOutput};
use toolhost_types::Principal;
use toolhost_workspace::{ProposalId, RunLink, SessionChange, SessionId, Subject, WorkspaceEffect};

use super::plugin_subject::RevisionDraft;
use crate::WorkspaceError;
use toolhost_invoke::{AnswerFuture, HostCall, HostToolFuture, InvokeError};
use toolhost_runs_service::{DraftFuture, DraftRef, Sessions};

use crate::{Authoring, Work};

/// Why a draft's plugin was not loaded.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DraftError {
    /// Its tenant holds its share of the compile queue: retry later.
    #[error("{0}")]
    Busy(CatalogError),
    /// It does not load (gone, not UTF-8, refused by the checks).
    #[error("{0}")]
    Unloadable(String),
}

impl From<String> for DraftError {
    fn from(why: String) -> Self {
        DraftError::Unloadable(why)
    }
}

impl From<&str> for DraftError {
    fn from(why: &str) -> Self {
        DraftError::Unloadable(why.to_owned())
    }
}

impl Work<'_> {
    /// Queues a run of `tool` with `arguments` for `who` that joins the
    /// session `args` names, at the version it names.
    pub(crate) async fn start_session_run(
        &self,
        who: &Principal,
        args: &Value,
        tool: &str,
        arguments: &Value,
    ) -> Result<(ToolOutput, Vec<Effect>), InvokeError> {
        let step = match self.step(who, "start_exploration", args).await? {
            Ok(step) => step,
            Err(replay) => return Ok((replay, Vec::new())),
        };
        let (expected, view) = (step.expected, &step.view);
        let session = &view.session;
        let proposal = match args.get("proposal_id").and_then(Value::as_str) {
            Some(id) => Some(crate::answer::find_proposal(view, id)?),
            None => None,
        };
        let (mut out, mut effects) = match proposal {
            Some(p) => {
                if !matches!(session.subject, Subject::Plugin { .. }) {
                    return Err(toolhost_invoke::invalid(
                        "proposal_id: only a plugin subject's proposals carry a draft to run",
                    ));
                }
                let payer = Payer::Tenant(who.tenant.clone());
                let plugin = (self.service)
                    .draft_plugin(&who.tenant, session.id.as_str(), p.id.as_str(), payer)
                    .await
                    .map_err(|why| match why {
                        DraftError::Busy(e) => {
                            WorkspaceError::Intake(IntakeError::Invalid(e)).into()
                        }
                        DraftError::Unloadable(why) => {
                            toolhost_invoke::invalid(format!("the draft does not load: {why}"))
                        }
                    })?;
                self.check_arguments_of(&plugin, tool, arguments)?;
                let spec = toolhost_runs_service::plugin_tool(&plugin, tool)?;
                toolhost_runs_service::permitted(who, &self.host.grants(who).await?, spec)?;
                let source = RunSource::Draft {
                    session: session.id.to_string(),
                    proposal: p.id.to_string(),
                };
                self.runs()
                    .queue_run(self.host, who, &plugin, tool, arguments, source, None)
                    .await?
            }
            None => {
                self.runs()
                    .start_named_run(self.host, who, tool, arguments)
                    .await?
            }
        };
        let run_id = out.structured["run_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let now = self.host.now_ms();
        out.structured["session"] = json!({"session_id": session.id, "version": expected + 1});
        let link = RunLink {
            session: session.id.clone(),
            run_id,
            proposal: proposal.map(|p| p.id.clone()),
            linked_at_ms: now,
        };
        let change = SessionChange {
            link: Some(link),
            ..step.change(who, &out, now)
        };
        effects.push(Effect::Workspace(WorkspaceEffect::Change(Box::new(change))));
        Ok((out, effects))
    }

    /// Checks `args` against `tool` of `plugin`'s input schema, as a call
    /// of the served tool would be.
    fn check_arguments_of(
        &self,
        plugin: &LoadedPlugin,
        tool: &str,
        args: &Value,
    ) -> Result<(), InvokeError> {
        let spec = plugin
            .plugin
            .tools()
            .iter()
            .find(|t| t.name.as_str() == tool)
            .ok_or_else(|| InvokeError::ToolNotFound {
                tool: tool.to_owned(),
            })?;
        self.host.check_draft_arguments(spec, args)
    }
}

impl Authoring {
    /// The draft plugin of proposal `proposal` of session `session` in
    /// `tenant`: its uploaded manifest and component, loaded (never
    /// served), a compile charged to `payer`.
    pub(crate) async fn draft_plugin(
        &self,
        tenant: &str,
        session: &str,
        proposal: &str,
        payer: Payer,
    ) -> Result<Arc<LoadedPlugin>, DraftError> {
        let ws = &self.config;
        let (sid, pid) = (
            SessionId::parse(session).ok_or("not a session id")?,
            ProposalId::parse(proposal).ok_or("not a proposal id")?,
        );
        let p = ws
            .store
            .proposal(tenant, &sid, &pid)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("no proposal {proposal} in session {session}"))?;
        let draft: RevisionDraft = serde_json::from_value(p.body["revision"].clone())
            .map_err(|e| format!("the proposal names no revision: {e}"))?;
        let bytes = |h| async move {
            ws.store
                .upload(tenant, h, 0)
                .await
                .map_err(|e| e.to_string())?
                .map(|(_, b)| b)
                .ok_or_else(|| format!("upload {h} is gone"))
        };
        let component = bytes(&draft.component).await?;
        let manifest = String::from_utf8(bytes(&draft.manifest).await?)
            .map_err(|_| "the manifest is not UTF-8".to_owned())?;
        let live = ws
            .catalog
            .clone()
            .ok_or("no catalog store to load drafts with")?;
        live.load_draft(&manifest, &component, payer)
            .await
            .map_err(|e| match e.is_busy() {
                true => DraftError::Busy(e),
                false => DraftError::Unloadable(e.to_string()),
            })
    }
}

impl Sessions for Authoring {
    fn start_run<'a>(
        &'a self,
        c: HostCall<'a>,
        tool: &'a str,
        arguments: &'a Value,
    ) -> HostToolFuture<'a> {
        Box::pin(async move {
            (self.on(c.host))
                .start_session_run(c.who, c.args, tool, arguments)
                .await
        })
    }

    fn lost<'a>(&'a self, c: HostCall<'a>, effect: &'a Effect) -> AnswerFuture<'a> {
        Box::pin(crate::lost(self.on(c.host), c.who, effect))
    }

    fn draft<'a>(&'a self, d: DraftRef<'a>, payer: Payer) -> DraftFuture<'a> {
        Box::pin(async move {
            let loaded = self.draft_plugin(d.tenant, d.session, d.proposal, payer);
            loaded.await.map_err(|e| e.to_string())
        })
    }
}
