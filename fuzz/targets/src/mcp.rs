//! The `/mcp` edge: JSON-RPC bodies and the request bounds on tool
//! arguments; the `tools/list` cursors and MRTR request states a client
//! echoes back.

use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use serde_json::{Value, json};
use toolhost_limits::{
    ByteSize, MAX_ARGUMENT_BYTES, MAX_ARRAY_LEN, MAX_JSON_DEPTH, MAX_OBJECT_LEN, MAX_STRING_BYTES,
    RequestLimits,
};
use toolhost_mcp::Keyring;
use toolhost_mcp::fuzzing::{States, cursor_after, cursor_resumes_after};
use toolhost_types::{Principal, PrincipalKind};

use crate::flipped;

/// The `/mcp` edge: a body decoded as rmcp decodes it into a JSON-RPC
/// message, and tool arguments held to the request bounds. Any body is
/// decoded or refused without a panic, and a decoded message encodes to
/// JSON that decodes again. Any JSON value (a `tools/call`'s arguments,
/// and the whole body) passes the bounds exactly when its nesting, array
/// and object lengths, string and key bytes and compact size, measured
/// here on their own, are all within them; a refusal names a bound the
/// value does break. The bounds: the defaults, and [`SMALL_BOUNDS`].
pub fn mcp_request(data: &[u8]) {
    if let Ok(message) = serde_json::from_slice::<ClientJsonRpcMessage>(data) {
        let json = serde_json::to_vec(&message).expect("a decoded message encodes");
        assert!(
            serde_json::from_slice::<ClientJsonRpcMessage>(&json).is_ok(),
            "a decoded message does not decode again: {}",
            String::from_utf8_lossy(&json)
        );
        if let ClientJsonRpcMessage::Request(request) = message
            && let ClientRequest::CallToolRequest(call) = request.request
        {
            bounds_are_exact(&Value::Object(call.params.arguments.unwrap_or_default()));
        }
    }
    if let Ok(value) = serde_json::from_slice::<Value>(data) {
        bounds_are_exact(&value);
    }
}

/// Bounds small enough that a fuzzer's short inputs cross each of them.
const SMALL_BOUNDS: RequestLimits = RequestLimits {
    max_depth: 4,
    max_array_len: 8,
    max_object_len: 8,
    max_string_bytes: ByteSize::b(16),
    max_argument_bytes: ByteSize::b(256),
};

/// Checks `value` against each set of bounds, and the answer against
/// its [`Shape`].
fn bounds_are_exact(value: &Value) {
    let shape = Shape::of(value);
    for limits in [RequestLimits::DEFAULT, SMALL_BOUNDS] {
        let measures = shape.against(&limits);
        match limits.check(value) {
            Ok(()) => {
                let over: Vec<_> = measures.iter().filter(|(_, v, max)| v > max).collect();
                assert!(over.is_empty(), "accepted over {over:?}: {value}");
            }
            Err(breach) => {
                let (_, measured, max) = measures
                    .iter()
                    .find(|(limit, ..)| *limit == breach.limit)
                    .expect("a breach names one of the bounds");
                assert!(
                    breach.max == *max && *max < breach.value && breach.value <= *measured,
                    "{breach:?}, where this measures {measured}: {value}"
                );
                let _ = breach.to_string();
            }
        }
    }
}

/// What the request bounds measure, measured here on its own: the
/// deepest array or object (the value itself is level 1), the longest
/// array and object, the longest string or key, and the compact JSON.
#[derive(Debug, Default)]
struct Shape {
    depth: u64,
    array: u64,
    object: u64,
    string: u64,
    bytes: u64,
}

impl Shape {
    fn of(value: &Value) -> Shape {
        let json = serde_json::to_vec(value).expect("a JSON value encodes");
        let mut shape = Shape {
            bytes: json.len() as u64,
            ..Shape::default()
        };
        shape.walk(value, 1);
        shape
    }

