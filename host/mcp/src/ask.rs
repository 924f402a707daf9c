//! Putting a clarification to the person, when the client can: as an MRTR
//! `InputRequiredResult` (2026-07-28) or an in-session form elicitation
//! (2025-11-25), each a single-select of the candidates. The answer pins
//! the chosen id and the call runs again, through the whole call path.
//!
//! The MRTR `requestState` is sealed (HMAC, rmcp's codec) and bound to the
//! principal, tenant, client, tool and a digest of the arguments, expires,
//! and is single use. It carries the ids offered (a choice outside them is
//! not taken: the set never widens) and the choices of earlier rounds (a
//! call may ask about several arguments in turn).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rmcp::model::{
    ClientCapabilities, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, EnumSchema, ErrorData, InputRequest, InputRequiredResult, InputResponses,
    ProtocolVersion, RequestStateCodec, SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use toolhost_resolver::Clarification;
use toolhost_types::Principal;

/// How long a sealed question stays answerable: a person's time to choose.
pub(crate) const STATE_TTL: Duration = Duration::from_secs(10 * 60);
/// How long an in-session elicitation waits for the person.
pub(crate) const ELICITATION_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// Most questions one legacy call asks before answering with the last one.
pub(crate) const MAX_ROUNDS: usize = 8;

/// How a question reaches the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Channel {
    /// As the call's structured result (the model relays `ask_user`).
    Result,
    /// As an MRTR `InputRequiredResult` (2026-07-28, form elicitation).
    InputRequired,
    /// As an `elicitation/create` request in the legacy session.
    Elicitation,
}

/// The channel for a client of `version` with `caps`. Elicitation declared
/// as `{}` means form (the spec's default mode).
pub(crate) fn channel(
    version: Option<&ProtocolVersion>,
    caps: Option<&ClientCapabilities>,
) -> Channel {
    let form = caps
        .and_then(|c| c.elicitation.as_ref())
        .is_some_and(|e| e.form.is_some() || e.url.is_none());
    if !form {
        return Channel::Result;
    }
    let stateless = version.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    if stateless {
        Channel::InputRequired
    } else {
        Channel::Elicitation
    }
}

/// What a retry's `requestState` carried.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Sealed {
    /// Makes the state single use.
    nonce: String,
    /// The argument asked about (the `inputRequests` key).
    field: String,
    /// The ids offered.
    offered: Vec<i64>,
    /// Earlier rounds' choices: argument → id.
    chosen: BTreeMap<String, i64>,
    /// The client's answers to the plugin's earlier requests (the `client`
    /// import), by the plugin's key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    inputs: BTreeMap<String, Value>,
    /// The keys of the plugin's requests this round asks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pending: Vec<String>,
}

/// What a retry asks the call path to do.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Retry {
    /// Every choice made so far, to pin into the arguments.
    pub(crate) chosen: BTreeMap<String, i64>,
    /// The person declined: answer with the question, not another form.
    pub(crate) declined: bool,
    /// The client's answers to the plugin's requests so far, by key: what
    /// the call's `client` import answers from.
    pub(crate) inputs: BTreeMap<String, Value>,
}

/// Where the sealing keys and the spent states live when several replicas
/// serve one host: the store (`toolhost_storage`, through the server). A
/// question sealed by one replica is then answered on any other, once.
pub trait RequestStates: Send + Sync {
    /// The key id to seal with now, and every key that may open a state.
    fn keys(&self) -> StatesFuture<'_, Keyring>;
    /// Spends `nonce`, remembered until `expires_at` (unix seconds): true
    /// for its first use on any replica only.
    fn spend<'a>(&'a self, nonce: &'a str, expires_at: i64) -> StatesFuture<'a, bool>;
}

/// The keys request states are sealed and opened with.
#[derive(Clone, Default)]
pub struct Keyring {
    /// The key id states are sealed with now.
    pub active: String,
    /// Every key id that may open a state, with its bytes (32 or more).
    pub keys: Vec<(String, Vec<u8>)>,
}

/// A boxed future of [`RequestStates`].
pub type StatesFuture<'a, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, StatesError>> + Send + 'a>>;

