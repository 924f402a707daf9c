//! `propose_revision`: a proposal added to a session, validated and diffed
//! against the subject as the session was bound to it.

use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_invoke::InvokeError;
use toolhost_types::Principal;
use toolhost_workspace::{
    Proposal, ProposalId, Session, SessionChange, Subject, UploadHandle, refuse_authority,
    refuse_declared, refuse_unhandled_files,
};

use crate::answer::{Answered, changed, output};
use crate::plugin_subject::{RevisionDraft, problem, source};
use crate::{Work, WorkspaceError, view};

/// The longest summary a proposal carries.
const MAX_SUMMARY_CHARS: usize = 500;
/// The most runs a proposal cites as evidence.
const MAX_EVIDENCE: usize = 32;

/// What a proposal may carry besides its subject's body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProposalBody {
    /// A candidate revision (a plugin subject).
    #[serde(default)]
    revision: Option<Value>,
    /// An object of the plugin's kind (a domain subject).
    #[serde(default)]
    object: Option<Value>,
    /// One line for the reviewer.
    #[serde(default)]
    summary: Option<String>,
    /// Runs of this session the proposal was built from.
    #[serde(default)]
    evidence: Vec<String>,
}

pub(crate) fn invalid_proposal(path: &str, message: &str) -> InvokeError {
    WorkspaceError::ProposalInvalid {
        problems: vec![problem(path, message)],
    }
    .into()
}

/// `proposal` parsed, with its evidence checked against the session's runs.
fn parse_proposal(
    view: &toolhost_workspace::SessionView,
    proposal: &Value,
) -> Result<ProposalBody, InvokeError> {
    let body: ProposalBody = serde_json::from_value(proposal.clone())
        .map_err(|e| invalid_proposal("", &e.to_string()))?;
    if body
        .summary
        .as_ref()
        .is_some_and(|s| s.chars().count() > MAX_SUMMARY_CHARS)
    {
        return Err(invalid_proposal(
            "/summary",
            &format!("at most {MAX_SUMMARY_CHARS} characters"),
        ));
    }
    if body.evidence.len() > MAX_EVIDENCE {
        return Err(invalid_proposal(
            "/evidence",
            &format!("at most {MAX_EVIDENCE} runs"),
        ));
    }
    for (i, run) in body.evidence.iter().enumerate() {
        if !view.runs.iter().any(|l| &l.run_id == run) {
            return Err(invalid_proposal(
                &format!("/evidence/{i}"),
                &format!(
                    "{run:?} is not a run of this session (start_exploration with session_id joins one)"
                ),
            ));
        }
    }
    Ok(body)
}

/// `propose_revision(session_id, proposal, expected_version, idempotency_key)`.
pub(crate) async fn propose_revision(host: Work<'_>, who: &Principal, args: &Value) -> Answered {
    let step = match host.step(who, "propose_revision", args).await? {
        Ok(step) => step,
        Err(replay) => return Ok((replay, Vec::new())),
    };
    let (expected, view) = (step.expected, &step.view);
    let raw = args.get("proposal").cloned().unwrap_or(Value::Null);
    refuse_authority(&raw, host.host.scanner()).map_err(WorkspaceError::AuthorityRefused)?;
    let body = parse_proposal(view, &raw)?;
    let session = &view.session;
    let id = ProposalId::new();
    let checked = checked(host, who, session, &id, body.revision, body.object).await?;
    let (digest, mut validation, diff, keep) = checked;
    validation["evidence"] = json!(body.evidence);
    validation["summary"] = json!(body.summary);
    let now = host.host.now_ms();
    let proposal = Proposal {
        id,
        session: session.id.clone(),
        number: i64::try_from(view.proposals.len()).unwrap_or(i64::MAX - 1) + 1,
        author: who.subject.clone(),
        body: raw,
        digest,
        validation,
        diff,
        subject_version: session.subject_version.clone(),
        created_at_ms: now,
    };
    let mut structured = json!({"session_id": session.id, "version": expected + 1});
    structured["proposal"] = view::proposal(&proposal);
    structured["diff"] = proposal.diff.clone();
    let text = format!(
        "Proposal {} (#{}) is in session {}, now at version {}. Read its diff with get_revision_diff.",
        proposal.id,
        proposal.number,
        session.id,
        expected + 1
    );
    let out = output(structured, text);
    let change = SessionChange {
        proposal: Some(proposal),
        keep_uploads: keep,
        ..step.change(who, &out, now)
    };
    changed(out, change)
}

/// What the host found of a proposal's body for `session`: the digest,
/// validation and diff of its candidate revision (a plugin subject) or
/// object (a domain subject), and the uploads it keeps.
async fn checked(
    host: Work<'_>,
    who: &Principal,
    session: &Session,
    id: &ProposalId,
    revision: Option<Value>,
    object: Option<Value>,
) -> Result<(String, Value, Value, Vec<UploadHandle>), InvokeError> {
    match (&session.subject, revision, object) {
        (Subject::Plugin { .. }, Some(revision), None) => {
            refuse_unhandled_files(&revision, "/revision")
                .map_err(WorkspaceError::AuthorityRefused)?;
            let draft: RevisionDraft = serde_json::from_value(revision)
                .map_err(|e| invalid_proposal("/revision", &e.to_string()))?;
            let c = host
                .check_candidate(
                    who,
                    session,
                    &draft,
                    false,
                    source(&session.id, id.as_str()),
                )
                .await?;
            Ok((c.digest, c.validation, c.diff, draft.handles()))
        }
        (Subject::Domain { .. }, None, Some(object)) => {
            let (domain, current) = host.domain_as_bound(who, session).await?;
            // The promoting tool's fields that carry authority, as the
            // proposal writes them and as the plugin normalized them (what
            // promotion will pass on).
            let schema = domain.promoting_schema()?;
            refuse_declared(&object, schema, "/object")
                .map_err(WorkspaceError::AuthorityRefused)?;
            let c = host.check_object(who, &domain, &current, &object).await?;
            refuse_declared(&c.normalized, schema, "/object")
                .map_err(WorkspaceError::AuthorityRefused)?;
            let validation = json!({"valid": true, "normalized": c.normalized});
            Ok((c.digest, validation, c.diff, Vec::new()))
        }
        (Subject::Plugin { .. }, _, _) => Err(invalid_proposal(
            "/revision",
            "a plugin subject takes a revision (and no object)",
        )),
        (Subject::Domain { .. }, _, _) => Err(invalid_proposal(
            "/object",
            "a domain subject takes an object (and no revision)",
        )),
    }
}
