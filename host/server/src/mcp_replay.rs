//! Replays of `/mcp`'s event streams go only to whoever the events were
//! for.
//!
//! rmcp replays a stream to any GET carrying one of its event ids in
//! `Last-Event-ID`, in a session or not. The ids are 128 random bits, but
//! an id is a capability that leaks with any log or proxy that sees it.
//! Here every event stream the host answers passes through on its way out,
//! and the ids it carries are claimed for the principal (and the session,
//! where there is one) it is answered to ([`MemoryEvents::claim`]).
//!
//! A GET resuming from an id this replica cannot serve is refused with
//! [`ReplayRefusal`] (404, a JSON-RPC error), never rmcp's empty stream,
//! which a client cannot tell from "nothing yet": an id unknown here,
//! expired, or not the caller's own (all three alike, so an id is no
//! oracle), or one whose origin is another replica's (the balancer did
//! not route it there, or that replica is gone). Each streamed answer
//! names this replica's origin in `X-Toolhost-Events`, which the shipped
//! balancer learns to route resumptions by.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use http_body_util::BodyExt;
use toolhost_mcp::{MemoryEvents, OwnedSession};
use toolhost_types::Principal;

/// The header naming the origin of a streamed answer's event ids.
pub const EVENTS_HEADER: HeaderName = HeaderName::from_static("x-toolhost-events");

/// JSON-RPC code of a resumption refused ([`ReplayRefusal`]).
pub const STREAM_NOT_FOUND: i64 = -31003;

/// Why a GET with `Last-Event-ID` gets no replay here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayRefusal {
    /// The event is not kept here, expired, or is not the caller's: the
    /// stream cannot be resumed (a call backed by a run or task is
    /// followed by its id).
    #[error("the event stream of that Last-Event-ID is not kept here, or is not yours")]
    Unknown,
    /// The event id names another replica's stream: the balancer sent the
    /// resumption elsewhere, or that replica is gone.
    #[error(
        "the event stream of that Last-Event-ID is kept by replica origin {0}, which this request did not reach"
    )]
    Elsewhere(String),
}

impl ReplayRefusal {
    /// The stable code a client acts on.
    pub fn code(&self) -> &'static str {
        match self {
            ReplayRefusal::Unknown | ReplayRefusal::Elsewhere(_) => "STREAM_NOT_FOUND",
        }
    }

    /// The 404 and JSON-RPC error (no id: a GET has none) that say it.
    fn answer(&self) -> Response {
        let message = format!("{}: {self}", self.code());
        let mut data = serde_json::json!({"code": self.code(), "retryable": false});
        if let ReplayRefusal::Elsewhere(origin) = self {
            data["origin"] = origin.as_str().into();
        }
        crate::guard::error(StatusCode::NOT_FOUND, STREAM_NOT_FOUND, message, Some(data))
    }
}

/// The key a stream is claimed under: the principal (tenant, subject,
/// OAuth client).
fn owner_key(who: &Principal) -> String {
    format!("{}\n{}\n{}", who.tenant, who.subject, who.client_id)
}

/// `/mcp`'s replay check, run by the session layer once it has said
/// whether the request's session is the caller's
/// ([`crate::mcp_sessions::owned`]): a resumption must be the owner's,
/// and each event stream answered is claimed for its caller. Without the
/// event store in the request's extensions it lets everything through.
pub async fn bound(req: Request, next: Next) -> Response {
    let found = req.extensions();
    let (Some(events), Some(who)) = (
        found.get::<Arc<MemoryEvents>>().cloned(),
        found.get::<Principal>(),
    ) else {
        return next.run(req).await;
    };
    let owner = owner_key(who);
    let session = found
        .get::<OwnedSession>()
        .map_or_else(String::new, |OwnedSession(id)| id.clone());
    if req.method() == Method::GET
        && let Some(last) = req.headers().get("last-event-id")
    {
        let last = last.to_str().unwrap_or_default();
        if let Some(refused) = refusal(&events, last, &(owner.clone(), session.clone())) {
            tracing::info!(tenant = %who.tenant, subject = %who.subject, code = refused.code(),
                "a resumption named an event this replica does not serve to the caller: {refused}");
            return refused.answer();
        }
    }
    let answer = next.run(req).await;
    if !is_event_stream(&answer) {
        return answer;
    }
    let (mut parts, body) = answer.into_parts();
    if let Ok(origin) = HeaderValue::from_str(events.origin()) {
        parts.headers.insert(EVENTS_HEADER, origin);
    }
    let body = body.map_frame(move |frame| {
        if let Some(data) = frame.data_ref() {
            for id in event_ids(data) {
                events.claim(id, &owner, &session);
            }
        }
        frame
    });
    Response::from_parts(parts, Body::new(body))
}

/// Whether `answer` is an event stream (`text/event-stream`).
pub(crate) fn is_event_stream(answer: &Response) -> bool {
    answer
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"text/event-stream"))
}

/// The `id:` fields of the SSE events in `chunk` (each event is written in
/// one piece).
fn event_ids(chunk: &Bytes) -> impl Iterator<Item = &str> {
    chunk
        .split(|b| *b == b'\n')
        .filter_map(|line| line.strip_prefix(b"id:"))
        .filter_map(|id| std::str::from_utf8(id).ok())
        .map(str::trim)
}

/// Why the resumption from `last` by `caller` (owner key and session) is
/// not served here, if it is not.
fn refusal(events: &MemoryEvents, last: &str, caller: &(String, String)) -> Option<ReplayRefusal> {
    match MemoryEvents::origin_of(last) {
        Some(origin) if origin != events.origin() => {
            Some(ReplayRefusal::Elsewhere(origin.to_owned()))
        }
        _ if events.owner_of(last).as_ref() != Some(caller) => Some(ReplayRefusal::Unknown),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resumption_is_refused_unless_its_stream_is_kept_here_and_the_caller_s() {
        let events = MemoryEvents::default();
        let mine = ("alice".to_owned(), String::new());
        assert_eq!(
            refusal(&events, "not-an-id", &mine),
            Some(ReplayRefusal::Unknown)
        );
        let here = format!("{}.{}", events.origin(), "0".repeat(32));
        assert_eq!(refusal(&events, &here, &mine), Some(ReplayRefusal::Unknown));
        let elsewhere = format!("{}.{}", "f".repeat(16), "0".repeat(32));
        assert_eq!(
            refusal(&events, &elsewhere, &mine),
            Some(ReplayRefusal::Elsewhere("f".repeat(16)))
        );
        let answer = ReplayRefusal::Unknown.answer();
        assert_eq!(answer.status(), StatusCode::NOT_FOUND);
    }

    #[test]
    fn the_ids_of_a_chunk_of_events_are_read() {
        let chunk = Bytes::from_static(
            b"data: {\"id\":1}\nid: abc123\n\nid:def\ndata: x\n\n: keep-alive\n\n",
        );
        assert_eq!(event_ids(&chunk).collect::<Vec<_>>(), ["abc123", "def"]);
    }
}
