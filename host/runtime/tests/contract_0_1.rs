//! A component built against the previous plugin contract,
//! `toolhost:plugin@0.1.0`, keeps loading and answering unchanged.
//!
//! The fixture `fixtures/testbench-0.1.0.wasm` is the `testbench` plugin as
//! the 0.1.0 SDK built it, kept as a built artifact (never rebuilt). Every
//! scenario below runs on it and on today's `testbench` (built against the
//! current contract) against a fresh testbench backend each, and the two
//! must answer the same: tools, entity kinds and snapshots, a resolved
//! call reaching the backend, a question asked instead, a plan, a writing
//! call reporting progress, and every authoring answer.

mod support;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use support::{backend, load_bytes, runtime};
use toolhost_fixtures::TESTBENCH;
use toolhost_limits::CallBudget;
use toolhost_runtime::{
    CallContext, Plugin, ProgressReport, ProgressSink, Reply, Runtime, Snapshots,
};

/// The 0.1.0 build of testbench.
const TESTBENCH_0_1_0: &[u8] = include_bytes!("fixtures/testbench-0.1.0.wasm");

/// What one contract's build answered, for comparison.
#[derive(Debug, PartialEq)]
struct Answers {
    tools: Vec<String>,
    kinds: Vec<String>,
    projects: Vec<(i64, String)>,
    environments: Value,
    question: Value,
    plan: String,
    run: Value,
    progress: Vec<(f64, Option<f64>)>,
    authoring: Value,
}

async fn answers(rt: &Runtime, p: &Plugin) -> Answers {
    let budget = CallBudget::DEFAULT;
    let (running, grant) = backend().await;
    let ctx = CallContext::new("demo", "alice").with_backends(Some(grant));
    let mut snapshots = Snapshots::new();
    for kind in p.kinds() {
        let rows = rt.snapshot(p, &ctx, kind, &budget).await.expect("lists");
        snapshots.insert(kind.clone(), rows.into());
    }
    let projects = snapshots["project"]
        .iter()
        .map(|e| (e.id, e.name.clone()))
        .collect();
    let reports = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let reports = Arc::clone(&reports);
        ProgressSink::new(move |r: ProgressReport| {
            reports.lock().expect("lock").push((r.progress, r.total));
        })
    };
    let ctx = ctx
        .with_snapshots(Arc::new(snapshots))
        .with_progress(Some(sink));
    let call = |tool: &'static str, args: Value| {
        let (rt, p, ctx) = (rt, p, &ctx);
        async move {
            let reply = rt.call(p, ctx, tool, &args.to_string(), &budget).await;
            reply.unwrap_or_else(|e| panic!("{tool}: {e}"))
        }
    };
    let environments = match call("list_environments", json!({"project": "payments"})).await {
        Reply::Output(out) => {
            assert!(out.content.is_empty(), "no content blocks: {out:?}");
            out.structured
        }
        other => panic!("resolved: {other:?}"),
    };
    let question = match call("list_environments", json!({"project": "nowhere"})).await {
        Reply::Clarify(c) => json!({"field": c.field, "ask": c.ask_user, "n": c.candidates.len()}),
        other => panic!("a question: {other:?}"),
    };
    let by_tag = json!({"project": "payments", "tags": ["smoke"], "environment": "staging"});
    let plan = match rt
        .plan(p, &ctx, "run_by_tag", &by_tag.to_string(), &budget)
        .await
    {
        Ok(toolhost_runtime::Planned::Plan(plan)) => format!("{plan:?}"),
        other => panic!("a plan: {other:?}"),
    };
    let run = match call("run_by_tag", by_tag).await {
        Reply::Output(out) => out.structured,
        other => panic!("ran: {other:?}"),
    };
    let current = rt
        .authoring_current(p, &ctx, "test_plan", 1, &budget)
        .await
        .expect("current");
    let proposal = json!({"environment": "staging", "tests": [{"name": "Login flow", "tags": ["auth"]}, {"name": "New"}]});
    let normalized = rt
        .authoring_validate(p, &ctx, "test_plan", &current.body, &proposal, &budget)
        .await
        .expect("answers")
        .expect("valid");
    let changes = rt
        .authoring_diff(p, &ctx, "test_plan", &current.body, &normalized, &budget)
        .await
        .expect("diffs");
    running.stop();
    let progress = reports.lock().expect("lock").clone();
    Answers {
        tools: p
            .tools()
            .iter()
            .map(|t| format!("{:?}", as_of_0_1(t)))
            .collect(),
        kinds: p.kinds().to_vec(),
        projects,
        environments,
        question,
        plan,
        run,
        progress,
        authoring: json!({
            "kinds": format!("{:?}", p.authoring_kinds()),
            "current": [current.version, current.body],
            "normalized": normalized,
            "changes": serde_json::to_value(&changes).expect("json"),
        }),
    }
}

/// `spec` without what testbench added to it after its 0.1.0 build: a
/// planned test's optional `steps` and `start_url` (issue 45). A 0.1.0
/// proposal means the same to both builds (the authoring answers are
/// compared whole); everything else about every tool is compared exactly.
fn as_of_0_1(spec: &toolhost_runtime::ToolSpec) -> toolhost_runtime::ToolSpec {
    let mut spec = spec.clone();
    if spec.name.as_str() == "apply_test_plan"
        && let Some(fields) = spec
            .input_schema
            .pointer_mut("/$defs/PlannedTest/properties")
            .and_then(Value::as_object_mut)
    {
        fields.remove("steps");
        fields.remove("start_url");
    }
    spec
}

#[tokio::test]
async fn a_0_1_0_component_loads_and_answers_as_its_current_build_does() {
    let rt = runtime();
    let old = load_bytes(&rt, "testbench", TESTBENCH_0_1_0).await;
    let new = load_bytes(&rt, "testbench", &TESTBENCH.bytes()).await;
    assert_eq!((old.contract(), new.contract()), ("0.1.0", "0.2.0"));
    assert!(
        old.exports()
            .iter()
            .any(|e| e == "toolhost:plugin/tool@0.1.0"),
        "{:?}",
        old.exports()
    );
    assert!(
        old.imports()
            .iter()
            .any(|i| i == "toolhost:plugin/backend@0.1.0"),
        "{:?}",
        old.imports()
    );
    let (was, is) = (answers(&rt, &old).await, answers(&rt, &new).await);
    assert!(!was.tools.is_empty() && was.kinds.contains(&"project".to_owned()));
    assert!(was.projects.iter().any(|(_, n)| n == "payments"));
    assert_eq!(
        was.progress.last().map(|r| r.0),
        was.progress.last().and_then(|r| r.1)
    );
    assert!(!was.progress.is_empty(), "run_by_tag reported progress");
    assert_eq!(was, is);
}
