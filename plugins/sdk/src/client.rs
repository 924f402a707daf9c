//! Asking the MCP client for input while a call runs, through the host's
//! `client` import: a form for the person (elicitation), the client's model
//! (sampling, when the plugin's reviewed manifest grants it), the client's
//! roots.
//!
//! ```no_run
//! # use toolhost_sdk::prelude::*;
//! # fn f() -> Result<(), ToolError> {
//! let form = serde_json::json!({
//!     "type": "object",
//!     "properties": {"name": {"type": "string"}},
//!     "required": ["name"],
//! });
//! match client::elicit("user_name", "What is your name?", &form) {
//!     Ok(client::Elicitation::Accept(answer)) => log::info!("hello {}", answer["name"]),
//!     Ok(_) => return Err(ToolError::Failed("the person declined".into())),
//!     Err(e) => return Err(ToolError::Failed(e.to_string())),
//! }
//! # Ok(()) }
//! ```
//!
//! **Ask before acting.** On a 2026-07-28 request the host answers the
//! client `input_required` and runs the call again, from the start, with
//! the answers: each request's key (1–64 of `[A-Za-z0-9_.-]`) must be the
//! same on every run, and a call that already wrote to a backend or opened
//! a checkpoint is refused. Ask several things at once with [`ask`]: on a
//! 2026-07-28 request they then cost one round. Outside wasm (unit tests)
//! nothing can be asked: every ask is [`ClientError::Unsupported`].

use serde_json::Value;

use crate::bindings::toolhost::plugin::client as wit;

pub use wit::{Role, Root, Sampled, SamplingMessage, SamplingRequest, Support};

/// What the person did with a form.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicitation {
    /// Submitted it: its content (a JSON object the host checked against
    /// the form).
    Accept(Value),
    /// Declined to answer.
    Decline,
    /// Dismissed the form.
    Cancel,
}

/// One request of an [`ask`].
#[derive(Debug, Clone)]
pub struct Input(wit::InputRequest);

impl Input {
    /// A form for the person: `schema` is MCP's flat elicitation schema (an
    /// object whose properties are strings, numbers, integers, booleans or
    /// string enums).
    pub fn elicit(key: impl Into<String>, message: impl Into<String>, schema: &Value) -> Self {
        Input(wit::InputRequest {
            key: key.into(),
            request: wit::Request::Elicit(wit::Form {
                message: message.into(),
                requested_schema: schema.to_string(),
            }),
        })
    }

    /// A request for the client's model.
    pub fn sample(key: impl Into<String>, request: SamplingRequest) -> Self {
        Input(wit::InputRequest {
            key: key.into(),
            request: wit::Request::Sample(request),
        })
    }

    /// The client's roots.
    pub fn roots(key: impl Into<String>) -> Self {
        Input(wit::InputRequest {
            key: key.into(),
            request: wit::Request::ListRoots,
        })
    }
}

/// One answer of an [`ask`], in the order asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// A form's answer.
    Elicited(Elicitation),
    /// The client's model's answer.
    Sampled(Sampled),
    /// The client's roots.
    Roots(Vec<Root>),
}

/// Why nothing was answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// Nobody can be asked this here (the client lacks the capability; a
    /// plan, a listing or a run).
    Unsupported(String),
    /// The host refused the request.
    Refused(String),
    /// The client did not answer in time.
    Timeout,
    /// The client's answer was an error or did not fit.
    Failed(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Unsupported(s) => write!(f, "cannot ask: {s}"),
            ClientError::Refused(s) => write!(f, "the host refused the request: {s}"),
            ClientError::Timeout => f.write_str("the client did not answer in time"),
            ClientError::Failed(s) => write!(f, "the client failed: {s}"),
        }
    }
}

impl std::error::Error for ClientError {}

/// What the client can answer (sampling: also whether the manifest grants
/// it). Outside wasm: nothing.
pub fn supports() -> Support {
    #[cfg(target_arch = "wasm32")]
    return wit::supports();
    #[cfg(not(target_arch = "wasm32"))]
    Support {
        elicitation: false,
        sampling: false,
        roots: false,
    }
}

/// Asks every request at once; answers in the same order.
pub fn ask(requests: Vec<Input>) -> Result<Vec<Response>, ClientError> {
    #[cfg(target_arch = "wasm32")]
    {
        let requests: Vec<wit::InputRequest> = requests.into_iter().map(|i| i.0).collect();
        let answers = wit::ask(&requests).map_err(error)?;
        answers.into_iter().map(response).collect()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let keys: Vec<String> = requests.into_iter().map(|i| i.0.key).collect();
        Err(ClientError::Unsupported(format!(
            "outside wasm (asked: {})",
            keys.join(", ")
        )))
    }
}

/// Asks the person one form (see [`Input::elicit`]).
pub fn elicit(
    key: impl Into<String>,
    message: impl Into<String>,
    schema: &Value,
) -> Result<Elicitation, ClientError> {
    match ask(vec![Input::elicit(key, message, schema)])?.pop() {
        Some(Response::Elicited(e)) => Ok(e),
        other => Err(ClientError::Failed(format!("unexpected answer {other:?}"))),
    }
}

/// Asks the client's model one request.
pub fn sample(key: impl Into<String>, request: SamplingRequest) -> Result<Sampled, ClientError> {
    match ask(vec![Input::sample(key, request)])?.pop() {
        Some(Response::Sampled(s)) => Ok(s),
        other => Err(ClientError::Failed(format!("unexpected answer {other:?}"))),
    }
}

/// Asks the client for its roots.
pub fn roots(key: impl Into<String>) -> Result<Vec<Root>, ClientError> {
    match ask(vec![Input::roots(key)])?.pop() {
        Some(Response::Roots(r)) => Ok(r),
        other => Err(ClientError::Failed(format!("unexpected answer {other:?}"))),
    }
}

/// A one-message text request of at most `max_tokens`.
pub fn prompt(text: impl Into<String>, max_tokens: u32) -> SamplingRequest {
    SamplingRequest {
        messages: vec![SamplingMessage {
            role: Role::User,
            text: text.into(),
        }],
        system_prompt: None,
        max_tokens,
        temperature: None,
        model_hint: None,
    }
}

#[cfg(target_arch = "wasm32")]
fn error(e: wit::Error) -> ClientError {
    match e {
        wit::Error::Unsupported(s) => ClientError::Unsupported(s),
        wit::Error::Refused(s) => ClientError::Refused(s),
        wit::Error::Timeout => ClientError::Timeout,
        wit::Error::Failed(s) => ClientError::Failed(s),
    }
}

#[cfg(target_arch = "wasm32")]
fn response(r: wit::Response) -> Result<Response, ClientError> {
    Ok(match r {
        wit::Response::Elicited(wit::Elicitation::Accept(json)) => {
            let v = serde_json::from_str(&json)
                .map_err(|e| ClientError::Failed(format!("the host's answer is not JSON: {e}")))?;
            Response::Elicited(Elicitation::Accept(v))
        }
        wit::Response::Elicited(wit::Elicitation::Decline) => {
            Response::Elicited(Elicitation::Decline)
        }
        wit::Response::Elicited(wit::Elicitation::Cancel) => {
            Response::Elicited(Elicitation::Cancel)
        }
        wit::Response::Sampled(s) => Response::Sampled(s),
        wit::Response::Roots(r) => Response::Roots(r),
    })
}
