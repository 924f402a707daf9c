//! Replicas on one PostgreSQL behind HAProxy (the shipped
//! `deploy/haproxy.cfg`): any replica serves any request.
//!
//! * the Python and TypeScript SDK clients run their full checks through
//!   the balancer in both eras (2025-11-25 sessions stick to their replica,
//!   2026-07-28 requests go round robin);
//! * an MRTR question asked by one replica is answered on a second, its
//!   next question on a third, and a spent `requestState` is refused on
//!   every replica;
//! * an approval gate opened through one replica is decided through a
//!   second and consumed through a third, exactly once, while fifty
//!   retries race through the balancer;
//! * a scenario created through one replica is found at once by the
//!   resolver of another that had listed the scenarios before;
//! * a call's trace, continued from the `traceparent` its client sent
//!   through the balancer, reaches an OTLP collector with the spans of the
//!   request, auth, the call, policy, plan, sandbox and audit; a list and
//!   an OAuth request have theirs, and at sample ratio 0 nothing a client
//!   did not trace is exported;
//! * a replica's per-address limits (registrations, sign-ins) count the
//!   client behind the balancer (`X-Forwarded-For`), not the balancer;
//! * a resource update told by a call on one replica reaches the
//!   subscribers on another (a session and a listen stream);
//! * the Tasks extension's tasks are created, polled and cancelled on any
//!   replica (the Python SDK's requests go round robin);
//! * a stream dropped mid-call is resumed through the balancer on the
//!   first reconnect, 20 times out of 20 (the balancer routes by the
//!   origin its event ids name), and once no replica is left the balancer
//!   answers in the protocol's shape: a retryable JSON-RPC error with
//!   `Retry-After`, never HTML.

mod support;

use std::thread;
use std::time::Duration;

use serde_json::{Value, json};
use support::bench::{Backend, call_at, confirmed_gate};
use support::cluster::Cluster;
use support::oauth::{approver, json as parse, user_token};
use support::otlp::Collector;
use support::{DEMO_PASSWORD, PgSchema, Server, Tools, exchange_full};
use toolhost_fixtures::{CONFORMANCE, HELLO, TESTBENCH};

const REPLICAS: usize = 3;

fn cluster(schema: &PgSchema, backend: &Backend) -> Cluster {
    cluster_with(schema, backend, &[])
}

fn cluster_with(schema: &PgSchema, backend: &Backend, more: &[&str]) -> Cluster {
    let flags = backend.flags();
    let mut flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    flags.extend_from_slice(more);
    Cluster::start(REPLICAS, &[TESTBENCH, HELLO], &flags, schema)
}

#[test]
fn sdk_clients_of_both_eras_run_their_checks_through_the_balancer() {
    let tools = Tools::require();
    let schema = PgSchema::create("replicas_sdk");
    let backend = Backend::start();
    let cluster = cluster(&schema, &backend);
    let first = &cluster.replicas[0];
    let python = tools.python("python_client.py", &[&cluster.url]);
    first.run_client(
        "python SDK through the balancer",
        python,
        Duration::from_secs(120),
    );
    let ts = tools.node("ts_client.mjs", &[&cluster.url]);
    first.run_client(
        "TypeScript SDK through the balancer",
        ts,
        Duration::from_secs(120),
    );
    // Stateless calls go round robin: every replica serves its share.
    let before: Vec<u64> = cluster.replicas.iter().map(call_count).collect();
    for _ in 0..2 * REPLICAS {
        let a = call_at(&cluster.url, first.token(), "greet", json!({"name": "Ada"}));
        assert_eq!(
            a["result"]["structuredContent"]["message"], "Hello, Ada!",
            "{a}"
        );
    }
    for (i, replica) in cluster.replicas.iter().enumerate() {
        let served = call_count(replica) - before[i];
        assert!(
            served > 0,
            "replica r{} served none of the calls:\n{}",
            i + 1,
            cluster.balancer_log()
        );
    }
}