    fn walk(&mut self, value: &Value, level: u64) {
        match value {
            Value::String(s) => self.string = self.string.max(s.len() as u64),
            Value::Array(items) => {
                self.depth = self.depth.max(level);
                self.array = self.array.max(items.len() as u64);
                items.iter().for_each(|item| self.walk(item, level + 1));
            }
            Value::Object(members) => {
                self.depth = self.depth.max(level);
                self.object = self.object.max(members.len() as u64);
                for (key, item) in members {
                    self.string = self.string.max(key.len() as u64);
                    self.walk(item, level + 1);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// Each bound's name, what this shape measures for it, and the bound.
    fn against(&self, l: &RequestLimits) -> [(&'static str, u64, u64); 5] {
        [
            (MAX_JSON_DEPTH, self.depth, l.max_depth.into()),
            (MAX_ARRAY_LEN, self.array, l.max_array_len.into()),
            (MAX_OBJECT_LEN, self.object, l.max_object_len.into()),
            (MAX_STRING_BYTES, self.string, l.max_string_bytes.as_u64()),
            (
                MAX_ARGUMENT_BYTES,
                self.bytes,
                l.max_argument_bytes.as_u64(),
            ),
        ]
    }
}

/// How long a sealed request state is reused before sealing another (a
/// state stays answerable ten minutes; a fuzzer runs longer).
const RESEAL_AFTER: Duration = Duration::from_secs(60);

/// The tool the sealed states in these targets are for.
const TOOL: &str = "run_by_tag";

/// One way `/mcp` seals request states, bound to one caller, [`TOOL`] and
/// arguments, with a state it sealed lately.
struct Sealer {
    states: States,
    who: Principal,
    args: Value,
    sealed: Mutex<(Instant, String)>,
}

impl Sealer {
    fn new(states: States) -> Sealer {
        let who = Principal {
            subject: "u_1".into(),
            kind: PrincipalKind::User,
            name: "ann".into(),
            tenant: "acme".into(),
            client_id: "c_1".into(),
            scopes: vec!["mcp".into()],
            session: "f_1".into(),
        };
        let args = json!({"tags": ["smoke"], "project": "pay"});
        let state = states.seal(&who, TOOL, &args);
        Sealer {
            states,
            who,
            args,
            sealed: Mutex::new((Instant::now(), state)),
        }
    }

    /// A state sealed within the last [`RESEAL_AFTER`].
    fn state(&self) -> String {
        let mut sealed = self.sealed.lock().unwrap_or_else(PoisonError::into_inner);
        if sealed.0.elapsed() > RESEAL_AFTER {
            let state = self.states.seal(&self.who, TOOL, &self.args);
            *sealed = (Instant::now(), state);
        }
        sealed.1.clone()
    }

    fn opens(&self, state: &str) -> bool {
        self.states.opens(&self.who, TOOL, &self.args, state)
    }
}

/// Alone (a random key of its own) and as a replica on a store (a keyring
/// of two, the second active; fixed keys, which no input is sealed with).
fn sealers() -> &'static [Sealer; 2] {
    static SEALERS: OnceLock<[Sealer; 2]> = OnceLock::new();
    SEALERS.get_or_init(|| {
        let ring = Keyring {
            active: "rs2".into(),
            keys: vec![("rs1".into(), vec![1; 32]), ("rs2".into(), vec![2; 32])],
        };
        let replica = States::over(ring).expect("a keyring of two 32-byte keys");
        [Sealer::new(States::alone()), Sealer::new(replica)]
    })
}

/// `tools/list` cursors and MRTR request states: opaque strings a client
/// echoes back. A cursor that reads as ours is the one we write, and the
/// cursor after any name reads back as that name. No input opens as a
/// request state (an HMAC over what it holds and whom it is for), whether
/// the host seals alone or on a shared keyring; nor does a state the host
/// sealed, with one byte changed (see [`flipped`]).
pub fn cursor_state(data: &[u8]) {
    let text = std::str::from_utf8(data).ok();
    if let Some(text) = text {
        if let Some(last) = cursor_resumes_after(text) {
            assert_eq!(cursor_after(&last), text, "resumes after {last:?}");
        }
        let cursor = cursor_after(text);
        assert_eq!(cursor_resumes_after(&cursor).as_deref(), Some(text));
    }
    for sealer in sealers() {
        if let Some(text) = text {
            assert!(!sealer.opens(text), "{text:?} opened as a request state");
        }
        let state = sealer.state();
        assert!(
            sealer.opens(&state),
            "a state the host sealed does not open"
        );
        if let Some(changed) = flipped(state.as_bytes(), data)
            && let Ok(changed) = String::from_utf8(changed)
        {
            assert!(
                !sealer.opens(&changed),
                "{changed:?}, a changed state, opened"
            );
        }
    }
}
