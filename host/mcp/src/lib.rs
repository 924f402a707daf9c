//! The MCP edge: [`McpServer`], an rmcp `ServerHandler` over the call path,
//! served over Streamable HTTP at `/mcp` for both protocol eras (2025-11-25
//! sessions and 2026-07-28 stateless requests, negotiated per request by
//! rmcp).
//!
//! This room owns the translation between MCP and the host: tools as MCP
//! `Tool`s, answers as `CallToolResult`s, and the one mapping from host
//! errors to MCP. Whose problem a failure is decides its channel: a request
//! that addresses nothing valid is a protocol error; a denial, a breached
//! budget or the tool's own failure is a tool result with `isError` and a
//! stable code; an internal failure is an opaque "internal error" (logged
//! with the call id). A question the resolver asks is none of these: it is
//! a normal result (`clarify`).

mod ask;
mod clarify;
mod client;
mod connect;
mod convert;
mod cursor;
mod events;
#[doc(hidden)]
pub mod fuzzing;
mod handler;
mod log;
mod progress;
mod prompts;
mod resources;
mod subscriptions;
mod task_status;
mod tasks;
mod tool_defs;

pub use ask::{Keyring, RequestStates, StatesError, StatesFuture};
pub use events::{EVENT_TTL, MAX_EVENT_BYTES, MemoryEvents, SharedEvents};
pub use handler::{McpServer, OwnedSession, service, service_for, service_with};
pub use subscriptions::MAX_SUBSCRIPTIONS;
pub use task_status::{ListenTasks, MAX_LISTENED_TASKS, accepted_task_ids};

/// `tool`'s MCP definition as `tools/list` lists it from the catalog of
/// `catalog_version`, as JSON: what `describe_tool` answers
/// (`toolhost_discovery::Describe`).
pub fn tool_json(tool: &toolhost_invoke::Tool, catalog_version: &str) -> serde_json::Value {
    serde_json::to_value(convert::tool(tool, catalog_version)).expect("a tool serializes")
}

/// A clarification in the shape a `tools/call` answers it with (its
/// `structuredContent`): what `toolhost call` prints for a question.
pub fn clarification_json(c: &toolhost_resolver::Clarification) -> serde_json::Value {
    clarify::structured(c)
}
