//! The SSE events of `/mcp` kept for resumption: a client that loses a
//! response stream mid-call reconnects with `Last-Event-ID` (a GET of
//! `/mcp`) and gets the rest of that stream, its result included. With a
//! store in place the call also runs on when its client goes away (rmcp
//! then forwards and keeps its events instead of cancelling it); a client
//! that wants it stopped sends `notifications/cancelled`.
//!
//! Kept in this replica's memory, bounded: events live [`EVENT_TTL`] and
//! the oldest are dropped past [`MAX_EVENT_BYTES`] in all. An id is this
//! replica's [origin](MemoryEvents::origin) and 128 random bits: replaying
//! a stream needs one of its event ids, which only its own client was
//! sent, and a balancer routes the replay to the replica that keeps the
//! stream by the origin (`deploy/haproxy.cfg` learns each origin's replica
//! from the `X-Toolhost-Events` header of the answers that carry them).
//!
//! A replay is the rest of the stream, live: it sends the events kept
//! after the named one, then each new one as the call makes it, and ends
//! with the stream's answer (a JSON-RPC response or error), so a client
//! that reconnects once mid-call gets everything on that reconnect. A
//! stream that stays silent for [`EVENT_TTL`] ends the replay too.
//!
//! A stream belongs to whoever its events were answered to: the edge in
//! front of `/mcp` [`claim`](MemoryEvents::claim)s a stream for the
//! principal (and session) whose response carried its first event id, and
//! serves a replay only to its owner ([`owner_of`](MemoryEvents::owner_of)).
//! An owner's events hold at most [`MemoryEvents::share`] of the budget
//! (its own oldest go first past it), so one principal cannot evict
//! everyone else's; events of streams nobody claimed yet share one share.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{StreamExt, stream};
use rmcp::model::JsonRpcMessage;
use rmcp::transport::common::server_side_http::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::{
    EventId, EventStore, EventStoreError, EventStream,
};

/// How long an event can be replayed.
pub const EVENT_TTL: Duration = Duration::from_secs(5 * 60);
/// Most bytes of events kept at once (the JSON of their messages).
pub const MAX_EVENT_BYTES: usize = 64 << 20;
/// The part of the budget one owner's events may hold: an eighth.
const SHARE_DIVISOR: usize = 8;

/// Who a stream was claimed for; `""` for a stream not claimed yet.
type Owner = Arc<str>;

/// One kept event.
struct Kept {
    id: String,
    stream: String,
    owner: Owner,
    at: Instant,
    bytes: usize,
    event: ServerSseMessage,
}

/// A stream's owner and its session (once claimed), the places of its
/// kept events, whether its answer (the last event it will have) is among
/// them, and the signal its live replays wait on (made by the first):
/// moved by each event the stream keeps, dropped with the stream, so an
/// event of one stream wakes only that stream's replays.
#[derive(Default)]
struct Stream {
    owner: Option<(Owner, Arc<str>)>,
    places: BTreeSet<u64>,
    answered: bool,
    replays: Option<tokio::sync::watch::Sender<u64>>,
}

#[derive(Default)]
struct Events {
    /// Every kept event by its place (a running number), oldest first.
    order: BTreeMap<u64, Kept>,
    /// The place the next event takes.
    next: u64,
    /// Event id → its stream and its place.
    by_id: HashMap<String, (String, u64)>,
    /// The streams with events kept.
    streams: HashMap<String, Stream>,
    /// Owner → the places of its events, oldest first, and their bytes.
    held: HashMap<Owner, (BTreeSet<u64>, usize)>,
    bytes: usize,
}

impl Events {
    /// Takes the event at `place` out of every index.
    fn drop_event(&mut self, place: u64) {
        let Some(gone) = self.order.remove(&place) else {
            return;
        };
        self.bytes -= gone.bytes;
        self.by_id.remove(&gone.id);
        self.release(&gone.owner, place, gone.bytes);
        if let Some(stream) = self.streams.get_mut(&gone.stream) {
            stream.places.remove(&place);
            if stream.places.is_empty() {
                self.streams.remove(&gone.stream);
            }
        }
    }

    /// Counts the event at `place` (of `bytes`) against `owner`.
    fn hold(&mut self, owner: &Owner, place: u64, bytes: usize) {
        let held = self.held.entry(owner.clone()).or_default();
        held.0.insert(place);
        held.1 += bytes;
    }

    /// Stops counting the event at `place` (of `bytes`) against `owner`.
    fn release(&mut self, owner: &Owner, place: u64, bytes: usize) {
        if let Some((places, held)) = self.held.get_mut(owner) {
            places.remove(&place);
            *held -= bytes;
            if places.is_empty() {
                self.held.remove(owner);
            }
        }
    }
}

