-- How each writer chain's rows and each anchor are hashed: 1, the tagged
-- binary encoding every row had before (toolhost-audit-chain-v1); 2, the
-- SHA-256 of the row's RFC 8785 (JCS) text, which any JCS implementation
-- re-derives (host/audit/src/encoding.rs). Chains and anchors written
-- before this migration, or by a replica of an older build during an
-- upgrade, are 1; a host of this build opens chains and writes anchors
-- as 2. The legacy chain's rows are always 1.
ALTER TABLE audit_chains ADD COLUMN encoding BIGINT NOT NULL DEFAULT 1;
ALTER TABLE audit_anchors ADD COLUMN encoding BIGINT NOT NULL DEFAULT 1;
