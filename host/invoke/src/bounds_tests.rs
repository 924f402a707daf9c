//! The bounds through [`Toolhost::call`], on real plugins: `hello` for
//! ordinary calls, `t-limits-spin` for a tool that never answers, so a
//! refusal that is not a `TIMEOUT` proves no plugin code ran.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost_audit::{AuditEvent, AuditSink, Effect, Outcome, SinkFuture};
use toolhost_catalog::{Catalog, LoadOptions};
use toolhost_limits::{ByteSize, MAX_ARGUMENT_BYTES, MAX_ARRAY_LEN, MAX_JSON_DEPTH};
use toolhost_limits::{MAX_OBJECT_LEN, MAX_STRING_BYTES, RequestLimits};
use toolhost_policy::{FixedGrants, Grants};
use toolhost_runtime::{CallError, Runtime, RuntimeConfig};

use crate::{Answer, CallRequest, InvokeError, Toolhost};

#[path = "../tests/common/mod.rs"]
mod common;
use common::alice;

/// Small bounds the cases below sit exactly on.
const TIGHT: RequestLimits = RequestLimits {
    max_depth: 2,
    max_array_len: 3,
    max_object_len: 2,
    max_string_bytes: ByteSize::b(8),
    max_argument_bytes: ByteSize::b(32),
};

#[derive(Default)]
struct Recorded(Mutex<Vec<AuditEvent>>);

impl AuditSink for Recorded {
    fn record_with<'a>(&'a self, event: &'a AuditEvent, _: &'a [Effect]) -> SinkFuture<'a> {
        self.0.lock().expect("not poisoned").push(event.clone());
        Box::pin(async { Ok(()) })
    }
}

impl Recorded {
    fn last(&self) -> AuditEvent {
        let events = self.0.lock().expect("not poisoned");
        events.last().cloned().expect("an audit event")
    }
}

async fn host(audit: Arc<Recorded>) -> Toolhost {
    let dir = tempfile::tempdir().expect("temp dir");
    for f in [toolhost_fixtures::HELLO, toolhost_fixtures::T_LIMITS_SPIN] {
        toolhost_catalog::pin(Path::new(f.manifest), Path::new(f.component), dir.path())
            .expect("pins");
    }
    let runtime = Arc::new(Runtime::new(RuntimeConfig::default()).expect("runtime"));
    let loaded = Catalog::load_dir(dir.path(), &runtime, &LoadOptions::default()).await;
    assert!(loaded.errors.is_empty(), "plugins load");
    let grants = Grants::new(
        false,
        ["hello:read", "fixture:run"].map(|p| p.parse().expect("a permission")),
    );
    Toolhost::new(
        Arc::new(loaded.catalog),
        Arc::new(FixedGrants(grants)),
        runtime,
        audit,
    )
    .with_request_limits(TIGHT)
}

async fn call(host: &Toolhost, tool: &str, args: Value) -> Result<Answer, InvokeError> {
    let req = CallRequest::new(tool, args);
    host.call(&alice(), req, &CancellationToken::new()).await
}

#[tokio::test]
async fn each_limit_admits_its_bound_and_refuses_one_more_auditing_the_refusal() {
    let audit = Arc::new(Recorded::default());
    let host = host(audit.clone()).await;
    // (tool, at the bound, one over, the limit, its path)
    let cases = [
        (
            "add",
            json!({"numbers": [1, 2]}),
            json!({"numbers": [[1]]}),
            MAX_JSON_DEPTH,
            "$.numbers[0]",
        ),
        (
            "add",
            json!({"numbers": [1, 2, 3]}),
            json!({"numbers": [1, 2, 3, 4]}),
            MAX_ARRAY_LEN,
            "$.numbers",
        ),
        (
            "greet",
            json!({"name": "Ada", "language": "fr"}),
            json!({"name": "Ada", "language": "fr", "x": 1}),
            MAX_OBJECT_LEN,
            "$",
        ),
        (
            "greet",
            json!({"name": "éééé"}),
            json!({"name": "éééé!"}),
            MAX_STRING_BYTES,
            "$.name",
        ),
        (
            "add",
            json!({"numbers": [100000, 200000, 3000]}),
            json!({"numbers": [100000, 200000, 30000]}),
            MAX_ARGUMENT_BYTES,
            "$",
        ),
    ];
    let size = serde_json::to_string(&cases[4].1).expect("JSON").len();
    assert_eq!(size, 32, "the size case sits on its bound");
    for (tool, under, over, limit, path) in cases {
        let answer = call(&host, tool, under.clone()).await;
        assert!(
            matches!(answer, Ok(Answer::Output(_))),
            "{limit}: {under} → {answer:?}"
        );
        assert_eq!(audit.last().outcome, Outcome::Executed);

        match call(&host, tool, over.clone()).await {
            Err(InvokeError::LimitExceeded {
                limit: l, path: p, ..
            }) => {
                assert_eq!((l, p.as_str()), (limit, path), "{over}");
            }
            other => panic!("{limit}: {over} → {other:?}"),
        }
        let e = audit.last();
        assert_eq!(
            (e.outcome, e.error_code.as_deref()),
            (Outcome::LimitRejected, Some("LIMIT_EXCEEDED"))
        );
    }
}

