//! `toolhost:plugin/client`: a call asks its MCP client for input (a form
//! for the person, the client's model, the client's roots).
//!
//! The capability checks what a plugin asks before it leaves: the key, the
//! form (MCP's flat elicitation schema), the sampling grant and budget, a
//! secret anywhere in the request, the round limit, and that the call has
//! not acted yet. It then asks through the call's [`ClientLink`]:
//!
//! - [`ClientChannel::Live`], a 2025-11-25 session: the request is sent now
//!   and the call waits (the wait does not count against its time budget);
//! - [`ClientChannel::Rounds`], a 2026-07-28 request: the answers the client
//!   gave so far, by key. A request without a fitting answer ends the call
//!   as [`ClientStop::InputRequired`]: the MCP edge answers the client
//!   `input_required` and runs the call again with the answers.
//!
//! Every answer is checked against its request before the plugin sees it.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use toolhost_secrets::Scanner;

use super::HostCallMeter;
use crate::bindings::toolhost::plugin::client as wit;

/// Most `ask` calls one run of a call makes.
pub const MAX_CLIENT_ROUNDS: usize = 8;
/// Most requests one `ask` carries.
pub const MAX_CLIENT_REQUESTS: usize = 8;
/// Longest request, as JSON, in bytes.
pub const MAX_CLIENT_REQUEST_BYTES: usize = 64 * 1024;
/// Most properties one form has.
pub const MAX_FORM_FIELDS: usize = 32;
/// How long a live ask waits for the client.
pub const CLIENT_ASK_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// What the client declared it can answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientSupport {
    /// Form elicitation.
    pub elicitation: bool,
    /// `sampling/createMessage`.
    pub sampling: bool,
    /// `roots/list`.
    pub roots: bool,
}

/// The sampling a plugin's reviewed manifest grants a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SamplingGrant {
    /// Most messages one call may send, over all its sampling requests.
    pub messages: u32,
    /// Most tokens one call may ask for (`max-tokens`, summed).
    pub tokens: u32,
}

/// Sends one request to a live client and waits for its answer: the
/// result's JSON (`ElicitResult`, `CreateMessageResult`, `ListRootsResult`).
pub trait AskClient: Send + Sync {
    /// Sends `request` (`{"method", "params"}`).
    fn ask(&self, request: Value) -> AskFuture<'_>;
}

/// The future of [`AskClient::ask`].
pub type AskFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, AskError>> + Send + 'a>>;

/// Why a live client did not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskError {
    /// Not within [`CLIENT_ASK_TIMEOUT`].
    Timeout,
    /// It answered with an error, or the session is gone.
    Failed(String),
}

/// How a call reaches its client.
#[derive(Clone)]
pub enum ClientChannel {
    /// A live session: each request is sent and waited for.
    Live(Arc<dyn AskClient>),
    /// A stateless request: the answers the client gave so far, by key.
    Rounds(BTreeMap<String, Value>),
}

/// One question the client was asked (or is to be asked), for the audit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientRound {
    /// The plugin's key.
    pub key: String,
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: &'static str,
    /// `answered`, `declined`, `cancelled`, `pending`, `timeout`, `failed`.
    pub outcome: &'static str,
}

/// What a call may ask of its client.
#[derive(Clone)]
pub struct ClientLink {
    /// What the client declared.
    pub supports: ClientSupport,
    /// The manifest's sampling grant (none: sampling is refused).
    pub sampling: Option<SamplingGrant>,
    /// How requests reach it.
    pub channel: ClientChannel,
    /// Why the call may not ask at all, if it may not (e.g. a stateless
    /// call that consumed an approval gate cannot be run again).
    pub refusal: Option<String>,
    /// Where each round is written down for the call's audit row.
    pub rounds: Arc<Mutex<Vec<ClientRound>>>,
    /// What a request is scanned with before it leaves.
    pub scanner: Scanner,
}

impl ClientLink {
    /// A link over `channel` for a client declaring `supports`.
    pub fn new(supports: ClientSupport, channel: ClientChannel) -> Self {
        Self {
            supports,
            sampling: None,
            channel,
            refusal: None,
            rounds: Arc::default(),
            scanner: Scanner::default(),
        }
    }

    /// The rounds asked so far.
    pub fn rounds(&self) -> Vec<ClientRound> {
        self.rounds
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl std::fmt::Debug for ClientLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientLink")
            .field("supports", &self.supports)
            .field("sampling", &self.sampling)
            .finish_non_exhaustive()
    }
}

