//! The call path end to end in-process: one audit event per call whatever
//! the outcome, cancellation reaching the sandbox, and no answer without
//! its audit row.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolhost_audit::{AuditError, AuditEvent, AuditSink, Effect, Outcome, SinkFuture};
use toolhost_catalog::{Catalog, LoadOptions};
use toolhost_invoke::{CallRequest, InvokeError, Toolhost};
use toolhost_policy::{FixedGrants, Grants};
use toolhost_runtime::{Runtime, RuntimeConfig};
use toolhost_types::{Principal, PrincipalKind};

mod common;
use common::alice;

/// An audit sink that keeps events in memory, or refuses them all.
#[derive(Default)]
struct Recorded {
    events: Mutex<Vec<AuditEvent>>,
    refuse: Option<fn() -> AuditError>,
}

impl AuditSink for Recorded {
    fn record_with<'a>(&'a self, event: &'a AuditEvent, _: &'a [Effect]) -> SinkFuture<'a> {
        Box::pin(async move {
            if let Some(refusal) = self.refuse {
                return Err(refusal());
            }
            self.events
                .lock()
                .expect("not poisoned")
                .push(event.clone());
            Ok(())
        })
    }
}

async fn host(audit: Arc<Recorded>, spin_timeout: &str) -> Toolhost {
    host_with(audit, spin_timeout, Arc::new(FixedGrants(alices_grants()))).await
}

/// Alice's roles allow what hello and spin need, nothing else.
fn alices_grants() -> Grants {
    Grants::new(
        false,
        [
            "hello:read".parse().expect("valid"),
            "fixture:run".parse().expect("valid"),
        ],
    )
}

/// [`host`] deciding by `policy`.
async fn host_with(
    audit: Arc<Recorded>,
    spin_timeout: &str,
    policy: Arc<dyn toolhost_policy::PolicyStore>,
) -> Toolhost {
    let dir = tempfile::tempdir().expect("temp dir");
    for f in [toolhost_fixtures::HELLO, toolhost_fixtures::T_LIMITS_SPIN] {
        toolhost_catalog::pin(Path::new(f.manifest), Path::new(f.component), dir.path())
            .expect("pins");
    }
    let spin = dir.path().join("t-limits-spin.toml");
    let text = std::fs::read_to_string(&spin)
        .expect("read")
        .replace("\"200ms\"", &format!("\"{spin_timeout}\""));
    std::fs::write(&spin, text).expect("write");
    let runtime = Arc::new(Runtime::new(RuntimeConfig::default()).expect("runtime"));
    let loaded = Catalog::load_dir(dir.path(), &runtime, &LoadOptions::default()).await;
    assert!(
        loaded.errors.is_empty(),
        "{:?}",
        loaded
            .errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    );
    Toolhost::new(Arc::new(loaded.catalog), policy, runtime, audit)
}

fn req(tool: &str, arguments: serde_json::Value) -> CallRequest {
    CallRequest::new(tool, arguments)
}

#[tokio::test]
async fn an_executed_call_is_answered_and_audited_once_with_its_digests() {
    let audit = Arc::new(Recorded::default());
    let host = host(audit.clone(), "200ms").await;
    let out = host
        .call(
            &alice(),
            req("greet", json!({"name": "Ada"})),
            &CancellationToken::new(),
        )
        .await
        .expect("greets")
        .output()
        .expect("an answer");
    assert_eq!(out.structured, json!({"message": "Hello, Ada!"}));
    let events = audit.events.lock().expect("lock");
    let [e] = events.as_slice() else {
        panic!("one event, got {events:?}")
    };
    assert_eq!(
        (e.outcome, e.tool.as_str(), e.plugin.as_deref()),
        (Outcome::Executed, "greet", Some("hello"))
    );
    assert_eq!((e.principal.as_str(), e.tenant.as_str()), ("alice", "acme"));
    assert_eq!(
        e.argument_digest,
        toolhost_audit::argument_digest(&json!({"name": "Ada"}))
    );
    assert!(e.plugin_digest.is_some() && e.error_code.is_none());
}

