//! The rmcp `ServerHandler`: `tools/list` and `tools/call` over the host.

use std::sync::Arc;

use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, ErrorData, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use toolhost_invoke::{CallRequest, Toolhost};
use toolhost_types::Principal;

use crate::progress::ProgressRelay;
use crate::{convert, cursor};

/// The MCP server: a cheap `Clone` handle over the host, built per request
/// in stateless mode and per session in legacy mode.
#[derive(Clone)]
pub struct McpServer {
    host: Arc<Toolhost>,
}

impl McpServer {
    /// A handler over `host`.
    pub fn new(host: Arc<Toolhost>) -> Self {
        Self { host }
    }

    /// Who is calling: the principal the bearer check (in front of `/mcp`)
    /// put into the request's extensions. A request without one never
    /// reaches a tool.
    fn caller(&self, ctx: &RequestContext<RoleServer>) -> Result<Principal, ErrorData> {
        let principal = ctx
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Principal>())
            .ok_or_else(|| {
                tracing::error!("an unauthenticated request reached the MCP handler");
                ErrorData::internal_error("request is not authenticated", None)
            })?;
        Ok(principal.clone())
    }
}

/// The Streamable HTTP service for `/mcp`, to mount in axum.
pub fn service(
    host: Arc<Toolhost>,
    config: StreamableHttpServerConfig,
) -> StreamableHttpService<McpServer, LocalSessionManager> {
    let server = McpServer::new(host);
    StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("toolhost", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Tools run in a sandbox. A result with isError carries a stable error code in \
                 structuredContent.error.code; TOOL_NOT_FOUND means your tool list is stale.",
            )
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let who = self.caller(&ctx)?;
        let after = match request.and_then(|r| r.cursor) {
            Some(c) => Some(
                cursor::parse(&c)
                    .ok_or_else(|| ErrorData::invalid_params("invalid cursor", None))?,
            ),
            None => None,
        };
        let visible = self.host.list(&who).await.map_err(|e| {
            tracing::error!(error = ?e, "listing tools failed internally");
            ErrorData::internal_error("internal error", None)
        })?;
        let names = visible.iter().map(|t| t.spec().name.as_str());
        let (range, next) = cursor::page(names, after.as_deref(), cursor::PAGE_SIZE);
        let tools: Vec<Tool> = visible[range]
            .iter()
            .map(|t| convert::tool(t.spec()))
            .collect();
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = next;
        // The list depends on the caller's permissions, read live: never
        // share it, and let clients re-list whenever they need (ttl 0).
        Ok(result.with_cache_scope(CacheScope::Private).with_ttl_ms(0))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let who = self.caller(&ctx)?;
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let (progress, relay) = match ctx.meta.get_progress_token() {
            Some(token) => {
                let (sink, relay) = ProgressRelay::start(token, ctx.peer.clone());
                (Some(sink), Some(relay))
            }
            None => (None, None),
        };
        let req = CallRequest {
            tool: request.name.to_string(),
            arguments,
            progress,
        };
        let outcome = self.host.call(&who, req, &ctx.ct).await;
        if let Some(relay) = relay {
            relay.flush().await;
        }
        let result = match outcome {
            Ok(out) => convert::answer(out),
            Err(e) => convert::failure(&e)?,
        };
        Ok(CallToolResponse::Complete(result))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.host.tool(name).map(|t| convert::tool(t.spec()))
    }
}
