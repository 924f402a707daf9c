//! The ceiling: a bare rmcp server whose one tool, `greet_native`, is
//! `greet` written natively, with no authentication, policy, sandbox or
//! audit: what serving MCP costs on this machine with nothing else.
//!
//! Shared by `host/server/benches/http.rs` (served in the bench's own
//! process) and the root package's `benches/served.rs` (served in a
//! process of its own), so both measure the same ceiling: the same rmcp,
//! the same streamable HTTP config as the host's (JSON answers), `/mcp`,
//! TCP_NODELAY.

use std::sync::Arc;

use axum::serve::ListenerExt;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};

/// The ceiling's one tool.
pub const CEILING_TOOL: &str = "greet_native";

/// The ceiling: rmcp serving `greet` natively, and nothing else.
#[derive(Clone)]
struct Bare {
    greet: Tool,
}

impl Bare {
    fn new() -> Self {
        let schema = json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        });
        let Value::Object(schema) = schema else {
            unreachable!("an object")
        };
        Self {
            greet: Tool::new(CEILING_TOOL, "Greets someone by name.", schema),
        }
    }
}

impl ServerHandler for Bare {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![self.greet.clone()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("name"))
            .and_then(Value::as_str)
            .ok_or_else(|| ErrorData::invalid_params("name is required", None))?
            .trim();
        let message = format!("Hello, {name}!");
        let mut result = CallToolResult::structured(json!({"message": message}));
        result.content = vec![ContentBlock::text(message)];
        Ok(CallToolResponse::Complete(result))
    }
}

/// The bare rmcp server on a free loopback port, served in the background
/// on the current tokio runtime, as the host's own is served (the same
/// config, `/mcp`, TCP_NODELAY): its address, `127.0.0.1:PORT`.
pub async fn start_ceiling() -> String {
    let bare = Bare::new();
    let mcp = StreamableHttpService::new(
        move || Ok(bare.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default().with_json_response(true),
    );
    let app = axum::Router::new().nest_service("/mcp", mcp);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serves") });
    addr.to_string()
}
