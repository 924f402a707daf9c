//! Replays of `/mcp`'s event streams go only to whoever the events were
//! for.
//!
//! rmcp replays a stream to any GET carrying one of its event ids in
//! `Last-Event-ID`, in a session or not. The ids are 128 random bits, but
//! an id is a capability that leaks with any log or proxy that sees it.
//! Here every event stream the host answers passes through on its way out,
//! and the ids it carries are claimed for the principal (and the session,
//! where there is one) it is answered to ([`MemoryEvents::claim`]); a GET
//! resuming from an id that is not the caller's own is answered as rmcp
//! answers an unknown one: an empty stream.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use toolhost_mcp::{MemoryEvents, OwnedSession};
use toolhost_types::Principal;

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
        if events.owner_of(last) != Some((owner.clone(), session.clone())) {
            tracing::info!(tenant = %who.tenant, subject = %who.subject,
                "a resumption named an event that is not the caller's; answered as unknown");
            return nothing_to_replay();
        }
    }
    let answer = next.run(req).await;
    let streamed = answer
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"text/event-stream"));
    if !streamed {
        return answer;
    }
    let (parts, body) = answer.into_parts();
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

/// The `id:` fields of the SSE events in `chunk` (each event is written in
/// one piece).
fn event_ids(chunk: &Bytes) -> impl Iterator<Item = &str> {
    chunk
        .split(|b| *b == b'\n')
        .filter_map(|line| line.strip_prefix(b"id:"))
        .filter_map(|id| std::str::from_utf8(id).ok())
        .map(str::trim)
}

/// What rmcp answers a resumption it cannot serve: an empty event stream.
fn nothing_to_replay() -> Response {
    let mut answer = (StatusCode::OK, "").into_response();
    answer.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ids_of_a_chunk_of_events_are_read() {
        let chunk = Bytes::from_static(
            b"data: {\"id\":1}\nid: abc123\n\nid:def\ndata: x\n\n: keep-alive\n\n",
        );
        assert_eq!(event_ids(&chunk).collect::<Vec<_>>(), ["abc123", "def"]);
    }
}
