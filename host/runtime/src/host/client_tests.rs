use super::*;
use crate::bindings::toolhost::plugin::client::Host;

/// A live client answering from a script: method → answer.
struct Scripted(
    BTreeMap<&'static str, Result<Value, AskError>>,
    Mutex<Vec<Value>>,
);

impl AskClient for Scripted {
    fn ask(&self, request: Value) -> AskFuture<'_> {
        let method = request["method"].as_str().unwrap_or_default().to_owned();
        self.1.lock().expect("lock").push(request);
        let answer = self.0.get(method.as_str()).cloned();
        Box::pin(async move { answer.unwrap_or(Err(AskError::Failed("no script".into()))) })
    }
}

fn everything() -> ClientSupport {
    ClientSupport {
        elicitation: true,
        sampling: true,
        roots: true,
    }
}

fn capability(link: ClientLink) -> (ClientCapability, Acted) {
    let acted = Acted::default();
    let cap = ClientCapability::new(Some(link), HostCallMeter::new(100), false, acted.clone());
    (cap, acted)
}

fn name_form() -> wit::Request {
    wit::Request::Elicit(wit::Form {
        message: "Your name?".into(),
        requested_schema: r#"{"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer"}},"required":["name"]}"#.into(),
    })
}

fn req(key: &str, request: wit::Request) -> wit::InputRequest {
    wit::InputRequest {
        key: key.into(),
        request,
    }
}

fn sample(text: &str, max_tokens: u32) -> wit::Request {
    wit::Request::Sample(wit::SamplingRequest {
        messages: vec![wit::SamplingMessage {
            role: wit::Role::User,
            text: text.into(),
        }],
        system_prompt: None,
        max_tokens,
        temperature: None,
        model_hint: None,
    })
}

fn rounds(answers: &[(&str, Value)]) -> ClientLink {
    let answers = answers
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    ClientLink::new(everything(), ClientChannel::Rounds(answers))
}

