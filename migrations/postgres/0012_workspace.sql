-- The authoring workspace (host/storage/src/workspace.rs): sessions agents
-- author through, the proposals in them, the runs that joined them, their
-- promotions, the uploads proposals name, and each mutation's answer under
-- its idempotency key. Same number, same meaning as
-- migrations/sqlite/0012_workspace.sql.
--
-- A session is written at version 1 with the audit row of the call that
-- opened it; every later mutation moves `version` by one, by
-- compare-and-set, in the transaction of its call's audit row, together
-- with what it adds (a proposal, a run link, a promotion, a revision
-- submitted for review) and its answer in `workspace_mutations`
-- (host/storage/src/effects.rs). A stale version or a key taken meanwhile
-- fails the whole transaction: nothing partial is ever written.
-- `subject` is the text of toolhost_workspace::Subject; `bound_to` the
-- JSON of the entity it resolved to; `body`, `validation`, `diff` and
-- `result` are JSON; digests are lower-case hex SHA-256 the host computed.
-- An upload expires at `expires_at` unless a proposal names it (then it is
-- kept as long as the session). Times are unix milliseconds (UTC).
CREATE TABLE workspace_sessions (
    id              TEXT    NOT NULL PRIMARY KEY,
    tenant          TEXT    NOT NULL,
    owner           TEXT    NOT NULL,
    subject         TEXT    NOT NULL,
    bound_to        TEXT,
    subject_version TEXT    NOT NULL,
    version         BIGINT  NOT NULL CHECK (version >= 1),
    -- The names of toolhost_workspace::SessionState::as_str.
    state           TEXT    NOT NULL CHECK (state IN ('open', 'promoted')),
    created_at      BIGINT  NOT NULL,
    updated_at      BIGINT  NOT NULL
);
CREATE INDEX workspace_sessions_by_tenant ON workspace_sessions (tenant, created_at);

CREATE TABLE workspace_proposals (
    id         TEXT    NOT NULL PRIMARY KEY,
    session_id TEXT    NOT NULL REFERENCES workspace_sessions (id),
    number     BIGINT  NOT NULL CHECK (number >= 1),
    author     TEXT    NOT NULL,
    body       TEXT    NOT NULL,
    digest     TEXT    NOT NULL CHECK (digest ~ '^[0-9a-f]{64}$'),
    validation TEXT    NOT NULL,
    diff       TEXT    NOT NULL,
    created_at BIGINT  NOT NULL,
    UNIQUE (session_id, number)
);

CREATE TABLE workspace_runs (
    session_id  TEXT    NOT NULL REFERENCES workspace_sessions (id),
    run_id      TEXT    NOT NULL,
    proposal_id TEXT    REFERENCES workspace_proposals (id),
    linked_at   BIGINT  NOT NULL,
    PRIMARY KEY (session_id, run_id)
);

CREATE TABLE workspace_promotions (
    id          TEXT    NOT NULL PRIMARY KEY,
    session_id  TEXT    NOT NULL REFERENCES workspace_sessions (id),
    proposal_id TEXT    NOT NULL REFERENCES workspace_proposals (id),
    promoted_by TEXT    NOT NULL,
    -- The names of toolhost_workspace::PromotionState::as_str.
    state       TEXT    NOT NULL CHECK (state IN ('pending_review', 'awaiting_approval',
                    'promoted')),
    revision_id TEXT,
    gate_id     TEXT,
    result      TEXT,
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL
);
CREATE INDEX workspace_promotions_by_session ON workspace_promotions (session_id);

CREATE TABLE workspace_uploads (
    handle     TEXT    NOT NULL PRIMARY KEY,
    tenant     TEXT    NOT NULL,
    owner      TEXT    NOT NULL,
    -- The names of toolhost_workspace::UploadKind::as_str.
    kind       TEXT    NOT NULL CHECK (kind IN ('component', 'manifest', 'signature')),
    size       BIGINT  NOT NULL,
    sha256     TEXT    NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    body       BYTEA   NOT NULL,
    created_at BIGINT  NOT NULL,
    expires_at BIGINT  NOT NULL,
    CONSTRAINT workspace_uploads_size_matches CHECK (size = octet_length(body))
);
CREATE INDEX workspace_uploads_by_expiry ON workspace_uploads (expires_at);

CREATE TABLE workspace_mutations (
    tenant         TEXT    NOT NULL,
    principal      TEXT    NOT NULL,
    key            TEXT    NOT NULL,
    tool           TEXT    NOT NULL,
    request_digest TEXT    NOT NULL CHECK (request_digest ~ '^[0-9a-f]{64}$'),
    session_id     TEXT    NOT NULL REFERENCES workspace_sessions (id),
    result         TEXT    NOT NULL,
    created_at     BIGINT  NOT NULL,
    PRIMARY KEY (tenant, principal, key)
);