#[tokio::test]
async fn an_unknown_tool_is_typed_and_audited_without_running_anything() {
    let audit = Arc::new(Recorded::default());
    let host = host(audit.clone(), "200ms").await;
    let err = host
        .call(&alice(), req("nope", json!({})), &CancellationToken::new())
        .await
        .expect_err("unknown");
    assert_eq!(err.code(), "TOOL_NOT_FOUND");
    let events = audit.events.lock().expect("lock");
    assert_eq!(events.len(), 1);
    assert_eq!(
        (events[0].outcome, events[0].error_code.as_deref()),
        (Outcome::Error, Some("TOOL_NOT_FOUND"))
    );
    assert!(events[0].plugin.is_none());
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_refused_before_the_sandbox() {
    let audit = Arc::new(Recorded::default());
    let host = host(audit.clone(), "200ms").await;
    let err = host
        .call(
            &alice(),
            req("greet", json!([1, 2])),
            &CancellationToken::new(),
        )
        .await
        .expect_err("refused");
    assert!(matches!(err, InvokeError::ArgumentsNotAnObject), "{err}");
    assert_eq!(
        audit.events.lock().expect("lock")[0].error_code.as_deref(),
        Some("INVALID_ARGUMENTS")
    );
}

#[tokio::test]
async fn cancelling_a_call_interrupts_the_guest_and_the_call_is_still_audited() {
    let audit = Arc::new(Recorded::default());
    let host = host(audit.clone(), "60s").await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let err = host
        .call(&alice(), req("spin", json!({})), &cancel)
        .await
        .expect_err("cancelled");
    assert_eq!(err.code(), "CANCELLED");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the 60 s spin was cut short: {:?}",
        started.elapsed()
    );
    assert_eq!(
        audit.events.lock().expect("lock")[0].error_code.as_deref(),
        Some("CANCELLED")
    );
    // The host keeps serving.
    let out = host
        .call(&alice(), req("ping", json!({})), &CancellationToken::new())
        .await
        .expect("pong")
        .output()
        .expect("an answer");
    assert_eq!(out.structured, json!({"pong": true}));
}

/// The call `greet` against a host whose audit sink refuses every row so.
async fn refused_greeting(refusal: fn() -> AuditError) -> InvokeError {
    let audit = Arc::new(Recorded {
        refuse: Some(refusal),
        ..Recorded::default()
    });
    let host = host(audit, "200ms").await;
    host.call(
        &alice(),
        req("greet", json!({"name": "Ada"})),
        &CancellationToken::new(),
    )
    .await
    .expect_err("withheld")
}

#[tokio::test]
async fn no_answer_leaves_the_host_without_its_audit_row() {
    let err = refused_greeting(|| AuditError::Failed("a constraint".into())).await;
    assert!(matches!(err, InvokeError::Audit(_)), "{err}");
    assert_eq!(err.code(), "INTERNAL");
    assert!(err.is_internal());
}

#[tokio::test]
async fn an_unreachable_store_withholds_the_answer_with_a_retryable_code() {
    let err = refused_greeting(|| {
        AuditError::Unavailable(toolhost_types::StoreUnavailable {
            operation: "append audit rows".into(),
            message: "connection refused".into(),
        })
    })
    .await;
    assert!(matches!(err, InvokeError::Audit(_)), "{err}");
    assert_eq!(err.code(), "STORE_UNAVAILABLE");
    assert!(!err.is_internal(), "the caller is told, not given -32603");
    let details = err.details().expect("details");
    assert_eq!(details["retryable"], json!(true), "{details}");
    assert!(details["retry_after_ms"].as_u64().is_some(), "{details}");
}

