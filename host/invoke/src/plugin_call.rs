//! A plugin tool's part of the call path, in order: host-owned arguments
//! out, idempotency key claimed, snapshots ready, plan (for gateable
//! tools) and its gate, then the call itself.

use std::sync::Arc;

use serde_json::Value;
use toolhost_audit::argument_digest;
use toolhost_catalog::ToolRef;
use toolhost_gates::{GateId, IdempotencyClaim, IdempotencyKey};
use toolhost_policy::{Decision, Grants, Use, decide};
use toolhost_resolver::Clarification;
use toolhost_runtime::{
    CallContext, CheckpointGrant, ClientChannel, ClientLink, Planned, Reply, SamplingGrant,
    ToolOutput,
};
use toolhost_types::Principal;
use tracing::Instrument;

use crate::call::arguments_text;
use crate::gating::{self, HostArguments};
use crate::snapshots::Conversation;
use crate::tool::section;
use crate::{CallRequest, InvokeError, Toolhost};

/// How a call ended, when it did not fail.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The tool ran and answered.
    Output(ToolOutput),
    /// The call needs a person to choose first; nothing ran after asking.
    Clarify(Clarification),
    /// The call waits for a person's approval; nothing ran.
    ApprovalRequired(Box<toolhost_gates::Gate>),
    /// The call stopped for the client's input (a stateless request): these
    /// requests by the plugin's key, `{"method", "params"}` each. Nothing
    /// acted: a plugin may ask only before it acts.
    NeedsInput(std::collections::BTreeMap<String, serde_json::Value>),
    /// The tool ran; its answer was over the inline limit and is kept as
    /// this artifact (read back with `resources/read`), sent with its
    /// content blocks (those too large to send are links to artifacts).
    Artifact(
        Box<toolhost_artifacts::Artifact>,
        Vec<toolhost_runtime::ContentBlock>,
    ),
}

impl Answer {
    /// The tool's output, if it ran.
    pub fn output(self) -> Option<ToolOutput> {
        match self {
            Answer::Output(o) => Some(o),
            _ => None,
        }
    }
}

/// One call of a plugin tool, admitted: who calls, with what.
struct PluginCall<'a> {
    who: &'a Principal,
    grants: &'a Grants,
    tool: &'a ToolRef,
    req: &'a CallRequest,
    call_id: &'a str,
    /// The arguments the plugin receives (the host's own taken out).
    args: Value,
    /// The same, as the JSON text the guest reads.
    args_text: String,
    /// The arguments the host owns (`gate_id`, `idempotency_key`).
    host: HostArguments,
}

impl Toolhost {
    pub(crate) async fn run_plugin(
        &self,
        who: &Principal,
        grants: &Grants,
        tool: &ToolRef,
        req: &CallRequest,
        call_id: &str,
        held: &mut Option<IdempotencyKey>,
    ) -> Result<Answer, InvokeError> {
        let (args, host) = if gating::gateable(tool) {
            gating::split(&req.arguments)?
        } else {
            (req.arguments.clone(), HostArguments::default())
        };
        let args_text = arguments_text(&args)?;
        let key = match (&host.idempotency_key, tool.spec().mutating) {
            (Some(k), true) => Some(gating::key(who, &req.tool, k.clone())),
            _ => None,
        };
        if let Some(key) = key {
            if let Some(stored) = self.claim(&key, &args).await? {
                return stored;
            }
            // Held until the call's audit row settles it (`call.rs`).
            *held = Some(key);
        }
        let call = PluginCall {
            who,
            grants,
            tool,
            req,
            call_id,
            args,
            args_text,
            host,
        };
        self.plan_and_call(&call).await
    }

    async fn plan_and_call(&self, c: &PluginCall<'_>) -> Result<Answer, InvokeError> {
        let (who, tool, req) = (c.who, c.tool, c.req);
        let plugin = tool.plugin();
        let conversation = req
            .conversation
            .clone()
            .unwrap_or_else(|| Conversation::Client {
                subject: who.subject.clone(),
                client: who.client_id.clone(),
            });
        // One identity for the whole call, its snapshots included: each
        // backend's assertion is signed once and names the row's call id.
        let acting = crate::call::acting(who, &req.tool, c.call_id);
        let snapshots = self
            .snapshots_for(who, tool, &conversation, &acting)
            .await?;
        let ctx = CallContext::new(&who.tenant, &who.subject)
            .with_acting(Some(acting))
            .with_progress(req.progress.clone())
            .with_log(req.log.clone())
            .with_snapshots(snapshots)
            .with_backends(self.grant(plugin))
            .with_scanner(self.scanner.clone());
        if let Some(stop) = self.gate(c, &ctx).await? {
            return Ok(stop);
        }
        let checkpoints = self.checkpoints.as_ref().map(|store| CheckpointGrant {
            store: store.clone(),
            plugin: plugin.manifest.plugin.name.to_string(),
            scanner: self.scanner.clone(),
        });
        let ctx = ctx
            .with_checkpoints(checkpoints)
            .with_client(self.client_link(plugin, req, &c.host))
            .with_updates(Some(self.update_sink(tool.shared_plugin(), &who.tenant)));
        let reply = self
            .runtime
            .call(
                &plugin.plugin,
                &ctx,
                &req.tool,
                &c.args_text,
                &plugin.budget,
            )
            .instrument(tracing::info_span!("sandbox"))
            .await?;
        Ok(match reply {
            Reply::Output(out) => {
                let name = plugin.manifest.plugin.name.as_str();
                let invalidates = &section(tool).invalidates;
                self.snapshots
                    .invalidate(&conversation, &who.tenant, name, invalidates);
                Answer::Output(out)
            }
            Reply::Clarify(c) => Answer::Clarify(c),
            Reply::NeedsInput(requests) => Answer::NeedsInput(requests),
        })
    }

