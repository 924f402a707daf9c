-- Runs that ask their client for input (host/runs/src/input.rs). Same
-- number, same meaning as migrations/sqlite/0026_run_input.sql.
--
-- A run whose guest asked its client what has no answer yet waits in the
-- new state `input_required`: no worker holds it, `input` (the JSON of
-- toolhost_runs::RunInput) names the requests pending and the answers so
-- far, and `parked_at` says since when it waits. Answered, it is queued
-- again (the trigger runs_requeued of migration 0025 wakes every
-- replica's workers); unanswered past the wait, a worker claims it to
-- settle it `timed_out`. It is unsettled: it counts against the queue's
-- bounds.
ALTER TABLE runs ADD COLUMN input TEXT;
ALTER TABLE runs ADD COLUMN parked_at BIGINT;

ALTER TABLE runs DROP CONSTRAINT runs_state_check;
-- The eight names of toolhost_runs::RunState::as_str.
ALTER TABLE runs ADD CONSTRAINT runs_state_check CHECK (state IN ('queued', 'running',
    'cancelling', 'input_required', 'succeeded', 'failed', 'cancelled', 'timed_out'));

ALTER TABLE runs DROP CONSTRAINT runs_settled_with_receipt;
ALTER TABLE runs ADD CONSTRAINT runs_settled_with_receipt CHECK (
    (state IN ('queued', 'running', 'cancelling', 'input_required')
        AND finished_at IS NULL AND receipt IS NULL)
    OR (state IN ('succeeded', 'failed', 'cancelled', 'timed_out')
        AND finished_at IS NOT NULL AND outcome IS NOT NULL
        AND receipt IS NOT NULL AND receipt_sha256 IS NOT NULL));

-- A run waiting for input is held by no worker and says what it waits on.
ALTER TABLE runs ADD CONSTRAINT runs_waiting_for_input CHECK (state <> 'input_required'
    OR (input IS NOT NULL AND parked_at IS NOT NULL AND lease_token IS NULL));

DROP INDEX runs_unsettled;
CREATE INDEX runs_unsettled ON runs (tenant, principal)
    WHERE state IN ('queued', 'running', 'cancelling', 'input_required');
