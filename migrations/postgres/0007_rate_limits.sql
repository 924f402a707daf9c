-- Rate-limit counters (host/storage/src/rate.rs). Same number, same meaning
-- as migrations/sqlite/0007_rate_limits.sql.
--
-- One row per (bucket, fixed window): how many requests the bucket's
-- owner made in the window that starts at `window_start`. A bucket names
-- who is counted, e.g. `principal:<tenant>/<subject>`; the host chooses the
-- names (host/server/src/rate_limit.rs), the store only counts. Every host
-- sharing the database bumps the same row with one
-- `INSERT … ON CONFLICT DO UPDATE … RETURNING`, so replicas agree on the
-- count without talking to each other.
-- Times are unix milliseconds (UTC), integers in both engines. A row is
-- useless once its window has ended (`expires_at`) and is deleted by the
-- host's periodic purge; a missing row is a count of zero.
--
-- BIGINT like every integer here, so both engines' rows read back as the
-- same 64-bit integers.
CREATE TABLE rate_counters (
    bucket       TEXT    NOT NULL,
    window_start BIGINT  NOT NULL,
    expires_at   BIGINT  NOT NULL,
    hits         BIGINT  NOT NULL,
    PRIMARY KEY (bucket, window_start),
    CONSTRAINT rate_counters_hits_positive CHECK (hits >= 1),
    CONSTRAINT rate_counters_window_ordered CHECK (expires_at > window_start)
);

-- The purge: "every window that has ended".
CREATE INDEX rate_counters_expires ON rate_counters (expires_at);
