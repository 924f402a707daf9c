//! Why the authoring workspace refused: its own errors, carried by the
//! call path as one [`Refusal`](toolhost_invoke::Refusal) with their details.

use serde_json::json;
use toolhost_catalog::CatalogStoreError;
use toolhost_catalog::intake::IntakeError;
use toolhost_workspace::WorkspaceStoreError;

use toolhost_invoke::{InvokeError, Refusal};

/// A workspace request refused: nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// No session, proposal or upload by that id that the caller may see
    /// (whether it never existed or is another tenant's is not said).
    #[error("{what} {id:?} not found")]
    NotFound {
        /// `session`, `proposal` or `upload`.
        what: &'static str,
        /// The id asked for.
        id: String,
    },
    /// The session is not at the version the request named.
    #[error(
        "session {session} is at version {current}, not {expected}; nothing was written: read it again and retry against version {current}"
    )]
    VersionConflict {
        /// The session.
        session: String,
        /// The version the request named.
        expected: i64,
        /// The version it is at.
        current: i64,
    },
    /// The session takes no more mutations.
    #[error("session {session} is {state}: it takes no more mutations")]
    Closed {
        /// The session.
        session: String,
        /// Its state.
        state: &'static str,
    },
    /// A mutation lost a race it could not name.
    #[error("the session changed while this request was made; nothing was written: read it again")]
    Changed,
    /// The subject does not parse, or names nothing the host serves.
    #[error("{detail}")]
    SubjectInvalid {
        /// Why.
        detail: String,
    },
    /// No entity of that kind by that name or id in the caller's tenant.
    #[error("no {kind} named {object:?} (or with that id) that you may see")]
    SubjectNotFound {
        /// The entity kind.
        kind: String,
        /// What was asked for.
        object: String,
    },
    /// Several entities answer to that name: name one by id.
    #[error("several {kind}s are named {object:?}: {}; name one by its id", candidates.join(", "))]
    SubjectAmbiguous {
        /// The entity kind.
        kind: String,
        /// What was asked for.
        object: String,
        /// Some of them, with their ids.
        candidates: Vec<String>,
    },
    /// The subject moved since the session was bound to it: the diff a
    /// person would review is stale.
    #[error(
        "the subject of session {session} changed since it was bound (version {bound}, now {current}); nothing was written: open a new session"
    )]
    SubjectChanged {
        /// The session.
        session: String,
        /// The version it was bound to.
        bound: String,
        /// The version now.
        current: String,
    },
    /// The proposal was made before the session was rebound: its diff is
    /// against a version of the subject the session no longer follows.
    #[error(
        "proposal {proposal} is against version {made_against} of the subject; session is bound to version {bound} since it was rebound: propose it again to promote it"
    )]
    ProposalOutdated {
        /// The proposal.
        proposal: String,
        /// The version its diff is against.
        made_against: String,
        /// The version the session is bound to.
        bound: String,
    },
    /// The proposal carries authority where it would establish it (a
    /// credential or cookie anywhere, a revision's file named by path, URL
    /// or digest, or a field the promoting tool declares a location,
    /// credential, digest or code): nothing was stored.
    #[error("{0}")]
    AuthorityRefused(toolhost_workspace::AuthorityRefusal),
    /// The proposal does not validate.
    #[error("the proposal is invalid: {}", problems.iter().map(|p| format!("{}: {}", if p.path.is_empty() { "/" } else { &p.path }, p.message)).collect::<Vec<_>>().join("; "))]
    ProposalInvalid {
        /// Every problem found.
        problems: Vec<toolhost_runtime::Problem>,
    },
    /// A candidate revision did not pass the catalog's intake checks.
    #[error("{0}")]
    Intake(#[source] IntakeError),
    /// The promotion waits for a person's approval of its gate.
    #[error(
        "this proposal's promotion waits for a person's approval of gate {gate}: once it is confirmed (decide_approval), promote again with gate_id"
    )]
    PromotionAwaitingApproval {
        /// The gate.
        gate: String,
    },
    /// The promoting tool asked a question instead of acting: nothing was
    /// promoted.
    #[error("the promoting tool needs clarification: {question}")]
    PromotionNeedsClarification {
        /// Its question.
        question: String,
    },
    /// The workspace store failed, or none is configured.
    #[error("internal error")]
    Store(#[source] WorkspaceStoreError),
}

