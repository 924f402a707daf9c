//! The prompts plugins export (`prompts/list`, `prompts/get`) and the
//! completion of their arguments (`completion/complete`), under the same
//! rules as tools: a prompt the caller may not use is neither listed nor
//! got (it reads as unknown, whichever the reason), a get runs in a fresh
//! sandbox without side effects, its answer is screened for secrets, and
//! each get writes one audit row (tool `prompt:NAME`). An argument that
//! names a thing completes from the resolver's snapshot of that kind,
//! floored to the caller's tenant: completion never shows another
//! tenant's names.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use toolhost_audit::{AuditEvent, ClientRound, Outcome};
use toolhost_catalog::LoadedPlugin;
use toolhost_policy::{Grants, Use, decide};
use toolhost_runtime::{CallContext, ClientLink, Prompt, PromptReply, PromptSpec};
use toolhost_types::{Digest, Principal, Risk};

use crate::tool::plugin_within;
use crate::{Conversation, InvokeError, Toolhost};

/// What an audit row of a prompt get or a resource read says.
pub(crate) struct Row<'a> {
    pub(crate) who: &'a Principal,
    /// `prompt:NAME`, `resource:NAME`.
    pub(crate) label: &'a str,
    pub(crate) plugin: Option<&'a LoadedPlugin>,
    pub(crate) digest: Digest,
    pub(crate) started: Instant,
    /// What it asked its client, if anything.
    pub(crate) rounds: Vec<ClientRound>,
}

/// Each request `link` (a call's link to its client) sent, or was to
/// send, as its audit row keeps it.
pub fn client_rounds(link: Option<&ClientLink>) -> Vec<ClientRound> {
    let rounds = link.map(ClientLink::rounds).unwrap_or_default();
    (rounds.into_iter())
        .map(|r| ClientRound {
            key: r.key,
            method: r.method.to_owned(),
            outcome: r.outcome.to_owned(),
        })
        .collect()
}

impl Toolhost {
    /// Writes the one audit row of a prompt get or a resource read: `did`
    /// is its outcome, or the error it failed with.
    pub(crate) async fn record_row(
        &self,
        row: Row<'_>,
        did: Result<Outcome, &InvokeError>,
    ) -> Result<(), InvokeError> {
        let tool = self.scanner().redact(row.label);
        let event = AuditEvent {
            client_id: Some(row.who.client_id.clone()),
            plugin: row.plugin.map(|p| p.plugin.name().to_string()),
            catalog_version: Some(self.catalog(&row.who.tenant).version().to_owned()),
            plugin_digest: row.plugin.map(|p| *p.plugin.digest()),
            outcome: *did.as_ref().unwrap_or(&Outcome::Error),
            error_code: did.err().map(|e| e.code().to_owned()),
            duration: row.started.elapsed(),
            client_rounds: row.rounds,
            ..AuditEvent::new(&row.who.tenant, &row.who.subject, &tool, row.digest)
        };
        self.audit.record(&event).await.map_err(InvokeError::Audit)
    }
}

/// Most values one completion answers (MCP's own maximum).
pub const MAX_COMPLETIONS: usize = 100;

/// A prompt a caller may use: its plugin and its spec.
#[derive(Clone)]
pub struct PromptRef {
    /// The plugin exporting it.
    pub plugin: Arc<LoadedPlugin>,
    /// The prompt.
    pub spec: PromptSpec,
}

/// A get's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptAnswer {
    /// The prompt, filled in.
    Prompt(Prompt),
    /// The client's input it needs first (a stateless request), by key.
    NeedsInput(BTreeMap<String, Value>),
}

impl Toolhost {
    /// The prompts `who` may use, by name.
    pub async fn prompts(&self, who: &Principal) -> Result<Vec<PromptRef>, InvokeError> {
        let grants = self.grants(who).await?;
        let catalog = self.catalog(&who.tenant);
        let out: Vec<PromptRef> = (catalog.prompts())
            .filter(|(_, spec)| permits(who, &grants, spec, Use::List))
            .filter(|(plugin, _)| plugin_within(&catalog, &grants, plugin))
            .map(|(plugin, spec)| PromptRef {
                plugin: plugin.clone(),
                spec: spec.clone(),
            })
            .collect();
        Ok(out)
    }

    /// The prompt `name`, if `who` may get it.
    fn prompt_for(&self, who: &Principal, grants: &Grants, name: &str) -> Option<PromptRef> {
        let catalog = self.catalog(&who.tenant);
        let (plugin, spec) = catalog.prompt(name)?;
        let found =
            permits(who, grants, spec, Use::Call) && plugin_within(&catalog, grants, plugin);
        found.then(|| PromptRef {
            plugin: plugin.clone(),
            spec: spec.clone(),
        })
    }

    /// Prompt `name` filled in with `arguments` for `who` (asking its
    /// client through `client`, if the plugin asks), screened, audited.
    pub async fn get_prompt(
        &self,
        who: &Principal,
        name: &str,
        arguments: &BTreeMap<String, String>,
        client: Option<ClientLink>,
    ) -> Result<PromptAnswer, InvokeError> {
        let started = Instant::now();
        let grants = self.grants(who).await?;
        let found = self.prompt_for(who, &grants, name);
        // Its rounds are shared with the copy the call gets.
        let asked = client.clone();
        let outcome = match &found {
            Some(p) => self.run_prompt(who, p, arguments, client).await,
            None => Err(InvokeError::PromptNotFound {
                name: name.to_owned(),
            }),
        };
        let plugin = found.map(|p| p.plugin);
        let digest = Digest::of(json!(arguments).to_string().as_bytes());
        let label = format!("prompt:{name}");
        let did = match &outcome {
            Ok(PromptAnswer::Prompt(_)) => Ok(Outcome::Executed),
            Ok(PromptAnswer::NeedsInput(_)) => Ok(Outcome::NeedsClarification),
            Err(e) => Err(e),
        };
        let row = Row {
            who,
            label: &label,
            plugin: plugin.as_deref(),
            digest,
            started,
            rounds: client_rounds(asked.as_ref()),
        };
        self.record_row(row, did).await?;
        outcome
    }

