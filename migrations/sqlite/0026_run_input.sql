-- Runs that ask their client for input (host/runs/src/input.rs). Same
-- number, same meaning as migrations/postgres/0026_run_input.sql.
--
-- A run whose guest asked its client what has no answer yet waits in the
-- new state `input_required`: no worker holds it, `input` (the JSON of
-- toolhost_runs::RunInput) names the requests pending and the answers so
-- far, and `parked_at` says since when it waits. Answered, it is queued
-- again; unanswered past the wait, a worker claims it to settle it
-- `timed_out`. It is unsettled: it counts against the queue's bounds.
--
-- SQLite cannot change a CHECK constraint in place, so the table is built
-- again with the eighth state and the two columns, and its rows copied.
CREATE TABLE runs_next (
    id                  TEXT    NOT NULL PRIMARY KEY,
    tenant              TEXT    NOT NULL,
    principal           TEXT    NOT NULL,
    principal_kind      TEXT    NOT NULL,
    client_id           TEXT    NOT NULL,
    spec                TEXT    NOT NULL,
    timeout_ms          INTEGER NOT NULL CHECK (timeout_ms >= 0),
    -- The eight names of toolhost_runs::RunState::as_str.
    state               TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'cancelling',
                            'input_required', 'succeeded', 'failed', 'cancelled', 'timed_out')),
    attempt             INTEGER NOT NULL,
    max_attempts        INTEGER NOT NULL,
    audited_attempts    INTEGER NOT NULL,
    created_at          INTEGER NOT NULL,
    started_at          INTEGER,
    finished_at         INTEGER,
    deadline_at         INTEGER,
    cancel_requested_at INTEGER,
    lease_owner         TEXT,
    lease_token         TEXT,
    lease_until         INTEGER,
    progress            TEXT,
    outcome             TEXT,
    receipt             TEXT,
    receipt_sha256      TEXT
        CHECK (length(receipt_sha256) = 64 AND receipt_sha256 NOT GLOB '*[^0-9a-f]*'),
    handed_over         INTEGER NOT NULL DEFAULT 0,
    input               TEXT,
    parked_at           INTEGER,
    CONSTRAINT runs_attempts CHECK (max_attempts >= 1 AND attempt BETWEEN 0 AND max_attempts
        AND audited_attempts BETWEEN 0 AND attempt),
    -- A worker holds every running run; a settled run has its receipt.
    CONSTRAINT runs_leased_while_running CHECK (state NOT IN ('running', 'cancelling')
        OR (lease_owner IS NOT NULL AND lease_token IS NOT NULL AND lease_until IS NOT NULL)),
    CONSTRAINT runs_settled_with_receipt CHECK (
        (state IN ('queued', 'running', 'cancelling', 'input_required')
            AND finished_at IS NULL AND receipt IS NULL)
        OR (state IN ('succeeded', 'failed', 'cancelled', 'timed_out')
            AND finished_at IS NOT NULL AND outcome IS NOT NULL
            AND receipt IS NOT NULL AND receipt_sha256 IS NOT NULL)),
    -- A run waiting for input is held by no worker and says what it waits on.
    CONSTRAINT runs_waiting_for_input CHECK (state <> 'input_required'
        OR (input IS NOT NULL AND parked_at IS NOT NULL AND lease_token IS NULL))
) STRICT;

INSERT INTO runs_next (id, tenant, principal, principal_kind, client_id, spec, timeout_ms,
    state, attempt, max_attempts, audited_attempts, created_at, started_at, finished_at,
    deadline_at, cancel_requested_at, lease_owner, lease_token, lease_until, progress, outcome,
    receipt, receipt_sha256, handed_over)
SELECT id, tenant, principal, principal_kind, client_id, spec, timeout_ms,
    state, attempt, max_attempts, audited_attempts, created_at, started_at, finished_at,
    deadline_at, cancel_requested_at, lease_owner, lease_token, lease_until, progress, outcome,
    receipt, receipt_sha256, handed_over
FROM runs;

DROP TABLE runs;
ALTER TABLE runs_next RENAME TO runs;

-- The indexes of migration 0011, the unsettled one with the new state.
CREATE INDEX runs_claim ON runs (state, created_at);
CREATE INDEX runs_tenant_created ON runs (tenant, created_at);
CREATE INDEX runs_principal_created ON runs (tenant, principal, created_at);
CREATE INDEX runs_unsettled ON runs (tenant, principal)
    WHERE state IN ('queued', 'running', 'cancelling', 'input_required');
CREATE INDEX runs_lease_expiry ON runs (lease_until)
    WHERE state IN ('running', 'cancelling');
