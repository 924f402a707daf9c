//! [`GateStore`]: the one durable store of gates and idempotency keys.
//! Every transition is one compare-and-set statement, so two deciders or
//! fifty concurrent retries cannot both win.

use std::future::Future;
use std::pin::Pin;

use crate::{
    Decision, Gate, GateId, GateQuery, GateState, IdempotencyClaim, IdempotencyKey, NewGate,
};

/// A boxed future, so stores can be used as trait objects.
pub type GateFuture<'a, T, E = GateStoreError> =
    Pin<Box<dyn Future<Output = Result<T, E>> + Send + 'a>>;

/// Why the store did not answer.
#[derive(Debug, thiserror::Error)]
pub enum GateStoreError {
    /// The database failed.
    #[error("gate store: {0}")]
    Failed(String),
    /// The database could not be reached: the request may be tried again.
    #[error(transparent)]
    Unavailable(#[from] toolhost_types::StoreUnavailable),
}

impl GateStoreError {
    /// The unreachable store, if that is why.
    pub fn unavailable(&self) -> Option<&toolhost_types::StoreUnavailable> {
        match self {
            GateStoreError::Unavailable(u) => Some(u),
            GateStoreError::Failed(_) => None,
        }
    }
}

/// Why a decision was refused.
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    /// No gate of that id in the tenant.
    #[error("no gate {0} in this tenant")]
    NotFound(GateId),
    /// It was decided (or consumed) already.
    #[error("gate {id} is already {state}")]
    Decided {
        /// The gate.
        id: GateId,
        /// Its state now.
        state: &'static str,
    },
    /// It expired before the decision.
    #[error("gate {0} has expired")]
    Expired(GateId),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] GateStoreError),
}

/// Why a gate could not be consumed by a retry.
#[derive(Debug, thiserror::Error)]
pub enum ConsumeError {
    /// No gate of that id in the tenant.
    #[error("no gate {0} in this tenant")]
    NotFound(GateId),
    /// Nobody decided it yet.
    #[error("gate {0} is still waiting for a decision")]
    Pending(GateId),
    /// A person denied it.
    #[error("gate {0} was denied")]
    Denied(GateId),
    /// A call ran with it already.
    #[error("gate {0} was already used")]
    Consumed(GateId),
    /// It expired.
    #[error("gate {0} has expired")]
    Expired(GateId),
    /// It was opened for another tool, tool version, arguments or caller.
    #[error("gate {id} was opened for another call: {what} differs")]
    Mismatch {
        /// The gate.
        id: GateId,
        /// What differs (`tool`, `tool version`, `arguments`, `principal`).
        what: &'static str,
    },
    /// The database failed.
    #[error(transparent)]
    Store(#[from] GateStoreError),
}

/// Gates and idempotency keys. Tenant is part of every lookup: a gate of
/// another tenant is `NotFound`, exactly like one that does not exist.
pub trait GateStore: Send + Sync {
    /// Opens `gate`, unless a gate for the same tenant, principal, tool,
    /// tool version and argument digest is still pending (and unexpired at
    /// `gate.created_at`): then that one is returned and nothing is written.
    fn open(&self, gate: NewGate) -> GateFuture<'_, Gate>;

    /// The gate `id` of `tenant`.
    fn get<'a>(&'a self, tenant: &'a str, id: &'a GateId) -> GateFuture<'a, Option<Gate>>;

    /// A page of `tenant`'s gates (see [`GateQuery`]), newest first.
    fn page<'a>(&'a self, tenant: &'a str, query: GateQuery<'a>) -> GateFuture<'a, Vec<Gate>>;

    /// Gates of `tenant` in `states` (all states if empty), newest first,
    /// at most `limit`.
    fn list<'a>(
        &'a self,
        tenant: &'a str,
        states: &'a [GateState],
        limit: u32,
    ) -> GateFuture<'a, Vec<Gate>> {
        let query = GateQuery {
            states,
            tool: None,
            before: None,
            limit,
        };
        self.page(tenant, query)
    }

    /// `pending → confirmed | denied` if pending and unexpired at `now`,
    /// recording who and why. One statement: of two deciders, one wins and
    /// the other gets `Decided`.
    fn decide<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a GateId,
        decision: Decision,
        by: &'a str,
        reason: &'a str,
        now: i64,
    ) -> GateFuture<'a, Gate, DecideError>;

    /// `confirmed → consumed` if confirmed, unexpired at `now`, and opened
    /// for exactly this principal, tool, tool version and argument digest.
    /// One statement: of fifty concurrent retries, one consumes and the
    /// others get `Consumed`.
    #[allow(clippy::too_many_arguments)]
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
    ) -> GateFuture<'a, Gate, ConsumeError>;

    /// Claims `key` for the request with `request_digest` at `now`: a new
    /// key, or one whose `running` claim by the same request is older than
    /// [`crate::IDEMPOTENCY_LEASE`] (its call died unsettled).
    fn claim_key<'a>(
        &'a self,
        key: &'a IdempotencyKey,
        request_digest: &'a str,
        now: i64,
    ) -> GateFuture<'a, IdempotencyClaim>;

    /// Stores the result (JSON text) of the claimed key's request. The
    /// call path settles keys through its audit row instead
    /// (`toolhost_audit::Effect`); this is for tools and tests.
    fn finish_key<'a>(&'a self, key: &'a IdempotencyKey, result: &'a str) -> GateFuture<'a, ()>;

    /// Releases a claimed key whose request failed, so it can be retried.
    fn release_key<'a>(&'a self, key: &'a IdempotencyKey) -> GateFuture<'a, ()>;
}
