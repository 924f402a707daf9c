//! The `authoring` export of the real `testbench` component: its kinds at
//! load, `current` against the testbench backend served in-process, and
//! `validate` and `diff`, pure; a plugin that authors nothing refuses every
//! kind.

mod support;

use std::sync::Arc;

use serde_json::{Value, json};
use support::{backend, runtime};
use toolhost_fixtures::{Fixture, HELLO, TESTBENCH};
use toolhost_limits::{ByteSize, CallBudget};
use toolhost_runtime::{AuthoringKind, CallContext, CallError, Change, ChangeOp, Plugin, Runtime};

async fn load(rt: &Runtime, f: &Fixture) -> Plugin {
    support::load_bytes(rt, f.name, &f.bytes()).await
}

/// The contract seed's project 1 (`payments`), as `current` reads it.
fn payments() -> Value {
    json!({
        "project": {"id": 1, "name": "payments"},
        "tests": [
            {"id": 204, "name": "Login flow", "tags": ["smoke"]},
            {"id": 205, "name": "Cart", "tags": ["smoke"]},
            {"id": 206, "name": "Refund", "tags": ["regression"]},
            {"id": 207, "name": "Checkout manual review", "tags": ["manual"]},
            {"id": 401, "name": "Checkout page", "tags": ["regression"]},
        ]
    })
}

fn ctx() -> CallContext {
    CallContext::new("demo", "alice")
}

#[tokio::test]
async fn testbench_authors_test_plans_of_projects_promoted_by_apply_test_plan() {
    let rt = runtime();
    let p = load(&rt, &TESTBENCH).await;
    let kinds: Vec<&AuthoringKind> = p.authoring_kinds().iter().collect();
    assert_eq!(kinds.len(), 1);
    assert_eq!(
        (
            kinds[0].name.as_str(),
            kinds[0].subject_kind.as_str(),
            kinds[0].promoted_by.as_str()
        ),
        ("test_plan", "project", "apply_test_plan")
    );
    assert!(p.authoring_kind("test_plan").is_some());
    assert!(
        p.tools()
            .iter()
            .any(|t| t.name.as_str() == "apply_test_plan")
    );
}

#[tokio::test]
async fn current_reads_the_projects_tests_and_version_in_one_get_for_the_callers_tenant() {
    let rt = runtime();
    let p = load(&rt, &TESTBENCH).await;
    let (running, grant) = backend().await;
    let ctx = ctx().with_backends(Some(grant.clone()));
    let current = rt
        .authoring_current(&p, &ctx, "test_plan", 1, &CallBudget::DEFAULT)
        .await
        .expect("payments is demo's");
    assert_eq!((current.version.as_str(), current.body), ("r0", payments()));
    let counters = running.handle.counters();
    assert_eq!(counters.requests_to("GET /api/projects/{id}/tests"), 1);
    assert_eq!((counters.total(), counters.writes), (1, 0));
    let acme = CallContext::new("acme", "bob").with_backends(Some(grant));
    let err = rt
        .authoring_current(&p, &acme, "test_plan", 1, &CallBudget::DEFAULT)
        .await
        .expect_err("not acme's");
    assert_eq!(err.code(), "NOT_FOUND", "{err}");
    running.stop();
}

#[tokio::test]
async fn validate_normalizes_a_plan_into_apply_test_plans_arguments_or_names_every_problem() {
    let rt = runtime();
    let p = load(&rt, &TESTBENCH).await;
    let budget = CallBudget::DEFAULT;
    let proposal = json!({"environment": "staging", "tests": [
        {"name": "Login flow", "tags": ["smoke", "auth"]},
        {"name": "Refund partial", "tags": ["regression"]},
    ]});
    let normalized = rt
        .authoring_validate(&p, &ctx(), "test_plan", &payments(), &proposal, &budget)
        .await
        .expect("answers")
        .expect("valid");
    assert_eq!(
        normalized,
        json!({"project": 1, "environment": "staging", "tests": [
            {"name": "Login flow", "tags": ["auth", "smoke"], "replaces": 204},
            {"name": "Refund partial", "tags": ["regression"]},
        ]})
    );
    let bad = json!({"environment": "staging", "tests": [{"name": " "}, {"name": "A", "tags": ["No"]}], "x": 1});
    let problems = rt
        .authoring_validate(&p, &ctx(), "test_plan", &payments(), &bad, &budget)
        .await
        .expect("answers")
        .expect_err("invalid");
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, ["/x", "/tests/0/name", "/tests/1/tags/0"]);
}

#[tokio::test]
async fn diff_says_what_promoting_adds_and_changes_and_leaves_out_the_rest() {
    let rt = runtime();
    let p = load(&rt, &TESTBENCH).await;
    let normalized = json!({"project": 1, "environment": 12, "tests": [
        {"name": "Refund partial", "tags": []},
        {"name": "Cart", "tags": ["smoke"], "replaces": 205},
        {"name": "Login flow", "tags": ["auth", "smoke"], "replaces": 204},
    ]});
    let changes = rt
        .authoring_diff(
            &p,
            &ctx(),
            "test_plan",
            &payments(),
            &normalized,
            &CallBudget::DEFAULT,
        )
        .await
        .expect("diffs");
    assert_eq!(
        changes,
        [
            Change {
                op: ChangeOp::Added,
                item: "Refund partial".into(),
                before: None,
                after: Some(json!({"name": "Refund partial", "tags": []})),
            },
            Change {
                op: ChangeOp::Changed,
                item: "Login flow".into(),
                before: Some(json!({"id": 204, "name": "Login flow", "tags": ["smoke"]})),
                after: Some(json!({"name": "Login flow", "tags": ["auth", "smoke"]})),
            },
        ]
    );
    let stale = json!({"project": 1, "environment": 12, "tests": [{"name": "Cart", "tags": []}]});
    let err = rt
        .authoring_diff(
            &p,
            &ctx(),
            "test_plan",
            &payments(),
            &stale,
            &CallBudget::DEFAULT,
        )
        .await
        .expect_err("Cart is 205: replaces is missing");
    assert_eq!(err.code(), "INVALID_ARGUMENTS", "{err}");
}