/// The calls a replica served (its Prometheus counter).
fn call_count(server: &Server) -> u64 {
    server
        .metrics()
        .lines()
        .filter(|l| l.starts_with("toolhost_calls_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// A stateless (2026-07-28) `tools/call` of `run_by_tag` with `params`, by
/// a client declaring `capabilities`, sent to `url` with `extra` headers:
/// the JSON-RPC answer.
fn post_call(
    url: &str,
    token: &str,
    mut params: Value,
    capabilities: Value,
    extra: &[(&str, &str)],
) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string();
    let authorization = format!("Bearer {token}");
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "run_by_tag"),
        ("Authorization", authorization.as_str()),
    ];
    headers.extend_from_slice(extra);
    let answer = exchange_full(url, "POST", "/mcp", &headers, &body);
    assert_eq!(answer.status, 200, "{}", answer.body);
    parse(&answer.body)
}

/// [`post_call`] by a client that answers questions with forms (MRTR).
fn call_with_forms(url: &str, token: &str, params: Value) -> Value {
    post_call(
        url,
        token,
        params,
        json!({"elicitation": {"form": {}}}),
        &[],
    )
}

/// The field asked about and the sealed state of an `input_required` result.
fn question(answer: &Value) -> (String, String) {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    let field = result["inputRequests"]
        .as_object()
        .and_then(|r| r.keys().next().cloned())
        .expect("one question");
    let state = result["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned();
    (field, state)
}

fn answering(state: &str, field: &str, id: &str) -> Value {
    json!({
        "name": "run_by_tag",
        "arguments": {"tags": ["smoke"]},
        "requestState": state,
        "inputResponses": {field: {"action": "accept", "content": {field: id}}},
    })
}

#[test]
fn a_question_asked_by_one_replica_is_answered_on_another_and_a_gate_crosses_three() {
    let schema = PgSchema::create("replicas_cross");
    let backend = Backend::start();
    let cluster = cluster(&schema, &backend);
    let [r1, r2, r3] = [
        &cluster.replicas[0],
        &cluster.replicas[1],
        &cluster.replicas[2],
    ];
    let demo = user_token(r1, "demo", DEMO_PASSWORD);

    // MRTR: r1 asks for the environment, r2 takes the answer and asks for
    // the project, r3 takes that and runs the call.
    let ask = json!({"name": "run_by_tag", "arguments": {"tags": ["smoke"]}});
    let (field, first_state) = question(&call_with_forms(&r1.url, &demo, ask));
    assert_eq!(field, "environment");
    let (field, second_state) = question(&call_with_forms(
        &r2.url,
        &demo,
        answering(&first_state, &field, "12"),
    ));
    assert_eq!(field, "project");
    let done = call_with_forms(&r3.url, &demo, answering(&second_state, &field, "1"));
    assert_eq!(done["result"]["isError"], json!(false), "{done}");
    assert_eq!(
        done["result"]["structuredContent"]["queued"]
            .as_array()
            .map(Vec::len),
        Some(2),
        "{done}"
    );
    // Each state was good once, wherever it is presented again.
    for (state, replica) in [(&first_state, r3), (&second_state, r1), (&second_state, r2)] {
        let again = call_with_forms(&replica.url, &demo, answering(state, "project", "1"));
        assert_eq!(again["error"]["code"], json!(-32602), "{again}");
    }

    // A gate: opened through r1, decided through r2, consumed through r3.
    let ann = approver(r2);
    let prod = json!({"tags": ["smoke"], "environment": "prod", "project": "payments"});
    let gate = confirmed_gate(&r1.url, &demo, &r2.url, &ann, "run_by_tag", prod.clone());
    let writes = backend.writes();
    let mut with_gate = prod.clone();
    with_gate["gate_id"] = json!(gate);
    let consumed = call_at(&r3.url, &demo, "run_by_tag", with_gate.clone());
    assert_eq!(consumed["result"]["isError"], json!(false), "{consumed}");
    // Fifty more through the balancer, spread over every replica: none runs.
    let url = cluster.url.clone();
    let answers: Vec<Value> = thread::scope(|s| {
        let handles: Vec<_> = (0..50)
            .map(|_| s.spawn(|| call_at(&url, &demo, "run_by_tag", with_gate.clone())))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a retry"))
            .collect()
    });
    for a in &answers {
        assert_eq!(
            a["result"]["structuredContent"]["error"]["code"], "GATE_CONSUMED",
            "{a}"
        );
    }
    assert_eq!(
        backend.writes(),
        writes + 2,
        "the gated run ran once: two scenarios"
    );

    // The resolver's snapshots: r2 lists the scenarios (a name none has is
    // not found), r1 creates one of that name, and r2 lists them again for
    // the same conversation at once (the kind's generation moved).
    let named =
        json!({"scenario": "Cross-replica smoke", "environment": "staging", "project": "payments"});
    let listed = || backend.requests("GET /api/scenarios");
    let unknown = call_at(&r2.url, &demo, "execute_scenario", named.clone());
    assert_eq!(
        unknown["result"]["structuredContent"]["reason"], "not_found",
        "{unknown}"
    );
    let before = listed();
    call_at(&r2.url, &demo, "execute_scenario", named.clone());
    assert_eq!(listed(), before, "r2 remembers the scenarios it listed");
    let created = call_at(
        &r1.url,
        &demo,
        "create_api_scenario",
        json!({"project": "payments", "name": "Cross-replica smoke", "tags": ["smoke"]}),
    );
    assert_eq!(created["result"]["isError"], json!(false), "{created}");
    let found = call_at(&r2.url, &demo, "execute_scenario", named);
    assert_eq!(listed(), before + 1, "r2 listed them again, once");
    assert_eq!(found["result"]["isError"], json!(false), "{found}");
    assert!(
        found["result"]["structuredContent"]["queued"].is_array(),
        "the new scenario ran: {found}"
    );
}

/// A subscriber on replica A hears of an update a call on replica B told
/// (PostgreSQL `NOTIFY`; see tests/e2e/python_replica_updates.py).
#[test]
fn a_resource_update_told_on_one_replica_reaches_subscribers_on_another() {
    let tools = Tools::require();
    let schema = PgSchema::create("replicas_updates");
    let cluster = Cluster::start(2, &[CONFORMANCE], &[], &schema);
    let (a, b) = (&cluster.replicas[0], &cluster.replicas[1]);
    let script = tools.python("python_replica_updates.py", &[&a.url, &b.url]);
    a.run_client(
        "resource updates across replicas",
        script,
        Duration::from_secs(120),
    );
}

/// The Python SDK's Tasks client through the balancer: each request goes
/// round robin, so a task created on one replica is read, polled and
/// cancelled on the others (tests/e2e/python_tasks.py).
#[test]
fn tasks_are_created_polled_and_cancelled_on_any_replica() {
    let tools = Tools::require();
    let schema = PgSchema::create("replicas_tasks");
    let backend = Backend::start();
    let cluster = cluster_with(&schema, &backend, &["--exploration-backend", "testbench"]);
    let demo = user_token(&cluster.replicas[0], "demo", DEMO_PASSWORD);
    let script = tools.python("python_tasks.py", &[&cluster.url, "payments"]);
    let out = cluster.replicas[0].run_client_as(
        "tasks through the balancer",
        script,
        Duration::from_secs(300),
        &demo,
    );
    assert!(out.contains("TASKS "), "{out}");
}

/// Twenty stateless calls hang up after their first event and resume
/// through HAProxy with `Last-Event-ID`: each reconnect reaches the
/// replica keeping the stream and gets the rest of it, the result
/// included (tests/e2e/python_resume.py); a replay of another tenant's or
/// an unknown id is refused, typed. Then every replica dies, and the
/// balancer's answer is a retryable JSON-RPC error with `Retry-After`.
#[test]
fn a_stream_dropped_mid_call_resumes_through_the_balancer_on_the_first_reconnect() {
    let tools = Tools::require();
    let schema = PgSchema::create("replicas_resume");
    let cluster = Cluster::start(REPLICAS, &[CONFORMANCE], &[], &schema);
    let first = &cluster.replicas[0];
    let other = first.service_client_in("acme", "mcp conformance:run").1;
    let mut cmd = tools.python("python_resume.py", &[&cluster.url, "20"]);
    cmd.env("TOOLHOST_E2E_OTHER_TOKEN", other);
    let out = first.run_client("resume through the balancer", cmd, Duration::from_secs(300));
    assert!(out.contains("20 of 20"), "{out}");

    for replica in &cluster.replicas {
        let killed = std::process::Command::new("kill")
            .args(["-9", &replica.pid().to_string()])
            .status()
            .expect("kill runs");
        assert!(killed.success());
        assert!(replica.wait_exit(Duration::from_secs(10)).is_some());
    }
    let auth = format!("Bearer {}", first.token());
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).to_string();
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
    ];
    let answer = support::exchange_full(&cluster.url, "POST", "/mcp", &headers, &body);
    assert_eq!(answer.status, 503, "{}", answer.body);
    assert_eq!(
        answer.header("retry-after"),
        Some("1"),
        "{:?}",
        answer.headers
    );
    assert_eq!(
        answer.header("content-type"),
        Some("application/json"),
        "{:?}",
        answer.headers
    );
    let error: Value = parse(&answer.body);
    assert_eq!(error["error"]["code"], json!(-32050), "{error}");
    assert_eq!(
        error["error"]["data"]["code"],
        json!("STORE_UNAVAILABLE"),
        "{error}"
    );
    assert_eq!(error["error"]["data"]["retryable"], json!(true), "{error}");
}