#[tokio::test]
async fn drain_waits_for_calls_in_flight() {
    let audit = Arc::new(Recorded::default());
    let host = Arc::new(host(audit.clone(), "1s").await);
    let running = {
        let host = host.clone();
        tokio::spawn(async move {
            host.call(&alice(), req("spin", json!({})), &CancellationToken::new())
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    host.drain().await;
    assert_eq!(
        audit.events.lock().expect("lock").len(),
        1,
        "drain returned after the call was audited"
    );
    assert_eq!(
        running
            .await
            .expect("joined")
            .expect_err("timed out")
            .code(),
        "TIMEOUT"
    );
}

#[tokio::test]
async fn a_call_without_the_permission_is_denied_audited_and_runs_no_plugin_code() {
    let audit = Arc::new(Recorded::default());
    let host = host(audit.clone(), "200ms").await;
    let bob = Principal {
        subject: "bob".into(),
        kind: PrincipalKind::Service,
        scopes: vec!["mcp".into(), "hello:read".into()],
        ..alice()
    };
    // bob's scopes allow hello, not the fixtures: `spin` is neither listed
    // nor callable, and the refused call never reaches the sandbox.
    let listed: Vec<String> = host
        .list(&bob)
        .await
        .expect("lists")
        .tools
        .iter()
        .map(|t| t.spec().name.to_string())
        .collect();
    assert!(
        listed.contains(&"greet".to_string()) && !listed.contains(&"spin".to_string()),
        "{listed:?}"
    );
    let err = host
        .call(&bob, req("spin", json!({})), &CancellationToken::new())
        .await
        .expect_err("denied");
    assert!(
        matches!(err, InvokeError::PermissionDenied { .. }),
        "{err:?}"
    );
    assert_eq!(err.code(), "PERMISSION_DENIED");
    let events = audit.events.lock().expect("not poisoned");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].outcome, Outcome::Denied);
    assert_eq!(events[0].error_code.as_deref(), Some("PERMISSION_DENIED"));
    assert_eq!(events[0].principal, "bob");
}

/// A host tool answering the caller's tenant, changing nothing or
/// (`mutating`) claiming to.
struct Listing(toolhost_runtime::ToolSpec);

impl Listing {
    fn new(name: &str, mutating: bool, permission: &str) -> Self {
        Self(toolhost_runtime::ToolSpec {
            name: name.parse().expect("a tool name"),
            title: None,
            description: "Lists the caller's things.".into(),
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: toolhost_runtime::Annotations::default(),
            permission: permission.parse().expect("a permission"),
            risk: toolhost_types::Risk::Low,
            mutating,
        })
    }
}

impl toolhost_invoke::HostTool for Listing {
    fn spec(&self) -> &toolhost_runtime::ToolSpec {
        &self.0
    }
    fn call<'a>(&'a self, c: toolhost_invoke::HostCall<'a>) -> toolhost_invoke::HostToolFuture<'a> {
        let out = toolhost_runtime::ToolOutput {
            structured: json!({"tenant": c.who.tenant}),
            text: None,
            content: Vec::new(),
        };
        Box::pin(async move { Ok((out, Vec::new())) })
    }
}

#[tokio::test]
async fn a_read_is_decided_as_a_call_is_and_writes_no_audit_row() {
    let audit = Arc::new(Recorded::default());
    let host = host(audit.clone(), "200ms")
        .await
        .with_host_tool(Arc::new(Listing::new("list_things", false, "hello:read")))
        .and_then(|h| h.with_host_tool(Arc::new(Listing::new("change_things", true, "hello:read"))))
        .and_then(|h| {
            h.with_host_tool(Arc::new(Listing::new(
                "list_secrets",
                false,
                "secrets:read",
            )))
        })
        .expect("host tools added");
    let rows = || audit.events.lock().expect("not poisoned").len();
    let out = host
        .read(&alice(), "list_things", &json!({}))
        .await
        .expect("read");
    assert_eq!(out.structured, json!({"tenant": "acme"}));
    // Refused as the same call would be.
    let denied = host.read(&alice(), "list_secrets", &json!({})).await;
    assert!(
        matches!(denied, Err(InvokeError::PermissionDenied { .. })),
        "{denied:?}"
    );
    let unknown = host.read(&alice(), "list_nothing", &json!({})).await;
    assert!(
        matches!(unknown, Err(InvokeError::ToolNotFound { .. })),
        "{unknown:?}"
    );
    // A tool that changes something, or a plugin's, is no read.
    for tool in ["change_things", "greet"] {
        let refused = host.read(&alice(), tool, &json!({"name": "Ada"})).await;
        assert!(
            matches!(refused, Err(InvokeError::NotARead { .. })),
            "{tool}: {refused:?}"
        );
    }
    assert_eq!(rows(), 0, "no read wrote a row");
    // The same tool called: a call, with its row.
    host.call(
        &alice(),
        req("list_things", json!({})),
        &CancellationToken::new(),
    )
    .await
    .expect("called");
    assert_eq!(rows(), 1);
}

#[tokio::test]
async fn a_calls_row_names_the_definition_digest_its_listing_named() {
    let audit = Arc::new(Recorded::default());
    let host = host(audit.clone(), "200ms")
        .await
        .with_host_tool(Arc::new(Listing::new("list_things", false, "hello:read")))
        .expect("a host tool added");
    let listed = host.list(&alice()).await.expect("lists");
    assert_eq!(listed.catalog_version, "1.0.0");
    let listed_digest = |name: &str| {
        let t = listed.tools.iter().find(|t| t.spec().name.as_str() == name);
        t.map(|t| t.definition_digest()).expect("listed")
    };
    let greet = host
        .catalog(&alice().tenant)
        .lookup("greet")
        .expect("served")
        .clone();
    assert_eq!(listed_digest("greet"), *greet.definition_digest());
    assert_eq!(
        listed_digest("list_things"),
        toolhost_catalog::definition_digest(
            host.tool(&alice().tenant, "list_things")
                .expect("served")
                .spec(),
            None,
            None
        ),
        "a host tool's: its spec's"
    );
    let cancel = CancellationToken::new();
    for (tool, args) in [
        ("greet", json!({"name": "Ada"})),
        ("list_things", json!({})),
        ("nope", json!({})),
    ] {
        let _ = host.call(&alice(), req(tool, args), &cancel).await;
    }
    let events = audit.events.lock().expect("not poisoned");
    let named: Vec<_> = events.iter().map(|e| e.definition_digest).collect();
    assert_eq!(
        named,
        [
            Some(listed_digest("greet")),
            Some(listed_digest("list_things")),
            None
        ],
        "the row of an unknown tool names none"
    );
}

/// A catalog served to tenant `acme` alone: another tenant lists none of
/// its tools (nor prompts or resources: e2e_catalog reads hello-py's), and a call of one is answered and
/// audited exactly as a call of a name nobody serves.
#[tokio::test]
async fn a_catalog_served_to_one_tenant_is_an_unknown_name_to_another() {
    let audit = Arc::new(Recorded::default());
    let host = host(audit.clone(), "200ms").await;
    let acme = host.catalog(&alice().tenant);
    let nothing = Arc::new(Catalog::at(acme.version(), acme.generation()));
    let tenants = std::collections::BTreeMap::from([("acme".to_owned(), acme.clone())]);
    host.serve_catalogs(toolhost_catalog::Catalogs::new(nothing, tenants));
    let demo = Principal {
        tenant: "demo".into(),
        ..alice()
    };
    let listed = |who: &Principal| {
        let host = &host;
        let who = who.clone();
        async move {
            let l = host.list(&who).await.expect("lists");
            let names: Vec<String> = l.tools.iter().map(|t| t.spec().name.to_string()).collect();
            let prompts = host.prompts(&who).await.expect("prompts").len();
            let resources = host.resources(&who).await.expect("resources").len()
                + host
                    .resource_templates(&who)
                    .await
                    .expect("templates")
                    .len();
            (names, prompts + resources)
        }
    };
    let (acme_tools, _) = listed(&alice()).await;
    assert!(acme_tools.iter().any(|t| t == "greet"), "{acme_tools:?}");
    assert_eq!(listed(&demo).await, (Vec::new(), 0));
    assert!(host.tool("demo", "greet").is_none());
    assert!(host.tool("acme", "greet").is_some());

    let cancel = CancellationToken::new();
    let hidden = host
        .call(&demo, req("greet", json!({"name": "Ada"})), &cancel)
        .await
        .expect_err("not served to demo");
    let unknown = host
        .call(&demo, req("no_such_tool", json!({"name": "Ada"})), &cancel)
        .await
        .expect_err("served to nobody");
    assert_eq!(hidden.code(), unknown.code());
    assert_eq!(hidden.code(), "TOOL_NOT_FOUND");
    host.call(&alice(), req("greet", json!({"name": "Ada"})), &cancel)
        .await
        .expect("served to acme");
    let events = audit.events.lock().expect("lock");
    let rows: Vec<_> = (events.iter())
        .map(|e| {
            (
                e.tenant.as_str(),
                e.plugin.as_deref(),
                e.error_code.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("demo", None, Some("TOOL_NOT_FOUND")),
            ("demo", None, Some("TOOL_NOT_FOUND")),
            ("acme", Some("hello"), None),
        ]
    );
}

/// The policy of `host`'s test, with toolsets: every principal holds the
/// same grants, and the tenant defines `toolsets`.
struct WithToolsets {
    grants: FixedGrants,
    toolsets: Vec<toolhost_policy::Toolset>,
}

impl toolhost_policy::PolicyStore for WithToolsets {
    fn grants<'a>(&'a self, t: &'a str, s: &'a str) -> toolhost_policy::PolicyFuture<'a, Grants> {
        self.grants.grants(t, s)
    }
    fn toolsets<'a>(
        &'a self,
        _: &'a str,
        names: &'a [String],
    ) -> toolhost_policy::PolicyFuture<'a, Vec<toolhost_policy::Toolset>> {
        let found = (self.toolsets.iter())
            .filter(|t| names.contains(&t.name))
            .cloned()
            .collect();
        Box::pin(async move { Ok(found) })
    }
    fn all_toolsets<'a>(
        &'a self,
        _: &'a str,
    ) -> toolhost_policy::PolicyFuture<'a, Vec<toolhost_policy::Toolset>> {
        Box::pin(async move { Ok(self.toolsets.clone()) })
    }
    fn define_toolset<'a>(
        &'a self,
        t: &'a str,
        d: &'a toolhost_policy::Toolset,
    ) -> toolhost_policy::PolicyFuture<'a, bool> {
        self.grants.define_toolset(t, d)
    }
    fn delete_toolset<'a>(
        &'a self,
        t: &'a str,
        n: &'a str,
    ) -> toolhost_policy::PolicyFuture<'a, bool> {
        self.grants.delete_toolset(t, n)
    }
    fn create_role<'a>(
        &'a self,
        t: &'a str,
        n: &'a str,
        a: bool,
    ) -> toolhost_policy::PolicyFuture<'a, ()> {
        self.grants.create_role(t, n, a)
    }
    fn delete_role<'a>(
        &'a self,
        t: &'a str,
        n: &'a str,
    ) -> toolhost_policy::PolicyFuture<'a, bool> {
        self.grants.delete_role(t, n)
    }
    fn permit<'a>(
        &'a self,
        t: &'a str,
        r: &'a str,
        p: &'a toolhost_types::Permission,
    ) -> toolhost_policy::PolicyFuture<'a, bool> {
        self.grants.permit(t, r, p)
    }
    fn forbid<'a>(
        &'a self,
        t: &'a str,
        r: &'a str,
        p: &'a toolhost_types::Permission,
    ) -> toolhost_policy::PolicyFuture<'a, bool> {
        self.grants.forbid(t, r, p)
    }
    fn assign<'a>(
        &'a self,
        t: &'a str,
        r: &'a str,
        s: &'a str,
    ) -> toolhost_policy::PolicyFuture<'a, bool> {
        self.grants.assign(t, r, s)
    }
    fn unassign<'a>(
        &'a self,
        t: &'a str,
        r: &'a str,
        s: &'a str,
    ) -> toolhost_policy::PolicyFuture<'a, bool> {
        self.grants.unassign(t, r, s)
    }
    fn roles<'a>(
        &'a self,
        t: &'a str,
    ) -> toolhost_policy::PolicyFuture<'a, Vec<toolhost_policy::Role>> {
        self.grants.roles(t)
    }
}

