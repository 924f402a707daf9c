//! The human step over real HTTP: an execution of a human-step test waits
//! in `WAITING_HUMAN` until `POST /api/executions/{id}/disposition`, which
//! only the owning tenant can send, only once, and only while it waits.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::Backend;
use testbench::Advance;

const DISPOSITION: &str = "POST /api/executions/{executionId}/disposition";

/// Starts scenario 207 (human step) or another scenario in staging; its id.
async fn start(b: &Backend, scenario: u64) -> String {
    let body = json!({"kind": "api_scenario", "target_id": scenario, "environment_id": 12});
    let (status, created) = b.post("demo", "/api/executions", body).await;
    assert_eq!(status, 201, "{created}");
    created["executionId"].as_str().expect("an id").to_owned()
}

async fn decide(b: &Backend, tenant: &str, id: &str, body: Value) -> (u16, Value) {
    let path = format!("/api/executions/{id}/disposition");
    b.post(tenant, &path, body).await
}

fn passed_by(who: &str) -> Value {
    json!({"outcome": "passed", "decided_by": who})
}

/// Reads the execution until it waits for a person (at most a few reads).
async fn until_waiting(b: &Backend, id: &str) -> Value {
    for _ in 0..3 {
        let (_, ex) = b.get("demo", &format!("/api/executions/{id}")).await;
        if ex["status"] == "WAITING_HUMAN" {
            return ex;
        }
    }
    panic!("{id} never waited for a person");
}

#[tokio::test]
async fn a_human_step_execution_waits_for_a_person_then_ends_as_decided() {
    let b = Backend::start(false).await;
    let id = start(&b, 207).await;
    let (_, running) = b.get("demo", "/api/executions/ex-1").await;
    assert_eq!(running["status"], "RUNNING");
    assert_eq!(
        running["steps"][2],
        json!({"name": "human review", "status": "PENDING"})
    );
    for _ in 0..3 {
        let (_, waiting) = b.get("demo", "/api/executions/ex-1").await;
        assert_eq!(waiting["status"], "WAITING_HUMAN", "it stays waiting");
        assert_eq!(
            waiting["steps"][2],
            json!({"name": "human review", "status": "WAITING_HUMAN"})
        );
    }
    let (_, summary) = b.get("demo", "/api/executions/ex-1/summary").await;
    assert_eq!(summary["status"], "WAITING_HUMAN");

    let (status, decided) = decide(&b, "demo", &id, passed_by("checkpoint chk_1")).await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!(
        (
            &decided["status"],
            &decided["decided_by"],
            &decided["steps"][2]["status"]
        ),
        (
            &json!("PASSED"),
            &json!("checkpoint chk_1"),
            &json!("PASSED")
        )
    );
    assert_eq!(b.get("demo", "/api/executions/ex-1").await.1, decided);
    let (_, summary) = b.get("demo", "/api/executions/ex-1/summary").await;
    assert_eq!(
        (&summary["status"], &summary["passed"], &summary["failed"]),
        (&json!("PASSED"), &json!(3), &json!(0))
    );
    assert!(
        (summary["summary"].as_str()).is_some_and(|s| s.ends_with("reviewed by checkpoint chk_1)")),
        "{summary}"
    );
}

#[tokio::test]
async fn an_inconclusive_disposition_ends_the_execution_inconclusive() {
    let b = Backend::start(false).await;
    let id = start(&b, 207).await;
    until_waiting(&b, &id).await;
    let body = json!({"outcome": "inconclusive", "decided_by": "ann"});
    let (status, decided) = decide(&b, "demo", &id, body).await;
    assert_eq!((status, &decided["status"]), (200, &json!("INCONCLUSIVE")));
    assert_eq!(decided["steps"][2]["status"], "INCONCLUSIVE");
    let (_, summary) = b
        .get("demo", &format!("/api/executions/{id}/summary"))
        .await;
    assert_eq!(
        (&summary["status"], &summary["passed"], &summary["failed"]),
        (&json!("INCONCLUSIVE"), &json!(2), &json!(0))
    );
}

