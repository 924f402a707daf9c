//! Tools written in other languages than Rust, served like any plugin: each
//! language's reference plugin (built by `make python-plugins` and `make
//! ts-plugins` into `target/plugins/{python,ts}/`) is pinned, signed and
//! served; the Python MCP SDK lists and calls its `greet_<lang>` in both eras and
//! gets structured output; its resolving tool asks its question as a
//! clarification; 64 concurrent calls of the Python tool all succeed; the
//! TypeScript `greet_ts`, given no name, asks the client for one (the
//! SDK's `client` import) in an `input_required` round; and each plugin's
//! prompt and resource (its SDK's `prompts` and `resources` exports) are
//! listed, got, completed and read over HTTP.
//! The host's compile cache is shared by these tests, so a component is
//! compiled once per machine, not once per server.

mod support;

use serde_json::{Value, json};
use support::bench::{Backend, call_at, request_at};
use support::languages::{reference, serve};
use support::oauth::json as parse;
use support::{Server, Tools};

fn structured(a: &Value) -> Value {
    assert_eq!(a["result"]["isError"], json!(false), "{a}");
    a["result"]["structuredContent"].clone()
}

/// The Python SDK lists and calls `greet_<lang>` (tests/e2e/python_client.py, both
/// eras); the resolving tool asks for the project it was not given.
fn served_and_called(lang: &str, stem: &str) -> (Backend, Server, String) {
    let tools = Tools::require();
    let backend = Backend::start();
    let (server, token) = serve(&backend, reference(lang, "hello", stem));
    // Tool names are unique in a catalog: each language's are suffixed.
    let suffix = stem.trim_start_matches("hello_");
    let (greet, describe) = (
        format!("greet_{suffix}"),
        format!("describe_project_{suffix}"),
    );
    let cmd = tools.python("python_client.py", &[&server.url, &greet]);
    server.run_client_as(
        &format!("{lang} via the python client"),
        cmd,
        std::time::Duration::from_secs(180),
        &token,
    );
    let asked = structured(&call_at(&server.url, &token, &describe, json!({})));
    assert_eq!(
        asked["reason"],
        json!("missing_required"),
        "{lang}: {asked}"
    );
    assert_eq!(asked["field"], json!("project"), "{lang}: {asked}");
    let answered = structured(&call_at(
        &server.url,
        &token,
        &describe,
        json!({"project": "payments"}),
    ));
    assert_eq!(answered["name"], json!("payments"), "{lang}: {answered}");
    (backend, server, token)
}

#[test]
fn a_python_tool_is_served_called_from_the_python_sdk_and_asks_its_question() {
    let (_backend, server, token) = served_and_called("python", "hello_py");
    // 64 at once: the sandbox pool holds them all (a Python component
    // creates 14 core instances).
    let url = server.url.clone();
    let threads: Vec<_> = (0..64)
        .map(|i| {
            let (url, token) = (url.clone(), token.clone());
            std::thread::spawn(move || {
                call_at(&url, &token, "greet_py", json!({"name": format!("n{i}")}))
            })
        })
        .collect();
    for (i, t) in threads.into_iter().enumerate() {
        let a = t.join().expect("joined");
        assert_eq!(
            structured(&a),
            json!({"message": format!("Hello, n{i}!")}),
            "{a}"
        );
    }
    prompt_and_resource_are_served(&server.url, &token, "py");
}

