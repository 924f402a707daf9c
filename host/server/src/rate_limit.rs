//! Rate limits on `/mcp`: per principal, per client and per tool class,
//! shared by every host on the store. A request over a limit gets HTTP 429
//! with `Retry-After` and a JSON-RPC error, and runs nothing.
//!
//! Who is counted, never which MCP session: stateless clients (protocol
//! 2026-07-28) have none, and a session is free to make anyway. Three
//! buckets, each with its own limit per window:
//!
//! - `principal:<tenant>/<subject>`: every request (POST, GET or DELETE)
//!   of one person or service;
//! - `client:<tenant>/<client_id>`: every request through one OAuth client in
//!   one tenant. Per tenant, because a public client (one CIMD URL for every
//!   user of an app) is shared across tenants, and one tenant must not spend
//!   another's budget;
//! - `tool:write:<tenant>/<subject>`: a principal's calls of mutating tools,
//!   which change backends and deserve a lower ceiling than reads.
//!
//! Windows are fixed (aligned to the epoch). A request takes a token from
//! each of its buckets, in memory; tokens are leased from the store's
//! shared count a sixteenth of the limit at a time (`rate_lease.rs`), so
//! the hosts on one store together never admit more than a limit, and a
//! request waits for the store once per lease, not once per request. The
//! price of fixed windows: up to twice a limit around a window's boundary.
//! Once a bucket's window is spent, its requests are refused until the
//! window ends: a client that ignores `Retry-After` stays refused.
//!
//! If the store cannot lease, requests go through (logged as an error):
//! the limits protect capacity, not access, which the bearer check and the
//! policy decide; a counter table that refuses writes should not turn a
//! degraded store into a total outage.

use std::sync::Arc;
use std::time::Duration;

use anyhow::ensure;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use toolhost_invoke::Toolhost;
use toolhost_storage::Store;
use toolhost_types::Principal;

use crate::guard::Peeked;
use crate::rate_lease::{Admission, Leases, now_ms};

/// JSON-RPC code for a request refused by a rate limit, next to the guard's
/// `LIMIT_EXCEEDED` (−31001) outside JSON-RPC's reserved range. MCP defines
/// no code for this: clients act on the 429 and its `Retry-After` (rmcp's
/// client reports both without reading the body).
pub const RATE_LIMITED: i64 = -31002;

/// Default window: a minute smooths the bursts of an agent's turn (several
/// calls in a second, then silence) while a runaway loop is stopped within it.
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(60);
/// Default POSTs per principal per window: ten a second sustained, far above
/// a person's agent and above the heaviest burst the end-to-end tests make
/// (fifty concurrent calls, plus their set-up, in well under a minute).
pub const DEFAULT_PER_PRINCIPAL: u32 = 600;
/// Default POSTs per client per tenant per window: five principals at their
/// full rate. A tenant's people usually share one app; its many users are
/// what the per-principal limit is for, this catches a client gone wrong.
pub const DEFAULT_PER_CLIENT: u32 = 3000;
/// Default uploads (`/workspace/uploads`) per principal per window: one
/// every two seconds sustained. Each may be a 32 MiB component, and an
/// author's loop uploads a component, a manifest and a signature per
/// proposal.
pub const DEFAULT_UPLOADS: u32 = 30;
/// Default calls of mutating tools per principal per window: two a second
/// sustained. Writes reach backends (and may raise approval gates); the end
/// to end tests' heaviest burst is fifty concurrent retries of one write.
pub const DEFAULT_WRITES: u32 = 120;
/// Shortest window: `Retry-After` counts whole seconds.
const MIN_WINDOW: Duration = Duration::from_secs(1);

/// The limits, each a count of requests per [`RateLimits::window`]; 0 turns
/// one off, all three 0 turn rate limiting off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    /// How long a counting window lasts (at least a second).
    pub window: Duration,
    /// Requests on `/mcp` per principal.
    pub per_principal: u32,
    /// Requests on `/mcp` per OAuth client, in each tenant.
    pub per_client: u32,
    /// Calls of mutating tools per principal.
    pub writes: u32,
    /// Uploads per principal.
    pub uploads: u32,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits {
            window: DEFAULT_WINDOW,
            per_principal: DEFAULT_PER_PRINCIPAL,
            per_client: DEFAULT_PER_CLIENT,
            writes: DEFAULT_WRITES,
            uploads: DEFAULT_UPLOADS,
        }
    }
}

