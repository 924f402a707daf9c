//! Per-source limits on the unauthenticated edge: dynamic registrations,
//! password sign-ins and authorization requests (each stores a pending
//! row), each counted per source
//! address in fixed windows, shared by every replica on the store.
//!
//! - **Who is a source.** An IPv4 address as it is; an IPv6 address by its
//!   /64, the smallest block a site is given (RFC 6177), so rotating
//!   addresses inside one's own /64 buys nothing. An IPv4-mapped IPv6
//!   address counts as its IPv4 address. No address (a server built without
//!   connect info) is one shared source.
//! - **Shared.** Counts live in the store's rate counters, the ones the
//!   `/mcp` call limits lease from (`rate_counters`, one atomic `INSERT … ON
//!   CONFLICT DO UPDATE … RETURNING` per request), so replicas together
//!   admit a limit, not a limit each. These requests are rare and each costs
//!   far more than the round trip (a password hash, a store row), so every
//!   one is counted, with no lease.
//! - **Pruned.** Counters are rows that expire with their window and are
//!   purged by the host's maintenance. In memory a replica keeps only which
//!   buckets are spent until their window ends, so a flood from one source
//!   costs no round trip once refused; that map holds at most
//!   [`MAX_SPENT`] entries, ended windows dropped first.
//! - **If the store cannot count,** requests go through, logged: the limits
//!   protect capacity, and the password check or the row write that follows
//!   fails anyway while the store is down.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{OAuthError, log_detail};
use crate::store::AuthStore;

/// Every per-source limit counts per minute (the configuration's
/// `*_per_minute`).
pub(crate) const WINDOW_MS: i64 = 60_000;

/// Most spent buckets a replica remembers: a source refused within a
/// window is answered from memory. 10 000 entries are well under a
/// megabyte; past that, ended windows are dropped, and if none has ended
/// the refusal is simply asked of the store again (one round trip each).
pub(crate) const MAX_SPENT: usize = 10_000;

/// What a per-source limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Counted {
    /// `POST /oauth/register`.
    Registrations,
    /// Password sign-ins and single-sign-on callbacks.
    Logins,
    /// Sign-in forms opened: each stores a pending authorization row.
    Authorizations,
}

impl Counted {
    /// The bucket prefix in the shared counters.
    fn prefix(self) -> &'static str {
        match self {
            Counted::Registrations => "source:register",
            Counted::Logins => "source:login",
            Counted::Authorizations => "source:authorize",
        }
    }

    /// How the refusal names it.
    fn noun(self) -> &'static str {
        match self {
            Counted::Registrations => "registrations",
            Counted::Logins => "login attempts",
            Counted::Authorizations => "sign-in requests",
        }
    }
}