#[tokio::test]
async fn with_time_based_advance_it_also_waits_until_someone_decides() {
    let b = Backend::start_advancing(false, Advance::Every(Duration::ZERO)).await;
    let id = start(&b, 207).await;
    let waiting = until_waiting(&b, &id).await;
    assert_eq!(waiting["steps"][1]["status"], "PASSED");
    assert_eq!(
        decide(&b, "demo", &id, passed_by("bob")).await.1["status"],
        "PASSED"
    );
    let plain = start(&b, 204).await;
    let (_, ex) = b.get("demo", &format!("/api/executions/{plain}")).await;
    assert_eq!(ex["status"], "PASSED", "no human step, no wait");
    assert_eq!(ex["steps"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn a_disposition_for_an_execution_that_is_not_waiting_is_409_and_changes_nothing() {
    let b = Backend::start(false).await;
    let human = start(&b, 207).await;
    let not_waiting = (409, json!({"error": "not waiting"}));
    // Queued: too early.
    assert_eq!(
        decide(&b, "demo", &human, passed_by("ann")).await,
        not_waiting
    );
    // No human step at all.
    let plain = start(&b, 204).await;
    b.get("demo", &format!("/api/executions/{plain}")).await;
    b.get("demo", &format!("/api/executions/{plain}")).await;
    assert_eq!(
        decide(&b, "demo", &plain, passed_by("ann")).await,
        not_waiting
    );
    // Decided once: a second disposition does not replace the first.
    until_waiting(&b, &human).await;
    assert_eq!(decide(&b, "demo", &human, passed_by("ann")).await.0, 200);
    let again = json!({"outcome": "inconclusive", "decided_by": "bob"});
    assert_eq!(decide(&b, "demo", &human, again).await, not_waiting);
    let (_, ex) = b.get("demo", &format!("/api/executions/{human}")).await;
    assert_eq!(
        (&ex["status"], &ex["decided_by"]),
        (&json!("PASSED"), &json!("ann"))
    );
    assert_eq!(
        b.handle().counters().writes,
        3,
        "two starts, one disposition"
    );
}

#[tokio::test]
async fn another_tenant_cannot_decide_and_a_missing_execution_is_404() {
    let b = Backend::start(false).await;
    let id = start(&b, 207).await;
    until_waiting(&b, &id).await;
    for (tenant, target) in [("acme", id.as_str()), ("demo", "ex-99"), ("demo", "nope")] {
        let (status, body) = decide(&b, tenant, target, passed_by("mallory")).await;
        assert_eq!(status, 404, "{tenant} {target}: {body}");
    }
    let (_, ex) = b.get("demo", &format!("/api/executions/{id}")).await;
    assert_eq!(ex["status"], "WAITING_HUMAN");
    assert_eq!(b.handle().counters().writes, 1, "the start only");
}

#[tokio::test]
async fn a_malformed_disposition_is_400() {
    let b = Backend::start(false).await;
    let id = start(&b, 207).await;
    until_waiting(&b, &id).await;
    for body in [
        json!({"outcome": "failed", "decided_by": "ann"}),
        json!({"outcome": "passed"}),
        json!({"outcome": "passed", "decided_by": "  "}),
        json!({"outcome": "passed", "decided_by": "x".repeat(201)}),
    ] {
        assert_eq!(decide(&b, "demo", &id, body.clone()).await.0, 400, "{body}");
    }
    let (_, ex) = b.get("demo", &format!("/api/executions/{id}")).await;
    assert_eq!(ex["status"], "WAITING_HUMAN");
}

#[tokio::test]
async fn every_disposition_is_counted_under_its_route_and_only_successes_as_writes() {
    let b = Backend::start(false).await;
    let id = start(&b, 207).await;
    decide(&b, "demo", &id, passed_by("ann")).await; // 409: queued
    decide(&b, "acme", &id, passed_by("ann")).await; // 404
    until_waiting(&b, &id).await;
    decide(&b, "demo", &id, passed_by("ann")).await; // 200
    let counters = b.handle().counters();
    assert_eq!(counters.requests_to(DISPOSITION), 3);
    assert_eq!(counters.writes, 2, "the start and the disposition");
}
