//! The `/api` routes over real HTTP: the token, the tenant predicate and
//! leak mode, the filters, writes and their refusals, executions, `_echo`
//! and `_pace`.

mod support;

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::json;
use support::{Backend, TOKEN, ids, send, tenants};

#[tokio::test]
async fn requests_without_the_right_token_get_401_and_are_not_counted() {
    let b = Backend::start(false).await;
    let none = b
        .raw(Method::GET, "/api/projects")
        .header("X-Tenant", "demo");
    assert_eq!(send(none).await, (401, json!({"error": "unauthorized"})));
    let wrong = b
        .raw(Method::GET, "/api/projects")
        .header("X-Tenant", "demo")
        .bearer_auth("nope");
    assert_eq!(send(wrong).await.0, 401);
    let bare = b
        .raw(Method::GET, "/api/projects")
        .header("Authorization", TOKEN);
    assert_eq!(send(bare).await.0, 401);
    assert_eq!(b.handle().counters().total(), 0);
}

#[tokio::test]
async fn a_request_without_x_tenant_gets_400() {
    let b = Backend::start(false).await;
    let (status, body) = send(b.raw(Method::GET, "/api/projects").bearer_auth(TOKEN)).await;
    assert_eq!(status, 400, "{body}");
}

#[tokio::test]
async fn each_tenant_sees_only_its_own_rows() {
    let b = Backend::start(false).await;
    for (tenant, projects, envs, scenarios) in [
        (
            "demo",
            vec![1, 2],
            vec![11, 12, 13],
            vec![204, 205, 206, 207, 301, 302],
        ),
        ("acme", vec![101, 102], vec![21], vec![601]),
    ] {
        for (path, want) in [
            ("/api/projects", projects),
            ("/api/environments", envs),
            ("/api/scenarios", scenarios),
        ] {
            let (status, rows) = b.get(tenant, path).await;
            assert_eq!((status, ids(&rows)), (200, want), "{tenant} {path}");
            assert_eq!(tenants(&rows), [tenant], "{tenant} {path}");
        }
    }
    assert_eq!(
        ids(&b.get("demo", "/api/projects/1/applications").await.1),
        [51, 52]
    );
    assert_eq!(b.get("acme", "/api/projects/1/applications").await.0, 404);
    assert_eq!(b.get("acme", "/api/pipelines").await, (200, json!([])));
}

#[tokio::test]
async fn leak_mode_returns_every_tenants_rows() {
    let b = Backend::start(false).await;
    b.handle().set_leak(true);
    let (_, projects) = b.get("acme", "/api/projects").await;
    assert_eq!(ids(&projects), [1, 2, 101, 102]);
    assert_eq!(tenants(&projects), ["acme", "demo"]);
    assert_eq!(
        ids(&b.get("demo", "/api/scenarios?tag=smoke").await.1),
        [204, 205, 301, 302, 601]
    );
    b.handle().set_leak(false);
    assert_eq!(ids(&b.get("acme", "/api/projects").await.1), [101, 102]);
}

#[tokio::test]
async fn tags_match_any_of_them_and_a_project_narrows_every_list() {
    let b = Backend::start(false).await;
    b.handle()
        .load(support::seed_with_project_environment())
        .expect("a valid seed");
    for (path, want) in [
        ("/api/scenarios?tag=smoke&project_id=1", vec![204, 205]),
        ("/api/ui-tests?tag=smoke&project_id=1", vec![]),
        (
            "/api/scenarios?tag=regression,smoke",
            vec![204, 205, 206, 301, 302],
        ),
        ("/api/ui-tests?tag=regression&project_id=2", vec![402]),
        ("/api/pipelines?project_id=2", vec![502]),
        ("/api/environments?project_id=1", vec![11, 12, 13]),
        ("/api/environments?project_id=2", vec![11, 12, 13, 14]),
    ] {
        assert_eq!(ids(&b.get("demo", path).await.1), want, "{path}");
    }
    let (_, rows) = b.get("demo", "/api/scenarios?tag=smoke&project_id=1").await;
    let want = json!({"id": 204, "name": "Login flow", "project_id": 1, "tags": ["smoke"], "tenant": "demo"});
    assert_eq!(rows[0], want);
    assert_eq!(b.get("demo", "/api/scenarios?project_id=x").await.0, 400);
}

#[tokio::test]
async fn an_execution_moves_from_queued_to_running_to_its_outcome_one_read_at_a_time() {
    let b = Backend::start(false).await;
    let start = json!({"kind": "api_scenario", "target_id": 205, "environment_id": 12});
    let (status, created) = b.post("demo", "/api/executions", start).await;
    let want = json!({"executionId": "ex-1", "kind": "api_scenario", "target_id": 205,
        "target_name": "Cart", "environment_id": 12, "status": "QUEUED"});
    assert_eq!((status, created), (201, want));
    let (_, running) = b.get("demo", "/api/executions/ex-1").await;
    assert_eq!(
        (running["status"].clone(), running["environment"].clone()),
        (json!("RUNNING"), json!("staging"))
    );
    assert_eq!(
        running["steps"][1],
        json!({"name": "run Cart", "status": "RUNNING"})
    );
    assert_eq!(
        b.get("demo", "/api/executions/ex-1").await.1["status"],
        "FAILED"
    );
    let (_, summary) = b.get("demo", "/api/executions/ex-1/summary").await;
    assert_eq!(
        (
            summary["status"].clone(),
            summary["passed"].clone(),
            summary["failed"].clone()
        ),
        (json!("FAILED"), json!(1), json!(1))
    );

    let pipeline = json!({"kind": "pipeline", "target_id": 501, "environment_id": 13});
    assert_eq!(
        b.post("demo", "/api/executions", pipeline).await.1["executionId"],
        "ex-2"
    );
    assert_eq!(
        b.get("demo", "/api/executions/ex-2/summary").await.1["status"],
        "QUEUED"
    );
    assert_eq!(
        b.get("demo", "/api/executions/ex-2").await.1["status"],
        "RUNNING"
    );
    assert_eq!(
        b.get("demo", "/api/executions/ex-2").await.1["status"],
        "PASSED"
    );
    for path in [
        "/api/executions/ex-1",
        "/api/executions/ex-1/summary",
        "/api/executions/nope",
    ] {
        assert_eq!(b.get("acme", path).await.0, 404, "{path}");
    }
}

