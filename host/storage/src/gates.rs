//! [`GateStore`] for [`Store`]: approval gates and idempotency keys, each
//! operation one statement (or, for `open`, one transaction) from `sql.rs`
//! on either engine, its rows read back by `rows.rs`.
//!
//! The database decides every race, never a read followed by a write:
//!
//! - `decide` and `consume` are conditional `UPDATE … RETURNING`s; the one
//!   caller that changes the row wins, and the others read the row only to
//!   say *why* they lost (`rows::refused_decision`, `rows::refused_consumption`).
//! - `open` leans on the partial unique index `gates_one_pending`: at most
//!   one live pending gate per (tenant, principal, tool, tool version,
//!   argument digest). Its transaction first marks a pending gate for the
//!   same call that expired undecided as `superseded_by` the new one (which
//!   takes it out of the index without changing its state or deleting it),
//!   then inserts with `ON CONFLICT DO NOTHING`; an insert that found a live
//!   gate returns that gate and rolls back, writing nothing. Two identical
//!   concurrent opens thus share one gate, on one host or many.
//! - `claim_key` is an `INSERT … ON CONFLICT DO NOTHING`: one row changed
//!   means this request holds the key.
//!
//! A gate's or key's tenant must exist (a foreign key); gates are never
//! deleted.

mod rows;
pub(crate) mod sql;

use toolhost_gates::{
    ConsumeError, DecideError, Decision, Gate, GateFuture, GateId, GateQuery, GateState, GateStore,
    GateStoreError, IDEMPOTENCY_LEASE, IdempotencyClaim, IdempotencyKey, NewGate,
};

use crate::Store;
use crate::connect::{execute, fetch_all, fetch_optional, on_pool};
use crate::keyset::{Past, push_past};

/// How many times `open` (and `claim_key`) start over after the row they
/// met changed between two statements (a live gate decided, a claim
/// released). Each retry follows another caller's progress, so needing a
/// third means something is wrong: it fails rather than spin.
const ATTEMPTS: usize = 3;

/// Maps a driver error met while doing `operation`. The driver's message
/// names tables and constraints, never bound values.
pub(crate) fn failed(operation: &'static str) -> impl FnOnce(sqlx::Error) -> GateStoreError {
    move |e| match crate::error::unreachable(operation, &e) {
        Some(down) => GateStoreError::Unavailable(down),
        None => GateStoreError::Failed(format!("{operation}: {e}")),
    }
}

/// [`failed`], except that a foreign-key violation (the only reference a
/// gate, a key or a checkpoint has is its tenant) names the missing tenant.
pub(crate) fn in_tenant(
    operation: &'static str,
    tenant: &str,
) -> impl FnOnce(sqlx::Error) -> GateStoreError {
    move |e| match e.as_database_error() {
        Some(db) if db.is_foreign_key_violation() => {
            GateStoreError::Failed(format!("{operation}: tenant {tenant:?} does not exist"))
        }
        _ => failed(operation)(e),
    }
}

/// The four state names [`sql::LIST`] binds: those in `states` (all four
/// when empty), repeated to fill the slots (a repeat matches nothing more).
/// The names of `states` (every state's if empty).
fn state_names(states: &[GateState]) -> Vec<&'static str> {
    [
        GateState::Pending,
        GateState::Confirmed,
        GateState::Denied,
        GateState::Consumed,
    ]
    .into_iter()
    .filter(|s| states.is_empty() || states.contains(s))
    .map(GateState::as_str)
    .collect()
}