/// Whether the call has acted (a backend write sent, a checkpoint opened):
/// shared by the capabilities of one call.
#[derive(Debug, Clone, Default)]
pub(crate) struct Acted(Arc<AtomicBool>);

impl Acted {
    pub(crate) fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Why a call stopped at an `ask` (a trap the sandbox turns into an answer).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ClientStop {
    /// Requests the client must answer first (their JSON is in the
    /// capability's `pending`).
    #[error("the call needs the client's input")]
    InputRequired,
    /// A stateless request asked for what its client did not declare.
    #[error("the client did not declare the {0} capability")]
    MissingCapability(&'static str),
}

/// The client capability of one call.
pub(crate) struct ClientCapability {
    link: Option<ClientLink>,
    meter: HostCallMeter,
    quiet: bool,
    acted: Acted,
    asks: usize,
    sampled: (u32, u32),
    /// The requests a stateless call is waiting on, by key.
    pub(crate) pending: BTreeMap<String, Value>,
    /// Time spent waiting for a live client (not the call's to pay).
    pub(crate) waited: Duration,
}

impl ClientCapability {
    pub(crate) fn new(
        link: Option<ClientLink>,
        meter: HostCallMeter,
        quiet: bool,
        acted: Acted,
    ) -> Self {
        Self {
            link,
            meter,
            quiet,
            acted,
            asks: 0,
            sampled: (0, 0),
            pending: BTreeMap::new(),
            waited: Duration::ZERO,
        }
    }

    /// Whether this ask may ask the client at all (a call or a prompt's
    /// get may; a plan, a listing, a describe may not).
    pub(crate) fn allow_asking(&mut self, may: bool) {
        self.quiet = !may;
    }

    /// Whether the call may wait on a live client (its wall budget then
    /// allows for the waits).
    pub(crate) fn is_live(link: Option<&ClientLink>) -> bool {
        matches!(link.map(|l| &l.channel), Some(ClientChannel::Live(_)))
    }

    fn supports(&self) -> wit::Support {
        match (&self.link, self.quiet) {
            (Some(link), false) if link.refusal.is_none() => wit::Support {
                elicitation: link.supports.elicitation,
                sampling: link.supports.sampling && link.sampling.is_some(),
                roots: link.supports.roots,
            },
            _ => wit::Support {
                elicitation: false,
                sampling: false,
                roots: false,
            },
        }
    }

    fn record(&self, key: &str, method: &'static str, outcome: &'static str) {
        if let Some(link) = &self.link {
            let mut rounds = link.rounds.lock().unwrap_or_else(|p| p.into_inner());
            rounds.push(ClientRound {
                key: key.to_owned(),
                method,
                outcome,
            });
        }
    }

    /// Checks `requests` and turns each into its MCP request JSON.
    fn prepare(
        &mut self,
        link: &ClientLink,
        requests: Vec<wit::InputRequest>,
    ) -> Result<Vec<Prepared>, Refusal> {
        self.may_ask(link, requests.len())?;
        let mut seen = std::collections::BTreeSet::new();
        let mut prepared = Vec::with_capacity(requests.len());
        for r in requests {
            if !valid_key(&r.key) || !seen.insert(r.key.clone()) {
                return Err(Refusal::Refused(format!(
                    "request key {:?} is not 1-64 of [A-Za-z0-9_.-], or is used twice",
                    r.key
                )));
            }
            prepared.push(self.prepare_one(link, r)?);
        }
        Ok(prepared)
    }

    /// Whether this call may ask `link` now, `count` requests at once.
    fn may_ask(&self, link: &ClientLink, count: usize) -> Result<(), Refusal> {
        if let Some(why) = &link.refusal {
            return Err(Refusal::Refused(why.clone()));
        }
        if self.acted.is_set() {
            return Err(Refusal::Refused(
                "the call already acted (a backend write or a checkpoint): ask before acting"
                    .into(),
            ));
        }
        if self.asks >= MAX_CLIENT_ROUNDS {
            return Err(Refusal::Refused(format!(
                "a call asks at most {MAX_CLIENT_ROUNDS} rounds"
            )));
        }
        if count == 0 || count > MAX_CLIENT_REQUESTS {
            return Err(Refusal::Refused(format!(
                "an ask carries 1 to {MAX_CLIENT_REQUESTS} requests, not {count}"
            )));
        }
        Ok(())
    }

    /// One request as its MCP request JSON, if it is small enough, carries
    /// no secret and the client supports it.
    fn prepare_one(
        &mut self,
        link: &ClientLink,
        r: wit::InputRequest,
    ) -> Result<Prepared, Refusal> {
        let (method, params, kind) = self.method_and_params(link, r.request)?;
        let supported = match kind {
            Kind::Elicit(_) => link.supports.elicitation,
            Kind::Sample => link.supports.sampling,
            Kind::Roots => link.supports.roots,
        };
        let request = json!({"method": method, "params": params});
        let text = request.to_string();
        if text.len() > MAX_CLIENT_REQUEST_BYTES {
            return Err(Refusal::Refused(format!(
                "request {:?} is {} bytes, more than {MAX_CLIENT_REQUEST_BYTES}",
                r.key,
                text.len()
            )));
        }
        if let Some(kind) = link.scanner.find_in_json(&params) {
            return Err(Refusal::Refused(format!(
                "request {:?} carries a secret ({}): it is not sent",
                r.key,
                kind.as_str()
            )));
        }
        if !supported {
            let capability = match method {
                "elicitation/create" => "elicitation",
                "sampling/createMessage" => "sampling",
                _ => "roots",
            };
            return Err(Refusal::Unsupported(capability));
        }
        Ok(Prepared {
            key: r.key,
            method,
            request,
            kind,
        })
    }

    /// The MCP method and params a request asks through, and what kind of
    /// answer it expects; a form is checked, a sampling request held to
    /// the grant.
    fn method_and_params(
        &mut self,
        link: &ClientLink,
        request: wit::Request,
    ) -> Result<(&'static str, Value, Kind), Refusal> {
        Ok(match request {
            wit::Request::Elicit(form) => {
                let schema = checked_form(&form.requested_schema).map_err(Refusal::Refused)?;
                let params =
                    json!({"mode": "form", "message": form.message, "requestedSchema": schema});
                ("elicitation/create", params, Kind::Elicit(schema))
            }
            wit::Request::Sample(s) => {
                let params = self.sampling(link, &s)?;
                ("sampling/createMessage", params, Kind::Sample)
            }
            wit::Request::ListRoots => ("roots/list", json!({}), Kind::Roots),
        })
    }

    /// A sampling request's params, within the manifest's grant.
    fn sampling(&mut self, link: &ClientLink, s: &wit::SamplingRequest) -> Result<Value, Refusal> {
        let Some(grant) = link.sampling else {
            return Err(Refusal::Refused(
                "the plugin's reviewed manifest does not grant sampling".into(),
            ));
        };
        let messages = u32::try_from(s.messages.len()).unwrap_or(u32::MAX);
        let (sent, tokens) = self.sampled;
        if s.messages.is_empty() || s.max_tokens == 0 {
            return Err(Refusal::Refused(
                "a sampling request has messages and max-tokens above 0".into(),
            ));
        }
        if sent.saturating_add(messages) > grant.messages
            || tokens.saturating_add(s.max_tokens) > grant.tokens
        {
            return Err(Refusal::Refused(format!(
                "over the call's sampling budget of {} messages and {} tokens",
                grant.messages, grant.tokens
            )));
        }
        self.sampled = (sent + messages, tokens + s.max_tokens);
        let role = |r: wit::Role| match r {
            wit::Role::User => "user",
            wit::Role::Assistant => "assistant",
        };
        let msgs: Vec<Value> = (s.messages.iter())
            .map(|m| json!({"role": role(m.role), "content": {"type": "text", "text": m.text}}))
            .collect();
        let mut params = Map::new();
        params.insert("messages".into(), Value::Array(msgs));
        params.insert("maxTokens".into(), json!(s.max_tokens));
        if let Some(p) = &s.system_prompt {
            params.insert("systemPrompt".into(), json!(p));
        }
        if let Some(t) = s.temperature.filter(|t| t.is_finite()) {
            params.insert("temperature".into(), json!(t));
        }
        if let Some(h) = &s.model_hint {
            params.insert("modelPreferences".into(), json!({"hints": [{"name": h}]}));
        }
        Ok(Value::Object(params))
    }
}

/// Why an ask was not sent.
enum Refusal {
    Refused(String),
    Unsupported(&'static str),
}

/// What was asked, and how its answer is read.
enum Kind {
    Elicit(Value),
    Sample,
    Roots,
}

struct Prepared {
    key: String,
    method: &'static str,
    request: Value,
    kind: Kind,
}

impl wit::Host for ClientCapability {
    fn supports(&mut self) -> wasmtime::Result<wit::Support> {
        self.meter.charge()?;
        Ok(ClientCapability::supports(self))
    }

    async fn ask(
        &mut self,
        requests: Vec<wit::InputRequest>,
    ) -> wasmtime::Result<Result<Vec<wit::Response>, wit::Error>> {
        self.meter.charge()?;
        let link = match (&self.link, self.quiet) {
            (Some(link), false) => link.clone(),
            _ => {
                return Ok(Err(wit::Error::Unsupported(
                    "nobody can be asked here: a plan, a listing, or an exploration run not followed \
                     as a task"
                        .into(),
                )));
            }
        };
        let prepared = match self.prepare(&link, requests) {
            Ok(p) => p,
            Err(Refusal::Refused(why)) => return Ok(Err(wit::Error::Refused(why))),
            Err(Refusal::Unsupported(capability)) => {
                if matches!(link.channel, ClientChannel::Rounds(_)) && capability == "sampling" {
                    return Err(ClientStop::MissingCapability("sampling").into());
                }
                return Ok(Err(wit::Error::Unsupported(format!(
                    "the client did not declare the {capability} capability"
                ))));
            }
        };
        self.asks += 1;
        match &link.channel {
            ClientChannel::Rounds(answers) => self.answer_from_rounds(answers, prepared),
            ClientChannel::Live(client) => Ok(self.live(client.as_ref(), prepared).await),
        }
    }
}

impl ClientCapability {
    /// Answers from a stateless request's answers, or stops the call for
    /// the requests still without a fitting one.
    fn answer_from_rounds(
        &mut self,
        answers: &BTreeMap<String, Value>,
        prepared: Vec<Prepared>,
    ) -> wasmtime::Result<Result<Vec<wit::Response>, wit::Error>> {
        let mut responses = Vec::with_capacity(prepared.len());
        for p in prepared {
            match answers.get(&p.key).map(|a| read(&p.kind, a)) {
                Some(Ok(r)) => {
                    self.record(&p.key, p.method, outcome(&r));
                    responses.push(r);
                }
                // Missing, or not a fitting answer: asked again.
                _ => {
                    self.record(&p.key, p.method, "pending");
                    self.pending.insert(p.key, p.request);
                }
            }
        }
        if !self.pending.is_empty() {
            return Err(ClientStop::InputRequired.into());
        }
        Ok(Ok(responses))
    }

    /// Asks a live client each request in turn.
    async fn live(
        &mut self,
        client: &dyn AskClient,
        prepared: Vec<Prepared>,
    ) -> Result<Vec<wit::Response>, wit::Error> {
        let mut responses = Vec::with_capacity(prepared.len());
        for p in prepared {
            let started = std::time::Instant::now();
            let answer = client.ask(p.request).await;
            self.waited += started.elapsed();
            let answer = match answer {
                Ok(a) => a,
                Err(AskError::Timeout) => {
                    self.record(&p.key, p.method, "timeout");
                    return Err(wit::Error::Timeout);
                }
                Err(AskError::Failed(why)) => {
                    self.record(&p.key, p.method, "failed");
                    return Err(wit::Error::Failed(why));
                }
            };
            match read(&p.kind, &answer) {
                Ok(r) => {
                    self.record(&p.key, p.method, outcome(&r));
                    responses.push(r);
                }
                Err(why) => {
                    self.record(&p.key, p.method, "failed");
                    return Err(wit::Error::Failed(why));
                }
            }
        }
        Ok(responses)
    }
}

fn outcome(r: &wit::Response) -> &'static str {
    match r {
        wit::Response::Elicited(wit::Elicitation::Decline) => "declined",
        wit::Response::Elicited(wit::Elicitation::Cancel) => "cancelled",
        _ => "answered",
    }
}

fn valid_key(k: &str) -> bool {
    (1..=64).contains(&k.len())
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

/// A form's schema, checked: an object schema whose properties (at most
/// [`MAX_FORM_FIELDS`]) are each a string (optionally an enum of strings),
/// number, integer or boolean, `required` naming only them.
fn checked_form(text: &str) -> Result<Value, String> {
    let schema: Value =
        serde_json::from_str(text).map_err(|e| format!("the form is not JSON: {e}"))?;
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("a form is a JSON Schema of \"type\": \"object\"".into());
    }
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .ok_or("a form names its fields in \"properties\"")?;
    if props.is_empty() || props.len() > MAX_FORM_FIELDS {
        return Err(format!("a form has 1 to {MAX_FORM_FIELDS} fields"));
    }
    for (name, p) in props {
        let kind = p.get("type").and_then(Value::as_str).unwrap_or_default();
        let fits = match kind {
            "number" | "integer" | "boolean" => true,
            "string" => p.get("enum").is_none() && p.get("oneOf").is_none() || options(p).is_some(),
            // A multi-select: a list of strings from the options.
            "array" => options(&p["items"]).is_some(),
            _ => false,
        };
        if !fits {
            return Err(format!(
                "form field {name:?} is not a string, number, integer, boolean, \
                 single-select or multi-select of strings"
            ));
        }
    }
    if let Some(required) = schema.get("required") {
        let known = required.as_array().is_some_and(|r| {
            r.iter()
                .all(|n| n.as_str().is_some_and(|n| props.contains_key(n)))
        });
        if !known {
            return Err("a form's \"required\" names only its fields".into());
        }
    }
    Ok(schema)
}

/// The strings a select field allows: its `enum`, or the `const`s of its
/// `oneOf`/`anyOf` options; `None` when it has no (well-formed) options.
fn options(field: &Value) -> Option<Vec<&str>> {
    if field.get("type").is_some_and(|t| t != "string") {
        return None;
    }
    let listed: Vec<&str> = if let Some(e) = field.get("enum") {
        e.as_array()?
            .iter()
            .map(Value::as_str)
            .collect::<Option<_>>()?
    } else {
        let titled = field.get("oneOf").or_else(|| field.get("anyOf"))?;
        (titled.as_array()?.iter())
            .map(|o| o.get("const").and_then(Value::as_str))
            .collect::<Option<_>>()?
    };
    (!listed.is_empty()).then_some(listed)
}

/// A client's answer to one request, checked against it.
fn read(kind: &Kind, answer: &Value) -> Result<wit::Response, String> {
    match kind {
        Kind::Elicit(schema) => elicited(schema, answer).map(wit::Response::Elicited),
        Kind::Sample => sampled(answer).map(wit::Response::Sampled),
        Kind::Roots => roots(answer).map(wit::Response::Roots),
    }
}

fn elicited(schema: &Value, answer: &Value) -> Result<wit::Elicitation, String> {
    match answer.get("action").and_then(Value::as_str) {
        Some("decline") => return Ok(wit::Elicitation::Decline),
        Some("cancel") => return Ok(wit::Elicitation::Cancel),
        Some("accept") => {}
        _ => return Err("the answer to a form has no action".into()),
    }
    let content = answer
        .get("content")
        .and_then(Value::as_object)
        .ok_or("an accepted form has content")?;
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for (name, value) in content {
        let field = props
            .get(name)
            .ok_or_else(|| format!("the answer has a field {name:?} the form does not"))?;
        let allowed = |v: &Value, f: &Value| {
            v.as_str()
                .is_some_and(|s| options(f).is_none_or(|o| o.contains(&s)))
        };
        let fits = match field["type"].as_str().unwrap_or_default() {
            "string" => allowed(value, field),
            "array" => {
                (value.as_array()).is_some_and(|a| a.iter().all(|v| allowed(v, &field["items"])))
            }
            "number" => value.is_number(),
            "integer" => value.is_i64() || value.is_u64(),
            "boolean" => value.is_boolean(),
            _ => false,
        };
        if !fits {
            return Err(format!("the answer's {name:?} does not fit the form"));
        }
    }
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    if let Some(missing) = required
        .iter()
        .filter_map(Value::as_str)
        .find(|n| !content.contains_key(*n))
    {
        return Err(format!("the answer lacks the required {missing:?}"));
    }
    Ok(wit::Elicitation::Accept(
        Value::Object(content.clone()).to_string(),
    ))
}

fn sampled(answer: &Value) -> Result<wit::Sampled, String> {
    let role = match answer.get("role").and_then(Value::as_str) {
        Some("assistant") => wit::Role::Assistant,
        Some("user") => wit::Role::User,
        _ => return Err("a sampling answer has a role".into()),
    };
    // One block, or a list of blocks (2025-11-25): the text of the text ones.
    let blocks = match &answer["content"] {
        Value::Array(a) => a.clone(),
        other => vec![other.clone()],
    };
    let text: Vec<&str> = (blocks.iter())
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect();
    if text.is_empty() {
        return Err("a sampling answer has no text".into());
    }
    Ok(wit::Sampled {
        role,
        text: text.concat(),
        model: answer["model"].as_str().unwrap_or_default().to_owned(),
        stop_reason: answer["stopReason"].as_str().map(str::to_owned),
    })
}

fn roots(answer: &Value) -> Result<Vec<wit::Root>, String> {
    let list = answer
        .get("roots")
        .and_then(Value::as_array)
        .ok_or("a roots answer has a list of roots")?;
    list.iter()
        .map(|r| {
            let uri = r["uri"].as_str().ok_or("a root has a uri")?;
            Ok(wit::Root {
                uri: uri.to_owned(),
                name: r["name"].as_str().map(str::to_owned),
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