#[tokio::test]
async fn validate_and_diff_reach_no_backend_whatever_the_context_grants() {
    let rt = runtime();
    let p = load(&rt, &TESTBENCH).await;
    let (running, grant) = backend().await;
    let ctx = ctx().with_backends(Some(grant));
    let proposal = json!({"environment": 12, "tests": [{"name": "New"}]});
    let budget = CallBudget::DEFAULT;
    let normalized = rt
        .authoring_validate(&p, &ctx, "test_plan", &payments(), &proposal, &budget)
        .await
        .expect("answers")
        .expect("valid");
    rt.authoring_diff(&p, &ctx, "test_plan", &payments(), &normalized, &budget)
        .await
        .expect("diffs");
    assert_eq!(running.handle.counters().total(), 0);
    running.stop();
}

#[tokio::test]
async fn an_answer_over_the_output_budget_is_an_output_limit() {
    let rt = runtime();
    let p = load(&rt, &TESTBENCH).await;
    let tight = CallBudget {
        output: ByteSize::b(32),
        ..CallBudget::DEFAULT
    };
    let proposal =
        json!({"environment": "staging", "tests": [{"name": "A long enough test name"}]});
    let err = rt
        .authoring_validate(&p, &ctx(), "test_plan", &payments(), &proposal, &tight)
        .await
        .expect_err("the normalized plan is longer than 32 bytes");
    assert_eq!(err.code(), "OUTPUT_LIMIT", "{err}");
}

#[tokio::test]
async fn a_plugin_that_authors_nothing_lists_no_kinds_and_every_kind_is_a_contract_violation() {
    let rt = runtime();
    for (fixture, kind) in [(&HELLO, "test_plan"), (&TESTBENCH, "pipeline")] {
        let p = load(&rt, fixture).await;
        let budget = CallBudget::DEFAULT;
        let current = rt.authoring_current(&p, &ctx(), kind, 1, &budget).await;
        let validate = (rt.authoring_validate(&p, &ctx(), kind, &json!({}), &json!({}), &budget))
            .await
            .map(drop);
        let diff = (rt.authoring_diff(&p, &ctx(), kind, &json!({}), &json!({}), &budget))
            .await
            .map(drop);
        for err in [current.map(drop), validate, diff] {
            assert!(
                matches!(&err, Err(CallError::ContractViolation { detail }) if detail.contains(kind)),
                "{}: {err:?}",
                fixture.name
            );
        }
    }
    assert!(load(&rt, &HELLO).await.authoring_kinds().is_empty());
}

#[tokio::test]
async fn promoting_is_one_call_of_apply_test_plan_drafting_every_test_in_one_post() {
    let rt = runtime();
    let p = load(&rt, &TESTBENCH).await;
    let (running, grant) = backend().await;
    let budget = CallBudget::DEFAULT;
    let ctx = ctx().with_backends(Some(grant));
    let mut snapshots = toolhost_runtime::Snapshots::new();
    for kind in ["project", "environment"] {
        let rows = rt.snapshot(&p, &ctx, kind, &budget).await.expect("lists");
        snapshots.insert(kind.to_owned(), rows.into());
    }
    let ctx = ctx.with_snapshots(Arc::new(snapshots));
    let proposal = json!({"environment": "prod", "tests": [
        {"name": "Login flow", "tags": ["smoke", "auth"]},
        {"name": "Refund partial"},
    ]});
    let normalized = rt
        .authoring_validate(&p, &ctx, "test_plan", &payments(), &proposal, &budget)
        .await
        .expect("answers")
        .expect("valid");
    let args = normalized.to_string();
    let planned = rt
        .plan(&p, &ctx, "apply_test_plan", &args, &budget)
        .await
        .expect("plans");
    let toolhost_runtime::Planned::Plan(plan) = planned else {
        panic!("no question: {planned:?}")
    };
    assert_eq!(plan.risk, toolhost_types::Risk::High, "prod: {plan:?}");
    let targets: Vec<(&str, &str, &[String])> = (plan.targets.iter())
        .map(|t| (t.kind.as_str(), t.id.as_str(), t.tags.as_slice()))
        .collect();
    assert_eq!(
        targets,
        [
            ("environment", "13", &["prod".to_owned()][..]),
            ("project", "1", &[][..])
        ]
    );
    let before = running.handle.counters();
    let out = rt
        .call(&p, &ctx, "apply_test_plan", &args, &budget)
        .await
        .expect("calls")
        .into_output()
        .expect("no question")
        .structured;
    assert_eq!(
        (out["project"].clone(), out["environment"].clone()),
        (json!("payments"), json!("prod"))
    );
    let drafts = out["drafts"].as_array().expect("drafts");
    assert_eq!(drafts.len(), 2);
    assert!(
        drafts
            .iter()
            .all(|d| d["status"] == "draft" && d["batch"] == out["batch"])
    );
    assert_eq!(
        (drafts[0]["replaces"].clone(), drafts[1]["replaces"].clone()),
        (json!(204), Value::Null)
    );
    let after = running.handle.counters();
    assert_eq!(after.writes - before.writes, 1);
    let posts = |c: &testbench::Counters| c.requests_to("POST /api/projects/{id}/test-drafts");
    assert_eq!((posts(&before), posts(&after)), (0, 1));
    running.stop();
}