/// A principal bound to a toolset lists and calls only its tools; one
/// outside it, or every tool when the toolset is not defined, is not
/// found, in the words a name nobody serves gets, and audited as such.
#[tokio::test]
async fn a_principal_bound_to_a_toolset_reaches_only_its_tools() {
    let audit = Arc::new(Recorded::default());
    let greeting = toolhost_policy::Toolset {
        name: "greeting".into(),
        tools: ["greet".to_owned()].into(),
        ..Default::default()
    };
    let policy = WithToolsets {
        grants: FixedGrants(alices_grants()),
        toolsets: vec![greeting],
    };
    let host = host_with(audit.clone(), "200ms", Arc::new(policy)).await;
    let bound = |toolset: &str| Principal {
        scopes: vec!["mcp".into(), format!("toolset:{toolset}")],
        ..alice()
    };
    let names = |who: Principal| {
        let host = &host;
        async move {
            let listed = host.list(&who).await.expect("lists").tools;
            listed
                .iter()
                .map(|t| t.spec().name.to_string())
                .collect::<Vec<_>>()
        }
    };
    assert!(names(alice()).await.contains(&"spin".to_owned()));
    assert_eq!(names(bound("greeting")).await, ["greet"]);
    assert_eq!(names(bound("gone")).await, Vec::<String>::new());

    let cancel = CancellationToken::new();
    let outside = host
        .call(&bound("greeting"), req("ping", json!({})), &cancel)
        .await
        .expect_err("outside the toolset");
    let unknown = host
        .call(&bound("greeting"), req("nope", json!({})), &cancel)
        .await
        .expect_err("nowhere");
    assert_eq!(outside.code(), "TOOL_NOT_FOUND");
    assert_eq!(
        outside.to_string().replace("ping", "X"),
        unknown.to_string().replace("nope", "X")
    );
    host.call(
        &bound("greeting"),
        req("greet", json!({"name": "Ada"})),
        &cancel,
    )
    .await
    .expect("inside the toolset");
    let gone = host
        .call(
            &bound("gone"),
            req("greet", json!({"name": "Ada"})),
            &cancel,
        )
        .await
        .expect_err("a toolset not defined holds nothing");
    assert_eq!(gone.code(), "TOOL_NOT_FOUND");
    let events = audit.events.lock().expect("lock");
    let codes: Vec<_> = events.iter().map(|e| e.error_code.as_deref()).collect();
    assert_eq!(
        codes,
        [
            Some("TOOL_NOT_FOUND"),
            Some("TOOL_NOT_FOUND"),
            None,
            Some("TOOL_NOT_FOUND")
        ]
    );
}
