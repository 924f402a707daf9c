//! A backend on 127.0.0.1:0 and a real HTTP client to drive it.
#![allow(dead_code)]

use reqwest::{Method, RequestBuilder};
use serde_json::Value;
use testbench::{Advance, Config, Running, Seed};

/// The token every test backend is configured with.
pub const TOKEN: &str = "tb-test-token-7f3a";

pub struct Backend {
    pub running: Running,
    client: reqwest::Client,
}

impl Backend {
    /// The contract seed, executions advancing on read.
    pub async fn start(test_api: bool) -> Backend {
        Backend::start_advancing(test_api, Advance::OnRead).await
    }

    /// The contract seed, executions advancing as `advance` says.
    pub async fn start_advancing(test_api: bool, advance: Advance) -> Backend {
        Backend::start_with(Config {
            token: TOKEN.into(),
            seed: Seed::contract(),
            test_api,
            advance,
        })
        .await
    }

    /// A backend configured as `config` says.
    pub async fn start_with(config: Config) -> Backend {
        let addr = "127.0.0.1:0".parse().expect("a socket address");
        let running = testbench::start(addr, config)
            .await
            .expect("the backend binds");
        Backend {
            running,
            client: reqwest::Client::new(),
        }
    }

    pub fn handle(&self) -> &testbench::Handle {
        &self.running.handle
    }

    /// A request with the token and `X-Tenant: tenant`.
    pub fn api(&self, method: Method, tenant: &str, path: &str) -> RequestBuilder {
        self.raw(method, path)
            .bearer_auth(TOKEN)
            .header("X-Tenant", tenant)
    }

    /// A request with no headers added.
    pub fn raw(&self, method: Method, path: &str) -> RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.running.url()))
    }

    pub async fn get(&self, tenant: &str, path: &str) -> (u16, Value) {
        send(self.api(Method::GET, tenant, path)).await
    }

    pub async fn post(&self, tenant: &str, path: &str, body: Value) -> (u16, Value) {
        send(json_body(self.api(Method::POST, tenant, path), &body)).await
    }
}

/// `body` as a JSON request body (reqwest is built without its `json` feature).
pub fn json_body(req: RequestBuilder, body: &Value) -> RequestBuilder {
    req.header("Content-Type", "application/json")
        .body(body.to_string())
}

/// Sends and reads the status and the JSON body (`null` when empty).
pub async fn send(req: RequestBuilder) -> (u16, Value) {
    let resp = req.send().await.expect("the backend answers");
    let status = resp.status().as_u16();
    let text = resp.text().await.expect("a body");
    let body = match text.is_empty() {
        true => Value::Null,
        false => serde_json::from_str(&text).unwrap_or_else(|e| panic!("JSON ({e}): {text}")),
    };
    (status, body)
}

/// The `id`s of a JSON array of rows, in order.
pub fn ids(rows: &Value) -> Vec<u64> {
    let rows = rows
        .as_array()
        .unwrap_or_else(|| panic!("an array: {rows}"));
    rows.iter()
        .map(|r| r["id"].as_u64().unwrap_or_else(|| panic!("an id: {r}")))
        .collect()
}

/// The distinct `tenant`s of a JSON array of rows, sorted.
pub fn tenants(rows: &Value) -> Vec<String> {
    let rows = rows
        .as_array()
        .unwrap_or_else(|| panic!("an array: {rows}"));
    let mut t: Vec<String> = rows
        .iter()
        .map(|r| r["tenant"].as_str().unwrap_or_default().to_owned())
        .collect();
    t.sort();
    t.dedup();
    t
}

/// The contract seed plus environment 14 `staging-auth`, auth's own.
pub fn seed_with_project_environment() -> Seed {
    let mut seed = Seed::contract();
    seed.environments.push(testbench::Environment {
        id: 14,
        name: "staging-auth".into(),
        project_id: Some(2),
        tenant: "demo".into(),
        tags: vec![],
    });
    seed
}
