//! A call's effects ([`toolhost_audit::Effect`]): the state changes written
//! in the same transaction as the call's audit row (`src/chain.rs`).
//!
//! An effect that finds nothing to change fails the transaction, row and
//! all: finishing an idempotency key no running claim holds is a host bug,
//! and recording the call as if its result were stored would be a lie.
//! So does a run change that finds its run elsewhere ([`run`]): a queue
//! over its bounds, a lease taken over, a run settled already.
//!
//! Each effect is an ordinary function over an open transaction of either
//! engine ([`Tx`], `effects/statement.rs`); a workspace mutation's are in
//! `effects/workspace.rs`, an admin's change to their tenant's people in
//! `effects/people.rs`.

mod people;
mod statement;
mod workspace;

use toolhost_audit::{CatalogEffect, Effect, KeyRef, ToolsetEffect};
use toolhost_runs::RunEffect;

pub(crate) use statement::{Tx, statement};

/// Inserts one artifact: its description and its bytes.
const INSERT_ARTIFACT: &str = "INSERT INTO artifacts (id, tenant, principal, \
     client_id, tool, call_id, mime_type, size, sha256, body, created_at, expires_at, run_id) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)";

/// Moves one revision from state `$6` to `$1` (a CAS on its state),
/// setting (or clearing) its retired tools, and its activation time when
/// it becomes active.
const MOVE_REVISION: &str = "UPDATE plugin_revisions SET state = $1, \
     retired_tools = $2, retired_until = $3, activated_at = COALESCE($4, activated_at) \
     WHERE id = $5 AND state = $6";

/// Records who decided a revision's review, when and why.
const REVIEW_REVISION: &str = "UPDATE plugin_revisions SET reviewed_by = $1, \
     reviewed_at = $2, review_reason = $3 WHERE id = $4";

/// The tenants an activated revision is served to (`NULL`: every tenant).
const SET_AUDIENCE: &str = "UPDATE plugin_revisions SET audience = $1 WHERE id = $2";

/// Holds a tenant to a revision of a plugin (replacing its pin, if any).
const PIN: &str = "INSERT INTO catalog_pins (tenant, plugin, revision, pinned_by, pinned_at) \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant, plugin) DO UPDATE SET \
     revision = excluded.revision, pinned_by = excluded.pinned_by, pinned_at = excluded.pinned_at";

/// Lets a tenant follow the catalog again.
const UNPIN: &str = "DELETE FROM catalog_pins WHERE tenant = $1 AND plugin = $2";

/// The catalog's next generation and new version, if it is still at the
/// generation the decision was made against.
const BUMP_CATALOG: &str = "UPDATE catalog_state SET generation = generation + 1, \
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
fn effect_failed(place: usize, e: sqlx::Error) -> EffectError {
    let taken = e
        .as_database_error()
        .is_some_and(|db| db.is_unique_violation());
    if matches!(e, sqlx::Error::RowNotFound) || taken {
        EffectError::Lost(place)
    } else {
        EffectError::Sql(e)
    }
}

/// Applies `effects`, in order, on the open transaction `tx` of either
/// engine; the first that fails stops the rest, naming its place when it
/// lost to another writer. The caller rolls the transaction back.
pub(crate) async fn apply(tx: &mut impl Tx, effects: &[&Effect]) -> Result<(), EffectError> {
    for (place, effect) in effects.iter().enumerate() {
        apply_one(tx, effect)
            .await
            .map_err(|e| effect_failed(place, e))?;
    }
    Ok(())
}

/// Applies one effect. A change that finds nothing to change answers
/// [`sqlx::Error::RowNotFound`], which [`effect_failed`] reads as lost.
async fn apply_one(tx: &mut impl Tx, effect: &Effect) -> Result<(), sqlx::Error> {
    match effect {
        Effect::FinishKey { key, result } => finish_key(tx, key, result).await,
        Effect::ReleaseKey { key } => release_key(tx, key).await,
        Effect::StoreArtifact(new) => store_artifact(tx, new).await,
        Effect::Catalog(change) => catalog(tx, change).await,
        Effect::Run(change) => run(tx, change).await,
        Effect::Workspace(change) => workspace::apply(tx, change).await,
        Effect::People(change) => people::apply(tx, change).await,
        Effect::Toolset(change) => toolset(tx, change).await,
        Effect::Entities {
            tenant,
            plugin,
            kinds,
        } => entities(tx, tenant, plugin, kinds).await,
    }
}

