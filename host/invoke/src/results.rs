//! What may leave the host as a call's answer: nothing that holds a
//! credential or a host path ([`Toolhost::screen`], `SECRET_EXPOSURE`),
//! and nothing larger than the inline limit, which is kept as an artifact
//! and answered with a reference instead ([`Toolhost::bound`]).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolhost_artifacts::{Artifact, ArtifactId, ArtifactStore, NewArtifact};
use toolhost_audit::Effect;
use toolhost_policy::{Decision, Use, decide};
use toolhost_resolver::Clarification;
use toolhost_runtime::{ContentBlock, Plan, ResourceLink, ToolOutput};
use toolhost_secrets::{Scanner, SecretKind};
use toolhost_types::{Digest, Principal};

use crate::{Answer, InvokeError, Toolhost};

/// How large an answer is sent inline, and how long a larger one is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultPolicy {
    /// An answer whose JSON is longer than this many bytes becomes an
    /// artifact (default 1 MiB: several times what a model can use in one
    /// turn, well under what clients buffer).
    pub inline_limit: usize,
    /// How long an artifact stays readable (default 24 hours).
    pub artifact_ttl: Duration,
}

impl Default for ResultPolicy {
    fn default() -> Self {
        ResultPolicy {
            inline_limit: 1 << 20,
            artifact_ttl: Duration::from_secs(24 * 3600),
        }
    }
}

/// The artifact room as the call path uses it.
pub(crate) struct Artifacts {
    pub(crate) store: Arc<dyn ArtifactStore>,
    pub(crate) policy: ResultPolicy,
}

impl Toolhost {
    /// Keeps answers over `policy.inline_limit` in `store` and answers with
    /// a reference. Without it every answer is sent inline (bounded only by
    /// the plugin's output budget).
    pub fn with_artifacts(mut self, store: Arc<dyn ArtifactStore>, policy: ResultPolicy) -> Self {
        self.artifacts = Some(Artifacts { store, policy });
        self
    }

    /// Scans answers with `scanner` (default: the built-in credential
    /// patterns; the server adds its backends' secrets and its own paths).
    pub fn with_scanner(mut self, scanner: Scanner) -> Self {
        self.scanner = scanner;
        self
    }

    /// The scanner answers, plans and audit rows pass through.
    pub fn scanner(&self) -> &Scanner {
        &self.scanner
    }

    /// Refuses an answer that holds a secret: `SECRET_EXPOSURE`, naming
    /// only the kind of secret found.
    pub(crate) fn screen(&self, answer: &Answer) -> Result<(), InvokeError> {
        match answer {
            Answer::Output(out) => exposed(self.in_output(out), true),
            // A question stops the call before it acts.
            Answer::Clarify(c) => exposed(self.in_clarification(c), false),
            // Its plan was screened before the gate was opened.
            // Its requests were scanned before the call stopped for them.
            Answer::ApprovalRequired(_) | Answer::Artifact(..) | Answer::NeedsInput(_) => Ok(()),
        }
    }

    /// Refuses a plan that holds a secret, before a gate stores it.
    pub(crate) fn screen_plan(&self, plan: &Plan) -> Result<(), InvokeError> {
        let targets = plan.targets.iter();
        let mut texts = targets.flat_map(|t| [&t.kind, &t.id, &t.name].into_iter().chain(&t.tags));
        let found = self.scanner.find(&plan.summary).map(|f| f.kind);
        let found = found.or_else(|| texts.find_map(|s| self.scanner.find(s).map(|f| f.kind)));
        exposed(found, false)
    }

    fn in_output(&self, out: &ToolOutput) -> Option<SecretKind> {
        let text = out.text.as_deref().and_then(|t| self.scanner.find(t));
        let mut blocks = out.content.iter().flat_map(ContentBlock::texts);
        text.map(|f| f.kind)
            .or_else(|| self.scanner.find_in_json(&out.structured))
            .or_else(|| blocks.find_map(|t| self.scanner.find(&t).map(|f| f.kind)))
    }

    fn in_clarification(&self, c: &Clarification) -> Option<SecretKind> {
        let names = c.candidates.iter().flat_map(|c| [&c.name, &c.label]);
        let scoped = c.scoped_by.iter().flat_map(|(k, v)| [k, v]);
        [&c.ask_user, &c.field]
            .into_iter()
            .chain(names)
            .chain(scoped)
            .find_map(|s| self.scanner.find(s).map(|f| f.kind))
    }

