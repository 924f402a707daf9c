-- Graceful stops hand runs over (host/runs-service/src/worker.rs). Same
-- number, same meaning as migrations/sqlite/0025_run_handovers.sql.
--
-- A replica asked to stop lets the runs it holds finish within its grace;
-- one still running then is handed over: its guest is stopped, the
-- attempt's audit row is written, and the run is queued again with its
-- lease released, in one transaction. `handed_over` has bit n - 1 set for
-- each attempt n that ended so (the receipt says which), and such an
-- attempt raises `max_attempts` by one: it spends none of the attempts a
-- crashed worker may take.
ALTER TABLE runs ADD COLUMN handed_over BIGINT NOT NULL DEFAULT 0;

-- A run queued again wakes the workers of every replica, as a new one does.
CREATE TRIGGER runs_requeued AFTER UPDATE OF state ON runs
    FOR EACH ROW WHEN (NEW.state = 'queued' AND OLD.state <> 'queued')
    EXECUTE FUNCTION toolhost_run_queued();
