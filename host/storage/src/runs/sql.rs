//! The run queue's SQL: one text per operation for both engines, except the
//! claim, whose candidate row PostgreSQL locks `FOR UPDATE SKIP LOCKED`
//! (SQLite has no such clause, and needs none: it has one writer, and the
//! claim is one statement).
//!
//! "Unsettled" is `state IN ('queued', 'running', 'cancelling')`, spelled
//! the same everywhere so both engines match it to the partial index
//! `runs_unsettled` (migration 0011); "held" is `state IN ('running',
//! 'cancelling')`, which `runs_lease_expiry` covers.

/// Every column of a `runs` row, as `rows::run` reads them.
macro_rules! run_columns {
    () => {
        "id, tenant, principal, principal_kind, client_id, spec, state, attempt, max_attempts, \
         audited_attempts, created_at, started_at, finished_at, deadline_at, \
         cancel_requested_at, lease_owner, lease_token, lease_until, progress, outcome, \
         receipt, receipt_sha256, handed_over"
    };
}

pub(super) const BY_ID: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE tenant = $1 AND id = $2"
);

pub(super) const BY_ID_ANY: &str = concat!("SELECT ", run_columns!(), " FROM runs WHERE id = $1");

// Served by `runs_tenant_created` and `runs_principal_created`; `id` breaks
// ties between runs queued in the same millisecond.
pub(super) const OF_TENANT: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE tenant = $1 ORDER BY created_at DESC, id DESC LIMIT $2"
);
pub(super) const OF_PRINCIPAL: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE tenant = $1 AND principal = $2 ORDER BY created_at DESC, id DESC LIMIT $3"
);

pub(super) const ACTIVE: &str = "SELECT \
     (SELECT COUNT(*) FROM runs WHERE tenant = $1 \
      AND state IN ('queued', 'running', 'cancelling')) AS of_tenant, \
     (SELECT COUNT(*) FROM runs WHERE tenant = $1 AND principal = $2 \
      AND state IN ('queued', 'running', 'cancelling')) AS of_principal";

/// The claim, with `$lock` after the candidate's `LIMIT 1`. Binds: `$1`
/// worker, `$2` lease token, `$3` now, `$4` lease end. A run taken over
/// while `cancelling` stays so; `started_at` and `deadline_at` are set by
/// the first claim only, so a later attempt inherits the budget's end.
///
/// Fair across tenants: the candidate is the oldest run of a tenant that
/// holds the fewest workers now, so one tenant's queue of long runs never
/// keeps another tenant's run waiting more than one worker slot's wait;
/// within a tenant, runs start oldest first.
macro_rules! claim {
    ($lock:literal) => {
        concat!(
            "UPDATE runs SET \
             state = CASE WHEN state = 'cancelling' THEN 'cancelling' ELSE 'running' END, \
             attempt = attempt + 1, lease_owner = $1, lease_token = $2, lease_until = $4, \
             started_at = COALESCE(started_at, $3), \
             deadline_at = COALESCE(deadline_at, $3 + timeout_ms) \
             WHERE id = (SELECT id FROM runs WHERE state = 'queued' \
             OR (state IN ('running', 'cancelling') AND lease_until < $3 \
             AND attempt < max_attempts) \
             ORDER BY (SELECT COUNT(*) FROM runs held WHERE held.tenant = runs.tenant \
             AND held.state IN ('running', 'cancelling') AND held.lease_until >= $3), \
             created_at, id LIMIT 1",
            $lock,
            ") RETURNING ",
            run_columns!()
        )
    };
}

pub(super) const CLAIM_SQLITE: &str = claim!("");
pub(super) const CLAIM_POSTGRES: &str = claim!(" FOR UPDATE SKIP LOCKED");

// No progress given keeps the last one reported.
pub(super) const HEARTBEAT: &str = "UPDATE runs SET lease_until = $3, \
     progress = COALESCE($4, progress) \
     WHERE id = $1 AND lease_token = $2 AND state IN ('running', 'cancelling') \
     RETURNING cancel_requested_at";

// A second request keeps the first one's time.
pub(super) const REQUEST_CANCEL: &str = concat!(
    "UPDATE runs SET state = CASE WHEN state = 'queued' THEN 'queued' ELSE 'cancelling' END, \
     cancel_requested_at = COALESCE(cancel_requested_at, $3) \
     WHERE tenant = $1 AND id = $2 AND state IN ('queued', 'running', 'cancelling') RETURNING ",
    run_columns!()
);

pub(super) const EXHAUSTED: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE state IN ('running', 'cancelling') AND lease_until < $1 \
     AND attempt >= max_attempts ORDER BY lease_until, id"
);

/// [`toolhost_runs::RunEffect::Queue`]: inserts the run only while its
/// tenant has fewer than `$10` and its principal fewer than `$11`
/// unsettled runs. The effect takes its tenant's lock first
/// (`Tx::lock_key`), so two queues never both see room for one.
pub(crate) const QUEUE: &str = "INSERT INTO runs (id, tenant, principal, principal_kind, \
     client_id, spec, timeout_ms, state, attempt, max_attempts, audited_attempts, created_at) \
     SELECT $1, $2, $3, $4, $5, $6, $7, 'queued', 0, $8, 0, $9 \
     WHERE (SELECT COUNT(*) FROM runs WHERE tenant = $2 \
            AND state IN ('queued', 'running', 'cancelling')) < $10 \
       AND (SELECT COUNT(*) FROM runs WHERE tenant = $2 AND principal = $3 \
            AND state IN ('queued', 'running', 'cancelling')) < $11";

/// [`toolhost_runs::RunEffect::Finish`]: fenced by the lease `$8`, or (no
/// lease) by the run still being queued. The lease is released.
pub(crate) const FINISH: &str = "UPDATE runs SET state = $2, finished_at = $3, outcome = $4, \
     receipt = $5, receipt_sha256 = $6, audited_attempts = $7, \
     lease_owner = NULL, lease_token = NULL, lease_until = NULL \
     WHERE id = $1 AND ((lease_token = $8 AND state IN ('running', 'cancelling')) \
     OR ($8 IS NULL AND state = 'queued'))";

/// [`toolhost_runs::RunEffect::AttemptLost`]: under the new lease `$2`,
/// once per lost attempt.
pub(crate) const ATTEMPT_LOST: &str = "UPDATE runs SET audited_attempts = $3 \
     WHERE id = $1 AND lease_token = $2 AND audited_attempts < $3";

/// [`toolhost_runs::RunEffect::HandOver`]: fenced by the lease `$2` of a
/// run still `running` (a cancelling one is settled instead). Attempt `$3`
/// is marked handed over (bit `$3 - 1`), its row counted as written, and
/// the run queued again with one more attempt allowed.
pub(crate) const HAND_OVER: &str = "UPDATE runs SET state = 'queued', \
     handed_over = handed_over | (CAST(1 AS BIGINT) << CAST($3 - 1 AS INTEGER)), \
     audited_attempts = $3, max_attempts = max_attempts + 1, \
     lease_owner = NULL, lease_token = NULL, lease_until = NULL \
     WHERE id = $1 AND lease_token = $2 AND state = 'running' AND attempt = $3 \
     AND $3 BETWEEN 1 AND 62";