impl RateLimits {
    /// The defaults, with whichever values the configuration sets; refuses
    /// a window under a second.
    pub fn configured(
        window: Option<Duration>,
        per_principal: Option<u32>,
        per_client: Option<u32>,
        writes: Option<u32>,
    ) -> anyhow::Result<RateLimits> {
        let d = RateLimits::default();
        let limits = RateLimits {
            window: window.unwrap_or(d.window),
            per_principal: per_principal.unwrap_or(d.per_principal),
            per_client: per_client.unwrap_or(d.per_client),
            writes: writes.unwrap_or(d.writes),
            uploads: d.uploads,
        };
        ensure!(
            limits.window >= MIN_WINDOW,
            "rate_limit_window {:?}: must be at least 1s (Retry-After counts whole seconds)",
            limits.window
        );
        Ok(limits)
    }

    /// The window in milliseconds, never under [`MIN_WINDOW`] (the fields
    /// are public; a zero window must not divide by zero).
    fn window_ms(&self) -> i64 {
        let window = self.window.max(MIN_WINDOW);
        i64::try_from(window.as_millis()).unwrap_or(i64::MAX)
    }
}

/// Which limit a bucket counts against; the name goes in the refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// [`RateLimits::per_principal`].
    Principal,
    /// [`RateLimits::per_client`].
    Client,
    /// [`RateLimits::writes`].
    Writes,
    /// [`RateLimits::uploads`]: uploads begun over MCP (`begin_upload`)
    /// count with those posted to `/workspace/uploads`.
    Uploads,
}

impl Limit {
    /// The stable name clients see in `error.data.limit`.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Principal => "principal",
            Limit::Client => "client",
            Limit::Writes => "writes",
            Limit::Uploads => "uploads",
        }
    }
}

/// A request's tool class: whether it calls a mutating tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Read,
    Write,
}

/// The buckets a request by `who` of `class` counts in, with their limits;
/// limits turned off count nothing.
fn buckets(limits: &RateLimits, who: &Principal, class: Class) -> Vec<(Limit, String, u32)> {
    let (tenant, subject) = (&who.tenant, &who.subject);
    let mut out = vec![
        (
            Limit::Principal,
            format!("principal:{tenant}/{subject}"),
            limits.per_principal,
        ),
        (
            Limit::Client,
            format!("client:{tenant}/{}", who.client_id),
            limits.per_client,
        ),
    ];
    if class == Class::Write {
        let bucket = format!("tool:write:{tenant}/{subject}");
        out.push((Limit::Writes, bucket, limits.writes));
    }
    out.retain(|&(_, _, max)| max > 0);
    out
}

/// The bucket a principal's uploads count in, over HTTP and MCP alike.
pub(crate) fn upload_bucket(who: &Principal) -> String {
    format!("upload:{}/{}", who.tenant, who.subject)
}

/// Whole seconds from `now` to `end` (unix ms), rounded up, at least one:
/// a client that waits this long is in the next window.
fn retry_after(now: i64, end: i64) -> u64 {
    u64::try_from((end - now + 999) / 1000).unwrap_or(0).max(1)
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The limit the request broke (the first of principal, client, writes).
    pub limit: Limit,
    /// Requests that limit allows per window.
    pub allowed: u32,
    /// The window's length.
    pub window: Duration,
    /// Seconds until the window ends.
    pub retry_after: u64,
}

/// Counts requests against [`RateLimits`], leasing from the store. Cheap
/// to clone (clones share the tokens).
#[derive(Clone)]
pub struct RateLimiter {
    limits: RateLimits,
    leases: Arc<Leases>,
    /// Where ended windows' counters are purged.
    store: Arc<Store>,
    /// Where a tool's `mutating` flag is looked up (plugin and host tools).
    host: Arc<Toolhost>,
}

impl RateLimiter {
    /// A limiter leasing from `store`, classifying tools by `host`'s specs.
    /// Starts the task that leases (within a Tokio runtime); it ends with
    /// the last clone.
    pub fn new(limits: RateLimits, store: Arc<Store>, host: Arc<Toolhost>) -> Self {
        RateLimiter {
            limits,
            leases: Leases::start(store.clone()),
            store,
            host,
        }
    }