/// A reference plugin's prompt `introduce_project_<suffix>` and resource
/// `greetings_<suffix>` (its SDK's `prompts` and `resources` exports):
/// listed, the prompt got and its `project` argument completed from the
/// plugin's entities, the resource read.
fn prompt_and_resource_are_served(url: &str, token: &str, suffix: &str) {
    let prompt = format!("introduce_project_{suffix}");
    let resource = format!("hello://{suffix}/greetings");
    let (prompt, resource) = (prompt.as_str(), resource.as_str());
    let listed = request_at(url, token, "prompts/list", "", json!({}));
    let prompts = listed["result"]["prompts"].as_array().expect("prompts");
    let listed_prompt = (prompts.iter())
        .find(|p| p["name"] == json!(prompt))
        .unwrap_or_else(|| panic!("{prompt} is listed: {listed}"));
    assert_eq!(
        listed_prompt["title"],
        json!("Introduce a project"),
        "{listed_prompt}"
    );
    let arguments = &listed_prompt["arguments"];
    assert_eq!(arguments[0]["name"], json!("project"), "{listed_prompt}");
    assert_eq!(arguments[0]["required"], json!(true), "{listed_prompt}");
    assert_eq!(arguments[1]["name"], json!("language"), "{listed_prompt}");
    let params = json!({"name": prompt, "arguments": {"project": "payments", "language": "fr"}});
    let got = request_at(url, token, "prompts/get", prompt, params);
    let message = &got["result"]["messages"][0];
    assert_eq!(message["role"], json!("user"), "{got}");
    let text = message["content"]["text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("Bonjour, newcomer !") && text.contains("project payments"),
        "{got}"
    );
    let params = json!({
        "ref": {"type": "ref/prompt", "name": prompt},
        "argument": {"name": "project", "value": "pay"},
    });
    let completed = request_at(url, token, "completion/complete", "", params);
    let values = completed["result"]["completion"]["values"].as_array();
    assert!(
        values.is_some_and(|v| v.contains(&json!("payments"))),
        "{completed}"
    );

    let listed = request_at(url, token, "resources/list", "", json!({}));
    let resources = listed["result"]["resources"].as_array().expect("resources");
    let listed_resource = (resources.iter())
        .find(|r| r["uri"] == json!(resource))
        .unwrap_or_else(|| panic!("{resource} is listed: {listed}"));
    assert_eq!(
        listed_resource["name"],
        json!(format!("greetings_{suffix}")),
        "{listed_resource}"
    );
    assert_eq!(
        listed_resource["mimeType"],
        json!("application/json"),
        "{listed_resource}"
    );
    let read = request_at(
        url,
        token,
        "resources/read",
        resource,
        json!({"uri": resource}),
    );
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["uri"], json!(resource), "{read}");
    assert_eq!(contents["mimeType"], json!("application/json"), "{read}");
    let greetings = parse(contents["text"].as_str().unwrap_or_default());
    let fr = greetings["fr"].as_str().unwrap_or_default();
    assert!(fr.starts_with("Bonjour, "), "{read}");
}

/// A stateless (2026-07-28) `tools/call` with `params` by a client
/// declaring `capabilities`: the JSON-RPC answer.
fn call_declaring(url: &str, token: &str, mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string();
    let authorization = format!("Bearer {token}");
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name.as_str()),
        ("Authorization", authorization.as_str()),
    ];
    let answer = support::exchange_full(url, "POST", "/mcp", &headers, &body);
    assert_eq!(answer.status, 200, "{}", answer.body);
    parse(&answer.body)
}

#[test]
fn a_typescript_tool_is_served_called_from_the_python_sdk_and_asks_its_question() {
    let (_backend, server, token) = served_and_called("ts", "hello_ts");
    // `greet_ts` without a name asks the person through the SDK's `client`
    // import: a client that cannot be asked leaves the name missing…
    let missing = call_at(&server.url, &token, "greet_ts", json!({}));
    assert_eq!(missing["result"]["isError"], json!(true), "{missing}");
    assert!(missing.to_string().contains("cannot be asked"), "{missing}");
    // …one that answers forms gets the form, and the call runs again with
    // the answer.
    let forms = json!({"elicitation": {"form": {}}});
    let asked = call_declaring(
        &server.url,
        &token,
        json!({"name": "greet_ts", "arguments": {}}),
        forms.clone(),
    );
    let result = &asked["result"];
    assert_eq!(result["resultType"], json!("input_required"), "{asked}");
    assert_eq!(
        result["inputRequests"]["name"]["method"],
        json!("elicitation/create"),
        "{asked}"
    );
    let answered = call_declaring(
        &server.url,
        &token,
        json!({
            "name": "greet_ts",
            "arguments": {},
            "requestState": result["requestState"],
            "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
        }),
        forms,
    );
    assert_eq!(structured(&answered), json!({"message": "Hello, Ada!"}));
    prompt_and_resource_are_served(&server.url, &token, "ts");
}