/// Fails with [`sqlx::Error::RowNotFound`] unless exactly one row changed.
fn one_row(changed: u64) -> Result<(), sqlx::Error> {
    if changed == 1 {
        Ok(())
    } else {
        Err(sqlx::Error::RowNotFound)
    }
}

/// Stores a finished call's answer under its key, which a running claim
/// must hold.
async fn finish_key(tx: &mut impl Tx, key: &KeyRef, result: &str) -> Result<(), sqlx::Error> {
    let done = statement(crate::gates::sql::FINISH_KEY)
        .bind(&key.tenant)
        .bind(&key.principal)
        .bind(&key.tool)
        .bind(&key.key)
        .bind(result)
        .execute(tx)
        .await?;
    // No running claim holds the key: a host bug, not a race to report.
    one_row(done)
}

/// Frees a key for a retry. Releasing twice, or after finishing, changes
/// nothing.
async fn release_key(tx: &mut impl Tx, key: &KeyRef) -> Result<(), sqlx::Error> {
    statement(crate::gates::sql::RELEASE_KEY)
        .bind(&key.tenant)
        .bind(&key.principal)
        .bind(&key.tool)
        .bind(&key.key)
        .execute(tx)
        .await
        .map(drop)
}

/// Keeps an artifact: its description and its bytes.
async fn store_artifact(
    tx: &mut impl Tx,
    new: &toolhost_artifacts::NewArtifact,
) -> Result<(), sqlx::Error> {
    let a = &new.artifact;
    statement(INSERT_ARTIFACT)
        .bind(a.id.as_str())
        .bind(&a.tenant)
        .bind(&a.principal)
        .bind(a.client_id.as_deref())
        .bind(&a.tool)
        .bind(&a.call_id)
        .bind(&a.mime_type)
        .bind(i64::try_from(a.size).unwrap_or(i64::MAX))
        .bind(a.sha256.to_string())
        .bind(&new.body[..])
        .bind(a.created_at_ms)
        .bind(a.expires_at_ms)
        .bind(a.run_id.as_deref())
        .execute(tx)
        .await
        .map(drop)
}

/// A catalog decision: each revision moved from its expected state, then
/// the catalog's generation moved from the one the decision saw.
async fn catalog(tx: &mut impl Tx, change: &CatalogEffect) -> Result<(), sqlx::Error> {
    for m in &change.moves {
        move_revision(tx, m, change.at_ms).await?;
    }
    if let Some(a) = &change.audience {
        let set = statement(SET_AUDIENCE)
            .bind(a.tenants.as_deref())
            .bind(&a.revision)
            .execute(tx)
            .await?;
        one_row(set)?;
    }
    for p in &change.pins {
        let done = match &p.revision {
            Some(revision) => {
                statement(PIN)
                    .bind(&p.tenant)
                    .bind(&p.plugin)
                    .bind(revision)
                    .bind(&p.by)
                    .bind(change.at_ms)
                    .execute(tx)
                    .await?
            }
            None => {
                statement(UNPIN)
                    .bind(&p.tenant)
                    .bind(&p.plugin)
                    .execute(tx)
                    .await?
            }
        };
        // Unpinned meanwhile by another decision.
        one_row(done)?;
    }
    if !change.changes_served {
        return Ok(());
    }
    let bumped = statement(BUMP_CATALOG)
        .bind(&change.version)
        .bind(change.at_ms)
        .bind(change.expected_generation)
        .execute(tx)
        .await?;
    // Another decision changed the catalog first.
    one_row(bumped)
}

/// One revision's move, and its review's decider when it has one.
async fn move_revision(
    tx: &mut impl Tx,
    m: &toolhost_audit::RevisionMove,
    at_ms: i64,
) -> Result<(), sqlx::Error> {
    let activated = (m.to == "active").then_some(at_ms);
    let (tools, until) = match &m.retired {
        Some((tools, until)) => (Some(tools.as_str()), Some(until.as_str())),
        None => (None, None),
    };
    let moved = statement(MOVE_REVISION)
        .bind(&m.to)
        .bind(tools)
        .bind(until)
        .bind(activated)
        .bind(&m.revision)
        .bind(&m.from)
        .execute(tx)
        .await?;
    // Decided meanwhile, or never in that state.
    one_row(moved)?;
    if let Some((by, reason)) = &m.review {
        statement(REVIEW_REVISION)
            .bind(by)
            .bind(at_ms)
            .bind(reason)
            .bind(&m.revision)
            .execute(tx)
            .await?;
    }
    Ok(())
}

