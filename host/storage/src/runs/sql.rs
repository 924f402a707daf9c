//! The run queue's SQL: one text per operation for both engines, except the
//! claim, whose candidate row PostgreSQL locks `FOR UPDATE SKIP LOCKED`
//! (SQLite has no such clause, and needs none: it has one writer, and the
//! claim is one statement).
//!
//! "Unsettled" is `state IN ('queued', 'running', 'cancelling',
//! 'input_required')`, spelled the same everywhere so both engines match it
//! to the partial index `runs_unsettled` (migration 0026); "held" is `state IN ('running',
//! 'cancelling')`, which `runs_lease_expiry` covers.

/// Every column of a `runs` row, as `rows::run` reads them.
macro_rules! run_columns {
    () => {
        "id, tenant, principal, principal_kind, client_id, spec, state, attempt, max_attempts, \
         audited_attempts, created_at, started_at, finished_at, deadline_at, \
         cancel_requested_at, lease_owner, lease_token, lease_until, progress, outcome, \
         receipt, receipt_sha256, handed_over, input, parked_at"
    };
}
pub(super) use run_columns;

pub(super) const BY_ID: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE tenant = $1 AND id = $2"
);

pub(super) const BY_ID_ANY: &str = concat!("SELECT ", run_columns!(), " FROM runs WHERE id = $1");

pub(super) const ACTIVE: &str = "SELECT \
     (SELECT COUNT(*) FROM runs WHERE tenant = $1 \
      AND state IN ('queued', 'running', 'cancelling', 'input_required')) AS of_tenant, \
     (SELECT COUNT(*) FROM runs WHERE tenant = $1 AND principal = $2 \
      AND state IN ('queued', 'running', 'cancelling', 'input_required')) AS of_principal";

/// The claim, with `$lock` after the candidate's `LIMIT 1`. Binds: `$1`
/// worker, `$2` lease token, `$3` now, `$4` lease end, `$5` the latest
/// `parked_at` of a run whose wait for input is over (its worker settles
/// it `timed_out`; its `input` still names what it waited on). A run taken
/// over while `cancelling` stays so; `started_at` and `deadline_at` are
/// set by the first claim only, so a later attempt inherits the budget's
/// end.
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
             deadline_at = COALESCE(deadline_at, $3 + timeout_ms), parked_at = NULL \
             WHERE id = (SELECT id FROM runs WHERE state = 'queued' \
             OR (state = 'input_required' AND parked_at < $5) \
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
    "UPDATE runs SET state = CASE WHEN state IN ('queued', 'input_required') THEN state \
     ELSE 'cancelling' END, cancel_requested_at = COALESCE(cancel_requested_at, $3) \
     WHERE tenant = $1 AND id = $2 \
     AND state IN ('queued', 'running', 'cancelling', 'input_required') RETURNING ",
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
     client_id, spec, timeout_ms, state, attempt, max_attempts, audited_attempts, created_at, \
     input) SELECT $1, $2, $3, $4, $5, $6, $7, 'queued', 0, $8, 0, $9, $12 \
     WHERE (SELECT COUNT(*) FROM runs WHERE tenant = $2 \
            AND state IN ('queued', 'running', 'cancelling', 'input_required')) < $10 \
       AND (SELECT COUNT(*) FROM runs WHERE tenant = $2 AND principal = $3 \
            AND state IN ('queued', 'running', 'cancelling', 'input_required')) < $11";

/// [`toolhost_runs::RunEffect::Finish`]: fenced by the lease `$8`, or (no
/// lease) by the run still being queued or waiting for input. The lease is
/// released.
pub(crate) const FINISH: &str = "UPDATE runs SET state = $2, finished_at = $3, outcome = $4, \
     receipt = $5, receipt_sha256 = $6, audited_attempts = $7, \
     lease_owner = NULL, lease_token = NULL, lease_until = NULL, parked_at = NULL \
     WHERE id = $1 AND ((lease_token = $8 AND state IN ('running', 'cancelling')) \
     OR ($8 IS NULL AND state IN ('queued', 'input_required')))";

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

/// [`toolhost_runs::RunEffect::AwaitInput`]: fenced by the lease `$2` of a
/// run still `running` at attempt `$3` (a cancelling one is settled
/// instead). The attempt's row is counted as written, one more attempt is
/// allowed, the lease released, and the run waits with `$4` since `$5`.
pub(crate) const AWAIT_INPUT: &str = "UPDATE runs SET state = 'input_required', \
     input = $4, parked_at = $5, audited_attempts = $3, max_attempts = max_attempts + 1, \
     lease_owner = NULL, lease_token = NULL, lease_until = NULL \
     WHERE id = $1 AND lease_token = $2 AND state = 'running' AND attempt = $3";

/// [`toolhost_runs::RunStore::answer_input`]: compare-and-swap of the input
/// `$3` of a waiting run for `$4`; `$5` (1: every request is answered)
/// queues it again at `$6`, its deadline moved by the time it waited.
pub(super) const ANSWER_INPUT: &str = "UPDATE runs SET input = $4, \
     state = CASE WHEN $5 = 1 THEN 'queued' ELSE 'input_required' END, \
     deadline_at = CASE WHEN $5 = 1 THEN deadline_at + ($6 - parked_at) ELSE deadline_at END, \
     parked_at = CASE WHEN $5 = 1 THEN NULL ELSE parked_at END \
     WHERE tenant = $1 AND id = $2 AND state = 'input_required' AND input = $3";