#[test]
fn per_address_limits_count_the_client_behind_the_balancer() {
    let schema = PgSchema::create("replicas_forwarded");
    let backend = Backend::start();
    let cluster = cluster(&schema, &backend);
    // Registrations from one client exhaust its budget (10 a minute) on
    // both replicas together; another client behind the same balancer
    // still registers.
    let register = |replica: usize, forwarded: &str| -> u16 {
        let r1 = &cluster.replicas[replica % cluster.replicas.len()];
        let body =
            json!({"redirect_uris": ["http://127.0.0.1:9/cb"], "client_name": "xff"}).to_string();
        let headers = [
            ("Content-Type", "application/json"),
            ("X-Forwarded-For", forwarded),
        ];
        exchange_full(&r1.url, "POST", "/oauth/register", &headers, &body).status
    };
    // The limit counts in fixed minutes: the twelve must fall within one.
    support::fresh_minute();
    let statuses: Vec<u16> = (0..12).map(|i| register(i, "203.0.113.7")).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 201).count(),
        10,
        "{statuses:?}"
    );
    assert_eq!(statuses.last(), Some(&429), "{statuses:?}");
    assert_eq!(
        register(1, "198.51.100.9"),
        201,
        "another client is not limited"
    );
    let events = cluster.replicas[0].admin(&["client", "events", "--limit", "5"]);
    let events = String::from_utf8_lossy(&events.stdout);
    assert!(
        events.contains("203.0.113.7"),
        "events name the client: {events}"
    );
}