/// One [`RunEffect`]. A change that finds the run not as expected (a full
/// queue, a lease taken over, a state moved on) changes no row, and fails.
async fn run(tx: &mut impl Tx, change: &RunEffect) -> Result<(), sqlx::Error> {
    use crate::runs::sql::{ATTEMPT_LOST, AWAIT_INPUT, FINISH, HAND_OVER, QUEUE};
    use crate::runs::{json, timeout_ms};
    let changed = match change {
        RunEffect::Queue(new) => {
            // Two queues of one tenant at once would each count the runs
            // without the other's: one at a time per tenant.
            tx.lock_key(&format!("toolhost-runs-queue:{}", new.tenant))
                .await?;
            statement(QUEUE)
                .bind(new.id.as_str())
                .bind(&new.tenant)
                .bind(&new.principal)
                .bind(new.principal_kind.as_str())
                .bind(&new.client_id)
                .bind(json(&new.spec)?)
                .bind(timeout_ms(&new.spec))
                .bind(i64::from(new.max_attempts))
                .bind(new.created_at_ms)
                .bind(i64::from(new.limits.per_tenant))
                .bind(i64::from(new.limits.per_principal))
                .bind(new.input.as_ref().map(json).transpose()?)
                .execute(tx)
                .await?
        }
        RunEffect::Finish(f) => {
            statement(FINISH)
                .bind(f.id.as_str())
                .bind(f.state.as_str())
                .bind(f.finished_at_ms)
                .bind(json(&f.outcome)?)
                .bind(&f.receipt)
                .bind(&f.receipt_sha256)
                .bind(i64::from(f.attempt))
                .bind(f.lease_token.as_deref())
                .execute(tx)
                .await?
        }
        RunEffect::AttemptLost {
            id,
            lease_token,
            attempt,
        } => {
            statement(ATTEMPT_LOST)
                .bind(id.as_str())
                .bind(lease_token)
                .bind(i64::from(*attempt))
                .execute(tx)
                .await?
        }
        RunEffect::HandOver {
            id,
            lease_token,
            attempt,
        } => {
            statement(HAND_OVER)
                .bind(id.as_str())
                .bind(lease_token)
                .bind(i64::from(*attempt))
                .execute(tx)
                .await?
        }
        RunEffect::AwaitInput {
            id,
            lease_token,
            attempt,
            input,
            parked_at_ms,
        } => {
            statement(AWAIT_INPUT)
                .bind(id.as_str())
                .bind(lease_token)
                .bind(i64::from(*attempt))
                .bind(json(input.as_ref())?)
                .bind(*parked_at_ms)
                .execute(tx)
                .await?
        }
    };
    // The queue is full, or the run is not as the change expects.
    one_row(changed)
}

/// Moves the generation of each entity kind a tool changed.
async fn entities(
    tx: &mut impl Tx,
    tenant: &str,
    plugin: &str,
    kinds: &[String],
) -> Result<(), sqlx::Error> {
    for kind in kinds {
        statement(crate::entities::MOVE_GENERATION)
            .bind(tenant)
            .bind(plugin)
            .bind(kind)
            .execute(tx)
            .await?;
    }
    Ok(())
}

/// Defines or deletes a toolset. A definition past the tenant's bound, or
/// a deletion finding none, changes no row: lost.
async fn toolset(tx: &mut impl Tx, change: &ToolsetEffect) -> Result<(), sqlx::Error> {
    use crate::policy::sql as policy;
    let changed = match change {
        ToolsetEffect::Define {
            tenant,
            name,
            definition,
            at_ms,
            bound,
        } => {
            statement(policy::DEFINE_TOOLSET)
                .bind(tenant)
                .bind(name)
                .bind(definition)
                .bind(*at_ms)
                .bind(*bound)
                .execute(tx)
                .await?
        }
        ToolsetEffect::Delete { tenant, name } => {
            statement(policy::DELETE_TOOLSET)
                .bind(tenant)
                .bind(name)
                .execute(tx)
                .await?
        }
    };
    one_row(changed)
}
