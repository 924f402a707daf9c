//! The rate limits' counts, kept in memory as tokens leased from the
//! store's shared count, so a request's admission is a lock and a
//! subtraction, not a store round trip.
//!
//! Every replica on one store shares a counter per (bucket, window). A
//! replica that runs out of tokens for a bucket leases more: it adds `n` to
//! the shared counter (`Store::add_hits`, one atomic statement) and may
//! admit the requests of that lease which fall at or under the limit: with
//! a total `t` after adding `n`, those are `limit - (t - n)`, at most `n`.
//! Atomic additions give every lease its own stretch of the count, so the
//! requests all replicas admit in a window never exceed the limit: there is
//! no slack above it. The slack is below it: tokens a replica leased and
//! has not used are lost to the others, so a window may refuse up to
//! `(replicas - 1) × lease` requests before the limit is reached, when a
//! replica stops getting requests while it holds tokens. A lease is a
//! sixteenth of the limit ([`LEASE_SHARE`]), or as many as are waiting if
//! that is more: with the default 600 a minute per principal, a replica
//! leases 37 at a time, one store round trip per 37 requests.
//!
//! One task per limiter takes the leases: requests short of a token wait
//! for it, and it leases for every bucket that has waiters in one
//! statement. Once a bucket's shared count has reached its limit it stays
//! refused on this replica until its window ends, with no further round
//! trip. If the store cannot lease, requests go through uncounted (logged
//! once per outage) until a lease succeeds: the limits protect capacity,
//! not access, and a failing counter table must not become an outage.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::{Notify, watch};
use toolhost_storage::{Hits, StorageError, Store};

/// A lease is at least this share of the limit (one sixteenth): fewer
/// round trips, against at most this share of a window refused early per
/// other replica.
pub const LEASE_SHARE: u64 = 16;

/// How often the lease task wakes when nothing asks it to: to retry after
/// the store failed and to forget ended windows.
const IDLE_ROUND: Duration = Duration::from_millis(250);

/// What a request's buckets answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// A token was taken from every bucket (or the store is failing).
    Admitted,
    /// A bucket has reached its limit in the current window; no token was
    /// taken.
    Refused {
        /// The bucket's index, in the order named.
        bucket: usize,
        /// When it was refused (unix ms).
        now: i64,
        /// When its window ends (unix ms).
        window_end: i64,
    },
}

/// Unix milliseconds: the wall clock, or a test's.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// One bucket's tokens in one window.
#[derive(Debug)]
struct Tokens {
    limit: u64,
    window_end: i64,
    /// Leased and not yet used.
    left: u64,
    /// Requests waiting for a lease.
    waiting: u64,
    /// The shared count has reached the limit: no more leases this window.
    spent: bool,
}

#[derive(Debug, Default)]
struct State {
    /// Window start → bucket → tokens.
    windows: HashMap<i64, HashMap<String, Tokens>>,
    /// The last lease failed: admit without tokens until one succeeds.
    failing: bool,
}

/// Where leases come from: the store's shared counters. A trait so a test
/// can make them fail and recover.
pub trait Counters: Send + Sync + 'static {
    /// [`Store::add_hits`].
    fn add_hits<'a>(&'a self, hits: &'a [Hits]) -> BoxFuture<'a, Vec<u64>>;
}

/// What [`Counters::add_hits`] returns.
pub type BoxFuture<'a, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, StorageError>> + Send + 'a>>;

impl Counters for Store {
    fn add_hits<'a>(&'a self, hits: &'a [Hits]) -> BoxFuture<'a, Vec<u64>> {
        Box::pin(Store::add_hits(self, hits))
    }
}

/// The tokens of one limiter (one replica). Cheap to share.
pub struct Leases {
    state: Mutex<State>,
    store: Arc<dyn Counters>,
    clock: Clock,
    /// Asks the lease task for a round now.
    wake: Notify,
    /// Moves after every lease round: waiting requests look again.
    rounds: watch::Sender<u64>,
}