    /// Takes a token for one request by `who` from each of its buckets;
    /// refuses it if one's window is spent. Fails open: while the store
    /// cannot lease, requests go through, logged.
    async fn check(&self, who: &Principal, class: Class) -> Result<(), Refusal> {
        let buckets = buckets(&self.limits, who, class);
        if buckets.is_empty() {
            return Ok(());
        }
        let named: Vec<(&str, u64)> = buckets
            .iter()
            .map(|(_, b, max)| (b.as_str(), u64::from(*max)))
            .collect();
        match self.leases.take(&named, self.limits.window_ms()).await {
            Admission::Admitted => Ok(()),
            Admission::Refused {
                bucket,
                now,
                window_end,
            } => {
                let (limit, _, allowed) = &buckets[bucket];
                Err(Refusal {
                    limit: *limit,
                    allowed: *allowed,
                    window: self.limits.window,
                    retry_after: retry_after(now, window_end),
                })
            }
        }
    }

    /// Takes a token from a route's own `bucket`, which admits `max` per
    /// window (0: no limit): `Err` with the seconds until the window ends
    /// if it is spent. Fails open like [`RateLimiter::check`].
    pub async fn admit(&self, bucket: &str, max: u32) -> Result<(), u64> {
        if max == 0 {
            return Ok(());
        }
        let named = [(bucket, u64::from(max))];
        match self.leases.take(&named, self.limits.window_ms()).await {
            Admission::Admitted => Ok(()),
            Admission::Refused {
                now, window_end, ..
            } => Err(retry_after(now, window_end)),
        }
    }

    /// Takes a token for an upload by `who` from its upload bucket (the
    /// one `/workspace/uploads` counts in).
    async fn admit_upload(&self, who: &Principal) -> Result<(), Refusal> {
        let bucket = upload_bucket(who);
        let allowed = self.limits.uploads;
        self.admit(&bucket, allowed)
            .await
            .map_err(|retry_after| Refusal {
                limit: Limit::Uploads,
                allowed,
                window: self.limits.window,
                retry_after,
            })
    }

    /// The limits counted.
    pub fn limits(&self) -> &RateLimits {
        &self.limits
    }

    /// A body's class: `Write` if it calls a mutating tool, or if the guard
    /// could not read it as JSON-RPC (rmcp refuses such a body, so counting
    /// it as a write costs an honest client nothing and a body crafted to
    /// slip past this reading nothing either).
    fn class(&self, message: Option<&Peeked>) -> Class {
        let mutating = |name: &String| self.host.mutating_anywhere(name);
        match message {
            Some(m) if !m.tools.iter().any(mutating) => Class::Read,
            _ => Class::Write,
        }
    }

    /// Deletes ended windows' counters every `every`, for as long as it runs
    /// (spawned by `serve`, aborted at shutdown).
    pub async fn purge_every(self, every: Duration) {
        let mut tick = tokio::time::interval(every);
        loop {
            tick.tick().await;
            if let Err(e) = self.store.purge_hits(now_ms()).await {
                tracing::warn!(error = %e, "rate limits: purging ended windows failed");
            }
        }
    }
}

/// Middleware for `/mcp`, inside the bearer check and the body guard (so
/// the principal is known and the guard has read what the body calls):
/// counts each request (a GET opening a stream, a DELETE ending a session
/// and each POST alike), and answers one over a limit with 429. Without a
/// [`RateLimiter`] in the request's extensions it lets everything through.
pub async fn limit(req: Request, next: Next) -> Response {
    let found = req.extensions();
    let (Some(limiter), Some(who)) = (
        found.get::<RateLimiter>().cloned(),
        found.get::<Principal>().cloned(),
    ) else {
        return next.run(req).await;
    };
    let message = found.get::<Peeked>();
    let class = match *req.method() {
        Method::POST => limiter.class(message),
        _ => Class::Read,
    };
    let checked = match limiter.check(&who, class).await {
        Ok(()) if begins_upload(message) => limiter.admit_upload(&who).await,
        checked => checked,
    };
    match checked {
        Ok(()) => next.run(req).await,
        Err(refusal) => {
            tracing::debug!(principal = %who.subject, tenant = %who.tenant, client = %who.client_id,
                limit = refusal.limit.as_str(), "rate limited");
            let id = req.extensions().get::<Peeked>().and_then(|m| m.id.clone());
            refused(&refusal, id)
        }
    }
}

/// Whether a body calls `begin_upload`, which also counts against the
/// principal's upload rate.
fn begins_upload(message: Option<&Peeked>) -> bool {
    message.is_some_and(|m| {
        m.tools
            .iter()
            .any(|t| t == toolhost_authoring::BEGIN_UPLOAD_TOOL)
    })
}

