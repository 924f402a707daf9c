//! The workspace's rows read back into `toolhost_workspace` values. Pure.

use serde::de::DeserializeOwned;
use toolhost_workspace::{
    ArrivingState, ArrivingUpload, HeldUploads, Mutation, Promotion, PromotionId, Proposal,
    ProposalId, RunLink, Session, SessionId, Upload, UploadHandle,
};

use crate::fields::{Fields, corrupt};

fn parsed<T: DeserializeOwned>(
    table: &str,
    key: &str,
    column: &'static str,
    text: &str,
) -> Result<T, sqlx::Error> {
    serde_json::from_str(text).map_err(|e| corrupt(table, key, column, text, &e.to_string()))
}

fn from_str<T: std::str::FromStr>(
    table: &str,
    key: &str,
    column: &'static str,
    text: &str,
) -> Result<T, sqlx::Error>
where
    T::Err: std::fmt::Display,
{
    text.parse()
        .map_err(|e: T::Err| corrupt(table, key, column, text, &e.to_string()))
}

fn id<T>(
    table: &str,
    key: &str,
    column: &str,
    parse: fn(&str) -> Option<T>,
) -> Result<T, sqlx::Error> {
    parse(key).ok_or_else(|| corrupt(table, key, column, key, "not an id this host mints"))
}

pub(crate) fn session(row: &impl Fields) -> Result<Session, sqlx::Error> {
    let key = row.text("id")?;
    const T: &str = "workspace_sessions";
    Ok(Session {
        id: id(T, &key, "id", SessionId::parse)?,
        tenant: row.text("tenant")?,
        owner: row.text("owner")?,
        subject: from_str(T, &key, "subject", &row.text("subject")?)?,
        bound_to: match row.maybe_text("bound_to")? {
            Some(text) => Some(parsed(T, &key, "bound_to", &text)?),
            None => None,
        },
        subject_version: row.text("subject_version")?,
        version: row.int("version")?,
        state: from_str(T, &key, "state", &row.text("state")?)?,
        created_at_ms: row.int("created_at")?,
        updated_at_ms: row.int("updated_at")?,
    })
}

pub(crate) fn proposal(row: &impl Fields) -> Result<Proposal, sqlx::Error> {
    let key = row.text("id")?;
    const T: &str = "workspace_proposals";
    let session = row.text("session_id")?;
    Ok(Proposal {
        id: id(T, &key, "id", ProposalId::parse)?,
        session: id(T, &session, "session_id", SessionId::parse)?,
        number: row.int("number")?,
        author: row.text("author")?,
        body: parsed(T, &key, "body", &row.text("body")?)?,
        digest: row.text("digest")?,
        validation: parsed(T, &key, "validation", &row.text("validation")?)?,
        diff: parsed(T, &key, "diff", &row.text("diff")?)?,
        subject_version: row.text("subject_version")?,
        created_at_ms: row.int("created_at")?,
    })
}

pub(crate) fn run_link(row: &impl Fields) -> Result<RunLink, sqlx::Error> {
    let session = row.text("session_id")?;
    const T: &str = "workspace_runs";
    Ok(RunLink {
        session: id(T, &session, "session_id", SessionId::parse)?,
        run_id: row.text("run_id")?,
        proposal: match row.maybe_text("proposal_id")? {
            Some(p) => Some(id(T, &p, "proposal_id", ProposalId::parse)?),
            None => None,
        },
        linked_at_ms: row.int("linked_at")?,
    })
}

pub(crate) fn promotion(row: &impl Fields) -> Result<Promotion, sqlx::Error> {
    let key = row.text("id")?;
    const T: &str = "workspace_promotions";
    let (session, proposal) = (row.text("session_id")?, row.text("proposal_id")?);
    Ok(Promotion {
        id: id(T, &key, "id", PromotionId::parse)?,
        session: id(T, &session, "session_id", SessionId::parse)?,
        proposal: id(T, &proposal, "proposal_id", ProposalId::parse)?,
        promoted_by: row.text("promoted_by")?,
        state: from_str(T, &key, "state", &row.text("state")?)?,
        revision_id: row.maybe_text("revision_id")?,
        gate_id: row.maybe_text("gate_id")?,
        result: match row.maybe_text("result")? {
            Some(text) => Some(parsed(T, &key, "result", &text)?),
            None => None,
        },
        created_at_ms: row.int("created_at")?,
        updated_at_ms: row.int("updated_at")?,
    })
}

pub(crate) fn mutation(row: &impl Fields) -> Result<Mutation, sqlx::Error> {
    let session = row.text("session_id")?;
    Ok(Mutation {
        tenant: row.text("tenant")?,
        principal: row.text("principal")?,
        key: row.text("key")?,
        tool: row.text("tool")?,
        request_digest: row.text("request_digest")?,
        session: id(
            "workspace_mutations",
            &session,
            "session_id",
            SessionId::parse,
        )?,
        result: row.text("result")?,
        at_ms: row.int("created_at")?,
    })
}

pub(crate) fn upload(row: &impl Fields) -> Result<Upload, sqlx::Error> {
    let key = row.text("handle")?;
    const T: &str = "workspace_uploads";
    Ok(Upload {
        handle: id(T, &key, "handle", UploadHandle::parse)?,
        tenant: row.text("tenant")?,
        owner: row.text("owner")?,
        kind: from_str(T, &key, "kind", &row.text("kind")?)?,
        size: count(T, &key, "size", row.int("size")?)?,
        sha256: row.text("sha256")?,
        created_at_ms: row.int("created_at")?,
        expires_at_ms: row.int("expires_at")?,
    })
}

/// An upload still arriving, with its size so far and its parts' count.
pub(crate) fn arriving(row: &impl Fields) -> Result<ArrivingState, sqlx::Error> {
    let key = row.text("handle")?;
    const T: &str = "workspace_uploads";
    let parts = count(T, &key, "parts", row.int("parts")?)?;
    Ok(ArrivingState {
        upload: ArrivingUpload {
            handle: id(T, &key, "handle", UploadHandle::parse)?,
            tenant: row.text("tenant")?,
            owner: row.text("owner")?,
            kind: from_str(T, &key, "kind", &row.text("kind")?)?,
            created_at_ms: row.int("created_at")?,
        },
        size: count(T, &key, "size", row.int("size")?)?,
        parts: u32::try_from(parts)
            .map_err(|_| corrupt(T, &key, "parts", &parts.to_string(), "too many"))?,
    })
}

/// What a principal holds against its upload quota.
pub(crate) fn held(row: &impl Fields) -> Result<HeldUploads, sqlx::Error> {
    const T: &str = "workspace_uploads";
    Ok(HeldUploads {
        uploads: count(T, "held", "uploads", row.int("uploads")?)?,
        bytes: count(T, "held", "bytes", row.int("bytes")?)?,
    })
}

/// An upload part's bytes.
pub(crate) fn part(row: &impl Fields) -> Result<Vec<u8>, sqlx::Error> {
    row.bytes("bytes")
}

/// A count or size, which is never negative.
fn count(table: &str, key: &str, column: &'static str, n: i64) -> Result<u64, sqlx::Error> {
    u64::try_from(n).map_err(|_| corrupt(table, key, column, &n.to_string(), "negative"))
}
