-- The live catalog (host/storage/src/catalog.rs): signed plugin revisions,
-- the signers the operator trusts, component bytes by digest, and the
-- catalog's version. Same number, same meaning as
-- migrations/postgres/0010_catalog.sql.
--
-- A revision is one (component, manifest) pair of a plugin, as submitted
-- and verified. Its state moves pending_review → active (approved by a
-- reviewer) or rejected; an active revision replaced by a newer one is
-- `approved` (a rollback may make it active again); one withdrawn (its
-- signer revoked, or by an operator) is never served again. At most one
-- revision of a plugin is active. `capabilities` is the JSON the host
-- computed from the manifest and the component at intake, diffed against
-- the active revision when the review is shown. `retired_tools` are tools
-- of a replaced revision still listed, deprecated, until the catalog
-- reaches `retired_until`. A signer is a pinned public key (`key`, its
-- SPKI PEM) or a keyless Sigstore identity (`keyless`: the OIDC issuer and
-- the certificate's subject, exactly); `key_id` names either uniquely.
-- Times are unix milliseconds (UTC).
CREATE TABLE plugin_blobs (
    sha256     TEXT    NOT NULL PRIMARY KEY,
    body       BLOB    NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE signers (
    name          TEXT    NOT NULL PRIMARY KEY,
    kind          TEXT    NOT NULL CHECK (kind IN ('key', 'keyless')),
    key_id        TEXT    NOT NULL UNIQUE,
    public_key    TEXT,
    issuer        TEXT,
    subject       TEXT,
    plugins       TEXT    NOT NULL,
    trusted_by    TEXT    NOT NULL,
    trusted_at    INTEGER NOT NULL,
    revoked_at    INTEGER,
    revoked_by    TEXT,
    revoke_reason TEXT,
    CONSTRAINT signers_identity CHECK (
        (kind = 'key' AND public_key IS NOT NULL AND issuer IS NULL AND subject IS NULL)
        OR (kind = 'keyless' AND public_key IS NULL AND issuer IS NOT NULL AND subject IS NOT NULL))
) STRICT;

CREATE TABLE plugin_revisions (
    id               TEXT    NOT NULL PRIMARY KEY,
    plugin           TEXT    NOT NULL,
    version          TEXT    NOT NULL,
    component_sha256 TEXT    NOT NULL REFERENCES plugin_blobs (sha256),
    manifest_sha256  TEXT    NOT NULL,
    manifest         TEXT    NOT NULL,
    envelope         TEXT,
    signer           TEXT,
    source           TEXT    NOT NULL,
    capabilities     TEXT    NOT NULL,
    state            TEXT    NOT NULL CHECK (state IN
                         ('pending_review', 'approved', 'active', 'rejected', 'withdrawn')),
    submitted_by     TEXT    NOT NULL,
    submitted_at     INTEGER NOT NULL,
    reviewed_by      TEXT,
    reviewed_at      INTEGER,
    review_reason    TEXT,
    activated_at     INTEGER,
    retired_tools    TEXT,
    retired_until    TEXT,
    UNIQUE (plugin, component_sha256, manifest_sha256)
) STRICT;

CREATE UNIQUE INDEX plugin_revisions_one_active ON plugin_revisions (plugin)
    WHERE state = 'active';
CREATE INDEX plugin_revisions_by_state ON plugin_revisions (state, submitted_at);

-- One row: the generation counts every change of what is served (replicas
-- poll it; on PostgreSQL a trigger also NOTIFYs them), the version is the
-- catalog's semantic version.
CREATE TABLE catalog_state (
    id         INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    generation INTEGER NOT NULL,
    version    TEXT    NOT NULL,
    changed_at INTEGER NOT NULL
) STRICT;
INSERT INTO catalog_state (id, generation, version, changed_at) VALUES (1, 0, '1.0.0', 0);
