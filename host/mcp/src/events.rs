//! The SSE events of `/mcp` kept for resumption: a client that loses a
//! response stream mid-call reconnects with `Last-Event-ID` (a GET of
//! `/mcp`) and gets the rest of that stream, its result included. With a
//! store in place the call also runs on when its client goes away (rmcp
//! then forwards and keeps its events instead of cancelling it); a client
//! that wants it stopped sends `notifications/cancelled`.
//!
//! Kept in this replica's memory, bounded: events live [`EVENT_TTL`] and
//! the oldest are dropped past [`MAX_EVENT_BYTES`] in all. Ids are 128
//! random bits: replaying a stream needs one of its event ids, which only
//! its own client was sent.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::stream;
use rmcp::transport::common::server_side_http::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::{
    EventId, EventStore, EventStoreError, EventStream,
};

/// How long an event can be replayed.
pub const EVENT_TTL: Duration = Duration::from_secs(5 * 60);
/// Most bytes of events kept at once (the JSON of their messages).
pub const MAX_EVENT_BYTES: usize = 64 << 20;

/// One kept event.
struct Kept {
    id: String,
    stream: String,
    at: Instant,
    bytes: usize,
    event: ServerSseMessage,
}

#[derive(Default)]
struct Events {
    /// Every kept event, oldest first.
    order: VecDeque<Kept>,
    /// Event id → its stream and its place in `order` (a running number).
    by_id: HashMap<String, (String, u64)>,
    /// The running number of `order`'s front.
    front: u64,
    bytes: usize,
}

/// The events of this replica's streams, in memory.
pub struct MemoryEvents {
    events: Mutex<Events>,
    ttl: Duration,
    max_bytes: usize,
}

impl Default for MemoryEvents {
    fn default() -> Self {
        Self::new(EVENT_TTL, MAX_EVENT_BYTES)
    }
}

impl MemoryEvents {
    /// A store keeping events `ttl`, at most `max_bytes` of them.
    pub fn new(ttl: Duration, max_bytes: usize) -> Self {
        Self {
            events: Mutex::default(),
            ttl,
            max_bytes,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Events> {
        self.events.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Drops expired events, then the oldest while over the byte budget.
    fn evict(&self, events: &mut Events, now: Instant) {
        while let Some(oldest) = events.order.front() {
            let expired = now.duration_since(oldest.at) >= self.ttl;
            if !expired && events.bytes <= self.max_bytes {
                break;
            }
            let gone = events.order.pop_front().expect("a front");
            events.bytes -= gone.bytes;
            events.by_id.remove(&gone.id);
            events.front += 1;
        }
    }

    fn keep(&self, stream_id: &str, event: &ServerSseMessage) -> EventId {
        let mut raw = [0u8; 16];
        getrandom::fill(&mut raw).expect("the OS random source is available");
        let id: String = raw.iter().map(|b| format!("{b:02x}")).collect();
        let bytes = event
            .message
            .as_ref()
            .and_then(|m| serde_json::to_vec(m.as_ref()).ok())
            .map_or(0, |v| v.len())
            + 64;
        let mut kept = event.clone();
        kept.event_id = Some(id.clone());
        let now = Instant::now();
        let mut events = self.lock();
        let place = events.front + events.order.len() as u64;
        events
            .by_id
            .insert(id.clone(), (stream_id.to_owned(), place));
        events.order.push_back(Kept {
            id: id.clone(),
            stream: stream_id.to_owned(),
            at: now,
            bytes,
            event: kept,
        });
        events.bytes += bytes;
        self.evict(&mut events, now);
        id
    }

    /// The events of `last`'s stream after it, oldest first; none when
    /// `last` is unknown or expired.
    fn after(&self, last: &str) -> Vec<ServerSseMessage> {
        let mut events = self.lock();
        self.evict(&mut events, Instant::now());
        let Some((stream, place)) = events.by_id.get(last).cloned() else {
            return Vec::new();
        };
        let from = (place + 1).saturating_sub(events.front) as usize;
        (events.order.iter().skip(from))
            .filter(|k| k.stream == stream)
            .map(|k| k.event.clone())
            .collect()
    }
}

#[async_trait::async_trait]
impl EventStore for MemoryEvents {
    async fn store_event(
        &self,
        stream_id: &str,
        event: &ServerSseMessage,
    ) -> Result<EventId, EventStoreError> {
        Ok(self.keep(stream_id, event))
    }

    async fn replay_events_after(
        &self,
        last_event_id: &str,
    ) -> Result<EventStream, EventStoreError> {
        Ok(Box::pin(stream::iter(self.after(last_event_id))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ServerJsonRpcMessage, ServerResult};

    fn message(n: i64) -> ServerSseMessage {
        let result = ServerJsonRpcMessage::response(
            ServerResult::empty(()),
            rmcp::model::NumberOrString::Number(n),
        );
        ServerSseMessage::from_message(result)
    }

    fn ids_of(events: &[ServerSseMessage]) -> Vec<String> {
        events.iter().filter_map(|e| e.event_id.clone()).collect()
    }

    #[test]
    fn a_replay_is_the_rest_of_the_same_stream_in_order() {
        let store = MemoryEvents::default();
        let a1 = store.keep("a", &ServerSseMessage::retry(Duration::from_secs(3)));
        let b1 = store.keep("b", &message(1));
        let a2 = store.keep("a", &message(2));
        let a3 = store.keep("a", &message(3));
        assert_eq!(ids_of(&store.after(&a1)), [a2.clone(), a3.clone()]);
        assert_eq!(ids_of(&store.after(&a2)), std::slice::from_ref(&a3));
        assert!(store.after(&a3).is_empty());
        assert!(store.after(&b1).is_empty());
        assert!(store.after("not-an-id").is_empty());
        assert_ne!(a1, a2, "ids are unique");
        assert_eq!(a1.len(), 32, "128 random bits");
    }

    #[test]
    fn old_events_and_those_over_the_byte_budget_are_dropped() {
        let store = MemoryEvents::new(Duration::from_secs(300), 200);
        let first = store.keep("a", &message(1));
        let second = store.keep("a", &message(2));
        for n in 3..10 {
            store.keep("a", &message(n));
        }
        assert!(store.after(&first).is_empty(), "evicted: over the budget");
        let kept = store.lock().order.len();
        assert!(kept < 9 && kept > 0, "{kept}");
        let _ = second;
        let expired = MemoryEvents::new(Duration::ZERO, MAX_EVENT_BYTES);
        let id = expired.keep("a", &message(1));
        expired.keep("a", &message(2));
        assert!(expired.after(&id).is_empty(), "expired");
    }
}