/// Why the shared request states did not answer.
#[derive(Debug)]
pub enum StatesError {
    /// The store could not be reached: the client may answer again.
    Unavailable(toolhost_types::StoreUnavailable),
    /// Anything else.
    Failed(String),
}

impl std::fmt::Display for StatesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StatesError::Unavailable(down) => down.fmt(f),
            StatesError::Failed(why) => f.write_str(why),
        }
    }
}

/// Seals questions and opens answers. Alone (tests, `toolhost call`), the
/// key is random at start and spent states are remembered in memory, so a
/// restart invalidates pending questions (they are asked again on the next
/// call). With [`RequestStates`] the keys and spent states are the store's,
/// shared by every replica; the keys are reloaded every [`KEYS_RELOAD`].
pub(crate) struct Asker {
    codec: RwLock<Arc<RequestStateCodec>>,
    shared: Option<Arc<dyn RequestStates>>,
    used: Mutex<HashMap<String, Instant>>,
}

/// How often a replica reads the shared keys again (a new one is made a day
/// ahead of its use, so any interval well under a day is enough).
pub(crate) const KEYS_RELOAD: Duration = Duration::from_secs(60);

impl Asker {
    pub(crate) fn new() -> Self {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the OS random source is available");
        let codec = RequestStateCodec::try_new(key.to_vec()).expect("a 32-byte key is long enough");
        Self {
            codec: RwLock::new(Arc::new(codec)),
            shared: None,
            used: Mutex::default(),
        }
    }

    /// An asker over the shared keys and spent states, keys loaded.
    pub(crate) async fn shared(states: Arc<dyn RequestStates>) -> Result<Self, String> {
        let asker = Self {
            codec: RwLock::new(Arc::new(ring(states.as_ref()).await?)),
            shared: Some(states),
            used: Mutex::default(),
        };
        Ok(asker)
    }

    /// An asker alone (spent states in memory) over a fixed keyring: the
    /// codec a replica on the store builds, without the store (fuzzing).
    pub(crate) fn over(ring: Keyring) -> Result<Self, String> {
        Ok(Self {
            codec: RwLock::new(Arc::new(keyring_codec(ring)?)),
            shared: None,
            used: Mutex::default(),
        })
    }

    /// Reads the shared keys again (a no-op when alone).
    pub(crate) async fn reload(&self) -> Result<(), String> {
        let Some(states) = &self.shared else {
            return Ok(());
        };
        let codec = Arc::new(ring(states.as_ref()).await?);
        *self.codec.write().unwrap_or_else(|p| p.into_inner()) = codec;
        Ok(())
    }

    fn codec(&self) -> Arc<RequestStateCodec> {
        self.codec.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The question as an MRTR result, sealing what the retry needs.
    pub(crate) fn input_required(
        &self,
        who: &Principal,
        tool: &str,
        arguments: &Value,
        c: &Clarification,
        chosen: &BTreeMap<String, i64>,
    ) -> Result<InputRequiredResult, ErrorData> {
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce).expect("the OS random source is available");
        let sealed = Sealed {
            nonce: hex(&nonce),
            field: c.field.clone(),
            offered: c.candidates.iter().map(|c| c.id).collect(),
            chosen: chosen.clone(),
            inputs: BTreeMap::new(),
            pending: Vec::new(),
        };
        let state = self.seal(who, tool, arguments, &sealed)?;
        let request = InputRequest::Elicitation(ElicitRequest::new(form(c)?));
        let requests = BTreeMap::from([(c.field.clone(), request)]);
        Ok(InputRequiredResult::new(Some(requests), Some(state)))
    }

