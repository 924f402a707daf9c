-- Exploration runs (host/storage/src/runs.rs): the durable queue every
-- replica's workers share, and what links a run to its artifacts and its
-- receipt to the audit chain. Same number, same meaning as
-- migrations/sqlite/0011_runs.sql.
--
-- A run is queued in the same transaction as the audit row of the call
-- that started it, and settled in the same transaction as the audit row of
-- its last attempt (host/storage/src/effects.rs), so a run a caller was
-- told about is always there and its receipt is always in the chain.
-- `state` moves queued → running (a worker's claim) → succeeded, failed or
-- timed_out; a cancel moves queued → cancelled at once, or running →
-- cancelling (its worker settles it cancelled). A worker holds a run under
-- a lease: `lease_token` (128 random bits, hex) fences every write of that
-- attempt, `lease_until` is renewed by its heartbeat; a lease left to
-- expire is claimed again by another worker (`attempt` + 1) while
-- `attempt < max_attempts`. `audited_attempts` counts the attempts whose
-- audit rows are written (a lost attempt's row is written by the worker
-- that takes the run over). `spec` is the JSON of toolhost_runs::RunSpec,
-- fixed at queue time; `timeout_ms` is its budget's wall time, kept apart
-- so the first claim can set `deadline_at` in SQL (later attempts inherit
-- it). `progress` and `outcome` are JSON (toolhost_runs::Progress,
-- ::Outcome); `receipt` is the receipt's canonical JSON and
-- `receipt_sha256` its SHA-256. Times are unix milliseconds (UTC).
--
-- A trigger below NOTIFYs `toolhost_runs` when a run is queued.
CREATE TABLE runs (
    id                  TEXT    NOT NULL PRIMARY KEY,
    tenant              TEXT    NOT NULL,
    principal           TEXT    NOT NULL,
    principal_kind      TEXT    NOT NULL,
    client_id           TEXT    NOT NULL,
    spec                TEXT    NOT NULL,
    timeout_ms          BIGINT  NOT NULL CHECK (timeout_ms >= 0),
    -- The seven names of toolhost_runs::RunState::as_str.
    state               TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'cancelling',
                            'succeeded', 'failed', 'cancelled', 'timed_out')),
    attempt             BIGINT  NOT NULL,
    max_attempts        BIGINT  NOT NULL,
    audited_attempts    BIGINT  NOT NULL,
    created_at          BIGINT  NOT NULL,
    started_at          BIGINT,
    finished_at         BIGINT,
    deadline_at         BIGINT,
    cancel_requested_at BIGINT,
    lease_owner         TEXT,
    lease_token         TEXT,
    lease_until         BIGINT,
    progress            TEXT,
    outcome             TEXT,
    receipt             TEXT,
    receipt_sha256      TEXT
        CHECK (receipt_sha256 ~ '^[0-9a-f]{64}$'),
    CONSTRAINT runs_attempts CHECK (max_attempts >= 1 AND attempt BETWEEN 0 AND max_attempts
        AND audited_attempts BETWEEN 0 AND attempt),
    -- A worker holds every running run; a settled run has its receipt.
    CONSTRAINT runs_leased_while_running CHECK (state NOT IN ('running', 'cancelling')
        OR (lease_owner IS NOT NULL AND lease_token IS NOT NULL AND lease_until IS NOT NULL)),
    CONSTRAINT runs_settled_with_receipt CHECK (
        (state IN ('queued', 'running', 'cancelling') AND finished_at IS NULL AND receipt IS NULL)
        OR (state IN ('succeeded', 'failed', 'cancelled', 'timed_out')
            AND finished_at IS NOT NULL AND outcome IS NOT NULL
            AND receipt IS NOT NULL AND receipt_sha256 IS NOT NULL))
);

-- The claim: "the oldest queued run".
CREATE INDEX runs_claim ON runs (state, created_at);
-- A tenant's runs, and one principal's, newest first.
CREATE INDEX runs_tenant_created ON runs (tenant, created_at);
CREATE INDEX runs_principal_created ON runs (tenant, principal, created_at);
-- The queue's bounds: unsettled runs per tenant and per principal.
CREATE INDEX runs_unsettled ON runs (tenant, principal)
    WHERE state IN ('queued', 'running', 'cancelling');
-- Takeovers and the reaper: "every held lease that has expired".
CREATE INDEX runs_lease_expiry ON runs (lease_until)
    WHERE state IN ('running', 'cancelling');

-- The run that kept an artifact, if one did (NULL: a plain call's).
ALTER TABLE artifacts ADD COLUMN run_id TEXT;
CREATE INDEX artifacts_run ON artifacts (run_id) WHERE run_id IS NOT NULL;

-- The receipt an exploration run's attempt settled, chained with its row
-- (hashed only when set, so older rows keep their hashes:
-- host/audit/src/chain.rs).
ALTER TABLE audit ADD COLUMN receipt_sha256 TEXT
    CONSTRAINT audit_receipt_sha256_hex
    CHECK (receipt_sha256 ~ '^[0-9a-f]{64}$');

-- Workers are told at once (LISTEN toolhost_runs) when a run is queued; the
-- notification carries the run's id and is sent at commit, so a woken
-- worker's claim finds the run. (SQLite has no NOTIFY: its workers poll,
-- and a host wakes its own; PostgreSQL workers poll too, more slowly, since
-- a listener misses what is sent while it reconnects.)
CREATE FUNCTION toolhost_run_queued() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('toolhost_runs', NEW.id);
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER runs_queued AFTER INSERT ON runs
    FOR EACH ROW WHEN (NEW.state = 'queued')
    EXECUTE FUNCTION toolhost_run_queued();