#[tokio::test]
async fn refused_writes_write_nothing() {
    let b = Backend::start(false).await;
    b.handle()
        .load(support::seed_with_project_environment())
        .expect("a valid seed");
    for (tenant, path, body, want) in [
        (
            "demo",
            "/api/executions",
            json!({"kind": "load_test", "target_id": 204, "environment_id": 12}),
            400,
        ),
        (
            "demo",
            "/api/executions",
            json!({"kind": "api_scenario", "target_id": 204, "environment_id": 14}),
            404,
        ),
        (
            "demo",
            "/api/executions",
            json!({"kind": "api_scenario", "target_id": 601, "environment_id": 12}),
            404,
        ),
        (
            "demo",
            "/api/executions",
            json!({"kind": "api_scenario", "target_id": 204, "environment_id": 21}),
            404,
        ),
        (
            "demo",
            "/api/executions",
            json!({"kind": "ui_test", "target_id": 204, "environment_id": 12}),
            404,
        ),
        (
            "demo",
            "/api/scenarios",
            json!({"project_id": 1, "name": " ", "tags": []}),
            400,
        ),
        (
            "demo",
            "/api/scenarios",
            json!({"project_id": 1, "name": "x".repeat(201)}),
            400,
        ),
        ("demo", "/api/scenarios", json!({"project_id": 1}), 400),
        (
            "acme",
            "/api/scenarios",
            json!({"project_id": 1, "name": "Sneaky"}),
            404,
        ),
    ] {
        assert_eq!(
            b.post(tenant, path, body.clone()).await.0,
            want,
            "{tenant} {path} {body}"
        );
    }
    assert_eq!(b.handle().counters().writes, 0);
    assert_eq!(ids(&b.get("acme", "/api/scenarios").await.1), [601]);

    let new = json!({"project_id": 1, "name": "Checkout smoke", "tags": ["smoke"]});
    let (status, row) = b.post("demo", "/api/scenarios", new).await;
    let want = json!({"id": 602, "name": "Checkout smoke", "project_id": 1, "tags": ["smoke"], "tenant": "demo"});
    assert_eq!((status, row), (201, want));
    assert_eq!(
        ids(&b
            .get("demo", "/api/scenarios?tag=smoke&project_id=1")
            .await
            .1),
        [204, 205, 602]
    );
    assert_eq!(b.handle().counters().writes, 1);
}

#[tokio::test]
async fn the_echo_route_echoes_every_header_including_the_token() {
    let b = Backend::start(false).await;
    let req = b
        .api(Method::GET, "demo", "/api/_echo")
        .header("X-Probe", "one");
    let (status, body) = send(req).await;
    assert_eq!(status, 200);
    assert_eq!(body["headers"]["authorization"], format!("Bearer {TOKEN}"));
    assert_eq!(
        (
            body["headers"]["x-tenant"].clone(),
            body["headers"]["x-probe"].clone()
        ),
        (json!("demo"), json!("one"))
    );
}

#[tokio::test]
async fn the_pace_route_waits_what_it_is_asked_and_needs_the_token() {
    let b = Backend::start(false).await;
    let started = Instant::now();
    assert_eq!(
        b.get("demo", "/api/_pace?ms=150").await,
        (200, json!({"waited_ms": 150}))
    );
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert_eq!(
        b.get("demo", "/api/_pace").await,
        (200, json!({"waited_ms": 0}))
    );
    assert_eq!(b.get("demo", "/api/_pace?ms=soon").await.0, 400);
    let started = Instant::now();
    let bare = b
        .raw(Method::GET, "/api/_pace?ms=5000")
        .header("X-Tenant", "demo");
    assert_eq!(send(bare).await.0, 401);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "refused at once"
    );
    let counters = b.handle().counters();
    assert_eq!(
        (counters.requests_to("GET /api/_pace"), counters.writes),
        (3, 0)
    );
}

#[tokio::test]
async fn a_pace_request_is_counted_while_it_still_waits() {
    let b = Backend::start(false).await;
    let waiting = tokio::spawn(send(b.api(Method::GET, "demo", "/api/_pace?ms=1500")));
    let deadline = Instant::now() + Duration::from_secs(1);
    while b.handle().counters().requests_to("GET /api/_pace") == 0 {
        assert!(Instant::now() < deadline, "the request was never counted");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!waiting.is_finished(), "counted before it answered");
    // The wait holds no lock: other requests are served meanwhile.
    assert_eq!(b.get("demo", "/api/projects").await.0, 200);
    assert!(!waiting.is_finished());
    let answer = waiting.await.expect("the request task ends");
    assert_eq!(answer, (200, json!({"waited_ms": 1500})));
}
