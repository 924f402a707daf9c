//! The sandbox: every plugin call runs in a fresh, capped wasmtime `Store`.
//!
//! This room owns the `Engine` (trimmed features, sized pooling allocator,
//! epoch interruption), the compiled-component cache on disk, the compile
//! queue (compiles off the request threads, each tenant within its share), one
//! pre-instantiated component per plugin, the per-call `Store` with its
//! budget, the host imports (one module per WIT interface under
//! [`host`]) and the plugin's optional exports (`entities` for the
//! resolver's snapshots, [`authoring`]: the kinds it authors, a subject's
//! current state, a proposal validated and diffed). It turns every trap
//! and breached cap into a typed [`CallError`] and keeps serving.
//!
//! It does not decide who may call what (`policy`), read manifests
//! (`catalog`) or write audit rows (`audit`): it runs what it is asked to run,
//! within the budget it is given.
//!
//! ```no_run
//! # async fn demo(component: &[u8]) -> Result<(), Box<dyn std::error::Error>> {
//! use toolhost_limits::CallBudget;
//! use toolhost_runtime::{CallContext, Reply, Runtime, RuntimeConfig};
//! let runtime = Runtime::new(RuntimeConfig::default())?;
//! let (plugin, _report) = runtime.load("hello".parse()?, component).await?;
//! let ctx = CallContext::new("tenant-a", "alice");
//! let out = runtime.call(&plugin, &ctx, "greet", r#"{"name":"Ada"}"#, &CallBudget::DEFAULT).await?;
//! match out {
//!     Reply::Output(out) => println!("{}", out.structured),
//!     Reply::Clarify(question) => println!("{}", question.ask_user),
//!     Reply::NeedsInput(requests) => println!("asks its client {} things", requests.len()),
//! }
//! # Ok(()) }
//! ```

mod authoring;
mod bindings;
mod cache;
mod compile_queue;
mod config;
mod content;
mod contract;
mod engine;
mod error;
mod host;
mod limiter;
mod prompts;
mod resources;
mod sandbox;
mod spec;
mod state;
mod v0_1;

pub use authoring::{
    AuthoringKind, Change, ChangeOp, Current, MAX_AUTHORING_KINDS, MAX_CHANGES, MAX_PROBLEMS,
    MAX_VERSION_LEN, Problem,
};
pub use cache::CacheOutcome;
pub use compile_queue::Payer;
pub use config::RuntimeConfig;
pub use content::{
    ContentBlock, MAX_CONTENT_BLOCKS, MAX_CONTENT_FIELD, ResourceBody, ResourceLink,
};
pub use error::{CallError, LoadError};
pub use host::backend::BackendGrant;
pub use host::checkpoint::{CheckpointGrant, MAX_CHECKPOINTS_PER_CALL};
pub use host::client::{
    AskClient, AskError, AskFuture, CLIENT_ASK_TIMEOUT, ClientChannel, ClientLink, ClientRound,
    ClientSupport, MAX_CLIENT_REQUESTS, MAX_CLIENT_ROUNDS, SamplingGrant,
};
pub use host::exploration::{
    Exploration, KeptArtifact, MAX_REFUSAL_DETAIL, MAX_REFUSALS_LISTED, RunLog,
};
pub use host::log::{LogLevel, LogLine, LogSink};
pub use host::notify::{MAX_RESOURCE_UPDATES, UpdateSink};
pub use host::progress::{MAX_PROGRESS_MESSAGE, ProgressReport, ProgressSink};
pub use host::protocol::{HOST_JSONRPC_CODES, JSONRPC_INVALID_PARAMS, MAX_PROTOCOL_MESSAGE};
pub use host::resolver::Snapshots;
pub use prompts::{
    MAX_PROMPT_ARGUMENTS, MAX_PROMPT_MESSAGES, MAX_PROMPTS, Prompt, PromptArgument, PromptMessage,
    PromptReply, PromptRole, PromptSpec,
};
pub use resources::{
    MAX_READ_CONTENTS, MAX_RESOURCES, MAX_URI_LEN, ResourceContents, ResourceSpec, TemplateSpec,
};
pub use sandbox::{CallContext, LoadReport, Planned, Plugin, Reply, Runtime};
pub use spec::{Annotations, Plan, Target, ToolOutput, ToolSpec};
