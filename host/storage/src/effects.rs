//! A call's effects ([`toolhost_audit::Effect`]): the state changes written
//! in the same transaction as the call's audit row (`src/chain.rs`).
//!
//! An effect that finds nothing to change fails the transaction, row and
//! all: finishing an idempotency key no running claim holds is a host bug,
//! and recording the call as if its result were stored would be a lie.
//! So does a run change that finds its run elsewhere (`apply_run!`): a
//! queue over its bounds, a lease taken over, a run settled already.

/// Inserts one artifact: its description and its bytes.
pub(crate) const INSERT_ARTIFACT: &str = "INSERT INTO artifacts (id, tenant, principal, \
     client_id, tool, call_id, mime_type, size, sha256, body, created_at, expires_at, run_id) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)";

/// Moves one revision from state `$6` to `$1` (a CAS on its state),
/// setting (or clearing) its retired tools, and its activation time when
/// it becomes active.
pub(crate) const MOVE_REVISION: &str = "UPDATE plugin_revisions SET state = $1, \
     retired_tools = $2, retired_until = $3, activated_at = COALESCE($4, activated_at) \
     WHERE id = $5 AND state = $6";

/// Records who decided a revision's review, when and why.
pub(crate) const REVIEW_REVISION: &str = "UPDATE plugin_revisions SET reviewed_by = $1, \
     reviewed_at = $2, review_reason = $3 WHERE id = $4";

/// The catalog's next generation and new version, if it is still at the
/// generation the decision was made against.
pub(crate) const BUMP_CATALOG: &str = "UPDATE catalog_state SET generation = generation + 1, \
     version = $1, changed_at = $2 WHERE id = 1 AND generation = $3";

/// Why a row's effects were not applied.
#[derive(Debug)]
pub(crate) enum EffectError {
    /// The effect at this place found nothing to change, or its key
    /// taken: it lost to another writer.
    Lost(usize),
    /// The database failed.
    Sql(sqlx::Error),
}

impl From<sqlx::Error> for EffectError {
    fn from(e: sqlx::Error) -> Self {
        EffectError::Sql(e)
    }
}

/// How the effect at `place` failed: an effect that finds nothing to
/// change (its state moved on) or a key another writer took (a unique
/// index refuses it) lost; anything else is the database's failure.
pub(crate) fn effect_failed(place: usize, e: sqlx::Error) -> EffectError {
    let taken = e
        .as_database_error()
        .is_some_and(|db| db.is_unique_violation());
    if matches!(e, sqlx::Error::RowNotFound) || taken {
        EffectError::Lost(place)
    } else {
        EffectError::Sql(e)
    }
}

