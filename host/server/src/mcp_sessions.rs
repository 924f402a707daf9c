//! MCP sessions belong to the principal that opened them.
//!
//! rmcp's session manager knows a session by its `Mcp-Session-Id` alone:
//! whoever sends the id is in the session. Here, in front of rmcp and
//! behind the bearer check, each legacy (2025-11-25) session remembers who
//! opened it at `initialize` (tenant, subject and OAuth client), and a
//! request carrying its id from anyone else is answered `404`, as for a
//! session that does not exist: no POST into it (no answer to the
//! elicitations the host sends its owner), no GET of its stream, no
//! DELETE. A request whose session checks out carries [`OwnedSession`]
//! on, and only such a request's session is a resolver conversation.
//!
//! What one principal may hold is bounded: [`SessionCaps::per_principal`]
//! open sessions (an `initialize` past it is refused `429` with
//! `LIMIT_EXCEEDED`), and [`SessionCaps::streams_per_session`] standalone
//! GET streams open at once in a session. A stateless (2026-07-28) request
//! has no session: an `Mcp-Session-Id` it carries is not a session here.
//!
//! The table lives in this replica's memory, like rmcp's sessions: a
//! session is served by the replica that opened it. Sessions that end
//! (DELETE, idle timeout, shutdown) leave the table on the next prune.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::json;
use toolhost_mcp::OwnedSession;
use toolhost_policy::bound_toolsets;
use toolhost_types::Principal;

use crate::guard::{LIMIT_EXCEEDED, Peeked};

/// The header carrying a legacy session's id.
const SESSION_HEADER: &str = "mcp-session-id";

/// Default open sessions per principal: an agent holds one per server it
/// talks to, a person a few clients at once; well past that is a leak or a
/// flood. Sessions left open idle out after rmcp's five minutes.
pub const DEFAULT_SESSIONS_PER_PRINCIPAL: usize = 64;
/// Default standalone GET streams open at once in one session: the spec
/// asks for one; a reconnect may overlap the stream it replaces.
pub const DEFAULT_STREAMS_PER_SESSION: usize = 4;
/// How often ended sessions leave the table.
const PRUNE: Duration = Duration::from_secs(30);

/// What one principal may hold of the transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionCaps {
    /// Open legacy sessions per principal.
    pub per_principal: usize,
    /// Standalone GET streams open at once per session.
    pub streams_per_session: usize,
}

impl Default for SessionCaps {
    fn default() -> Self {
        SessionCaps {
            per_principal: DEFAULT_SESSIONS_PER_PRINCIPAL,
            streams_per_session: DEFAULT_STREAMS_PER_SESSION,
        }
    }
}

/// Who a session belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Owner {
    tenant: String,
    subject: String,
    client: String,
}

impl Owner {
    fn of(who: &Principal) -> Owner {
        Owner {
            tenant: who.tenant.clone(),
            subject: who.subject.clone(),
            client: who.client_id.clone(),
        }
    }
}

struct Session {
    owner: Owner,
    streams: usize,
    /// The toolsets its requests were narrowed to when it opened (its
    /// endpoint's and its token's): it is used with the same or not at
    /// all, so a session opened at one toolset's endpoint is no session
    /// at another's, nor at `/mcp`.
    within: Vec<String>,
}

/// The sessions by id, and how many each owner holds (its open sessions
/// and the `initialize`s it has in flight), kept together so counting and
/// admitting are one step under one lock.
#[derive(Default)]
struct Table {
    sessions: HashMap<String, Session>,
    held: HashMap<Owner, usize>,
}

impl Table {
    /// Gives back one of `owner`'s places.
    fn release(&mut self, owner: &Owner) {
        if let Some(n) = self.held.get_mut(owner) {
            *n -= 1;
            if *n == 0 {
                self.held.remove(owner);
            }
        }
    }

    /// Forgets session `id`, giving back its owner's place.
    fn remove(&mut self, id: &str) {
        if let Some(session) = self.sessions.remove(id) {
            self.release(&session.owner);
        }
    }
}

type Shared = Arc<Mutex<Table>>;

fn lock(table: &Mutex<Table>) -> std::sync::MutexGuard<'_, Table> {
    table.lock().unwrap_or_else(|p| p.into_inner())
}

/// The sessions of this replica and their owners. Cheap to clone.
#[derive(Clone)]
pub struct SessionOwners {
    caps: SessionCaps,
    table: Shared,
}

/// A place an `initialize` holds in its owner's count while it is
/// answered: it becomes the new session's, or is given back.
struct Reserved {
    table: Shared,
    owner: Option<Owner>,
}

