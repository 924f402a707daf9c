//! The `/_test` routes and the [`testbench::Handle`]: counters keyed by
//! route template, reset, seed loading, leak, and their absence when off.

mod support;

use reqwest::Method;
use serde_json::{Value, json};
use support::{Backend, ids, send};
use testbench::Counters;

async fn counters(b: &Backend) -> Counters {
    let (status, body) = send(b.raw(Method::GET, "/_test/counters")).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_value(body).expect("counters")
}

async fn test_post(b: &Backend, path: &str, body: Value) -> u16 {
    send(support::json_body(b.raw(Method::POST, path), &body))
        .await
        .0
}

#[tokio::test]
async fn counters_are_keyed_by_method_and_route_template() {
    let b = Backend::start(true).await;
    b.get("demo", "/api/projects/1/applications").await;
    b.get("demo", "/api/projects/2/applications").await;
    b.get("acme", "/api/projects/1/applications").await; // 404, still counted
    b.get("demo", "/api/executions/ex-9").await;
    b.post(
        "demo",
        "/api/executions",
        json!({"kind": "pipeline", "target_id": 501, "environment_id": 11}),
    )
    .await;
    send(
        b.raw(Method::GET, "/api/projects")
            .bearer_auth(support::TOKEN),
    )
    .await; // no tenant: counted
    let c = counters(&b).await;
    assert_eq!(c, b.handle().counters());
    let want = [
        ("GET /api/executions/{executionId}", 1),
        ("GET /api/projects", 1),
        ("GET /api/projects/{id}/applications", 3),
        ("POST /api/executions", 1),
    ];
    assert_eq!(
        c.requests,
        want.iter().map(|&(k, n)| (k.to_owned(), n)).collect()
    );
    assert_eq!(c.writes, 1);
}

#[tokio::test]
async fn reset_restores_the_seed_and_clears_counters_executions_and_leak() {
    let b = Backend::start(true).await;
    b.post(
        "demo",
        "/api/scenarios",
        json!({"project_id": 1, "name": "Temp"}),
    )
    .await;
    b.post(
        "demo",
        "/api/executions",
        json!({"kind": "api_scenario", "target_id": 204, "environment_id": 11}),
    )
    .await;
    assert_eq!(test_post(&b, "/_test/leak", json!({"on": true})).await, 204);
    assert_eq!(
        ids(&b.get("acme", "/api/projects").await.1),
        [1, 2, 101, 102]
    );

    assert_eq!(test_post(&b, "/_test/reset", json!(null)).await, 204);
    assert_eq!(counters(&b).await, Counters::default());
    assert_eq!(ids(&b.get("acme", "/api/projects").await.1), [101, 102]);
    assert_eq!(
        ids(&b.get("demo", "/api/scenarios?project_id=1").await.1),
        [204, 205, 206, 207]
    );
    assert_eq!(b.get("demo", "/api/executions/ex-1").await.0, 404);
}

#[tokio::test]
async fn a_posted_seed_replaces_the_data_and_a_bad_one_changes_nothing() {
    let b = Backend::start(true).await;
    let seed = json!({"projects": [{"id": 7, "name": "solo", "tenant": "demo"}],
        "environments": [{"id": 8, "name": "dev", "project_id": null, "tenant": "demo"}]});
    assert_eq!(test_post(&b, "/_test/seed", seed).await, 204);
    assert_eq!(ids(&b.get("demo", "/api/projects").await.1), [7]);
    assert_eq!(b.get("demo", "/api/scenarios").await.1, json!([]));
    assert_eq!(
        counters(&b).await.requests.len(),
        2,
        "the seed reset the counters first"
    );

    let foreign = json!({"scenarios": [{"id": 1, "name": "x", "project_id": 7, "tenant": "acme"}]});
    assert_eq!(test_post(&b, "/_test/seed", foreign).await, 400);
    assert_eq!(
        test_post(&b, "/_test/seed", json!({"projekts": []})).await,
        400
    );
    assert_eq!(ids(&b.get("demo", "/api/projects").await.1), [7]);

    b.handle().reset();
    assert_eq!(
        ids(&b.get("demo", "/api/projects").await.1),
        [1, 2],
        "reset returns to the configured seed"
    );
}

#[tokio::test]
async fn the_test_routes_are_404_when_the_test_api_is_off() {
    let b = Backend::start(false).await;
    assert_eq!(send(b.raw(Method::GET, "/_test/counters")).await.0, 404);
    for path in ["/_test/reset", "/_test/seed", "/_test/leak"] {
        assert_eq!(
            test_post(&b, path, json!({"on": true})).await,
            404,
            "{path}"
        );
    }
    assert_eq!(ids(&b.get("acme", "/api/projects").await.1), [101, 102]);
}