/// Applies `$effects` (an iterator of `&Effect`) on the open transaction
/// `$tx` of either engine; evaluates to `Result<(), EffectError>`, naming
/// the effect that lost.
macro_rules! apply_effects {
    ($tx:expr, $effects:expr) => {
        async {
            use toolhost_audit::Effect;
            use $crate::gates::sql::{FINISH_KEY, RELEASE_KEY};
            for (place, effect) in $effects.enumerate() {
                let applied: Result<(), sqlx::Error> = async {
                    match effect {
                        Effect::FinishKey { key, result } => {
                            let done = sqlx::query(FINISH_KEY)
                                .bind(key.tenant.as_str())
                                .bind(key.principal.as_str())
                                .bind(key.tool.as_str())
                                .bind(key.key.as_str())
                                .bind(result.as_str())
                                .execute(&mut *$tx)
                                .await?;
                            if done.rows_affected() != 1 {
                                // No running claim holds the key.
                                return Err(sqlx::Error::RowNotFound);
                            }
                        }
                        Effect::ReleaseKey { key } => {
                            // Releasing twice, or after finishing, changes nothing.
                            sqlx::query(RELEASE_KEY)
                                .bind(key.tenant.as_str())
                                .bind(key.principal.as_str())
                                .bind(key.tool.as_str())
                                .bind(key.key.as_str())
                                .execute(&mut *$tx)
                                .await?;
                        }
                        Effect::StoreArtifact(new) => {
                            let a = &new.artifact;
                            sqlx::query($crate::effects::INSERT_ARTIFACT)
                                .bind(a.id.as_str())
                                .bind(a.tenant.as_str())
                                .bind(a.principal.as_str())
                                .bind(a.client_id.as_deref())
                                .bind(a.tool.as_str())
                                .bind(a.call_id.as_str())
                                .bind(a.mime_type.as_str())
                                .bind(i64::try_from(a.size).unwrap_or(i64::MAX))
                                .bind(a.sha256.to_string())
                                .bind(&new.body[..])
                                .bind(a.created_at_ms)
                                .bind(a.expires_at_ms)
                                .bind(a.run_id.as_deref())
                                .execute(&mut *$tx)
                                .await?;
                        }
                        Effect::Catalog(change) => {
                            use $crate::effects::{BUMP_CATALOG, MOVE_REVISION, REVIEW_REVISION};
                            for m in &change.moves {
                                let activated = (m.to == "active").then_some(change.at_ms);
                                let (tools, until) = match &m.retired {
                                    Some((tools, until)) => {
                                        (Some(tools.as_str()), Some(until.as_str()))
                                    }
                                    None => (None, None),
                                };
                                let moved = sqlx::query(MOVE_REVISION)
                                    .bind(m.to.as_str())
                                    .bind(tools)
                                    .bind(until)
                                    .bind(activated)
                                    .bind(m.revision.as_str())
                                    .bind(m.from.as_str())
                                    .execute(&mut *$tx)
                                    .await?;
                                if moved.rows_affected() != 1 {
                                    // Decided meanwhile, or never in that state.
                                    return Err(sqlx::Error::RowNotFound);
                                }
                                if let Some((by, reason)) = &m.review {
                                    sqlx::query(REVIEW_REVISION)
                                        .bind(by.as_str())
                                        .bind(change.at_ms)
                                        .bind(reason.as_str())
                                        .bind(m.revision.as_str())
                                        .execute(&mut *$tx)
                                        .await?;
                                }
                            }
                            let bumped = if change.changes_served {
                                sqlx::query(BUMP_CATALOG)
                                    .bind(change.version.as_str())
                                    .bind(change.at_ms)
                                    .bind(change.expected_generation)
                                    .execute(&mut *$tx)
                                    .await?
                                    .rows_affected()
                            } else {
                                1
                            };
                            if bumped != 1 {
                                // Another decision changed the catalog first.
                                return Err(sqlx::Error::RowNotFound);
                            }
                        }
                        Effect::Run(change) => $crate::effects::apply_run!($tx, change),
                        Effect::Workspace(change) => $crate::effects::apply_workspace!($tx, change),
                        Effect::Entities {
                            tenant,
                            plugin,
                            kinds,
                        } => {
                            for kind in kinds {
                                sqlx::query($crate::entities::MOVE_GENERATION)
                                    .bind(tenant.as_str())
                                    .bind(plugin.as_str())
                                    .bind(kind.as_str())
                                    .execute(&mut *$tx)
                                    .await?;
                            }
                        }
                    }
                    Ok(())
                }
                .await;
                applied.map_err(|e| $crate::effects::effect_failed(place, e))?;
            }
            Ok::<(), $crate::effects::EffectError>(())
        }
    };
}
pub(crate) use apply_effects;

/// Applies one [`toolhost_runs::RunEffect`] on the open transaction `$tx`,
/// inside [`apply_effects!`]'s loop: `?` and `return` leave the effects'
/// block. A change that finds the run not as expected (a full queue, a
/// lease taken over, a state moved on) changes no row, and fails.
macro_rules! apply_run {
    ($tx:expr, $change:expr) => {{
        use toolhost_runs::RunEffect;
        use $crate::runs::sql::{ATTEMPT_LOST, FINISH, QUEUE};
        use $crate::runs::{json, timeout_ms};
        let changed = match $change {
            RunEffect::Queue(new) => {
                sqlx::query(QUEUE)
                    .bind(new.id.as_str())
                    .bind(new.tenant.as_str())
                    .bind(new.principal.as_str())
                    .bind(new.principal_kind.as_str())
                    .bind(new.client_id.as_str())
                    .bind(json(&new.spec)?)
                    .bind(timeout_ms(&new.spec))
                    .bind(i64::from(new.max_attempts))
                    .bind(new.created_at_ms)
                    .bind(i64::from(new.limits.per_tenant))
                    .bind(i64::from(new.limits.per_principal))
                    .execute(&mut *$tx)
                    .await?
            }
            RunEffect::Finish(f) => {
                sqlx::query(FINISH)
                    .bind(f.id.as_str())
                    .bind(f.state.as_str())
                    .bind(f.finished_at_ms)
                    .bind(json(&f.outcome)?)
                    .bind(f.receipt.as_str())
                    .bind(f.receipt_sha256.as_str())
                    .bind(i64::from(f.attempt))
                    .bind(f.lease_token.as_deref())
                    .execute(&mut *$tx)
                    .await?
            }
            RunEffect::AttemptLost {
                id,
                lease_token,
                attempt,
            } => {
                sqlx::query(ATTEMPT_LOST)
                    .bind(id.as_str())
                    .bind(lease_token.as_str())
                    .bind(i64::from(*attempt))
                    .execute(&mut *$tx)
                    .await?
            }
        };
        if changed.rows_affected() != 1 {
            // The queue is full, or the run is not as the change expects.
            return Err(sqlx::Error::RowNotFound);
        }
    }};
}
pub(crate) use apply_run;

