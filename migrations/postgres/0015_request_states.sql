-- MRTR request states shared by every replica (host/storage/src/request_state.rs,
-- host/mcp/src/ask.rs). Same number, same meaning as
-- migrations/sqlite/0015_request_states.sql.
--
-- A question a replica asks is sealed (HMAC) with the key of the current
-- day; the answer may reach any replica, which opens it with the same key.
-- The key of each day is made ahead by whichever replica first needs it
-- (`ON CONFLICT (bucket) DO NOTHING`), so every replica holds it before it
-- is used, and dropped two days later.
CREATE TABLE request_state_keys (
    bucket     BIGINT  NOT NULL PRIMARY KEY,
    key        BYTEA   NOT NULL,
    created_at BIGINT  NOT NULL
);

-- A sealed state is answered once, on whichever replica: its nonce is
-- spent here, kept until the state would have expired anyway.
CREATE TABLE request_state_spent (
    nonce      TEXT    NOT NULL PRIMARY KEY,
    expires_at BIGINT  NOT NULL
);
CREATE INDEX request_state_spent_expires ON request_state_spent (expires_at);