#[tokio::test]
async fn a_refusal_runs_no_plugin_code() {
    let host = host(Arc::new(Recorded::default())).await;
    // `spin` never answers: had it run, the call would end in TIMEOUT.
    let started = Instant::now();
    let err = call(&host, "spin", json!({"x": [[1]]}))
        .await
        .expect_err("too deep");
    assert_eq!(err.code(), "LIMIT_EXCEEDED");
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "refused at once"
    );
    let err = call(&host, "spin", json!({})).await.expect_err("spins");
    assert_eq!(err.code(), "TIMEOUT", "the fixture spins when it runs");
}

#[tokio::test]
async fn arguments_off_the_schema_are_refused_by_the_host_with_the_validators_error() {
    let audit = Arc::new(Recorded::default());
    let host = host(audit.clone()).await;
    // (tool, arguments, what the validator says). The plugin would answer
    // `top` = 101 itself ("top is 101, at most 100"): the schema says so first.
    let cases = [
        (
            "greet",
            json!({"name": 42}),
            "$.name: want string, but got number",
        ),
        (
            "greet",
            json!({"nom": "Ada"}),
            "$: missing properties 'name'",
        ),
        ("greet", Value::Null, "$: missing properties 'name'"),
        (
            "add",
            json!({"numbers": [1, "2"]}),
            "$.numbers[1]: want number, but got string",
        ),
        (
            "add",
            json!({"numbers": [1, 2], "top": 101}),
            "$: additionalProperties 'top' not allowed",
        ),
    ];
    for (tool, args, says) in cases {
        match call(&host, tool, args.clone()).await {
            Err(InvokeError::InvalidArguments { detail }) => assert_eq!(detail, says, "{args}"),
            other => panic!("{tool} {args} → {other:?}"),
        }
        let e = audit.last();
        assert_eq!(
            (e.outcome, e.error_code.as_deref()),
            (Outcome::Error, Some("INVALID_ARGUMENTS"))
        );
    }
    match call(&host, "word_stats", json!({"text": "a", "top": 101})).await {
        Err(InvokeError::InvalidArguments { detail }) => {
            assert!(detail.starts_with("$.top: "), "{detail}")
        }
        other => panic!("word_stats top 101 → {other:?}"),
    }
    // What the schema admits still reaches the plugin's own checks.
    let plugin = call(&host, "greet", json!({"name": " "})).await;
    assert!(
        matches!(
            plugin,
            Err(InvokeError::Call(CallError::InvalidArguments(_)))
        ),
        "{plugin:?}"
    );
}

#[tokio::test]
async fn host_tools_are_bounded_by_the_limits_only() {
    use crate::tool::host_spec;
    use crate::{HostCall, HostTool, HostToolFuture};

    struct Echo(toolhost_runtime::ToolSpec);
    impl HostTool for Echo {
        fn spec(&self) -> &toolhost_runtime::ToolSpec {
            &self.0
        }
        fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
            let out = toolhost_runtime::ToolOutput {
                structured: c.args.clone(),
                text: None,
                content: Vec::new(),
            };
            Box::pin(async move { Ok((out, Vec::new())) })
        }
    }
    let schema = json!({"type": "object", "properties": {"n": {"type": "string"}}});
    let echo = host_spec("echo", "Echo", "Echoes.", schema, "hello:read", false);
    let host = host(Arc::new(Recorded::default()))
        .await
        .with_host_tool(Arc::new(Echo(echo)))
        .expect("a new name");
    let own = call(&host, "echo", json!({"n": 1})).await;
    assert!(
        matches!(own, Ok(Answer::Output(_))),
        "its own checks: {own:?}"
    );
    let over = call(&host, "echo", json!({"n": [1, 2, 3, 4]})).await;
    assert_eq!(over.expect_err("too long").code(), "LIMIT_EXCEEDED");
}

#[test]
fn a_schema_resolves_references_within_itself_and_loads_nothing_else() {
    use crate::bounds::InputSchema;
    use crate::tool::host_spec;

    let spec = |schema: Value| host_spec("t", "T", "A test.", schema, "hello:read", false);
    let local = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"type": "string"}}});
    let schema = InputSchema::compile(&spec(local)).expect("compiles");
    assert_eq!(
        schema.validate(&json!({"a": 1})),
        Err("$.a: want string, but got number".to_owned())
    );
    for outside in ["file:///etc/hostname", "https://example.com/a.json"] {
        let s = json!({"type": "object", "properties": {"a": {"$ref": outside}}});
        let err = InputSchema::compile(&spec(s)).err().expect("not loaded");
        assert!(err.contains(outside), "{err}");
    }
}