    /// The plugin's requests (key → `{"method", "params"}`) as an MRTR
    /// result, sealing the answers given so far (`retry`) for the next run.
    pub(crate) fn plugin_inputs(
        &self,
        who: &Principal,
        tool: &str,
        arguments: &Value,
        requests: BTreeMap<String, Value>,
        retry: &Retry,
    ) -> Result<InputRequiredResult, ErrorData> {
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce).expect("the OS random source is available");
        let sealed = Sealed {
            nonce: hex(&nonce),
            field: String::new(),
            offered: Vec::new(),
            chosen: retry.chosen.clone(),
            inputs: retry.inputs.clone(),
            pending: requests.keys().cloned().collect(),
        };
        let state = self.seal(who, tool, arguments, &sealed)?;
        let mut asked = BTreeMap::new();
        for (key, request) in requests {
            let request: InputRequest = serde_json::from_value(request).map_err(|e| {
                tracing::error!(error = %e, key, "a plugin's input request does not parse");
                ErrorData::internal_error("internal error", None)
            })?;
            asked.insert(key, request);
        }
        Ok(InputRequiredResult::new(Some(asked), Some(state)))
    }

    fn seal(
        &self,
        who: &Principal,
        tool: &str,
        arguments: &Value,
        sealed: &Sealed,
    ) -> Result<String, ErrorData> {
        let bound = binding(who, tool, arguments);
        self.codec()
            .seal_json_with(
                sealed,
                &SealOptions::new()
                    .associated_data(bound.as_bytes())
                    .ttl(STATE_TTL),
            )
            .map_err(|e| {
                tracing::error!(error = %e, "sealing a request state failed");
                ErrorData::internal_error("internal error", None)
            })
    }

    /// Opens a retry's state and reads the person's answer. A state that
    /// was tampered with, expired, bound to another caller, tool or
    /// arguments, or already used is refused (`-32602`). An answer that is
    /// missing or outside the offered ids is ignored: the call asks again.
    pub(crate) async fn retry(
        &self,
        who: &Principal,
        tool: &str,
        arguments: &Value,
        state: &str,
        responses: Option<&InputResponses>,
    ) -> Result<Retry, ErrorData> {
        let sealed = self.open(who, tool, arguments, state)?;
        self.spend(&sealed.nonce).await?;
        let mut retry = Retry {
            chosen: sealed.chosen,
            declined: false,
            inputs: sealed.inputs,
        };
        // The plugin's requests: each answer is kept as sent (an earlier
        // round's stays); the call's `client` import checks it against the
        // request when asked again (one that does not fit is asked again),
        // and reads only the keys the plugin asks.
        for (key, answer) in responses.into_iter().flatten() {
            retry
                .inputs
                .entry(key.clone())
                .or_insert_with(|| answer.clone());
        }
        if sealed.field.is_empty() {
            return Ok(retry);
        }
        let Some(answer) = responses.and_then(|r| r.get(&sealed.field)) else {
            return Ok(retry);
        };
        let answer: ElicitResult = serde_json::from_value(answer.clone()).map_err(|_| {
            ErrorData::invalid_params(
                format!(
                    "inputResponses.{} is not an elicitation result",
                    sealed.field
                ),
                None,
            )
        })?;
        match chosen_id(&answer, &sealed.field, &sealed.offered) {
            Answer::Chose(id) => {
                retry.chosen.insert(sealed.field, id);
            }
            Answer::Declined => retry.declined = true,
            Answer::Unusable => {}
        }
        Ok(retry)
    }

    /// Opens `state` if it was sealed for this caller, tool and arguments
    /// with one of the keys and has not expired. Does not spend it.
    pub(crate) fn open(
        &self,
        who: &Principal,
        tool: &str,
        arguments: &Value,
        state: &str,
    ) -> Result<Sealed, ErrorData> {
        let bound = binding(who, tool, arguments);
        self.codec()
            .open_json_with(state, bound.as_bytes())
            .map_err(|e| {
                tracing::info!(error = %e, "a requestState was refused");
                ErrorData::invalid_params(
                    "requestState is invalid, expired or not for this call",
                    None,
                )
            })
    }

    /// Marks a nonce used, on every replica when shared; a second use is
    /// refused.
    async fn spend(&self, nonce: &str) -> Result<(), ErrorData> {
        let spent = || {
            ErrorData::invalid_params(
                "requestState was already used: retry the original call",
                None,
            )
        };
        if let Some(states) = &self.shared {
            let until = unix_now() + STATE_TTL.as_secs() as i64;
            return match states.spend(nonce, until).await {
                Ok(true) => Ok(()),
                Ok(false) => Err(spent()),
                Err(StatesError::Unavailable(down)) => Err(crate::convert::store_unavailable(
                    &down,
                    "spending a request state",
                )),
                Err(e) => {
                    tracing::error!(error = %e, "spending a request state failed");
                    Err(ErrorData::internal_error("internal error", None))
                }
            };
        }
        let now = Instant::now();
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        used.retain(|_, at| now.duration_since(*at) < STATE_TTL);
        if used.insert(nonce.to_owned(), now).is_some() {
            return Err(spent());
        }
        Ok(())
    }
}

