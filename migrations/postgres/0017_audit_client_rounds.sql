-- What a call asked its MCP client (elicitation, sampling, roots), round by
-- round, in its audit row (host/audit/src/event.rs `ClientRound`). Same
-- number, same meaning as migrations/sqlite/0017_audit_client_rounds.sql.
--
-- A JSON array of {key, method, outcome}, never a request's content; NULL
-- when the call asked nothing (and on every row written before this
-- migration). Chained: hashed only when set, so older rows keep their hashes.
-- Kept as the text the hash covers (jsonb would reorder it).
ALTER TABLE audit ADD COLUMN client_rounds TEXT
    CONSTRAINT audit_client_rounds_array
    CHECK (json_typeof(client_rounds::json) = 'array');
