//! A [`WorkspaceEffect`] on an open transaction: an authoring session
//! opened, or stepped by compare-and-set on its version, with what the
//! step carries (a binding anew, its runs cancelled, a proposal, uploads
//! kept, a run linked, a revision submitted, a promotion) and the
//! mutation's answer under its key. A session that ends (closed,
//! abandoned, or promoted: its revision holds its component's bytes)
//! drops the uploads it keeps in the same step.
//!
//! A session not at the expected version (or no longer open) changes no
//! row and fails; so does a key another mutation took meanwhile (the
//! primary key refuses it), and a proposal number taken twice.

use toolhost_workspace::{Mutation, SessionChange, SessionState, WorkspaceEffect};

use super::{Tx, one_row, statement};
use crate::runs::json;
use crate::workspace::sql;

/// Applies one workspace effect.
pub(super) async fn apply(tx: &mut impl Tx, change: &WorkspaceEffect) -> Result<(), sqlx::Error> {
    match change {
        WorkspaceEffect::Open {
            session: s,
            mutation,
        } => {
            let bound = s.bound_to.as_ref().map(json).transpose()?;
            statement(sql::INSERT_SESSION)
                .bind(s.id.as_str())
                .bind(s.tenant.as_str())
                .bind(s.owner.as_str())
                .bind(s.subject.to_string())
                .bind(bound)
                .bind(s.subject_version.as_str())
                .bind(s.version)
                .bind(s.state.as_str())
                .bind(s.created_at_ms)
                .bind(s.updated_at_ms)
                .execute(tx)
                .await?;
            match mutation {
                Some(m) => insert_mutation(tx, m).await,
                None => Ok(()),
            }
        }
        WorkspaceEffect::Change(c) => step(tx, c).await,
    }
}

/// One step of a session, then what it carries, then its answer.
async fn step(tx: &mut impl Tx, c: &SessionChange) -> Result<(), sqlx::Error> {
    let stepped = statement(sql::STEP_SESSION)
        .bind(c.tenant.as_str())
        .bind(c.session.as_str())
        .bind(c.at_ms)
        .bind(c.state.map(|s| s.as_str()))
        .bind(c.expected_version)
        .execute(tx)
        .await?;
    // Another mutation moved the session first.
    one_row(stepped)?;
    if let Some(b) = &c.rebound {
        let bound = b.bound_to.as_ref().map(json).transpose()?;
        statement(sql::REBIND_SESSION)
            .bind(c.tenant.as_str())
            .bind(c.session.as_str())
            .bind(bound)
            .bind(b.subject_version.as_str())
            .execute(tx)
            .await?;
    }
    if matches!(
        c.state,
        Some(SessionState::Closed | SessionState::Abandoned | SessionState::Promoted)
    ) {
        statement(sql::DROP_KEPT_UPLOADS)
            .bind(c.tenant.as_str())
            .bind(c.session.as_str())
            .execute(tx)
            .await?;
    }
    if c.cancel_runs {
        statement(sql::CANCEL_SESSION_RUNS)
            .bind(c.tenant.as_str())
            .bind(c.session.as_str())
            .bind(c.at_ms)
            .execute(tx)
            .await?;
    }
    carried(tx, c).await?;
    if let Some(rev) = &c.submit {
        crate::catalog::store_revision(tx, rev).await?;
    }
    if let Some(p) = &c.promotion {
        let result = p.result.as_ref().map(json).transpose()?;
        statement(sql::UPSERT_PROMOTION)
            .bind(p.id.as_str())
            .bind(p.session.as_str())
            .bind(p.proposal.as_str())
            .bind(p.promoted_by.as_str())
            .bind(p.state.as_str())
            .bind(p.revision_id.as_deref())
            .bind(p.gate_id.as_deref())
            .bind(result)
            .bind(p.created_at_ms)
            .bind(p.updated_at_ms)
            .execute(tx)
            .await?;
    }
    insert_mutation(tx, &c.mutation).await
}

/// What a step adds to its session: a proposal, the uploads it keeps, a
/// run it links.
async fn carried(tx: &mut impl Tx, c: &SessionChange) -> Result<(), sqlx::Error> {
    if let Some(p) = &c.proposal {
        statement(sql::INSERT_PROPOSAL)
            .bind(p.id.as_str())
            .bind(p.session.as_str())
            .bind(p.number)
            .bind(p.author.as_str())
            .bind(json(&p.body)?)
            .bind(p.digest.as_str())
            .bind(json(&p.validation)?)
            .bind(json(&p.diff)?)
            .bind(p.subject_version.as_str())
            .bind(p.created_at_ms)
            .execute(tx)
            .await?;
    }
    for handle in &c.keep_uploads {
        statement(sql::KEEP_UPLOAD)
            .bind(c.tenant.as_str())
            .bind(handle.as_str())
            .bind(crate::workspace::KEPT)
            .bind(c.session.as_str())
            .execute(tx)
            .await?;
    }
    if let Some(l) = &c.link {
        statement(sql::INSERT_RUN)
            .bind(l.session.as_str())
            .bind(l.run_id.as_str())
            .bind(l.proposal.as_ref().map(|p| p.as_str()))
            .bind(l.linked_at_ms)
            .execute(tx)
            .await?;
    }
    Ok(())
}

/// Inserts a mutation's answer under its key: a key another mutation took
/// first fails the transaction on the primary key.
async fn insert_mutation(tx: &mut impl Tx, m: &Mutation) -> Result<(), sqlx::Error> {
    statement(sql::INSERT_MUTATION)
        .bind(m.tenant.as_str())
        .bind(m.principal.as_str())
        .bind(m.key.as_str())
        .bind(m.tool.as_str())
        .bind(m.request_digest.as_str())
        .bind(m.session.as_str())
        .bind(m.result.as_str())
        .bind(m.at_ms)
        .execute(tx)
        .await
        .map(drop)
}