#[test]
fn a_calls_trace_reaches_an_otlp_collector_with_every_step() {
    let collector = Collector::start();
    let schema = PgSchema::create("replicas_otlp");
    let backend = Backend::start();
    // Only traces a client decided are kept: the balancer's health checks
    // and the untraced requests below are not exported.
    let otlp = [
        "--otlp-endpoint",
        &collector.url,
        "--otlp-sample-ratio",
        "0",
    ];
    let cluster = cluster_with(&schema, &backend, &otlp);
    let demo = user_token(&cluster.replicas[0], "demo", DEMO_PASSWORD);
    // The client's own trace: the call continues it.
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent_id = "00f067aa0ba902b7";
    let traceparent = format!("00-{trace_id}-{parent_id}-01");
    let params = json!({
        "name": "run_by_tag",
        "arguments": {"tags": ["smoke"], "environment": "staging", "project": "payments"},
    });
    let traced = [("traceparent", traceparent.as_str())];
    let answer = post_call(&cluster.url, &demo, params.clone(), json!({}), &traced);
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");

    let wanted = [
        "http.request",
        "auth",
        "tools/call",
        "policy",
        "plan",
        "sandbox",
        "audit",
    ];
    let mut spans = Vec::new();
    for _ in 0..100 {
        spans = collector
            .spans()
            .into_iter()
            .filter(|s| {
                s["traceId"]
                    .as_str()
                    .is_some_and(|t| t.eq_ignore_ascii_case(trace_id))
            })
            .collect();
        let names: Vec<&str> = spans.iter().filter_map(|s| s["name"].as_str()).collect();
        if wanted.iter().all(|w| names.contains(w)) {
            break;
        }
        thread::sleep(Duration::from_millis(100));
    }
    let name_of = |id: &str| {
        spans
            .iter()
            .find(|s| s["spanId"].as_str() == Some(id))
            .and_then(|s| s["name"].as_str())
            .unwrap_or("?")
            .to_owned()
    };
    let mut tree: Vec<(String, String)> = spans
        .iter()
        .map(|s| {
            let parent = s["parentSpanId"].as_str().unwrap_or_default();
            let parent = if parent.eq_ignore_ascii_case(parent_id) {
                "(client)".to_owned()
            } else {
                name_of(parent)
            };
            (s["name"].as_str().unwrap_or_default().to_owned(), parent)
        })
        .collect();
    tree.sort();
    // The call's span names the call, as its audit row does.
    let call = spans
        .iter()
        .find(|s| s["name"] == "tools/call")
        .expect("the call's span");
    let call_id = call["attributes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["key"] == "call_id")
        .and_then(|a| a["value"]["stringValue"].as_str())
        .unwrap_or_else(|| panic!("no call_id attribute: {call}"));
    let row = format!("call_id = '{call_id}' AND tool = 'run_by_tag'");
    assert_eq!(
        schema.count_where("audit", &row),
        1,
        "the audit row of {call_id}"
    );
    for (name, parent) in [
        ("http.request", "(client)"),
        ("auth", "http.request"),
        ("tools/call", "http.request"),
        ("policy", "tools/call"),
        ("plan", "tools/call"),
        ("sandbox", "tools/call"),
        ("audit", "tools/call"),
    ] {
        assert!(
            tree.contains(&(name.to_owned(), parent.to_owned())),
            "no span {name} under {parent} in the trace: {tree:?}"
        );
    }

    // Every kind of request has its span: a list names its MCP method, an
    // OAuth request its path. An untraced call is not sampled (ratio 0).
    let listed = "5bf92f3577b34da6a3ce929d0e0e4737";
    let oauth = "6bf92f3577b34da6a3ce929d0e0e4738";
    let traced_by = |trace: &str| format!("00-{trace}-{parent_id}-01");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }}})
    .to_string();
    let authorization = format!("Bearer {demo}");
    let list_parent = traced_by(listed);
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
        ("Authorization", authorization.as_str()),
        ("traceparent", list_parent.as_str()),
    ];
    let answer = exchange_full(&cluster.url, "POST", "/mcp", &headers, &list);
    assert_eq!(answer.status, 200, "{}", answer.body);
    let oauth_parent = traced_by(oauth);
    let metadata = "/.well-known/oauth-authorization-server";
    let headers = [("traceparent", oauth_parent.as_str())];
    let answer = exchange_full(&cluster.url, "GET", metadata, &headers, "");
    assert_eq!(answer.status, 200, "{}", answer.body);
    let untraced = post_call(&cluster.url, &demo, params.clone(), json!({}), &[]);
    assert_eq!(untraced["result"]["isError"], json!(false), "{untraced}");
    let attribute = |span: &Value, key: &str| {
        (span["attributes"].as_array().into_iter().flatten())
            .find(|a| a["key"] == key)
            .and_then(|a| a["value"]["stringValue"].as_str())
            .map(str::to_owned)
    };
    let of_trace = |trace: &str| {
        let mut found = Vec::new();
        for _ in 0..100 {
            found = (collector.spans().into_iter())
                .filter(|s| (s["traceId"].as_str()).is_some_and(|t| t.eq_ignore_ascii_case(trace)))
                .collect::<Vec<Value>>();
            if !found.is_empty() {
                break;
            }
            thread::sleep(Duration::from_millis(100));
        }
        found
    };
    let list_spans = of_trace(listed);
    assert!(
        list_spans.iter().any(|s| s["name"] == "http.request"
            && attribute(s, "mcp.method").as_deref() == Some("tools/list")),
        "the list's request names its method: {list_spans:?}"
    );
    let oauth_spans = of_trace(oauth);
    assert!(
        oauth_spans.iter().any(|s| s["name"] == "http.request"
            && attribute(s, "url.path").as_deref() == Some(metadata)),
        "the OAuth request has its span: {oauth_spans:?}"
    );
    thread::sleep(Duration::from_secs(1));
    let ours = [trace_id, listed, oauth];
    let strays: Vec<Value> = (collector.spans().into_iter())
        .filter(|s| {
            let t = s["traceId"]
                .as_str()
                .unwrap_or_default()
                .to_ascii_lowercase();
            !ours.contains(&t.as_str())
        })
        .collect();
    assert!(
        strays.is_empty(),
        "only the traces clients decided are exported at ratio 0: {} others, e.g. {:?}",
        strays.len(),
        strays.first()
    );
}