/// The events of this replica's streams, in memory.
pub struct MemoryEvents {
    events: Mutex<Events>,
    ttl: Duration,
    max_bytes: usize,
    origin: String,
}

impl Default for MemoryEvents {
    fn default() -> Self {
        Self::new(EVENT_TTL, MAX_EVENT_BYTES)
    }
}

/// Whether `event` is a stream's answer: after it, the stream has nothing.
fn is_answer(event: &ServerSseMessage) -> bool {
    event
        .message
        .as_deref()
        .is_some_and(|m| matches!(m, JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_)))
}

/// `bytes` as lower-case hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl MemoryEvents {
    /// A store keeping events `ttl`, at most `max_bytes` of them, its ids
    /// under an origin of 64 random bits.
    pub fn new(ttl: Duration, max_bytes: usize) -> Self {
        let mut raw = [0u8; 8];
        getrandom::fill(&mut raw).expect("the OS random source is available");
        Self {
            events: Mutex::default(),
            ttl,
            max_bytes,
            origin: hex(&raw),
        }
    }

    /// What every event id this store makes starts with (then a `.`): 16
    /// hex digits naming this store among the replicas.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The origin `event_id` names, if it is shaped as this host's ids are.
    pub fn origin_of(event_id: &str) -> Option<&str> {
        let (origin, _) = event_id.split_once('.')?;
        (origin.len() == 16 && origin.bytes().all(|b| b.is_ascii_hexdigit())).then_some(origin)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Events> {
        self.events.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The bytes of events one owner may hold: an eighth of the budget.
    pub fn share(&self) -> usize {
        self.max_bytes / SHARE_DIVISOR
    }

    /// Drops `owner`'s oldest events while it holds more than its share
    /// (its newest stays, however large),
    /// then expired events, then the oldest while over the byte budget.
    fn evict(&self, events: &mut Events, now: Instant, owner: Option<&Owner>) {
        while let Some(owner) = owner {
            let oldest = match events.held.get(owner) {
                Some((places, bytes)) if *bytes > self.share() && places.len() > 1 => {
                    places.first().copied()
                }
                _ => None,
            };
            let Some(place) = oldest else { break };
            events.drop_event(place);
        }
        while let Some((&place, oldest)) = events.order.first_key_value() {
            let expired = now.duration_since(oldest.at) >= self.ttl;
            if !expired && events.bytes <= self.max_bytes {
                break;
            }
            events.drop_event(place);
        }
    }

    fn keep(&self, stream_id: &str, event: &ServerSseMessage) -> EventId {
        let mut raw = [0u8; 16];
        getrandom::fill(&mut raw).expect("the OS random source is available");
        let id = format!("{}.{}", self.origin, hex(&raw));
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
        let place = events.next;
        events.next += 1;
        let stream = events.streams.entry(stream_id.to_owned()).or_default();
        stream.places.insert(place);
        stream.answered |= is_answer(event);
        if let Some(replays) = &stream.replays {
            replays.send_modify(|n| *n = n.wrapping_add(1));
        }
        let owner = stream
            .owner
            .as_ref()
            .map_or_else(|| Owner::from(""), |(o, _)| o.clone());
        events
            .by_id
            .insert(id.clone(), (stream_id.to_owned(), place));
        events.hold(&owner, place, bytes);
        events.order.insert(
            place,
            Kept {
                id: id.clone(),
                stream: stream_id.to_owned(),
                owner: owner.clone(),
                at: now,
                bytes,
                event: kept,
            },
        );
        events.bytes += bytes;
        self.evict(&mut events, now, Some(&owner));
        id
    }

    /// Claims `event_id`'s stream for `owner` (an opaque key: the edge's
    /// principal) in `session` (`""` for none), unless it is claimed
    /// already: the stream's events count against `owner`'s share (one
    /// share however many sessions it holds), and only `owner` in
    /// `session` is served a replay of it.
    pub fn claim(&self, event_id: &str, owner: &str, session: &str) {
        let mut events = self.lock();
        let Some((stream_id, _)) = events.by_id.get(event_id).cloned() else {
            return;
        };
        let Some(stream) = events.streams.get_mut(&stream_id) else {
            return;
        };
        if stream.owner.is_some() {
            return;
        }
        let owner = Owner::from(owner);
        stream.owner = Some((owner.clone(), Arc::from(session)));
        // The events kept before the claim were nobody's: they are the
        // owner's now.
        let places: Vec<u64> = stream.places.iter().copied().collect();
        for place in places {
            let Some(kept) = events.order.get_mut(&place) else {
                continue;
            };
            let (was, bytes) = (
                std::mem::replace(&mut kept.owner, owner.clone()),
                kept.bytes,
            );
            events.release(&was, place, bytes);
            events.hold(&owner, place, bytes);
        }
        self.evict(&mut events, Instant::now(), Some(&owner));
    }

    /// Who `event_id`'s stream was claimed for, and in which session, if it
    /// is kept and claimed.
    pub fn owner_of(&self, event_id: &str) -> Option<(String, String)> {
        let events = self.lock();
        let (stream, _) = events.by_id.get(event_id)?;
        let (owner, session) = events.streams.get(stream)?.owner.as_ref()?;
        Some((owner.to_string(), session.to_string()))
    }

    /// Where a replay after `last` starts: its stream and its place; `None`
    /// when `last` is unknown or expired.
    fn start_of_replay(&self, last: &str) -> Option<(String, u64)> {
        let mut events = self.lock();
        self.evict(&mut events, Instant::now(), None);
        events.by_id.get(last).cloned()
    }

    /// The signal of `stream`'s new events, if it is still kept.
    fn watch(&self, stream: &str) -> Option<tokio::sync::watch::Receiver<u64>> {
        let mut events = self.lock();
        let kept = events.streams.get_mut(stream)?;
        let replays = kept
            .replays
            .get_or_insert_with(|| tokio::sync::watch::Sender::new(0));
        Some(replays.subscribe())
    }

    /// The events of `stream` after `place`, oldest first, the place of the
    /// last of them (`place` when none), and whether the stream has no more
    /// to come: answered, or gone (expired, evicted).
    fn rest(&self, stream: &str, place: u64) -> (Vec<ServerSseMessage>, u64, bool) {
        let mut events = self.lock();
        self.evict(&mut events, Instant::now(), None);
        let Some(kept) = events.streams.get(stream) else {
            return (Vec::new(), place, true);
        };
        let places: Vec<u64> = kept.places.range(place + 1..).copied().collect();
        let answered = kept.answered;
        let rest: Vec<ServerSseMessage> = (places.iter())
            .filter_map(|p| events.order.get(p))
            .map(|k| k.event.clone())
            .collect();
        (rest, places.last().copied().unwrap_or(place), answered)
    }

    /// The events of `last`'s stream after it, oldest first; none when
    /// `last` is unknown or expired. Only what is kept now.
    #[cfg(test)]
    fn after(&self, last: &str) -> Vec<ServerSseMessage> {
        self.start_of_replay(last)
            .map(|(stream, place)| self.rest(&stream, place).0)
            .unwrap_or_default()
    }

    /// The rest of `last`'s stream, live: the events kept after it, then
    /// each new one, until the stream's answer, or until it stays silent
    /// for the store's TTL; empty when `last` is unknown or expired.
    fn replay(self: &Arc<Self>, last: &str) -> EventStream {
        let Some((stream_id, place)) = self.start_of_replay(last) else {
            return Box::pin(stream::empty());
        };
        // Subscribed before the first read: nothing kept between is missed.
        let Some(kept) = self.watch(&stream_id) else {
            return Box::pin(stream::empty());
        };
        let tail = Tail {
            events: self.clone(),
            kept,
            stream: stream_id,
            place,
            done: false,
        };
        let batches = stream::unfold(tail, |mut tail| async move {
            while !tail.done {
                tail.kept.borrow_and_update();
                let (batch, place, ended) = tail.events.rest(&tail.stream, tail.place);
                tail.place = place;
                tail.done = ended;
                if !batch.is_empty() {
                    return Some((stream::iter(batch), tail));
                }
                if ended {
                    break;
                }
                let ttl = tail.events.ttl;
                match tokio::time::timeout(ttl, tail.kept.changed()).await {
                    Ok(Ok(())) => {}
                    _ => tail.done = true,
                }
            }
            None
        });
        Box::pin(batches.flatten())
    }
}

/// A live replay's place in its stream.
struct Tail {
    events: Arc<MemoryEvents>,
    kept: tokio::sync::watch::Receiver<u64>,
    stream: String,
    place: u64,
    done: bool,
}

/// The event store rmcp is given: [`MemoryEvents`] shared, so a live
/// replay can hold it past the call that started it.
#[derive(Clone)]
pub struct SharedEvents(pub Arc<MemoryEvents>);

#[async_trait::async_trait]
impl EventStore for SharedEvents {
    async fn store_event(
        &self,
        stream_id: &str,
        event: &ServerSseMessage,
    ) -> Result<EventId, EventStoreError> {
        Ok(self.0.keep(stream_id, event))
    }

    async fn replay_events_after(
        &self,
        last_event_id: &str,
    ) -> Result<EventStream, EventStoreError> {
        Ok(self.0.replay(last_event_id))
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
        let (origin, random) = a1.split_once('.').expect("origin.random");
        assert_eq!(origin, store.origin());
        assert_eq!(MemoryEvents::origin_of(&a1), Some(origin));
        assert_eq!(random.len(), 32, "128 random bits");
        assert_ne!(
            MemoryEvents::default().origin(),
            origin,
            "each store its own"
        );
    }

    async fn next_within(
        replay: &mut EventStream,
        wait: Duration,
    ) -> Option<Option<ServerSseMessage>> {
        tokio::time::timeout(wait, replay.next()).await.ok()
    }

    #[tokio::test]
    async fn a_replay_goes_on_live_until_the_stream_s_answer() {
        let store = Arc::new(MemoryEvents::default());
        let first = store.keep("a", &ServerSseMessage::retry(Duration::from_secs(3)));
        let progress = ServerSseMessage::from_message(ServerJsonRpcMessage::notification(
            rmcp::model::ServerNotification::ProgressNotification(rmcp::model::Notification::new(
                rmcp::model::ProgressNotificationParam::new(
                    rmcp::model::ProgressToken(rmcp::model::NumberOrString::Number(1)),
                    0.5,
                ),
            )),
        ));
        let p1 = store.keep("a", &progress);
        let mut replay = store.replay(&first);
        let got = next_within(&mut replay, Duration::from_secs(5)).await;
        assert_eq!(got.flatten().and_then(|e| e.event_id), Some(p1));
        assert!(
            next_within(&mut replay, Duration::from_millis(100))
                .await
                .is_none(),
            "nothing yet: the replay waits"
        );
        store.keep("b", &message(9));
        let answer = store.keep("a", &message(1));
        let got = next_within(&mut replay, Duration::from_secs(5)).await;
        assert_eq!(
            got.flatten().and_then(|e| e.event_id),
            Some(answer.clone()),
            "the answer kept later reaches the replay, another stream's event does not"
        );
        let end = next_within(&mut replay, Duration::from_secs(5)).await;
        assert!(matches!(end, Some(None)), "the replay ends with the answer");
        let mut after_answer = store.replay(&answer);
        let end = next_within(&mut after_answer, Duration::from_secs(5)).await;
        assert!(
            matches!(end, Some(None)),
            "a replay after the answer ends at once"
        );
        let mut unknown = store.replay("0000000000000000.00");
        let end = next_within(&mut unknown, Duration::from_secs(5)).await;
        assert!(matches!(end, Some(None)), "an unknown id replays nothing");
        let signals = store
            .lock()
            .streams
            .values()
            .filter(|s| s.replays.is_some())
            .count();
        assert_eq!(signals, 1, "only the replayed stream has a signal");
    }

    #[tokio::test]
    async fn a_silent_stream_ends_its_replay_after_the_ttl() {
        let store = Arc::new(MemoryEvents::new(
            Duration::from_millis(200),
            MAX_EVENT_BYTES,
        ));
        let first = store.keep("a", &ServerSseMessage::retry(Duration::from_secs(3)));
        let mut replay = store.replay(&first);
        let end = next_within(&mut replay, Duration::from_secs(5)).await;
        assert!(matches!(end, Some(None)), "ended, not hung");
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

    #[test]
    fn a_claimed_stream_has_one_owner_and_an_owner_past_its_share_loses_its_own_oldest() {
        let store = MemoryEvents::new(Duration::from_secs(300), 8 * 400);
        let first = store.keep("mine", &message(1));
        store.claim(&first, "alice", "s1");
        store.claim(&first, "mallory", "");
        let alice = Some(("alice".to_owned(), "s1".to_owned()));
        assert_eq!(store.owner_of(&first), alice);
        let later = store.keep("mine", &message(2));
        assert_eq!(store.owner_of(&later), alice);
        let unclaimed = store.keep("theirs", &message(3));
        assert_eq!(store.owner_of(&unclaimed), None);
        let flood = store.keep("flood", &message(4));
        store.claim(&flood, "mallory", "m1");
        // Many sessions of one principal share one share.
        for n in 5..2000 {
            store.keep("flood", &message(n));
            let other = store.keep(&format!("flood-{n}"), &message(n));
            store.claim(&other, "mallory", &format!("m{n}"));
        }
        assert_eq!(
            store.after(&first).len(),
            1,
            "alice's events outlive mallory's flood"
        );
        assert!(
            store.after(&flood).is_empty(),
            "mallory's oldest went first"
        );
        assert_eq!(
            store.after(&unclaimed).len(),
            0,
            "kept, and nothing after it"
        );
        assert!(
            store.lock().by_id.contains_key(&unclaimed),
            "an unclaimed event outlives the flood"
        );
        let events = store.lock();
        let mallory = events.held.get("mallory").map_or(0, |h| h.1);
        assert!(mallory <= store.share(), "{mallory} > {}", store.share());
        assert!(events.order.len() < 40, "{} kept", events.order.len());
    }
}
