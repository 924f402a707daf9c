//! [`WorkspaceEffect`]: a workspace mutation, written in the transaction
//! of the audit row of the call that made it. All of it is written, or
//! none: a session no longer at the expected version, or an idempotency
//! key taken meanwhile, fails the whole transaction (row and all), and the
//! call path tells the caller which.

use toolhost_review::NewRevision;

use crate::{
    BoundObject, Promotion, Proposal, RunLink, Session, SessionId, SessionState, UploadHandle,
};

/// A mutation's answer, kept under its idempotency key: a replay of the
/// same request is answered with it; another request under the key is
/// refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutation {
    /// The caller's tenant.
    pub tenant: String,
    /// The caller.
    pub principal: String,
    /// The caller's key.
    pub key: String,
    /// The tool called.
    pub tool: String,
    /// SHA-256 of the canonical JSON of the request (tool and arguments,
    /// without the key).
    pub request_digest: String,
    /// The session it mutated.
    pub session: SessionId,
    /// The answer, as JSON text (`{"structured": …, "text": …}`).
    pub result: String,
    /// Unix milliseconds.
    pub at_ms: i64,
}

/// A workspace mutation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkspaceEffect {
    /// A session opened, at version 1.
    Open {
        /// The session.
        session: Box<Session>,
        /// Its answer under the caller's key, if the caller gave one.
        mutation: Option<Mutation>,
    },
    /// A session moved from one version to the next, with what came with it.
    Change(Box<SessionChange>),
}

/// One compare-and-set step of a session: `expected_version` to
/// `expected_version + 1`, and everything the step adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionChange {
    /// The session's tenant.
    pub tenant: String,
    /// The session.
    pub session: SessionId,
    /// The version the caller read (and the request named).
    pub expected_version: i64,
    /// Unix milliseconds.
    pub at_ms: i64,
    /// Its new state, if it changes.
    pub state: Option<SessionState>,
    /// What the session is bound to from now on, if it is rebound.
    pub rebound: Option<Binding>,
    /// Cancel the session's runs not yet over (it is abandoned).
    pub cancel_runs: bool,
    /// A proposal added.
    pub proposal: Option<Proposal>,
    /// Uploads the proposal names: they no longer expire.
    pub keep_uploads: Vec<UploadHandle>,
    /// A run joined the session.
    pub link: Option<RunLink>,
    /// A promotion started, or one of the session's moved on (same id).
    pub promotion: Option<Promotion>,
    /// A plugin revision submitted for review with the promotion (unless
    /// the store holds the same revision already).
    pub submit: Option<Box<NewRevision>>,
    /// The answer, under the caller's key.
    pub mutation: Mutation,
}

/// What a session is bound to: the subject as it resolved, and its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The entity the subject resolved to (`None`: a plugin's first
    /// revision, or a plugin subject).
    pub bound_to: Option<BoundObject>,
    /// The subject's version.
    pub subject_version: String,
}