impl Reserved {
    /// The session `id`, narrowed to toolsets `within`, now holds the
    /// place.
    fn open(mut self, id: &str, within: Vec<String>) {
        let owner = self.owner.take().expect("a reservation opens once");
        let mut t = lock(&self.table);
        let session = Session {
            owner,
            streams: 0,
            within,
        };
        let replaced = t.sessions.insert(id.to_owned(), session);
        if let Some(old) = replaced {
            t.release(&old.owner);
        }
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        if let Some(owner) = &self.owner {
            lock(&self.table).release(owner);
        }
    }
}

impl SessionOwners {
    /// An empty table enforcing `caps`; with `manager`, a task prunes ended
    /// sessions for as long as the table lives.
    pub fn new(caps: SessionCaps, manager: Option<Arc<LocalSessionManager>>) -> SessionOwners {
        let owners = SessionOwners {
            caps,
            table: Arc::default(),
        };
        if let Some(manager) = manager {
            tokio::spawn(prune_every(Arc::downgrade(&owners.table), manager, PRUNE));
        }
        owners
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        lock(&self.table)
    }

    fn owner_of(&self, id: &str) -> Option<Owner> {
        self.lock().sessions.get(id).map(|s| s.owner.clone())
    }

    /// Whether session `id` was opened narrowed to toolsets `within`.
    fn narrowed_alike(&self, id: &str, within: &[String]) -> bool {
        (self.lock().sessions.get(id)).is_some_and(|s| s.within == within)
    }

    /// One of `owner`'s places, if it holds fewer than its cap: counting
    /// and taking are one step, so concurrent `initialize`s cannot pass
    /// the cap together.
    fn reserve(&self, owner: Owner) -> Option<Reserved> {
        let mut t = self.lock();
        let held = t.held.entry(owner.clone()).or_default();
        if *held >= self.caps.per_principal {
            return None;
        }
        *held += 1;
        Some(Reserved {
            table: self.table.clone(),
            owner: Some(owner),
        })
    }

    #[cfg(test)]
    fn held_by(&self, owner: &Owner) -> usize {
        self.lock().held.get(owner).copied().unwrap_or(0)
    }

    fn close(&self, id: &str) {
        self.lock().remove(id);
    }

    /// A place for one more GET stream in session `id`, if it has one.
    fn stream(&self, id: &str) -> Option<StreamPlace> {
        let mut t = self.lock();
        let session = t.sessions.get_mut(id)?;
        if session.streams >= self.caps.streams_per_session {
            return None;
        }
        session.streams += 1;
        Some(StreamPlace {
            table: Arc::downgrade(&self.table),
            id: id.to_owned(),
        })
    }
}

/// One open GET stream of a session; dropped with the stream's body.
struct StreamPlace {
    table: Weak<Mutex<Table>>,
    id: String,
}

impl Drop for StreamPlace {
    fn drop(&mut self) {
        let Some(table) = self.table.upgrade() else {
            return;
        };
        let mut t = lock(&table);
        if let Some(s) = t.sessions.get_mut(&self.id) {
            s.streams = s.streams.saturating_sub(1);
        }
    }
}

/// Removes the sessions rmcp no longer has, every `every`, until the
/// table is gone.
async fn prune_every(
    table: Weak<Mutex<Table>>,
    manager: Arc<LocalSessionManager>,
    every: Duration,
) {
    let mut tick = tokio::time::interval(every);
    loop {
        tick.tick().await;
        let Some(table) = table.upgrade() else {
            return;
        };
        let ids: Vec<String> = lock(&table).sessions.keys().cloned().collect();
        for id in ids {
            if !manager
                .has_session(&id.clone().into())
                .await
                .unwrap_or(false)
            {
                lock(&table).remove(&id);
            }
        }
    }
}

/// Middleware for `/mcp`, behind the bearer check and the body guard:
/// a request naming a session must be its owner's; an `initialize` is
/// counted against its principal's cap and its new session remembered.
/// Without [`SessionOwners`] in the request's extensions it lets
/// everything through. Then, in the same layer (one layer costs a boxed
/// service and future per request), the replay check of
/// [`crate::mcp_replay::bound`], which knows the request's session from
/// here.
pub async fn owned(mut req: Request, next: Next) -> Response {
    let found = req.extensions();
    let (Some(owners), Some(who)) = (
        found.get::<SessionOwners>().cloned(),
        found.get::<Principal>(),
    ) else {
        return crate::mcp_replay::bound(req, next).await;
    };
    let caller = Owner::of(who);
    let named = req
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let Some(id) = named else {
        let initialize = req
            .extensions()
            .get::<Peeked>()
            .is_some_and(|p| p.method.as_deref() == Some("initialize"));
        return if initialize {
            opened(&owners, caller, req, next).await
        } else {
            crate::mcp_replay::bound(req, next).await
        };
    };
    match owners.owner_of(&id) {
        Some(owner) if owner != caller => {
            tracing::warn!(tenant = %who.tenant, subject = %who.subject,
                "a request named another principal's MCP session; answered as unknown");
            metrics::counter!("toolhost_foreign_session_requests_total").increment(1);
            return session_not_found();
        }
        // The caller's, opened at another toolset's endpoint (or with
        // another binding): no session here.
        Some(_) if !owners.narrowed_alike(&id, &bound_toolsets(&who.scopes)) => {
            return session_not_found();
        }
        // Not a session here: rmcp answers a legacy request 404, and a
        // stateless one has no session.
        None => return crate::mcp_replay::bound(req, next).await,
        Some(_) => {}
    }
    req.extensions_mut().insert(OwnedSession(id.clone()));
    match *req.method() {
        Method::GET => streamed(&owners, &id, req, next).await,
        Method::DELETE => {
            let answer = crate::mcp_replay::bound(req, next).await;
            if answer.status().is_success() {
                owners.close(&id);
            }
            answer
        }
        _ => crate::mcp_replay::bound(req, next).await,
    }
}

