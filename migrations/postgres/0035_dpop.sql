-- DPoP, RFC 9449 (issue 47; host/auth/src/dpop.rs). Same number, same
-- meaning as migrations/sqlite/0035_dpop.sql.
--
-- The proofs seen, so that one is accepted once across every replica
-- sharing this database: keyed by a digest of the proof's key thumbprint
-- and its jti, kept until the proof would be refused as stale anyway
-- (purged with the other expired auth rows).
CREATE TABLE dpop_proofs (
    proof_key  TEXT    NOT NULL PRIMARY KEY,
    expires_at BIGINT  NOT NULL
);

-- The DPoP key a public client's refresh token is bound to (its RFC 7638
-- thumbprint); NULL for a token bound to none.
ALTER TABLE refresh_tokens ADD COLUMN dpop_jkt TEXT;

-- A tenant that requires DPoP-bound tokens of its clients (`toolhost
-- tenant dpop NAME required`): a token request without a proof is refused.
ALTER TABLE tenants ADD COLUMN require_dpop BOOLEAN NOT NULL DEFAULT FALSE;