    async fn run_prompt(
        &self,
        who: &Principal,
        p: &PromptRef,
        arguments: &BTreeMap<String, String>,
        client: Option<ClientLink>,
    ) -> Result<PromptAnswer, InvokeError> {
        if let Some(unknown) = arguments
            .keys()
            .find(|k| !p.spec.arguments.iter().any(|a| &a.name == *k))
        {
            return Err(InvokeError::InvalidArguments {
                detail: format!("prompt {:?} takes no argument {unknown:?}", p.spec.name),
            });
        }
        if let Some(missing) =
            (p.spec.arguments.iter()).find(|a| a.required && !arguments.contains_key(&a.name))
        {
            return Err(InvokeError::InvalidArguments {
                detail: format!("prompt {:?} needs argument {:?}", p.spec.name, missing.name),
            });
        }
        let client = client.map(|mut link| {
            link.scanner = self.scanner().clone();
            link
        });
        let ctx = CallContext::new(&who.tenant, &who.subject)
            .with_backends(self.grant(&p.plugin))
            .with_client(client);
        let acting = crate::call::acting(who, &p.spec.name, &ctx.call_id.to_string());
        let ctx = ctx.with_acting(Some(acting));
        let args: Vec<(String, String)> = arguments.clone().into_iter().collect();
        let reply = self
            .runtime
            .prompt(
                &p.plugin.plugin,
                &ctx,
                &p.spec.name,
                &args,
                &p.plugin.budget,
            )
            .await
            .map_err(InvokeError::Call)?;
        match reply {
            PromptReply::Prompt(prompt) => {
                let texts = prompt.messages.iter().flat_map(|m| m.content.texts());
                let description = prompt
                    .description
                    .iter()
                    .map(|d| std::borrow::Cow::Borrowed(d.as_str()));
                if let Some(found) = description
                    .chain(texts)
                    .find_map(|t| self.scanner().find(&t))
                {
                    return Err(InvokeError::SecretExposure {
                        kind: found.kind.as_str().to_owned(),
                        ran: true,
                    });
                }
                Ok(PromptAnswer::Prompt(prompt))
            }
            PromptReply::NeedsInput(requests) => Ok(PromptAnswer::NeedsInput(requests)),
        }
    }

    /// Completions of argument `argument` of prompt `prompt` starting with
    /// `value` (case-insensitively), for `who`: the names of the argument's
    /// kind in `who`'s tenant, sorted, at most [`MAX_COMPLETIONS`]; none
    /// for an argument that names no kind. An unknown (or forbidden) prompt
    /// is [`InvokeError::PromptNotFound`].
    pub async fn complete_prompt_argument(
        &self,
        who: &Principal,
        prompt: &str,
        argument: &str,
        value: &str,
    ) -> Result<(Vec<String>, usize), InvokeError> {
        let grants = self.grants(who).await?;
        let Some(p) = self.prompt_for(who, &grants, prompt) else {
            return Err(InvokeError::PromptNotFound {
                name: prompt.to_owned(),
            });
        };
        let Some(arg) = p.spec.arguments.iter().find(|a| a.name == argument) else {
            return Err(InvokeError::InvalidArguments {
                detail: format!("prompt {prompt:?} takes no argument {argument:?}"),
            });
        };
        let Some(kind) = &arg.completes else {
            return Ok((Vec::new(), 0));
        };
        self.completions(who, &p.plugin, kind, value).await
    }

    /// The names of `kind` of `plugin` in `who`'s tenant starting with
    /// `value` (case-insensitively), sorted, at most [`MAX_COMPLETIONS`],
    /// and how many there are.
    pub(crate) async fn completions(
        &self,
        who: &Principal,
        plugin: &Arc<LoadedPlugin>,
        kind: &str,
        value: &str,
    ) -> Result<(Vec<String>, usize), InvokeError> {
        let conversation = Conversation::Client {
            subject: who.subject.clone(),
            client: who.client_id.clone(),
        };
        let name = plugin.manifest.plugin.name.as_str();
        let rows = self
            .snapshots
            .get(&conversation, &who.tenant, name, kind, None, || async {
                let ctx =
                    CallContext::new(&who.tenant, &who.subject).with_backends(self.grant(plugin));
                let acting = crate::call::acting(who, name, &ctx.call_id.to_string());
                let ctx = ctx.with_acting(Some(acting));
                self.runtime
                    .snapshot(&plugin.plugin, &ctx, kind, &plugin.budget)
                    .await
            })
            .await
            .map_err(InvokeError::Call)?;
        // The snapshot cache dropped other tenants' rows when it listed
        // them; the floor is applied again here, where names leave.
        let want = value.to_lowercase();
        let mut names: Vec<String> = (rows.iter())
            .filter(|e| e.tenant == who.tenant)
            .filter(|e| e.name.to_lowercase().starts_with(&want))
            .map(|e| e.name.clone())
            .collect();
        names.sort();
        names.dedup();
        let total = names.len();
        names.truncate(MAX_COMPLETIONS);
        Ok((names, total))
    }
}

fn permits(who: &Principal, grants: &Grants, spec: &PromptSpec, how: Use) -> bool {
    decide(who, grants, &spec.permission, Risk::Low, how).permits()
}