/// 429 with `Retry-After` and a JSON-RPC error naming the limit.
fn refused(r: &Refusal, id: Option<Value>) -> Response {
    let (limit, secs) = (r.limit.as_str(), r.window.as_secs());
    let message = format!(
        "RATE_LIMITED: over {} requests per {secs}s ({limit} limit); retry after {}s",
        r.allowed, r.retry_after
    );
    let data = json!({"code": "RATE_LIMITED", "limit": limit, "allowed": r.allowed,
        "window_secs": secs, "retry_after": r.retry_after});
    let error = json!({"code": RATE_LIMITED, "message": message, "data": data});
    let body = json!({"jsonrpc": "2.0", "id": id.unwrap_or(Value::Null), "error": error});
    let headers = [
        (
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        ),
        (header::RETRY_AFTER, HeaderValue::from(r.retry_after)),
    ];
    (StatusCode::TOO_MANY_REQUESTS, headers, body.to_string()).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolhost_types::PrincipalKind;

    fn alice(client: &str) -> Principal {
        Principal {
            subject: "u-alice".into(),
            kind: PrincipalKind::User,
            name: "alice".into(),
            tenant: "acme".into(),
            client_id: client.into(),
            scopes: vec!["mcp".into()],
            session: "s1".into(),
        }
    }

    fn names(b: &[(Limit, String, u32)]) -> Vec<&str> {
        b.iter().map(|(_, n, _)| n.as_str()).collect()
    }

    #[test]
    fn buckets_name_the_principal_the_client_in_its_tenant_and_writes() {
        let limits = RateLimits::default();
        let read = buckets(&limits, &alice("app"), Class::Read);
        assert_eq!(names(&read), ["principal:acme/u-alice", "client:acme/app"]);
        let write = buckets(&limits, &alice("app"), Class::Write);
        assert_eq!(names(&write)[2], "tool:write:acme/u-alice");
        assert_eq!(write[2].2, DEFAULT_WRITES);
    }

    #[test]
    fn a_limit_of_zero_counts_nothing() {
        let limits = RateLimits {
            per_client: 0,
            writes: 0,
            ..RateLimits::default()
        };
        let write = buckets(&limits, &alice("app"), Class::Write);
        assert_eq!(names(&write), ["principal:acme/u-alice"]);
        let off = RateLimits {
            per_principal: 0,
            ..limits
        };
        assert!(buckets(&off, &alice("app"), Class::Write).is_empty());
    }

    #[test]
    fn windows_are_aligned_and_retry_after_reaches_the_next_one() {
        let cases = [
            // (now ms, window ms, start, end, retry after s)
            (120_000, 60_000, 120_000, 180_000, 60),
            (179_999, 60_000, 120_000, 180_000, 1),
            (179_001, 60_000, 120_000, 180_000, 1),
            (178_999, 60_000, 120_000, 180_000, 2),
            (5_500, 2_000, 4_000, 6_000, 1),
        ];
        for (now, len, start, end, secs) in cases {
            assert_eq!(crate::rate_lease::window(now, len), (start, end), "{now}");
            assert_eq!(retry_after(now, end), secs, "{now}");
        }
    }

    #[test]
    fn a_window_under_a_second_is_refused() {
        let short = RateLimits::configured(Some(Duration::from_millis(500)), None, None, None);
        assert!(short.is_err());
        let set = RateLimits::configured(Some(Duration::from_secs(2)), Some(5), None, Some(0))
            .expect("valid");
        assert_eq!(
            (
                set.window.as_secs(),
                set.per_principal,
                set.per_client,
                set.writes
            ),
            (2, 5, DEFAULT_PER_CLIENT, 0)
        );
    }

    #[tokio::test]
    async fn a_refusal_is_a_429_with_retry_after_and_a_json_rpc_error() {
        let r = Refusal {
            limit: Limit::Principal,
            allowed: 5,
            window: Duration::from_secs(2),
            retry_after: 2,
        };
        let response = refused(&r, Some(json!(7)));
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()[header::RETRY_AFTER], "2");
        let body = axum::body::to_bytes(response.into_body(), 4096)
            .await
            .expect("a body");
        let body: Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!(
            (&body["id"], &body["error"]["code"]),
            (&json!(7), &json!(RATE_LIMITED))
        );
        let data = &body["error"]["data"];
        assert_eq!(
            (&data["code"], &data["limit"]),
            (&json!("RATE_LIMITED"), &json!("principal"))
        );
        assert_eq!(
            (&data["retry_after"], &data["allowed"]),
            (&json!(2), &json!(5))
        );
    }
}
