-- Security events are kept for a while, not for ever: the authorization
-- server's maintenance deletes those older than its retention (90 days;
-- host/auth/src/store.rs, EVENT_RETENTION), by this index.
-- Same number, same meaning as migrations/postgres/0039_auth_events_at.sql.
CREATE INDEX auth_events_at ON auth_events (at);
