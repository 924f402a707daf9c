//! The gate store's SQL: one text per operation, valid on both engines
//! (SQLite reads `$n` as PostgreSQL does, a repeated `$n` being one value;
//! `ON CONFLICT … WHERE` naming a partial index and `RETURNING` mean the
//! same in both).

/// Every column of a `gates` row, as `rows::gate` reads them.
macro_rules! gate_columns {
    () => {
        "id, tenant, principal, client_id, tool, tool_version, argument_digest, targets, \
         risk, summary, reason_required, created_at, expires_at, state, decided_by, reason, \
         decided_at, consumed_at"
    };
}
pub(super) use gate_columns;

pub(super) const GATE: &str = concat!(
    "SELECT ",
    gate_columns!(),
    " FROM gates WHERE tenant = $1 AND id = $2"
);

// `open`, step 1: a pending gate for the same call that expired undecided
// by `$7` (the new gate's creation) leaves the one-pending index, naming
// its successor `$1`. A write, so on SQLite it takes the write lock before
// the transaction reads anything.
pub(super) const SUPERSEDE_EXPIRED: &str = "UPDATE gates SET superseded_by = $1 \
     WHERE tenant = $2 AND principal = $3 AND tool = $4 AND tool_version = $5 \
     AND argument_digest = $6 AND state = 'pending' AND superseded_by IS NULL \
     AND expires_at <= $7";

// `open`, step 2: no row when a live pending gate for the same call holds
// `gates_one_pending` (whose WHERE this repeats word for word); a missing
// tenant is a foreign-key violation.
pub(super) const INSERT_GATE: &str = concat!(
    "INSERT INTO gates (id, tenant, principal, client_id, tool, tool_version, \
     argument_digest, targets, risk, summary, reason_required, created_at, expires_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
     ON CONFLICT (tenant, principal, tool, tool_version, argument_digest) \
     WHERE state = 'pending' AND superseded_by IS NULL DO NOTHING RETURNING ",
    gate_columns!()
);

// `open`, step 3, when the insert was skipped: the gate holding the index.
pub(super) const LIVE_PENDING: &str = concat!(
    "SELECT ",
    gate_columns!(),
    " FROM gates WHERE tenant = $1 AND principal = $2 AND tool = $3 AND tool_version = $4 \
     AND argument_digest = $5 AND state = 'pending' AND superseded_by IS NULL"
);

// The compare-and-set is the whole decision: of two deciders, one changes
// the row. A superseded gate expired before its successor opened, whatever
// the decider's clock says.
pub(super) const DECIDE: &str = concat!(
    "UPDATE gates SET state = $1, decided_by = $2, reason = $3, decided_at = $4 \
     WHERE tenant = $5 AND id = $6 AND state = 'pending' AND superseded_by IS NULL \
     AND expires_at > $4 RETURNING ",
    gate_columns!()
);

// Likewise: of fifty concurrent retries, one changes the row.
pub(super) const CONSUME: &str = concat!(
    "UPDATE gates SET state = 'consumed', consumed_at = $1, consumed_by = $8 \
     WHERE tenant = $2 AND id = $3 AND state = 'confirmed' AND expires_at > $1 \
     AND principal = $4 AND tool = $5 AND tool_version = $6 AND argument_digest = $7 \
     RETURNING ",
    gate_columns!()
);

// One row changed: this request holds the key, new, or taken over from a
// claim of the same request older than the lease ($7: claims made before
// it are stale). A missing tenant is a foreign-key violation.
pub(super) const CLAIM_KEY: &str = "INSERT INTO idempotency_keys \
     (tenant, principal, tool, key, request_digest, state, created_at) \
     VALUES ($1, $2, $3, $4, $5, 'running', $6) \
     ON CONFLICT (tenant, principal, tool, key) DO UPDATE SET created_at = excluded.created_at \
     WHERE idempotency_keys.state = 'running' \
     AND idempotency_keys.request_digest = excluded.request_digest \
     AND idempotency_keys.created_at < $7";
pub(super) const KEY: &str = "SELECT request_digest, state, result FROM idempotency_keys \
     WHERE tenant = $1 AND principal = $2 AND tool = $3 AND key = $4";
pub(crate) const FINISH_KEY: &str = "UPDATE idempotency_keys SET state = 'done', result = $5 \
     WHERE tenant = $1 AND principal = $2 AND tool = $3 AND key = $4 AND state = 'running'";
// A finished key keeps its result: only a running claim is released.
pub(crate) const RELEASE_KEY: &str = "DELETE FROM idempotency_keys \
     WHERE tenant = $1 AND principal = $2 AND tool = $3 AND key = $4 AND state = 'running'";

// Consumed gates whose consuming call has no audit row (`audit.call_id` is
// unique, so the probe is an index lookup).
pub(super) const UNAUDITED: &str = "SELECT id, tenant, consumed_by, consumed_at FROM gates \
     WHERE state = 'consumed' AND consumed_by IS NOT NULL AND consumed_at < $1 \
     AND NOT EXISTS (SELECT 1 FROM audit WHERE audit.call_id = gates.consumed_by) \
     ORDER BY consumed_at LIMIT $2";