impl WorkspaceError {
    /// The stable code a client sees.
    pub fn code(&self) -> &'static str {
        match self {
            WorkspaceError::NotFound { what, .. } => match *what {
                "session" => "SESSION_NOT_FOUND",
                "proposal" => "PROPOSAL_NOT_FOUND",
                _ => "UPLOAD_NOT_FOUND",
            },
            WorkspaceError::VersionConflict { .. } => "WORKSPACE_VERSION_CONFLICT",
            WorkspaceError::Closed { .. } => "WORKSPACE_CLOSED",
            WorkspaceError::Changed => "WORKSPACE_CHANGED",
            WorkspaceError::SubjectInvalid { .. } => "SUBJECT_INVALID",
            WorkspaceError::SubjectNotFound { .. } => "SUBJECT_NOT_FOUND",
            WorkspaceError::SubjectAmbiguous { .. } => "SUBJECT_AMBIGUOUS",
            WorkspaceError::SubjectChanged { .. } => "SUBJECT_CHANGED",
            WorkspaceError::ProposalOutdated { .. } => "PROPOSAL_OUTDATED",
            WorkspaceError::AuthorityRefused(_) => "AUTHORITY_REFUSED",
            WorkspaceError::ProposalInvalid { .. } => "PROPOSAL_INVALID",
            WorkspaceError::Intake(e) => e.code(),
            WorkspaceError::PromotionAwaitingApproval { .. } => "PROMOTION_AWAITING_APPROVAL",
            WorkspaceError::PromotionNeedsClarification { .. } => "NEEDS_CLARIFICATION",
            WorkspaceError::Store(_) => "INTERNAL",
        }
    }

    /// What a caller can act on beyond the code and the words.
    fn details(&self) -> Option<serde_json::Value> {
        match self {
            WorkspaceError::VersionConflict {
                session,
                current,
                expected,
            } => Some(
                json!({"session_id": session, "current_version": current, "expected_version": expected}),
            ),
            WorkspaceError::AuthorityRefused(r) => {
                Some(json!({"pointer": r.pointer, "kind": r.kind}))
            }
            WorkspaceError::ProposalInvalid { problems } => Some(json!({"problems": problems})),
            WorkspaceError::SubjectChanged { bound, current, .. } => {
                Some(json!({"bound_version": bound, "current_version": current}))
            }
            WorkspaceError::ProposalOutdated {
                made_against,
                bound,
                ..
            } => Some(json!({"proposal_version": made_against, "bound_version": bound})),
            WorkspaceError::SubjectAmbiguous { candidates, .. } => {
                Some(json!({"candidates": candidates}))
            }
            WorkspaceError::PromotionAwaitingApproval { gate } => Some(json!({"gate_id": gate})),
            _ => None,
        }
    }
}

impl From<WorkspaceError> for InvokeError {
    fn from(e: WorkspaceError) -> Self {
        let refusal = match &e {
            WorkspaceError::Store(store) => {
                let unavailable = store.unavailable().cloned();
                Refusal::store(e, unavailable)
            }
            WorkspaceError::Intake(intake) if intake.code() == "INTERNAL" => {
                let unavailable = match intake {
                    IntakeError::Store(CatalogStoreError::Unavailable(u)) => Some(u.clone()),
                    _ => None,
                };
                Refusal::store(e, unavailable)
            }
            _ => {
                let refusal = Refusal::new(e.code(), e.to_string());
                match e.details() {
                    Some(details) => refusal.with_details(details),
                    None => refusal,
                }
            }
        };
        refusal.into()
    }
}