fn refused(r: wasmtime::Result<Result<Vec<wit::Response>, wit::Error>>) -> String {
    match r {
        Ok(Err(wit::Error::Refused(why))) => why,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_stateless_call_stops_for_the_requests_without_a_fitting_answer() {
    let accept = json!({"action": "accept", "content": {"name": "Ada"}});
    let (mut cap, _) = capability(rounds(&[("name", accept)]));
    let got = cap
        .ask(vec![req("name", name_form())])
        .await
        .expect("no trap");
    let ok = |r: &[wit::Response]| matches!(r, [wit::Response::Elicited(wit::Elicitation::Accept(c))] if c == r#"{"name":"Ada"}"#);
    assert!(matches!(&got, Ok(r) if ok(r)), "{got:?}");
    // A wrong type, a missing required field, a field the form lacks: each
    // is no answer, so the request is asked again.
    for bad in [
        json!({"action": "accept", "content": {"name": 7}}),
        json!({"action": "accept", "content": {"n": 1}}),
        json!({"action": "accept", "content": {"name": "Ada", "x": 1}}),
        json!(12345),
    ] {
        let (mut cap, _) = capability(rounds(&[("name", bad.clone())]));
        let stop = cap
            .ask(vec![
                req("name", name_form()),
                req("roots", wit::Request::ListRoots),
            ])
            .await
            .expect_err("stops");
        assert_eq!(
            stop.downcast_ref::<ClientStop>(),
            Some(&ClientStop::InputRequired),
            "{bad}"
        );
        let keys: Vec<&String> = cap.pending.keys().collect();
        assert_eq!(keys, ["name", "roots"], "{bad}");
        assert_eq!(cap.pending["name"]["method"], "elicitation/create");
    }
}

#[tokio::test]
async fn a_live_client_is_asked_in_order_and_its_waits_are_not_the_calls() {
    let script = BTreeMap::from([
        ("elicitation/create", Ok(json!({"action": "decline"}))),
        (
            "roots/list",
            Ok(json!({"roots": [{"uri": "file:///w", "name": "w"}]})),
        ),
    ]);
    let client = Arc::new(Scripted(script, Mutex::default()));
    let link = ClientLink::new(everything(), ClientChannel::Live(client.clone()));
    let (mut cap, _) = capability(link.clone());
    let got = cap
        .ask(vec![
            req("a", name_form()),
            req("b", wit::Request::ListRoots),
        ])
        .await
        .expect("no trap")
        .expect("answered");
    assert!(matches!(
        got[0],
        wit::Response::Elicited(wit::Elicitation::Decline)
    ));
    assert!(matches!(&got[1], wit::Response::Roots(r) if r[0].uri == "file:///w"));
    let sent = client.1.lock().expect("lock");
    assert_eq!(sent[0]["params"]["message"], "Your name?");
    assert_eq!(sent[0]["params"]["requestedSchema"]["required"][0], "name");
    let outcomes: Vec<&str> = link.rounds().iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, ["declined", "answered"]);
}

#[tokio::test]
async fn asking_after_acting_or_past_the_rounds_or_malformed_is_refused() {
    let (mut cap, acted) = capability(rounds(&[]));
    acted.set();
    let why = refused(cap.ask(vec![req("a", name_form())]).await);
    assert!(why.contains("ask before acting"), "{why}");

    let (mut cap, _) = capability(rounds(&[("a", json!({"action": "cancel"}))]));
    for _ in 0..MAX_CLIENT_ROUNDS {
        assert!(matches!(
            cap.ask(vec![req("a", name_form())]).await,
            Ok(Ok(_))
        ));
    }
    let why = refused(cap.ask(vec![req("a", name_form())]).await);
    assert!(why.contains("at most 8 rounds"), "{why}");

    let nested = wit::Request::Elicit(wit::Form {
        message: "m".into(),
        requested_schema: r#"{"type":"object","properties":{"o":{"type":"object"}}}"#.into(),
    });
    for (requests, want) in [
        (vec![req("a b", name_form())], "is not 1-64"),
        (
            vec![req("a", name_form()), req("a", name_form())],
            "used twice",
        ),
        (vec![req("a", nested)], "is not a string"),
        (Vec::new(), "1 to 8 requests"),
    ] {
        let (mut cap, _) = capability(rounds(&[]));
        let why = refused(cap.ask(requests).await);
        assert!(why.contains(want), "{why} should say {want}");
    }
}

#[tokio::test]
async fn sampling_needs_the_manifests_grant_stays_in_budget_and_carries_no_secret() {
    let (mut cap, _) = capability(rounds(&[]));
    let why = refused(cap.ask(vec![req("s", sample("hi", 10))]).await);
    assert!(why.contains("does not grant sampling"), "{why}");

    let answer =
        json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"});
    let mut link = rounds(&[("s", answer)]);
    link.sampling = Some(SamplingGrant {
        messages: 2,
        tokens: 100,
    });
    let (mut cap, _) = capability(link.clone());
    let got = cap
        .ask(vec![req("s", sample("capital?", 60))])
        .await
        .expect("no trap");
    assert!(
        matches!(&got, Ok(r) if matches!(&r[0], wit::Response::Sampled(s) if s.text == "Paris"))
    );
    let why = refused(cap.ask(vec![req("s", sample("again", 60))]).await);
    assert!(why.contains("sampling budget"), "{why}");

    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXNpZ25hdHVyZQ";
    let (mut cap, _) = capability(link);
    let why = refused(
        cap.ask(vec![req("s", sample(&format!("token {jwt}"), 10))])
            .await,
    );
    assert!(why.contains("carries a secret (jwt)"), "{why}");
}

#[tokio::test]
async fn what_the_client_lacks_is_unsupported_live_and_missing_capability_stateless() {
    let lacking = ClientSupport {
        elicitation: false,
        sampling: false,
        roots: true,
    };
    let mut link = ClientLink::new(lacking, ClientChannel::Rounds(BTreeMap::new()));
    link.sampling = Some(SamplingGrant {
        messages: 1,
        tokens: 10,
    });
    let (mut cap, _) = capability(link.clone());
    let can = Host::supports(&mut cap).expect("answers");
    assert!(!can.elicitation && !can.sampling && can.roots);
    let stop = cap
        .ask(vec![req("s", sample("hi", 5))])
        .await
        .expect_err("stops");
    assert_eq!(
        stop.downcast_ref::<ClientStop>(),
        Some(&ClientStop::MissingCapability("sampling"))
    );
    assert!(matches!(
        cap.ask(vec![req("e", name_form())]).await,
        Ok(Err(wit::Error::Unsupported(_)))
    ));
    // A plan (quiet) or a call without a link can ask nothing.
    let mut quiet =
        ClientCapability::new(Some(link), HostCallMeter::new(9), true, Acted::default());
    assert!(matches!(
        quiet.ask(vec![req("r", wit::Request::ListRoots)]).await,
        Ok(Err(wit::Error::Unsupported(_)))
    ));
    let mut none = ClientCapability::new(None, HostCallMeter::new(9), false, Acted::default());
    assert!(!Host::supports(&mut none).expect("answers").roots);
}

#[test]
fn select_fields_accept_only_their_options() {
    let schema = checked_form(
        r#"{"type":"object","properties":{
            "one":{"type":"string","oneOf":[{"const":"a","title":"A"}]},
            "many":{"type":"array","items":{"anyOf":[{"const":"x"},{"const":"y"}]}}}}"#,
    )
    .expect("a valid form");
    let ok = json!({"action": "accept", "content": {"one": "a", "many": ["x", "y"]}});
    assert!(elicited(&schema, &ok).is_ok());
    for bad in [
        json!({"action": "accept", "content": {"one": "b"}}),
        json!({"action": "accept", "content": {"many": ["z"]}}),
        json!({"action": "accept", "content": {"many": "x"}}),
    ] {
        assert!(elicited(&schema, &bad).is_err(), "{bad}");
    }
    assert!(
        checked_form(r#"{"type":"object","properties":{"e":{"type":"string","enum":[1]}}}"#)
            .is_err()
    );
}