/// `query`'s page of `tenant`'s gates as one `SELECT`: its states, tool
/// and cursor, newest first; `gates_tenant_created` (or, for a state,
/// `gates_tenant_state_created`) serves it.
fn listing<DB>(tenant: &str, query: &GateQuery<'_>) -> sqlx::QueryBuilder<DB>
where
    DB: sqlx::Database,
    <DB as sqlx::Database>::Arguments: Default,
    for<'t> String: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> i64: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
{
    let mut sql = sqlx::QueryBuilder::new(concat!("SELECT ", sql::gate_columns!(), " FROM gates"));
    sql.push(" WHERE tenant = ")
        .push_bind(tenant.to_owned())
        .push(" AND state IN (");
    let mut each = sql.separated(", ");
    for state in state_names(query.states) {
        each.push_bind(state.to_owned());
    }
    sql.push(")");
    if let Some(tool) = query.tool {
        sql.push(" AND tool = ").push_bind(tool.to_owned());
    }
    if let Some(c) = query.before {
        let cursor = (c.created_at, c.id.as_str());
        push_past(&mut sql, ("created_at", "id"), cursor, Past::Earlier);
    }
    sql.push(" ORDER BY created_at DESC, id DESC LIMIT ")
        .push_bind(i64::from(query.limit));
    sql
}

impl Store {
    /// The gate `id` of `tenant`, as the store's own reads need it.
    async fn gate(&self, tenant: &str, id: &GateId) -> Result<Option<Gate>, GateStoreError> {
        fetch_optional!(&self.pools, rows::gate, sql::GATE, tenant, id.as_str())
            .map_err(failed("select gate"))
    }

    /// One attempt at `open` (see the module docs): the gate inserted or
    /// found live, or `None` when the gate holding the index stopped being
    /// pending between the insert and the read, so the caller starts over.
    async fn open_once(&self, new: &NewGate, targets: &str) -> Result<Option<Gate>, sqlx::Error> {
        let risk = new.risk.to_string();
        on_pool!(&self.pools, pool => async {
            let _turn = crate::connect::transaction_turn(&self.pools).await;
            let mut tx = pool.begin().await?;
            sqlx::query(sql::SUPERSEDE_EXPIRED)
                .bind(new.id.as_str())
                .bind(new.tenant.as_str())
                .bind(new.principal.as_str())
                .bind(new.tool.as_str())
                .bind(new.tool_version.as_str())
                .bind(new.argument_digest.as_str())
                .bind(new.created_at)
                .execute(&mut *tx)
                .await?;
            let inserted = sqlx::query(sql::INSERT_GATE)
                .bind(new.id.as_str())
                .bind(new.tenant.as_str())
                .bind(new.principal.as_str())
                .bind(new.client_id.as_str())
                .bind(new.tool.as_str())
                .bind(new.tool_version.as_str())
                .bind(new.argument_digest.as_str())
                .bind(targets)
                .bind(risk.as_str())
                .bind(new.summary.as_str())
                .bind(new.reason_required)
                .bind(new.created_at)
                .bind(new.expires_at)
                .fetch_optional(&mut *tx)
                .await?;
            if let Some(row) = inserted {
                let gate = rows::gate(&row)?;
                tx.commit().await?;
                return Ok(Some(gate));
            }
            // A live gate holds the index: return it, rolling back so
            // nothing was written. Explicitly: a dropped transaction rolls
            // back only when its connection is next used, holding its
            // locks until then.
            let live = sqlx::query(sql::LIVE_PENDING)
                .bind(new.tenant.as_str())
                .bind(new.principal.as_str())
                .bind(new.tool.as_str())
                .bind(new.tool_version.as_str())
                .bind(new.argument_digest.as_str())
                .fetch_optional(&mut *tx)
                .await?;
            tx.rollback().await?;
            let live = live.as_ref().map(rows::gate).transpose()?;
            Ok(live.filter(|g| g.opened.expires_at > new.created_at))
        }
        .await)
    }

    /// The row of `key`, if any: request digest, state, result.
    async fn held_key(&self, key: &IdempotencyKey) -> Result<Option<rows::KeyRow>, sqlx::Error> {
        fetch_optional!(
            &self.pools,
            rows::key,
            sql::KEY,
            key.tenant.as_str(),
            key.principal.as_str(),
            key.tool.as_str(),
            key.key.as_str()
        )
    }
}

/// A consumed gate whose call left no audit row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnauditedGate {
    /// The gate.
    pub gate_id: String,
    /// Its tenant.
    pub tenant: String,
    /// The call that consumed it.
    pub call_id: String,
    /// When, unix milliseconds.
    pub consumed_at: i64,
}

impl Store {
    /// Consumed gates, consumed before `before_ms`, whose consuming call has
    /// no audit row: calls the host stopped during (a gate is consumed
    /// before its call runs, and the row written after). Oldest first, at
    /// most `limit`.
    pub async fn unaudited_gates(
        &self,
        before_ms: i64,
        limit: u32,
    ) -> Result<Vec<UnauditedGate>, crate::StorageError> {
        fetch_all!(
            &self.pools,
            unaudited,
            sql::UNAUDITED,
            before_ms,
            i64::from(limit)
        )
        .map_err(crate::StorageError::query("list unaudited gates"))
    }
}

fn unaudited(row: &impl crate::fields::Fields) -> Result<UnauditedGate, sqlx::Error> {
    Ok(UnauditedGate {
        gate_id: row.text("id")?,
        tenant: row.text("tenant")?,
        call_id: row.text("consumed_by")?,
        consumed_at: row.int("consumed_at")?,
    })
}