/// An `initialize` without a session: refused past the principal's cap;
/// the session it opens is remembered as the caller's.
async fn opened(owners: &SessionOwners, caller: Owner, req: Request, next: Next) -> Response {
    let within = (req.extensions().get::<Principal>())
        .map(|who| bound_toolsets(&who.scopes))
        .unwrap_or_default();
    let Some(place) = owners.reserve(caller) else {
        return over_cap("sessions_per_principal", owners.caps.per_principal);
    };
    let answer = crate::mcp_replay::bound(req, next).await;
    if let Some(id) = answer
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
    {
        place.open(id, within);
    }
    answer
}

/// A GET of a session's stream: refused past the session's cap; the place
/// is held for as long as the stream's body is.
async fn streamed(owners: &SessionOwners, id: &str, req: Request, next: Next) -> Response {
    let Some(place) = owners.stream(id) else {
        return over_cap("streams_per_session", owners.caps.streams_per_session);
    };
    let answer = crate::mcp_replay::bound(req, next).await;
    let (parts, body) = answer.into_parts();
    let body = body.map_frame(move |frame| {
        let _held = &place;
        frame
    });
    Response::from_parts(parts, Body::new(body))
}

/// The answer to a session that is not the caller's: the one rmcp gives a
/// session it does not know.
fn session_not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

/// `429` with a JSON-RPC error naming the cap.
fn over_cap(limit: &str, value: usize) -> Response {
    let message = format!("LIMIT_EXCEEDED: at most {value} ({limit}); close one first");
    let data = json!({"code": "LIMIT_EXCEEDED", "limit": limit, "value": value});
    let body = json!({"jsonrpc": "2.0", "id": null,
        "error": {"code": LIMIT_EXCEEDED, "message": message, "data": data}});
    let mut answer = (
        StatusCode::TOO_MANY_REQUESTS,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response();
    answer
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(subject: &str) -> Owner {
        Owner {
            tenant: "acme".into(),
            subject: subject.into(),
            client: "c".into(),
        }
    }

    #[tokio::test]
    async fn a_sessions_streams_are_counted_until_their_bodies_are_dropped() {
        let caps = SessionCaps {
            per_principal: 2,
            streams_per_session: 2,
        };
        let owners = SessionOwners::new(caps, None);
        owners
            .reserve(owner("alice"))
            .expect("a place")
            .open("s1", vec![]);
        assert_eq!(owners.owner_of("s1"), Some(owner("alice")));
        assert_eq!(owners.held_by(&owner("alice")), 1);
        let first = owners.stream("s1").expect("a first stream");
        let _second = owners.stream("s1").expect("a second stream");
        assert!(owners.stream("s1").is_none(), "past the cap");
        drop(first);
        assert!(owners.stream("s1").is_some(), "a place given back");
        assert!(owners.stream("unknown").is_none());
        owners.close("s1");
        assert_eq!(owners.owner_of("s1"), None);
        assert_eq!(
            owners.held_by(&owner("alice")),
            0,
            "closing gives the place back"
        );
    }

    #[tokio::test]
    async fn initializes_in_flight_count_against_the_cap_and_one_that_opens_nothing_gives_back() {
        let caps = SessionCaps {
            per_principal: 2,
            streams_per_session: 1,
        };
        let owners = SessionOwners::new(caps, None);
        let first = owners.reserve(owner("alice")).expect("a first place");
        let _second = owners.reserve(owner("alice")).expect("a second place");
        assert!(
            owners.reserve(owner("alice")).is_none(),
            "two in flight fill the cap before either is answered"
        );
        assert!(owners.reserve(owner("bob")).is_some(), "bob has his own");
        drop(first);
        let third = owners
            .reserve(owner("alice"))
            .expect("an initialize that opened no session gave its place back");
        third.open("s1", vec![]);
        assert_eq!(owners.held_by(&owner("alice")), 2);
    }
}