/// The codec over the shared keys.
async fn ring(states: &dyn RequestStates) -> Result<RequestStateCodec, String> {
    keyring_codec(states.keys().await.map_err(|e| e.to_string())?)
}

/// The codec over `ring`: seals with its active key, opens with any of them.
fn keyring_codec(ring: Keyring) -> Result<RequestStateCodec, String> {
    RequestStateCodec::new_with_keyring(ring.active, ring.keys).map_err(|e| e.to_string())
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// What a person's answer to a form means.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// One of the offered ids.
    Chose(i64),
    /// Declined or cancelled.
    Declined,
    /// Accepted, but with nothing usable (missing, not an offered id).
    Unusable,
}

/// Reads `answer`'s choice for `field` among `offered`.
pub(crate) fn chosen_id(answer: &ElicitResult, field: &str, offered: &[i64]) -> Answer {
    match answer.action {
        ElicitationAction::Accept => {}
        _ => return Answer::Declined,
    }
    let value = answer.content.as_ref().and_then(|c| c.get(field));
    let id = match value {
        Some(Value::String(s)) => s.trim().parse::<i64>().ok(),
        Some(Value::Number(n)) => n.as_i64(),
        _ => None,
    };
    match id {
        Some(id) if offered.contains(&id) => Answer::Chose(id),
        _ => Answer::Unusable,
    }
}

/// The form: one required single-select named after the argument, its
/// options the candidates' ids (as strings), titled by their labels.
pub(crate) fn form(c: &Clarification) -> Result<ElicitRequestParams, ErrorData> {
    let ids: Vec<String> = c.candidates.iter().map(|c| c.id.to_string()).collect();
    let labels: Vec<String> = c.candidates.iter().map(|c| c.label.clone()).collect();
    let internal = |e: &str| {
        tracing::error!(error = e, "building an elicitation form failed");
        ErrorData::internal_error("internal error", None)
    };
    if ids.is_empty() {
        return Err(ErrorData::internal_error("internal error", None));
    }
    let choice = EnumSchema::builder(ids)
        .enum_titles(labels)
        .map_err(|e| internal(&e))?
        .title(c.field.clone())
        .build();
    let schema = ElicitationSchema::builder()
        .required_enum_schema(c.field.clone(), choice)
        .build()
        .map_err(internal)?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: c.ask_user.clone(),
        requested_schema: schema,
    })
}