impl GateStore for Store {
    fn open(&self, gate: NewGate) -> GateFuture<'_, Gate> {
        Box::pin(async move {
            let targets = serde_json::to_string(&gate.targets)
                .map_err(|e| GateStoreError::Failed(format!("open gate: targets as JSON: {e}")))?;
            for _ in 0..ATTEMPTS {
                let opened = self.open_once(&gate, &targets).await;
                if let Some(gate) = opened.map_err(in_tenant("open gate", &gate.tenant))? {
                    return Ok(gate);
                }
            }
            Err(GateStoreError::Failed(format!(
                "open gate {}: the pending gate for this call kept changing",
                gate.id
            )))
        })
    }

    fn get<'a>(&'a self, tenant: &'a str, id: &'a GateId) -> GateFuture<'a, Option<Gate>> {
        Box::pin(self.gate(tenant, id))
    }

    fn page<'a>(&'a self, tenant: &'a str, query: GateQuery<'a>) -> GateFuture<'a, Vec<Gate>> {
        Box::pin(async move {
            on_pool!(&self.pools, pool => {
                listing(tenant, &query)
                    .build()
                    .fetch_all(pool)
                    .await
                    .and_then(|rows| rows.iter().map(rows::gate).collect::<Result<Vec<_>, _>>())
            })
            .map_err(failed("list gates"))
        })
    }

    fn decide<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a GateId,
        decision: Decision,
        by: &'a str,
        reason: &'a str,
        now: i64,
    ) -> GateFuture<'a, Gate, DecideError> {
        Box::pin(async move {
            // No reason given is no reason stored, not an empty one.
            let reason = Some(reason).filter(|r| !r.is_empty());
            let state = decision.state().as_str();
            let decided = fetch_optional!(
                &self.pools,
                rows::gate,
                sql::DECIDE,
                state,
                by,
                reason,
                now,
                tenant,
                id.as_str()
            )
            .map_err(failed("decide gate"))?;
            match decided {
                Some(gate) => Ok(gate),
                None => Err(rows::refused_decision(id, self.gate(tenant, id).await?)),
            }
        })
    }

    fn consume<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a GateId,
        principal: &'a str,
        tool: &'a str,
        tool_version: &'a str,
        argument_digest: &'a str,
        call_id: &'a str,
        now: i64,
    ) -> GateFuture<'a, Gate, ConsumeError> {
        Box::pin(async move {
            let consumed = fetch_optional!(
                &self.pools,
                rows::gate,
                sql::CONSUME,
                now,
                tenant,
                id.as_str(),
                principal,
                tool,
                tool_version,
                argument_digest,
                call_id
            )
            .map_err(failed("consume gate"))?;
            if let Some(gate) = consumed {
                return Ok(gate);
            }
            let call = rows::Call {
                principal,
                tool,
                tool_version,
                argument_digest,
            };
            let found = self.gate(tenant, id).await?;
            Err(rows::refused_consumption(id, found, &call, now))
        })
    }

    fn claim_key<'a>(
        &'a self,
        key: &'a IdempotencyKey,
        request_digest: &'a str,
        now: i64,
    ) -> GateFuture<'a, IdempotencyClaim> {
        Box::pin(async move {
            let lease = i64::try_from(IDEMPOTENCY_LEASE.as_millis()).unwrap_or(i64::MAX);
            let stale_before = now.saturating_sub(lease);
            for _ in 0..ATTEMPTS {
                let claimed = execute!(
                    &self.pools,
                    sql::CLAIM_KEY,
                    key.tenant.as_str(),
                    key.principal.as_str(),
                    key.tool.as_str(),
                    key.key.as_str(),
                    request_digest,
                    now,
                    stale_before
                )
                .map_err(in_tenant("claim idempotency key", &key.tenant))?;
                if claimed == 1 {
                    return Ok(IdempotencyClaim::Claimed);
                }
                // Held by someone; `None` if released since: claim again.
                let held = self.held_key(key).await;
                if let Some(held) = held.map_err(failed("select idempotency key"))? {
                    return rows::held_claim(&key.key, request_digest, held)
                        .map_err(failed("read idempotency key"));
                }
            }
            Err(GateStoreError::Failed(format!(
                "claim idempotency key {:?}: claimed and released {ATTEMPTS} times meanwhile",
                key.key
            )))
        })
    }

    fn finish_key<'a>(&'a self, key: &'a IdempotencyKey, result: &'a str) -> GateFuture<'a, ()> {
        Box::pin(async move {
            let finished = execute!(
                &self.pools,
                sql::FINISH_KEY,
                key.tenant.as_str(),
                key.principal.as_str(),
                key.tool.as_str(),
                key.key.as_str(),
                result
            )
            .map_err(failed("finish idempotency key"))?;
            // Finishing a key nobody holds is a host bug; say so rather than
            // store a result no claim asked for.
            match finished {
                1 => Ok(()),
                _ => Err(GateStoreError::Failed(format!(
                    "finish idempotency key {:?}: no running claim holds it",
                    key.key
                ))),
            }
        })
    }

    fn release_key<'a>(&'a self, key: &'a IdempotencyKey) -> GateFuture<'a, ()> {
        Box::pin(async move {
            // Releasing twice, or after finishing, changes nothing.
            execute!(
                &self.pools,
                sql::RELEASE_KEY,
                key.tenant.as_str(),
                key.principal.as_str(),
                key.tool.as_str(),
                key.key.as_str()
            )
            .map(drop)
            .map_err(failed("release idempotency key"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_names_the_chosen_states_or_all_four() {
        use GateState::*;
        let all = ["pending", "confirmed", "denied", "consumed"];
        assert_eq!(state_names(&[]), all);
        assert_eq!(state_names(&[Pending, Confirmed, Denied, Consumed]), all);
        assert_eq!(state_names(&[Denied]), ["denied"]);
        assert_eq!(
            state_names(&[Consumed, Pending, Consumed]),
            ["pending", "consumed"]
        );
    }
}