/// The source a limit counts: an IPv4 address, an IPv6 /64, or `unknown`.
pub(crate) fn source_key(source: Option<IpAddr>) -> String {
    match source {
        None => "unknown".to_owned(),
        Some(IpAddr::V4(ip)) => ip.to_string(),
        Some(IpAddr::V6(ip)) => match ip.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = ip.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

/// The fixed window holding `now_ms`: its start and end (unix ms).
fn window(now_ms: i64) -> (i64, i64) {
    let start = now_ms - now_ms.rem_euclid(WINDOW_MS);
    (start, start + WINDOW_MS)
}

/// Whole seconds from `now_ms` to `end`, rounded up, at least one.
fn retry_after(now_ms: i64, end: i64) -> u64 {
    u64::try_from((end - now_ms + 999) / 1000)
        .unwrap_or(0)
        .max(1)
}

/// The per-source limits of one replica: the spent buckets it remembers.
#[derive(Debug, Default)]
pub(crate) struct SourceLimits {
    /// Bucket → the end of the window in which it is spent (unix ms).
    spent: Mutex<HashMap<String, i64>>,
}

impl SourceLimits {
    /// Counts one request of `what` from `source` against `limit` per
    /// minute (0 is taken as 1: a limit never turns into "unlimited" by a
    /// typo); refuses it with 429 and `Retry-After` once the source's count
    /// in this window, on every replica, is over the limit.
    pub(crate) async fn check(
        &self,
        store: &dyn AuthStore,
        what: Counted,
        limit: u32,
        source: Option<IpAddr>,
    ) -> Result<(), OAuthError> {
        self.check_at(store, what, limit, source, now_ms()).await
    }

    async fn check_at(
        &self,
        store: &dyn AuthStore,
        what: Counted,
        limit: u32,
        source: Option<IpAddr>,
        now: i64,
    ) -> Result<(), OAuthError> {
        let bucket = format!("{}:{}", what.prefix(), source_key(source));
        let (start, end) = window(now);
        let refuse = || {
            OAuthError::rate_limited(
                format!("too many {} from this address; retry later", what.noun()),
                retry_after(now, end),
            )
        };
        if self.is_spent(&bucket, end) {
            return Err(refuse());
        }
        match store.count_hit(&bucket, start, end).await {
            Ok(total) if total > u64::from(limit.max(1)) => {
                self.mark_spent(bucket, end, now);
                Err(refuse())
            }
            Ok(_) => Ok(()),
            Err(e) => {
                tracing::error!(bucket, error = %log_detail(&e),
                    "per-source limit: the store could not count; letting the request through");
                Ok(())
            }
        }
    }

    fn spent(&self) -> std::sync::MutexGuard<'_, HashMap<String, i64>> {
        // A panic while holding the lock leaves window ends, not broken
        // invariants: go on with them.
        self.spent.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn is_spent(&self, bucket: &str, window_end: i64) -> bool {
        self.spent().get(bucket) == Some(&window_end)
    }

    /// Remembers `bucket` as spent until `window_end`, within [`MAX_SPENT`].
    fn mark_spent(&self, bucket: String, window_end: i64, now: i64) {
        let mut spent = self.spent();
        if spent.len() >= MAX_SPENT && !spent.contains_key(&bucket) {
            spent.retain(|_, end| *end > now);
            if spent.len() >= MAX_SPENT {
                return;
            }
        }
        spent.insert(bucket, window_end);
    }

    /// How many spent buckets this replica remembers.
    #[cfg(test)]
    fn remembered(&self) -> usize {
        self.spent().len()
    }
}

/// How long a replica trusts its count of pending rows before it counts
/// again: one second, so a flood past the cap costs one `COUNT(*)` a
/// second, not one a request. Within it the replica adds its own rows, so
/// the cap is passed by at most what other replicas store in a second.
const PENDING_COUNT_MS: i64 = 1000;

/// When a full pending table is worth trying again: its rows expire within
/// the form lifetime (ten minutes by default), the oldest first.
const PENDING_FULL_RETRY_SECS: u64 = 60;

/// The bound on pending authorization rows in the store, all sources
/// together: a flood from many sources (a /48 holds 65 536 /64s) passes
/// the per-source limit but not this.
#[derive(Debug, Default)]
pub(crate) struct PendingCap {
    /// When the rows were last counted (unix ms), and how many there are
    /// since, counting this replica's own.
    seen: Mutex<Option<(i64, u64)>>,
}

impl PendingCap {
    /// Admits one more pending row if fewer than `max` are stored; at the
    /// cap, purges expired rows first and counts again. Refuses with 429
    /// and `Retry-After` while the store is still full. If the store cannot
    /// count, admits (the insert that follows fails anyway).
    pub(crate) async fn admit(&self, store: &dyn AuthStore, max: u64) -> Result<(), OAuthError> {
        let now = now_ms();
        let held = *self.seen();
        let (at, rows) = match held {
            Some((at, rows)) if now - at < PENDING_COUNT_MS => (at, rows),
            _ => match count_pruned(store, max, now).await {
                Some(rows) => (now, rows),
                None => return Ok(()),
            },
        };
        if rows >= max {
            *self.seen() = Some((at, rows));
            return Err(OAuthError::rate_limited(
                "too many sign-ins are in progress on this server; retry later",
                PENDING_FULL_RETRY_SECS,
            ));
        }
        *self.seen() = Some((at, rows + 1));
        Ok(())
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Option<(i64, u64)>> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The stored pending rows; at `max` or more, expired rows are purged and
/// the rows counted again. `None` if the store cannot count (logged).
async fn count_pruned(store: &dyn AuthStore, max: u64, now: i64) -> Option<u64> {
    let count = |what| async move {
        store
            .count_pending()
            .await
            .map_err(|e| {
                tracing::error!(error = %log_detail(&e), what, "pending cap: the store could not count; admitting");
            })
            .ok()
    };
    let rows = count("count").await?;
    if rows < max {
        return Some(rows);
    }
    if let Err(e) = store.purge_expired(now / 1000).await {
        tracing::error!(error = %log_detail(&e), "pending cap: purging expired rows failed");
    }
    count("count after purging").await
}

/// Now, in unix milliseconds.
/// Counts one hit of `bucket` in this minute's window, on every replica
/// together: whether the minute's total is still within `limit`. A store
/// that cannot count answers false (the caller does without).
pub(crate) async fn counted_within(store: &dyn AuthStore, bucket: &str, limit: u32) -> bool {
    let (start, end) = window(now_ms());
    match store.count_hit(bucket, start, end).await {
        Ok(total) => total <= u64::from(limit),
        Err(e) => {
            tracing::error!(bucket, error = %log_detail(&e), "counting a bounded event");
            false
        }
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_counts_per_address_and_ipv6_per_64() {
        let key = |s: &str| source_key(Some(s.parse().expect("an address")));
        assert_eq!(key("192.0.2.7"), "192.0.2.7");
        assert_ne!(key("192.0.2.7"), key("192.0.2.8"));
        assert_eq!(key("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
        assert_eq!(key("2001:db8:1:2:ffff:ffff:ffff:ffff"), "2001:db8:1:2::/64");
        assert_ne!(key("2001:db8:1:2::1"), key("2001:db8:1:3::1"));
        assert_eq!(key("::ffff:192.0.2.7"), "192.0.2.7");
        assert_eq!(source_key(None), "unknown");
    }

    #[test]
    fn windows_are_minutes_and_retry_after_reaches_the_next() {
        assert_eq!(window(125_000), (120_000, 180_000));
        assert_eq!(retry_after(125_000, 180_000), 55);
        assert_eq!(retry_after(179_999, 180_000), 1);
    }

    #[test]
    fn the_spent_map_stays_bounded_and_drops_ended_windows_first() {
        let limits = SourceLimits::default();
        for i in 0..MAX_SPENT {
            limits.mark_spent(format!("old{i}"), 60_000, 0);
        }
        assert_eq!(limits.remembered(), MAX_SPENT);
        // Nothing has ended: a new bucket is not remembered.
        limits.mark_spent("new".into(), 60_000, 1);
        assert_eq!(limits.remembered(), MAX_SPENT);
        assert!(!limits.is_spent("new", 60_000));
        // Once their window ended, old buckets make room.
        limits.mark_spent("next".into(), 120_000, 60_000);
        assert_eq!(limits.remembered(), 1);
        assert!(limits.is_spent("next", 120_000));
        // A spent bucket is spent only in its own window.
        assert!(!limits.is_spent("next", 180_000));
    }
}