    /// `answer` as sent: inline, or, when its output is over the inline
    /// limit, smaller: its largest media and embedded resources are kept as
    /// artifacts (each an effect of the call's audit row) and sent as links
    /// to them until the rest fits; if the structured answer alone is still
    /// over the limit, it is kept too and answered with its reference (and
    /// the remaining blocks).
    pub(crate) fn bound(
        &self,
        who: &Principal,
        tool: &str,
        call_id: &str,
        answer: Answer,
        effects: &mut Vec<Effect>,
    ) -> Answer {
        let Some(artifacts) = &self.artifacts else {
            return answer;
        };
        let Answer::Output(mut out) = answer else {
            return answer;
        };
        let limit = artifacts.policy.inline_limit;
        let (body, mime_type) = match (&out.structured, &out.text) {
            (Value::Null, Some(text)) => (text.clone().into_bytes(), "text/plain; charset=utf-8"),
            (structured, _) => (structured.to_string().into_bytes(), "application/json"),
        };
        let own = body.len() + out.text.as_ref().map_or(0, String::len);
        let mut inline = own + out.content.iter().map(ContentBlock::size).sum::<usize>();
        if inline <= limit {
            return Answer::Output(out);
        }
        let mut largest: Vec<usize> = (0..out.content.len())
            .filter(|&i| out.content[i].payload().is_some())
            .collect();
        largest.sort_by_key(|&i| std::cmp::Reverse(out.content[i].size()));
        for i in largest {
            if inline <= limit {
                break;
            }
            let Some((bytes, mime)) = out.content[i].payload() else {
                continue;
            };
            let kept = self.keep(who, tool, call_id, bytes.to_vec(), mime, effects);
            let link = ContentBlock::ResourceLink(ResourceLink {
                uri: kept.id.uri(),
                name: format!("{tool}-content-{i}"),
                title: None,
                description: Some(format!("sha256:{}", kept.sha256)),
                mime_type: Some(kept.mime_type.clone()),
                size: Some(kept.size),
            });
            inline = inline - out.content[i].size() + link.size();
            out.content[i] = link;
        }
        if inline <= limit {
            return Answer::Output(out);
        }
        let kept = self.keep(who, tool, call_id, body, mime_type, effects);
        Answer::Artifact(Box::new(kept), out.content)
    }

    /// Keeps `body` as an artifact of this call (its store is an effect of
    /// the call's audit row) and answers its description.
    fn keep(
        &self,
        who: &Principal,
        tool: &str,
        call_id: &str,
        body: Vec<u8>,
        mime_type: &str,
        effects: &mut Vec<Effect>,
    ) -> Artifact {
        let ttl = self
            .artifacts
            .as_ref()
            .map_or(Duration::ZERO, |a| a.policy.artifact_ttl);
        let now = self.gate_policy.now_ms();
        let ttl = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        let artifact = Artifact {
            id: ArtifactId::new(),
            tenant: who.tenant.clone(),
            principal: who.subject.clone(),
            client_id: Some(who.client_id.clone()),
            tool: tool.to_owned(),
            call_id: call_id.to_owned(),
            run_id: None,
            mime_type: mime_type.to_owned(),
            size: 0,
            sha256: Digest::of(b""),
            created_at_ms: now,
            expires_at_ms: now.saturating_add(ttl.max(1)),
        };
        let new = NewArtifact::new(artifact, body);
        let artifact = new.artifact.clone();
        effects.push(Effect::StoreArtifact(new));
        artifact
    }

    /// The artifact `uri` names with its bytes, for `who`: of `who`'s
    /// tenant, unexpired, and produced by a tool `who` may call. Anything
    /// else is [`InvokeError::ArtifactNotFound`], whichever the reason, so
    /// a reader learns nothing about artifacts it may not read.
    pub async fn read_artifact(
        &self,
        who: &Principal,
        uri: &str,
    ) -> Result<(Artifact, Vec<u8>), InvokeError> {
        let not_found = || InvokeError::ArtifactNotFound {
            uri: uri.to_owned(),
        };
        let (Some(artifacts), Some(id)) = (&self.artifacts, ArtifactId::from_uri(uri)) else {
            return Err(not_found());
        };
        let now = self.gate_policy.now_ms();
        let found = artifacts
            .store
            .read(&who.tenant, &id, now)
            .await
            .map_err(InvokeError::Artifacts)?;
        let (artifact, body) = found.ok_or_else(not_found)?;
        // A run's artifact: its principal's, and its tenant admins'.
        if artifact.run_id.is_some() {
            let own = artifact.principal == who.subject;
            if own || self.host().is_tenant_admin(who).await? {
                return Ok((artifact, body));
            }
            return Err(not_found());
        }
        let tool = self
            .tool(&who.tenant, &artifact.tool)
            .ok_or_else(not_found)?;
        let spec = tool.spec();
        let grants = self.grants(who).await?;
        if decide(who, &grants, &spec.permission, spec.risk, Use::Call) == Decision::Denied {
            return Err(not_found());
        }
        Ok((artifact, body))
    }
}

/// `SECRET_EXPOSURE` for a finding; `ran`: whether the tool acted.
fn exposed(found: Option<SecretKind>, ran: bool) -> Result<(), InvokeError> {
    match found {
        Some(kind) => Err(InvokeError::SecretExposure {
            kind: kind.as_str().to_owned(),
            ran,
        }),
        None => Ok(()),
    }
}