impl Leases {
    /// Tokens leased from `store`, and the task that leases them (it ends
    /// when the last handle is dropped). Must be called within a Tokio
    /// runtime.
    pub fn start(store: Arc<Store>) -> Arc<Leases> {
        Leases::start_with_clock(store, Arc::new(now_ms))
    }

    /// [`Leases::start`] with its own counters and clock.
    pub fn start_with_clock(store: Arc<dyn Counters>, clock: Clock) -> Arc<Leases> {
        let leases = Arc::new(Leases {
            state: Mutex::new(State::default()),
            store,
            clock,
            wake: Notify::new(),
            rounds: watch::channel(0).0,
        });
        tokio::spawn(lease_rounds(Arc::downgrade(&leases)));
        leases
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves counts, not broken
        // invariants: go on with them.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes one token from each of `buckets` (name, limit per window) in
    /// the current window of `window_len` milliseconds (aligned to the
    /// epoch), leasing more if need be; or names the first bucket whose
    /// window is spent. A request that waits across a window's end counts
    /// in the next one.
    pub async fn take(&self, buckets: &[(&str, u64)], window_len: i64) -> Admission {
        loop {
            let mut round = self.rounds.subscribe();
            {
                let now = (self.clock)();
                let (window_start, window_end) = window(now, window_len);
                let mut state = self.state();
                let failing = state.failing;
                let window = state.windows.entry(window_start).or_default();
                if let Some(i) = buckets
                    .iter()
                    .position(|(name, _)| window.get(*name).is_some_and(|t| t.spent && t.left == 0))
                {
                    return Admission::Refused {
                        bucket: i,
                        now,
                        window_end,
                    };
                }
                let short = |name: &str| window.get(name).is_none_or(|t| t.left == 0);
                let any_short = buckets.iter().any(|(name, _)| short(name));
                if any_short {
                    for (name, limit) in buckets {
                        let tokens = match window.get_mut(*name) {
                            Some(t) => t,
                            None => window.entry((*name).to_owned()).or_insert(Tokens {
                                limit: *limit,
                                window_end,
                                left: 0,
                                waiting: 0,
                                spent: false,
                            }),
                        };
                        if tokens.left == 0 {
                            // While failing, one ask per bucket is enough:
                            // the idle round retries it.
                            tokens.waiting = if failing { 1 } else { tokens.waiting + 1 };
                        }
                    }
                }
                if failing || !any_short {
                    for (name, _) in buckets {
                        if let Some(t) = window.get_mut(*name) {
                            t.left = t.left.saturating_sub(1);
                        }
                    }
                    return Admission::Admitted;
                }
            }
            self.wake.notify_one();
            // The sender lives as long as `self`: this only waits.
            let _ = round.changed().await;
        }
    }

    /// One round: leases for every bucket with waiters, in one statement.
    async fn lease_round(&self, now: i64) {
        let asks: Vec<Hits> = {
            let mut state = self.state();
            state
                .windows
                .retain(|_, window| window.values().next().is_some_and(|t| t.window_end > now));
            let mut asks = Vec::new();
            for (start, window) in &mut state.windows {
                for (name, t) in window.iter_mut() {
                    if t.waiting == 0 || t.left > 0 || t.spent {
                        t.waiting = 0;
                        continue;
                    }
                    let n = lease_size(t.limit, t.waiting);
                    t.waiting = 0;
                    asks.push(Hits {
                        bucket: name.clone(),
                        window_start: *start,
                        window_end: t.window_end,
                        n,
                    });
                }
            }
            asks
        };
        if !asks.is_empty() {
            let totals = self.store.add_hits(&asks).await;
            let mut state = self.state();
            match totals {
                Ok(totals) => {
                    if state.failing {
                        tracing::info!("rate limits: leasing from the store again");
                    }
                    state.failing = false;
                    for (ask, total) in asks.iter().zip(totals) {
                        let window = state.windows.get_mut(&ask.window_start);
                        let Some(t) = window.and_then(|w| w.get_mut(&ask.bucket)) else {
                            continue;
                        };
                        t.left += granted(t.limit, total, ask.n);
                        t.spent = total >= t.limit;
                    }
                }
                Err(e) => {
                    if !state.failing {
                        tracing::error!(error = %e,
                            "rate limits: leasing failed; requests go through uncounted until it works");
                    }
                    state.failing = true;
                }
            }
        }
        self.rounds.send_modify(|n| *n = n.wrapping_add(1));
    }
}

/// How many tokens to lease for a bucket with `waiting` requests: a
/// [`LEASE_SHARE`] of the limit, or the waiters if more, within the limit.
fn lease_size(limit: u64, waiting: u64) -> u64 {
    (limit / LEASE_SHARE).max(waiting).clamp(1, limit.max(1))
}

/// Of a lease of `n` whose addition took the shared count to `total`, the
/// tokens at or under `limit`.
fn granted(limit: u64, total: u64, n: u64) -> u64 {
    limit.saturating_sub(total.saturating_sub(n)).min(n)
}

/// The lease task: a round when asked, or every [`IDLE_ROUND`]; ends when
/// the leases are dropped.
async fn lease_rounds(leases: Weak<Leases>) {
    loop {
        let Some(leases) = leases.upgrade() else {
            return;
        };
        let _ = tokio::time::timeout(IDLE_ROUND, leases.wake.notified()).await;
        let now = (leases.clock)();
        leases.lease_round(now).await;
    }
}

/// The fixed window holding `now` (unix ms): its start and end.
pub(crate) fn window(now: i64, len: i64) -> (i64, i64) {
    let start = now - now.rem_euclid(len);
    (start, start + len)
}

/// The clock the limits count with: unix milliseconds.
pub(crate) fn now_ms() -> i64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI64, Ordering};
    use tokio::task::JoinSet;

    const START: i64 = 1_764_000_000_000;
    const LEN: i64 = 60_000;

    /// Leases on an in-memory store whose clock reads `now`.
    async fn leases(now: &Arc<AtomicI64>) -> Arc<Leases> {
        let store = Arc::new(Store::connect("sqlite::memory:").await.expect("a store"));
        leases_on(store, now)
    }

    fn leases_on(store: Arc<Store>, now: &Arc<AtomicI64>) -> Arc<Leases> {
        let now = now.clone();
        Leases::start_with_clock(store, Arc::new(move || now.load(Ordering::SeqCst)))
    }

    fn clock() -> Arc<AtomicI64> {
        Arc::new(AtomicI64::new(START + 1_000))
    }

    fn refused(bucket: usize) -> Admission {
        Admission::Refused {
            bucket,
            now: START + 1_000,
            window_end: START + LEN,
        }
    }

    #[test]
    fn a_lease_is_a_sixteenth_of_the_limit_or_the_waiters_within_the_limit() {
        assert_eq!(lease_size(600, 1), 37);
        assert_eq!(lease_size(600, 50), 50);
        assert_eq!(lease_size(6, 1), 1);
        assert_eq!(lease_size(6, 9), 6);
        assert_eq!(lease_size(0, 1), 1);
    }

    #[test]
    fn only_the_part_of_a_lease_under_the_limit_is_granted() {
        assert_eq!(granted(10, 4, 4), 4, "all under");
        assert_eq!(granted(10, 12, 4), 2, "8 and 9 and 10 of 12: two");
        assert_eq!(granted(10, 10, 4), 4, "exactly to the limit");
        assert_eq!(granted(10, 20, 4), 0, "all over");
    }

    #[tokio::test]
    async fn one_replica_admits_exactly_the_limit_then_refuses_until_the_window_ends() {
        let now = clock();
        let leases = leases(&now).await;
        let bucket = [("principal:acme/a", 33)];
        let mut admitted = 0;
        for _ in 0..40 {
            match leases.take(&bucket, LEN).await {
                Admission::Admitted => admitted += 1,
                refusal => assert_eq!(refusal, refused(0)),
            }
        }
        assert_eq!(admitted, 33);
        now.store(START + LEN, Ordering::SeqCst);
        assert_eq!(
            leases.take(&bucket, LEN).await,
            Admission::Admitted,
            "the next window"
        );
    }

    #[tokio::test]
    async fn the_first_spent_bucket_refuses_and_takes_no_token_from_the_others() {
        let leases = leases(&clock()).await;
        let buckets = [("principal:acme/a", 100), ("tool:write:acme/a", 2)];
        for _ in 0..2 {
            assert_eq!(leases.take(&buckets, LEN).await, Admission::Admitted);
        }
        assert_eq!(leases.take(&buckets, LEN).await, refused(1));
        // Two of the principal's tokens were used: 98 are left.
        let principal = [("principal:acme/a", 100)];
        let mut admitted = 0;
        while leases.take(&principal, LEN).await == Admission::Admitted {
            admitted += 1;
        }
        assert_eq!(admitted, 98);
    }

    #[tokio::test]
    async fn two_replicas_hammering_one_bucket_admit_exactly_the_limit_between_them() {
        let now = clock();
        let store = Arc::new(Store::connect("sqlite::memory:").await.expect("a store"));
        let replicas = [leases_on(store.clone(), &now), leases_on(store, &now)];
        let mut calls = JoinSet::new();
        for i in 0..400 {
            let leases = replicas[i % 2].clone();
            calls.spawn(async move { leases.take(&[("client:acme/app", 160)], LEN).await });
        }
        let answers = calls.join_all().await;
        let admitted = answers
            .iter()
            .filter(|a| **a == Admission::Admitted)
            .count();
        assert_eq!(
            admitted, 160,
            "both replicas kept asking: no token was left over"
        );
    }

    /// Counters that fail while `down` is set.
    struct Flaky {
        store: Store,
        down: std::sync::atomic::AtomicBool,
    }

    impl Counters for Flaky {
        fn add_hits<'a>(&'a self, hits: &'a [Hits]) -> BoxFuture<'a, Vec<u64>> {
            if self.down.load(Ordering::SeqCst) {
                return Box::pin(async { Err(StorageError::Closed) });
            }
            Box::pin(self.store.add_hits(hits))
        }
    }

    #[tokio::test]
    async fn a_failing_store_lets_requests_through_and_the_limit_holds_again_once_it_recovers() {
        let flaky = Arc::new(Flaky {
            store: Store::connect("sqlite::memory:").await.expect("a store"),
            down: true.into(),
        });
        let now = clock();
        let clock = now.clone();
        let leases = Leases::start_with_clock(
            flaky.clone(),
            Arc::new(move || clock.load(Ordering::SeqCst)),
        );
        let bucket = [("principal:acme/a", 3)];
        for _ in 0..10 {
            assert_eq!(
                leases.take(&bucket, LEN).await,
                Admission::Admitted,
                "fails open"
            );
        }
        flaky.down.store(false, Ordering::SeqCst);
        // The idle round asks again and succeeds; then the limit holds.
        tokio::time::sleep(IDLE_ROUND * 3).await;
        assert!(!leases.state().failing, "leasing again");
        let mut admitted = 0;
        for _ in 0..10 {
            if leases.take(&bucket, LEN).await == Admission::Admitted {
                admitted += 1;
            }
        }
        assert!(admitted <= 3, "{admitted} admitted after recovery");
    }

    #[tokio::test]
    async fn an_ended_window_is_forgotten_and_requests_count_in_the_next() {
        let now = clock();
        let leases = leases(&now).await;
        let bucket = [("principal:acme/a", 1)];
        assert_eq!(leases.take(&bucket, LEN).await, Admission::Admitted);
        assert_eq!(leases.take(&bucket, LEN).await, refused(0));
        // The window ends while nothing is waiting: its tokens are forgotten.
        now.store(START + LEN + 5, Ordering::SeqCst);
        assert_eq!(leases.take(&bucket, LEN).await, Admission::Admitted);
        leases.lease_round(START + LEN + 5).await;
        assert_eq!(leases.state().windows.len(), 1, "only the current window");
    }
}