/// Applies one [`toolhost_workspace::WorkspaceEffect`] on the open
/// transaction `$tx`, inside [`apply_effects!`]'s loop. A session not at
/// the expected version (or no longer open) changes no row and fails; so
/// does a key another mutation took meanwhile (the primary key refuses
/// it), and a proposal number taken twice.
macro_rules! apply_workspace {
    ($tx:expr, $change:expr) => {{
        use toolhost_workspace::WorkspaceEffect;
        use $crate::runs::json;
        use $crate::workspace::sql;
        match $change {
            WorkspaceEffect::Open {
                session: s,
                mutation,
            } => {
                let bound = s.bound_to.as_ref().map(json).transpose()?;
                sqlx::query(sql::INSERT_SESSION)
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
                    .execute(&mut *$tx)
                    .await?;
                if let Some(m) = mutation {
                    $crate::effects::insert_mutation!($tx, m);
                }
            }
            WorkspaceEffect::Change(c) => {
                let stepped = sqlx::query(sql::STEP_SESSION)
                    .bind(c.tenant.as_str())
                    .bind(c.session.as_str())
                    .bind(c.at_ms)
                    .bind(c.state.map(|s| s.as_str()))
                    .bind(c.expected_version)
                    .execute(&mut *$tx)
                    .await?;
                if stepped.rows_affected() != 1 {
                    // Another mutation moved the session first.
                    return Err(sqlx::Error::RowNotFound);
                }
                if let Some(p) = &c.proposal {
                    sqlx::query(sql::INSERT_PROPOSAL)
                        .bind(p.id.as_str())
                        .bind(p.session.as_str())
                        .bind(p.number)
                        .bind(p.author.as_str())
                        .bind(json(&p.body)?)
                        .bind(p.digest.as_str())
                        .bind(json(&p.validation)?)
                        .bind(json(&p.diff)?)
                        .bind(p.created_at_ms)
                        .execute(&mut *$tx)
                        .await?;
                }
                for handle in &c.keep_uploads {
                    sqlx::query(sql::KEEP_UPLOAD)
                        .bind(c.tenant.as_str())
                        .bind(handle.as_str())
                        .bind($crate::workspace::KEPT)
                        .execute(&mut *$tx)
                        .await?;
                }
                if let Some(l) = &c.link {
                    sqlx::query(sql::INSERT_RUN)
                        .bind(l.session.as_str())
                        .bind(l.run_id.as_str())
                        .bind(l.proposal.as_ref().map(|p| p.as_str()))
                        .bind(l.linked_at_ms)
                        .execute(&mut *$tx)
                        .await?;
                }
                if let Some(rev) = &c.submit {
                    $crate::effects::submit_revision!($tx, rev);
                }
                if let Some(p) = &c.promotion {
                    let result = p.result.as_ref().map(json).transpose()?;
                    sqlx::query(sql::UPSERT_PROMOTION)
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
                        .execute(&mut *$tx)
                        .await?;
                }
                $crate::effects::insert_mutation!($tx, &c.mutation);
            }
        }
    }};
}
pub(crate) use apply_workspace;

/// Inserts a mutation's answer under its key: a key another mutation took
/// first fails the transaction on the primary key.
macro_rules! insert_mutation {
    ($tx:expr, $m:expr) => {{
        let m = $m;
        sqlx::query($crate::workspace::sql::INSERT_MUTATION)
            .bind(m.tenant.as_str())
            .bind(m.principal.as_str())
            .bind(m.key.as_str())
            .bind(m.tool.as_str())
            .bind(m.request_digest.as_str())
            .bind(m.session.as_str())
            .bind(m.result.as_str())
            .bind(m.at_ms)
            .execute(&mut *$tx)
            .await?;
    }};
}
pub(crate) use insert_mutation;

/// Stores a revision submitted for review with a promotion, as intake
/// stores one (`src/catalog.rs`), unless the store holds it already (the
/// same plugin, component and manifest give the same id).
macro_rules! submit_revision {
    ($tx:expr, $rev:expr) => {{
        use sqlx::Row as _;
        let rev = $rev;
        let there = sqlx::query($crate::workspace::sql::REVISION_EXISTS)
            .bind(rev.id.as_str())
            .fetch_optional(&mut *$tx)
            .await?
            .map(|row| row.try_get::<String, _>(0))
            .transpose()?;
        if there.is_none() {
            let (component, manifest) = (
                rev.component_digest.to_string(),
                rev.manifest_digest.to_string(),
            );
            sqlx::query($crate::catalog::INSERT_BLOB)
                .bind(component.as_str())
                .bind(&rev.component[..])
                .bind(rev.submitted_at_ms)
                .execute(&mut *$tx)
                .await?;
            sqlx::query($crate::catalog::INSERT_REVISION)
                .bind(rev.id.as_str())
                .bind(rev.plugin.as_str())
                .bind(rev.version.as_str())
                .bind(component.as_str())
                .bind(manifest.as_str())
                .bind(rev.manifest.as_str())
                .bind(rev.envelope.as_deref())
                .bind(rev.signer.as_deref())
                .bind(rev.source.as_str())
                .bind(rev.capabilities.as_str())
                .bind(rev.submitted_by.as_str())
                .bind(rev.submitted_at_ms)
                .execute(&mut *$tx)
                .await?;
        }
    }};
}
pub(crate) use submit_revision;