    /// A gateable tool's call, planned and decided: `None` to go on (no
    /// gate needed, or the presented gate consumed), or the answer that
    /// ends the call here (a clarification, a new gate).
    async fn gate(
        &self,
        c: &PluginCall<'_>,
        ctx: &CallContext,
    ) -> Result<Option<Answer>, InvokeError> {
        let (who, tool) = (c.who, c.tool);
        if !gating::gateable(tool) {
            return Ok(None);
        }
        let plugin = tool.plugin();
        let planned = self
            .runtime
            .plan(
                &plugin.plugin,
                ctx,
                &c.req.tool,
                &c.args_text,
                &plugin.budget,
            )
            .instrument(tracing::info_span!("plan"))
            .await?;
        let plan = match planned {
            Planned::Plan(p) => p,
            Planned::Clarify(q) => return Ok(Some(Answer::Clarify(q))),
            Planned::NeedsInput(requests) => return Ok(Some(Answer::NeedsInput(requests))),
        };
        self.screen_plan(&plan)?; // a secret in the plan → SECRET_EXPOSURE, no gate stored
        let risk = gating::effective_risk(tool, &plan);
        let spec = tool.spec();
        if decide(who, c.grants, &spec.permission, risk, Use::Call) != Decision::Gated {
            return Ok(None);
        }
        let digest = argument_digest(&c.args).to_string();
        if let Some(id) = &c.host.gate_id {
            self.consume(who, tool, id, &digest, c.call_id).await?;
            return Ok(None);
        }
        let gate = gating::new_gate(who, tool, &digest, &plan, risk, &self.gate_policy);
        let gate = (self.gate_store()?.open(gate).await).map_err(InvokeError::Gates)?;
        Ok(Some(Answer::ApprovalRequired(Box::new(gate))))
    }

    /// The call's link to its client, with what the plugin's manifest
    /// grants of sampling and the host's scanner. A stateless call that
    /// consumed an approval gate may not ask: it could not run again.
    fn client_link(
        &self,
        plugin: &toolhost_catalog::LoadedPlugin,
        req: &CallRequest,
        host: &HostArguments,
    ) -> Option<ClientLink> {
        let mut link = req.client.clone()?;
        link.scanner = self.scanner.clone();
        link.sampling = plugin.manifest.sampling.map(|s| SamplingGrant {
            messages: s.messages,
            tokens: s.max_tokens,
        });
        if host.gate_id.is_some() && matches!(link.channel, ClientChannel::Rounds(_)) {
            link.refusal = Some(
                "a stateless call approved through a gate cannot ask: the gate is spent, so the \
                 call could not run again with the answers"
                    .into(),
            );
        }
        Some(link)
    }

    pub(crate) fn gate_store(&self) -> Result<&Arc<dyn toolhost_gates::GateStore>, InvokeError> {
        self.gates.as_ref().ok_or_else(|| {
            InvokeError::Gates(toolhost_gates::GateStoreError::Failed(
                "no gate store is configured".into(),
            ))
        })
    }

    /// Consumes the confirmed gate `id` for this exact call (the gate names
    /// `call_id`, whose audit row follows), or refuses.
    async fn consume(
        &self,
        who: &Principal,
        tool: &ToolRef,
        id: &GateId,
        digest: &str,
        call_id: &str,
    ) -> Result<(), InvokeError> {
        let version = tool.plugin().plugin.digest().to_string();
        let now = self.gate_policy.now_ms();
        self.gate_store()?
            .consume(
                &who.tenant,
                id,
                &who.subject,
                &tool.spec().name.to_string(),
                &version,
                digest,
                call_id,
                now,
            )
            .await
            .map(drop)
            .map_err(InvokeError::Gate)
    }

    /// Claims `key` for a request with `args`: `Some` stored output if the
    /// same request finished before.
    async fn claim(
        &self,
        key: &IdempotencyKey,
        args: &Value,
    ) -> Result<Option<Result<Answer, InvokeError>>, InvokeError> {
        let digest = argument_digest(args).to_string();
        let now = self.gate_policy.now_ms();
        let claim = self
            .gate_store()?
            .claim_key(key, &digest, now)
            .await
            .map_err(InvokeError::Gates)?;
        match claim {
            IdempotencyClaim::Claimed => Ok(None),
            IdempotencyClaim::Done(stored) => {
                crate::results::restored(&stored).map(Some).map_err(|e| {
                    InvokeError::Gates(toolhost_gates::GateStoreError::Failed(format!(
                        "stored result: {e}"
                    )))
                })
            }
            IdempotencyClaim::InProgress => Err(InvokeError::IdempotencyInProgress {
                key: key.key.clone(),
            }),
            IdempotencyClaim::Reused => Err(InvokeError::IdempotencyKeyReused {
                key: key.key.clone(),
            }),
        }
    }
}
