-- Graceful stops hand runs over (host/runs-service/src/worker.rs). Same
-- number, same meaning as migrations/postgres/0025_run_handovers.sql
-- (SQLite has no NOTIFY: a run queued again is found by the workers' poll,
-- and a host wakes its own).
--
-- `handed_over` has bit n - 1 set for each attempt n that a worker's
-- graceful stop handed over; such an attempt raises `max_attempts` by one.
ALTER TABLE runs ADD COLUMN handed_over INTEGER NOT NULL DEFAULT 0;