/// What an idempotency key stores for a call that ran: the output, the
/// reference of its artifact, or that its answer was withheld (a retry
/// must not run the tool again, and must not see the secret either).
pub(crate) fn stored(outcome: &Result<Answer, InvokeError>) -> Option<String> {
    match outcome {
        Ok(Answer::Output(out)) => Some(
            json!({"structured": out.structured, "text": out.text, "content": out.content})
                .to_string(),
        ),
        Ok(Answer::Artifact(a, content)) => {
            Some(json!({"artifact": artifact_json(a), "content": content}).to_string())
        }
        Err(InvokeError::SecretExposure { kind, ran: true }) => {
            Some(json!({"withheld": kind}).to_string())
        }
        _ => None,
    }
}

/// The outcome a key stored, as [`stored`] wrote it; `Err` if it cannot be read.
pub(crate) fn restored(stored: &str) -> Result<Result<Answer, InvokeError>, String> {
    let v: Value = serde_json::from_str(stored).map_err(|e| e.to_string())?;
    if let Some(kind) = v.get("withheld").and_then(Value::as_str) {
        return Ok(Err(InvokeError::SecretExposure {
            kind: kind.to_owned(),
            ran: true,
        }));
    }
    // Answers stored before content blocks have none.
    let content: Vec<ContentBlock> = match v.get("content") {
        Some(c) => serde_json::from_value(c.clone()).map_err(|e| format!("stored content: {e}"))?,
        None => Vec::new(),
    };
    if let Some(a) = v.get("artifact") {
        return artifact_from_json(a).map(|a| Ok(Answer::Artifact(Box::new(a), content)));
    }
    Ok(Ok(Answer::Output(ToolOutput {
        structured: v["structured"].clone(),
        text: v["text"].as_str().map(str::to_owned),
        content,
    })))
}

/// An artifact's description as JSON (what an idempotency key keeps).
fn artifact_json(a: &Artifact) -> Value {
    json!({
        "id": a.id.as_str(), "tenant": a.tenant, "principal": a.principal,
        "client_id": a.client_id, "tool": a.tool, "call_id": a.call_id, "run_id": a.run_id,
        "mime_type": a.mime_type, "size": a.size, "sha256": a.sha256.to_string(),
        "created_at_ms": a.created_at_ms, "expires_at_ms": a.expires_at_ms,
    })
}

fn artifact_from_json(v: &Value) -> Result<Artifact, String> {
    let text = |k: &str| {
        v[k].as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("stored artifact: no {k}"))
    };
    let int = |k: &str| {
        v[k].as_i64()
            .ok_or_else(|| format!("stored artifact: no {k}"))
    };
    Ok(Artifact {
        id: ArtifactId::parse(&text("id")?).ok_or("stored artifact: bad id")?,
        tenant: text("tenant")?,
        principal: text("principal")?,
        client_id: v["client_id"].as_str().map(str::to_owned),
        tool: text("tool")?,
        call_id: text("call_id")?,
        run_id: v["run_id"].as_str().map(str::to_owned),
        mime_type: text("mime_type")?,
        size: v["size"].as_u64().ok_or("stored artifact: no size")?,
        sha256: text("sha256")?
            .parse()
            .map_err(|e| format!("stored artifact: {e}"))?,
        created_at_ms: int("created_at_ms")?,
        expires_at_ms: int("expires_at_ms")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolhost_runtime::ResourceBody;

    #[test]
    fn a_stored_answer_keeps_its_content_blocks_and_an_older_one_has_none() {
        let out = ToolOutput {
            structured: json!({"n": 1}),
            text: Some("one".into()),
            content: vec![
                ContentBlock::Image {
                    mime_type: "image/png".into(),
                    data: vec![0x89, b'P', b'N', b'G'],
                },
                ContentBlock::Resource {
                    uri: "test://r".into(),
                    mime_type: None,
                    body: ResourceBody::Blob(vec![0, 1, 2]),
                },
            ],
        };
        let kept = stored(&Ok(Answer::Output(out.clone()))).expect("stored");
        match restored(&kept) {
            Ok(Ok(Answer::Output(back))) => assert_eq!(back, out),
            other => panic!("restored {other:?}"),
        }
        let older = r#"{"structured": {"n": 1}, "text": null}"#;
        match restored(older) {
            Ok(Ok(Answer::Output(back))) => {
                assert_eq!(back, ToolOutput::new(json!({"n": 1}), None));
            }
            other => panic!("restored {other:?}"),
        }
        let broken = r#"{"structured": 1, "content": [{"type": "image", "data": "%%"}]}"#;
        assert!(restored(broken).is_err(), "unreadable content is an error");
    }
}
