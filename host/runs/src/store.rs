//! [`RunStore`]: the queue every replica shares, and [`RunEffect`]: the
//! run changes written in the same transaction as an audit row.

use std::future::Future;
use std::pin::Pin;

use crate::{NewRun, Outcome, Progress, Run, RunId, RunInput, RunQuery, RunState};

/// Attempts a run gets before a run whose workers keep dying fails: a
/// crash is retried, a guest's own failure never is.
pub const MAX_ATTEMPTS: u32 = 3;

/// A boxed future, so stores can be used as trait objects.
pub type RunFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, RunStoreError>> + Send + 'a>>;

/// Why the store did not answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RunStoreError {
    /// The database failed.
    #[error("run store: {0}")]
    Failed(String),
    /// The database could not be reached: the request may be tried again.
    #[error(transparent)]
    Unavailable(#[from] toolhost_types::StoreUnavailable),
}

impl RunStoreError {
    /// The unreachable store, if that is why.
    pub fn unavailable(&self) -> Option<&toolhost_types::StoreUnavailable> {
        match self {
            RunStoreError::Unavailable(u) => Some(u),
            RunStoreError::Failed(_) => None,
        }
    }
}

/// A run a worker claimed, and the token that fences its writes: a worker
/// whose lease was taken over writes nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// The run, as claimed (its `attempt` already counts this one).
    pub run: Run,
    /// Names this lease; every later write of the run presents it.
    pub lease_token: String,
}

/// What a heartbeat learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Beat {
    /// When someone asked for the run to stop (Unix milliseconds; the
    /// first request's time), if anyone did.
    pub cancel_requested_at_ms: Option<i64>,
}

/// A run's end, written with the audit row of its last attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinishRun {
    /// The run.
    pub id: RunId,
    /// The lease it was run under (`None`: a queued run cancelled before
    /// any worker claimed it).
    pub lease_token: Option<String>,
    /// The attempt whose row this is (0 for a run that never started).
    pub attempt: u32,
    /// A terminal state.
    pub state: RunState,
    /// Unix milliseconds.
    pub finished_at_ms: i64,
    /// What callers are told.
    pub outcome: Outcome,
    /// The receipt's canonical JSON.
    pub receipt: String,
    /// Its SHA-256 (lower-case hex).
    pub receipt_sha256: String,
}

/// A run change made with an audit row: both are written or neither is.
/// A change that finds the run not as expected (a full queue, a lease
/// taken over, a state moved on) fails the whole transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEffect {
    /// Queue a run, if its tenant and principal are within
    /// [`NewRun::limits`].
    Queue(Box<NewRun>),
    /// Settle a run: terminal state, outcome and receipt. Fenced by the
    /// lease token, or (none) by the run still being queued.
    Finish(Box<FinishRun>),
    /// The audit row of an attempt whose worker died: written by the
    /// worker that took the run over, under its own lease.
    AttemptLost {
        /// The run.
        id: RunId,
        /// The new lease.
        lease_token: String,
        /// The lost attempt's number.
        attempt: u32,
    },
    /// The audit row of an attempt its worker stopped for a graceful stop
    /// before the guest answered: the run is queued again, its lease
    /// released, the attempt marked handed over and one more attempt
    /// allowed (a handover spends none of [`MAX_ATTEMPTS`]). Fenced by the
    /// lease token of a run still `running` (a cancelling one is settled
    /// instead); attempts past the 62nd are left to their lease.
    HandOver {
        /// The run.
        id: RunId,
        /// The lease the attempt ran under.
        lease_token: String,
        /// The attempt's number.
        attempt: u32,
    },
    /// The audit row of an attempt whose guest asked its client for input
    /// without an answer: the run waits `input_required` with `input`
    /// (its requests pending), its lease released and one more attempt
    /// allowed (asking spends none of [`MAX_ATTEMPTS`]). Fenced by the
    /// lease token of a run still `running`.
    AwaitInput {
        /// The run.
        id: RunId,
        /// The lease the attempt ran under.
        lease_token: String,
        /// The attempt's number.
        attempt: u32,
        /// The requests and the answers so far.
        input: Box<RunInput>,
        /// When it began waiting (Unix milliseconds).
        parked_at_ms: i64,
    },
}