/// What a sealed state is bound to: who asked, in which tenant, through
/// which client, which tool, with which arguments.
fn binding(who: &Principal, tool: &str, arguments: &Value) -> String {
    let digest = Sha256::digest(arguments.to_string().as_bytes());
    format!(
        "toolhost/ask/v1\n{}\n{}\n{}\n{tool}\n{}",
        who.subject,
        who.tenant,
        who.client_id,
        hex(&digest)
    )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `arguments` with every choice pinned (ids as integers).
pub(crate) fn pinned(arguments: &Value, chosen: &BTreeMap<String, i64>) -> Value {
    if chosen.is_empty() {
        return arguments.clone();
    }
    let mut args = match arguments {
        Value::Object(m) => m.clone(),
        _ => serde_json::Map::new(),
    };
    for (field, id) in chosen {
        args.insert(field.clone(), Value::from(*id));
    }
    Value::Object(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ElicitationCapability;
    use serde_json::json;
    use toolhost_resolver::{Candidate, Reason};
    use toolhost_types::PrincipalKind;

    fn who(subject: &str) -> Principal {
        Principal {
            subject: subject.into(),
            kind: PrincipalKind::User,
            name: subject.into(),
            tenant: "demo".into(),
            client_id: "c1".into(),
            scopes: vec!["mcp".into()],
            session: "s".into(),
        }
    }

    fn question() -> Clarification {
        Clarification {
            reason: Reason::Ambiguous,
            ask_user: "Which project?".into(),
            candidates: vec![
                Candidate {
                    id: 1,
                    name: "payments".into(),
                    label: "payments".into(),
                },
                Candidate {
                    id: 2,
                    name: "auth".into(),
                    label: "auth".into(),
                },
            ],
            scoped_by: Default::default(),
            field: "project".into(),
        }
    }

    fn state(asker: &Asker, args: &Value) -> String {
        let r = asker
            .input_required(
                &who("ann"),
                "run_by_tag",
                args,
                &question(),
                &BTreeMap::from([("environment".into(), 12)]),
            )
            .expect("sealed");
        let v = serde_json::to_value(&r).expect("serializes");
        assert_eq!(v["resultType"], "input_required");
        assert_eq!(
            v["inputRequests"]["project"]["method"],
            "elicitation/create"
        );
        let schema = &v["inputRequests"]["project"]["params"]["requestedSchema"];
        assert_eq!(
            schema["properties"]["project"]["oneOf"][1],
            json!({"const": "2", "title": "auth"})
        );
        r.request_state.expect("a state")
    }

    fn accept(id: &str) -> InputResponses {
        BTreeMap::from([(
            "project".into(),
            json!({"action": "accept", "content": {"project": id}}),
        )])
    }

    #[tokio::test]
    async fn an_answer_pins_the_choice_and_keeps_earlier_rounds() {
        let asker = Asker::new();
        let args = json!({"tags": ["smoke"]});
        let s = state(&asker, &args);
        let retry = asker
            .retry(&who("ann"), "run_by_tag", &args, &s, Some(&accept("1")))
            .await
            .expect("opens");
        assert_eq!(
            retry.chosen,
            BTreeMap::from([("environment".into(), 12), ("project".into(), 1)])
        );
        assert_eq!(
            pinned(&args, &retry.chosen),
            json!({"tags": ["smoke"], "environment": 12, "project": 1})
        );
    }

    #[tokio::test]
    async fn a_state_is_single_use_and_bound_to_caller_tool_and_arguments() {
        let asker = Asker::new();
        let args = json!({"tags": ["smoke"]});
        let s = state(&asker, &args);
        let refused = async |who: &Principal, tool: &str, args: &Value, s: &str| {
            asker
                .retry(who, tool, args, s, None)
                .await
                .expect_err("refused")
                .code
                .0
        };
        assert_eq!(refused(&who("bob"), "run_by_tag", &args, &s).await, -32602);
        assert_eq!(
            refused(&who("ann"), "run_pipeline", &args, &s).await,
            -32602
        );
        assert_eq!(
            refused(&who("ann"), "run_by_tag", &json!({"tags": ["x"]}), &s).await,
            -32602
        );
        assert_eq!(
            refused(&who("ann"), "run_by_tag", &args, &format!("{s}-TAMPERED")).await,
            -32602
        );
        asker
            .retry(&who("ann"), "run_by_tag", &args, &s, None)
            .await
            .expect("first use");
        assert_eq!(
            refused(&who("ann"), "run_by_tag", &args, &s).await,
            -32602,
            "replay"
        );
    }

    #[tokio::test]
    async fn a_choice_outside_the_offer_is_not_taken_and_a_decline_is_kept() {
        let asker = Asker::new();
        let args = json!({});
        let s = state(&asker, &args);
        let retry = asker
            .retry(&who("ann"), "run_by_tag", &args, &s, Some(&accept("3")))
            .await
            .expect("opens");
        assert!(!retry.chosen.contains_key("project") && !retry.declined);
        let s = state(&asker, &args);
        let declined = BTreeMap::from([("project".into(), json!({"action": "decline"}))]);
        let retry = asker
            .retry(&who("ann"), "run_by_tag", &args, &s, Some(&declined))
            .await
            .expect("opens");
        assert!(retry.declined);
    }

    /// The store's part, in memory: a keyring the test rotates, and the
    /// spent nonces.
    #[derive(Default)]
    struct Shared {
        keys: Mutex<Keyring>,
        spent: Mutex<std::collections::HashSet<String>>,
        /// The store is down: spending fails so.
        down: std::sync::atomic::AtomicBool,
    }

    impl RequestStates for Shared {
        fn keys(&self) -> StatesFuture<'_, Keyring> {
            let keys = self.keys.lock().expect("keys").clone();
            Box::pin(async move { Ok(keys) })
        }
        fn spend<'a>(&'a self, nonce: &'a str, _: i64) -> StatesFuture<'a, bool> {
            if self.down.load(std::sync::atomic::Ordering::Relaxed) {
                let down = toolhost_types::StoreUnavailable {
                    operation: "spend a request state".into(),
                    message: "connection refused".into(),
                };
                return Box::pin(async move { Err(StatesError::Unavailable(down)) });
            }
            let first = self.spent.lock().expect("spent").insert(nonce.to_owned());
            Box::pin(async move { Ok(first) })
        }
    }

    #[tokio::test]
    async fn an_answer_while_the_store_is_down_is_told_to_come_again_and_still_counts_later() {
        let shared = Arc::new(Shared::default());
        *shared.keys.lock().expect("keys") = Keyring {
            active: "rs1".into(),
            keys: vec![("rs1".into(), vec![1; 32])],
        };
        let asker = Asker::shared(shared.clone()).await.expect("asker");
        let args = json!({"tags": ["smoke"]});
        let s = state(&asker, &args);
        shared
            .down
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let refused = asker
            .retry(&who("ann"), "run_by_tag", &args, &s, Some(&accept("1")))
            .await
            .expect_err("the store is down");
        assert_eq!(refused.code, crate::convert::STORE_UNAVAILABLE_RPC);
        let data = refused.data.expect("data");
        assert_eq!(data["code"], "STORE_UNAVAILABLE");
        assert_eq!(data["retryable"], json!(true));
        // Nothing was spent: the same answer is taken once the store is back.
        shared
            .down
            .store(false, std::sync::atomic::Ordering::Relaxed);
        let retry = asker
            .retry(&who("ann"), "run_by_tag", &args, &s, Some(&accept("1")))
            .await
            .expect("taken now");
        assert_eq!(retry.chosen.get("project"), Some(&1));
    }

    #[tokio::test]
    async fn a_question_asked_by_one_replica_is_answered_on_another_once_across_a_rotation() {
        let shared = Arc::new(Shared::default());
        *shared.keys.lock().expect("keys") = Keyring {
            active: "rs1".into(),
            keys: vec![("rs1".into(), vec![1; 32]), ("rs2".into(), vec![2; 32])],
        };
        let a = Asker::shared(shared.clone()).await.expect("a");
        let b = Asker::shared(shared.clone()).await.expect("b");
        let args = json!({"tags": ["smoke"]});
        let asked_by_a = state(&a, &args);
        // The next key becomes the active one; b reloads first.
        *shared.keys.lock().expect("keys") = Keyring {
            active: "rs2".into(),
            keys: vec![("rs1".into(), vec![1; 32]), ("rs2".into(), vec![2; 32])],
        };
        b.reload().await.expect("reload");
        let asked_by_b = state(&b, &args);
        for (s, on) in [(&asked_by_a, &b), (&asked_by_b, &a)] {
            let retry = on
                .retry(&who("ann"), "run_by_tag", &args, s, Some(&accept("1")))
                .await
                .expect("opens on the other replica");
            assert_eq!(retry.chosen.get("project"), Some(&1));
        }
        // Spent for both replicas.
        for (s, on) in [(&asked_by_a, &a), (&asked_by_b, &b)] {
            let again = on.retry(&who("ann"), "run_by_tag", &args, s, None).await;
            assert_eq!(again.expect_err("spent").code.0, -32602);
        }
        // A replica alone (its own key) opens neither.
        let alone = Asker::new();
        let refused = alone
            .retry(&who("ann"), "run_by_tag", &args, &asked_by_b, None)
            .await;
        assert!(refused.is_err());
    }

    #[test]
    fn the_channel_follows_the_era_and_the_declared_capability() {
        let modern = ProtocolVersion::V_2026_07_28;
        let legacy = ProtocolVersion::V_2025_11_25;
        let none = ClientCapabilities::default();
        let mut form = ClientCapabilities::default();
        form.elicitation = Some(ElicitationCapability::default());
        assert_eq!(channel(Some(&modern), Some(&none)), Channel::Result);
        assert_eq!(channel(Some(&modern), Some(&form)), Channel::InputRequired);
        assert_eq!(channel(Some(&legacy), Some(&form)), Channel::Elicitation);
        assert_eq!(channel(None, None), Channel::Result);
    }
}
