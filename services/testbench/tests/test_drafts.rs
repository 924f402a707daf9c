//! A project's tests with their version, and draft tests over real HTTP:
//! one write per batch, nothing written on a refusal, drafts never run.

mod support;

use serde_json::{Value, json};
use support::{Backend, ids, seed_with_project_environment};

fn plan(environment_id: u64, tests: Value) -> Value {
    json!({ "environment_id": environment_id, "tests": tests })
}

#[tokio::test]
async fn a_projects_tests_come_in_one_get_by_id_with_kind_and_version() {
    let b = Backend::start(false).await;
    let (status, body) = b.get("demo", "/api/projects/1/tests").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["project"],
        json!({"id": 1, "name": "payments", "tenant": "demo"})
    );
    assert_eq!(body["version"], "r0");
    assert_eq!(ids(&body["tests"]), [204, 205, 206, 207, 401]);
    assert_eq!(
        body["tests"][4],
        json!({"id": 401, "name": "Checkout page", "kind": "ui_test", "tags": ["regression"], "tenant": "demo"})
    );
    assert_eq!(body["tests"][0]["kind"], "api_scenario");
    for (tenant, path) in [
        ("acme", "/api/projects/1/tests"),
        ("demo", "/api/projects/999/tests"),
        ("demo", "/api/projects/x/tests"),
        ("acme", "/api/projects/1/test-drafts"),
    ] {
        assert_eq!(b.get(tenant, path).await.0, 404, "{tenant} {path}");
    }
}

#[tokio::test]
async fn one_post_drafts_every_test_in_one_batch_and_one_write_and_moves_the_version() {
    let b = Backend::start(false).await;
    let tests = json!([
        {"name": " Login flow ", "tags": ["smoke", "auth"], "replaces": 204},
        {"name": "Refund partial", "tags": []},
    ]);
    let (status, created) = b
        .post("demo", "/api/projects/1/test-drafts", plan(12, tests))
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["batch"], 1);
    assert_eq!(
        created["drafts"][0],
        json!({
            "id": 602, "name": "Login flow", "project_id": 1, "tags": ["smoke", "auth"],
            "status": "draft", "replaces": 204, "environment_id": 12, "batch": 1, "tenant": "demo"
        })
    );
    assert_eq!(created["drafts"][1]["replaces"], Value::Null);
    assert_eq!(b.handle().counters().writes, 1);
    let (_, listed) = b.get("demo", "/api/projects/1/test-drafts").await;
    assert_eq!(listed, created["drafts"]);
    let (_, after) = b.get("demo", "/api/projects/1/tests").await;
    assert_eq!(after["version"], "r1");
    // The replaced test is untouched and no draft is an active test.
    assert_eq!(ids(&after["tests"]), [204, 205, 206, 207, 401]);
    assert_eq!(after["tests"][0]["tags"], json!(["smoke"]));
    assert_eq!(
        b.get("demo", "/api/projects/2/tests").await.1["version"],
        "r0"
    );
}

#[tokio::test]
async fn a_draft_is_never_run() {
    let b = Backend::start(false).await;
    let tests = json!([{"name": "New", "tags": ["smoke"]}]);
    let (_, created) = b
        .post("demo", "/api/projects/1/test-drafts", plan(12, tests))
        .await;
    let id = created["drafts"][0]["id"].clone();
    for kind in ["api_scenario", "ui_test"] {
        let run = json!({"kind": kind, "target_id": id, "environment_id": 12});
        assert_eq!(
            b.post("demo", "/api/executions", run).await.0,
            404,
            "{kind}"
        );
    }
    let (_, smoke) = b.get("demo", "/api/scenarios?tag=smoke&project_id=1").await;
    assert_eq!(ids(&smoke), [204, 205]);
}

#[tokio::test]
async fn a_refused_batch_writes_nothing_and_keeps_the_version() {
    let config = testbench::Config {
        token: support::TOKEN.into(),
        seed: seed_with_project_environment(),
        test_api: false,
        advance: testbench::Advance::OnRead,
    };
    let b = Backend::start_with(config).await;
    let one = json!([{"name": "A", "tags": []}]);
    let too_many: Vec<Value> = (0..201).map(|i| json!({"name": format!("t{i}")})).collect();
    let cases: [(&str, &str, Value, u16); 10] = [
        (
            "demo",
            "/api/projects/999/test-drafts",
            plan(12, one.clone()),
            404,
        ),
        (
            "demo",
            "/api/projects/101/test-drafts",
            plan(12, one.clone()),
            404,
        ),
        (
            "acme",
            "/api/projects/1/test-drafts",
            plan(21, one.clone()),
            404,
        ),
        (
            "demo",
            "/api/projects/1/test-drafts",
            plan(21, one.clone()),
            404,
        ),
        // Environment 14 is project 2's own.
        (
            "demo",
            "/api/projects/1/test-drafts",
            plan(14, one.clone()),
            404,
        ),
        (
            "demo",
            "/api/projects/1/test-drafts",
            plan(12, json!([{"name": "A", "replaces": 301}])),
            422,
        ),
        (
            "demo",
            "/api/projects/1/test-drafts",
            plan(12, json!([{"name": "A"}, {"name": " "}])),
            422,
        ),
        (
            "demo",
            "/api/projects/1/test-drafts",
            plan(12, json!([])),
            422,
        ),
        (
            "demo",
            "/api/projects/1/test-drafts",
            plan(12, json!(too_many)),
            422,
        ),
        (
            "demo",
            "/api/projects/1/test-drafts",
            json!({"tests": one}),
            400,
        ),
    ];
    for (tenant, path, body, want) in cases {
        let (status, answer) = b.post(tenant, path, body.clone()).await;
        assert_eq!(status, want, "{tenant} {path} {body}: {answer}");
        assert!(answer["error"].is_string(), "{answer}");
    }
    assert_eq!(b.handle().counters().writes, 0);
    assert_eq!(
        b.get("demo", "/api/projects/1/test-drafts").await.1,
        json!([])
    );
    assert_eq!(
        b.get("demo", "/api/projects/1/tests").await.1["version"],
        "r0"
    );
}

#[tokio::test]
async fn creating_a_scenario_moves_its_projects_version_and_ids_never_repeat() {
    let b = Backend::start(false).await;
    let scenario = json!({"project_id": 1, "name": "Cart v2", "tags": []});
    let (_, row) = b.post("demo", "/api/scenarios", scenario).await;
    let tests = json!([{"name": "Draft"}]);
    let (_, batch) = b
        .post("demo", "/api/projects/1/test-drafts", plan(11, tests))
        .await;
    assert_eq!(
        (row["id"].clone(), batch["drafts"][0]["id"].clone()),
        (json!(602), json!(603))
    );
    let scenario = json!({"project_id": 1, "name": "After", "tags": []});
    assert_eq!(
        b.post("demo", "/api/scenarios", scenario).await.1["id"],
        604
    );
    assert_eq!(
        b.get("demo", "/api/projects/1/tests").await.1["version"],
        "r3"
    );
}