/// The durable queue. Tenant is part of every caller-facing read: another
/// tenant's run is `None`, exactly like one that does not exist.
pub trait RunStore: Send + Sync {
    /// The run `id` of `tenant`.
    fn run<'a>(&'a self, tenant: &'a str, id: &'a RunId) -> RunFuture<'a, Option<Run>>;

    /// The run `id`, whatever its tenant (workers and the operator's CLI).
    fn run_any<'a>(&'a self, id: &'a RunId) -> RunFuture<'a, Option<Run>>;

    /// The newest `limit` runs of `tenant` (of `principal`, when given),
    /// newest first.
    fn runs<'a>(
        &'a self,
        tenant: &'a str,
        principal: Option<&'a str>,
        limit: u32,
    ) -> RunFuture<'a, Vec<Run>> {
        Box::pin(async move { self.page(&RunQuery::newest(tenant, principal, limit)).await })
    }

    /// The runs `query` asks for, newest first: filtered, and from its
    /// cursor, in the store (an index walk from the cursor; the runs before
    /// it are never read).
    fn page<'a>(&'a self, query: &'a RunQuery) -> RunFuture<'a, Vec<Run>>;

    /// Queued or running runs of `tenant`, and of `principal` in it.
    fn active<'a>(&'a self, tenant: &'a str, principal: &'a str) -> RunFuture<'a, (u32, u32)>;

    /// Claims the oldest run that is queued, whose lease expired by
    /// `now_ms` with attempts left, or that waited `input_required` longer
    /// than [`crate::INPUT_WAIT`] (its worker settles it `timed_out`), for
    /// `worker` until `now_ms +
    /// lease_ms`. Two workers never hold one run: on PostgreSQL the
    /// candidate row is locked `FOR UPDATE SKIP LOCKED`; SQLite has one
    /// writer.
    fn claim<'a>(
        &'a self,
        worker: &'a str,
        lease_ms: i64,
        now_ms: i64,
    ) -> RunFuture<'a, Option<Claim>>;

    /// Renews the lease to `lease_until_ms` and stores `progress`. `None`:
    /// the lease is lost (taken over, or the run settled): stop, write
    /// nothing.
    fn heartbeat<'a>(
        &'a self,
        id: &'a RunId,
        lease_token: &'a str,
        lease_until_ms: i64,
        progress: Option<&'a Progress>,
    ) -> RunFuture<'a, Option<Beat>>;

    /// Asks the run `id` of `tenant` to stop: a running run becomes
    /// `cancelling` (its worker settles it); a queued one stays queued with
    /// the request noted (the worker that claims it settles it `cancelled`
    /// at once; the MCP tools settle it themselves with a
    /// [`RunEffect::Finish`]). A settled run is returned unchanged.
    fn request_cancel<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a RunId,
        now_ms: i64,
    ) -> RunFuture<'a, Option<Run>>;

    /// Stores `answered` as the input of the run `id` of `tenant`, if it
    /// still waits with exactly `asked` (another answer stored meanwhile
    /// changes nothing: `false`, read it again). When `answered` has
    /// nothing pending, the run is queued again at `now_ms`, its deadline
    /// moved by the time it waited.
    fn answer_input<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a RunId,
        asked: &'a RunInput,
        answered: &'a RunInput,
        now_ms: i64,
    ) -> RunFuture<'a, bool>;

    /// Runs whose lease expired by `now_ms` with no attempts left, each
    /// with the token of its last lease: the reaper settles them `failed`.
    fn exhausted(&self, now_ms: i64) -> RunFuture<'_, Vec<Claim>>;
}
