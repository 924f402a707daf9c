-- Approval gates and idempotency keys (toolhost_gates::GateStore). Same
-- number, same meaning as migrations/postgres/0004_gates.sql.
--
-- A gate is one risky call waiting for (or holding) a person's decision.
-- Its state moves only `pending → confirmed | denied`, `confirmed →
-- consumed`, each by a conditional UPDATE in host/storage/src/gates.rs.
-- Gates are never deleted: they are the record of who approved what.
-- Times are unix milliseconds (UTC), integers in both engines. `targets` is
-- the JSON text of a `Vec<toolhost_gates::Target>`; `risk` and `state` are
-- the `as_str()` names of their Rust enums. Booleans are 0/1 integers.
--
-- At most one *live* pending gate per (tenant, principal, tool, tool
-- version, argument digest): the partial unique index `gates_one_pending`
-- makes two concurrent identical opens share one gate. A pending gate that
-- expired undecided must not block the next open, yet its state cannot
-- change (`pending → expired` is no transition) and it is not deleted; so
-- the open that replaces it sets its `superseded_by` to the new gate's id,
-- in the same transaction that inserts the new gate, which takes it out of
-- the index. No foreign key on `superseded_by`: it is written just before
-- the row it names, and rolled back with it.
--
-- STRICT makes SQLite refuse a value of the wrong type, as PostgreSQL does.
-- SQLite enforces the tenant's foreign key because the store turns foreign
-- keys on for every connection (host/storage/src/connect.rs).
CREATE TABLE gates (
    id              TEXT    NOT NULL PRIMARY KEY,
    tenant          TEXT    NOT NULL REFERENCES tenants (id),
    principal       TEXT    NOT NULL,
    client_id       TEXT    NOT NULL,
    tool            TEXT    NOT NULL,
    -- The plugin's component digest: a gate approves one reviewed version.
    tool_version    TEXT    NOT NULL,
    argument_digest TEXT    NOT NULL,
    targets         TEXT    NOT NULL,
    risk            TEXT    NOT NULL,
    summary         TEXT    NOT NULL,
    reason_required INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    state           TEXT    NOT NULL DEFAULT 'pending',
    decided_by      TEXT,
    reason          TEXT,
    decided_at      INTEGER,
    consumed_at     INTEGER,
    superseded_by   TEXT,
    CONSTRAINT gates_risk_known CHECK (risk IN ('low', 'medium', 'high')),
    CONSTRAINT gates_state_known CHECK (state IN ('pending', 'confirmed', 'denied', 'consumed')),
    CONSTRAINT gates_reason_required_bool CHECK (reason_required IN (0, 1)),
    -- Who decided, and when, exactly once the gate left `pending`.
    CONSTRAINT gates_decided_iff_not_pending CHECK (
        (state = 'pending') = (decided_by IS NULL AND decided_at IS NULL)
    ),
    CONSTRAINT gates_consumed_at_iff_consumed CHECK (
        (state = 'consumed') = (consumed_at IS NOT NULL)
    ),
    -- Only an undecided gate is ever superseded (after its expiry).
    CONSTRAINT gates_superseded_only_pending CHECK (
        superseded_by IS NULL OR state = 'pending'
    )
) STRICT;

-- "The pending gate for this call": the lookup of every gated call, and the
-- one-live-pending-gate rule (see above). Its WHERE is repeated word for
-- word in the ON CONFLICT of the store's insert.
CREATE UNIQUE INDEX gates_one_pending
    ON gates (tenant, principal, tool, tool_version, argument_digest)
    WHERE state = 'pending' AND superseded_by IS NULL;
-- "This tenant's pending (or any) gates, newest first".
CREATE INDEX gates_tenant_state_created ON gates (tenant, state, created_at);

-- One client-chosen idempotency key per tenant, principal and tool. The
-- first request claims it (`running`); its result is stored (`done`) or the
-- claim released (the row deleted) if the call failed. `request_digest`
-- tells a retry of the same request from another request reusing the key.
-- `result` is JSON text, present exactly when `done`.
CREATE TABLE idempotency_keys (
    tenant         TEXT    NOT NULL REFERENCES tenants (id),
    principal      TEXT    NOT NULL,
    tool           TEXT    NOT NULL,
    key            TEXT    NOT NULL,
    request_digest TEXT    NOT NULL,
    state          TEXT    NOT NULL,
    result         TEXT,
    created_at     INTEGER NOT NULL,
    PRIMARY KEY (tenant, principal, tool, key),
    CONSTRAINT idempotency_keys_state_known CHECK (state IN ('running', 'done')),
    CONSTRAINT idempotency_keys_result_iff_done CHECK (
        (state = 'done') = (result IS NOT NULL)
    )
) STRICT;
