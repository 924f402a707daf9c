//! The rmcp `ServerHandler`: `tools/list` and `tools/call` over the host.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::handler::server::ServerHandler;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, ErrorData, GetPromptRequestParams, GetPromptResponse, GetTaskParams,
    GetTaskResult, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerCapabilities, ServerConfig, Tool,
    UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use toolhost_discovery::Discovery;
use toolhost_invoke::{Answer, CallRequest, Conversation, Toolhost};
use toolhost_resolver::Clarification;
use toolhost_runs::{Run, RunStoreError};
use toolhost_runs_service::{RunError, Runs};
use toolhost_runtime::CallError;
use toolhost_types::Principal;
use tracing::Instrument;

use crate::ask::{self, Asker, RequestStates};
use crate::events::MemoryEvents;
use crate::log::LogRelay;
use crate::progress::ProgressRelay;

use crate::subscriptions::{self, SessionSubscriptions};
use crate::task_status::{self, ListenTasks};
use crate::tool_defs::ToolDefs;
use crate::{clarify, connect, convert, cursor, prompts, resources, tasks};

/// What the edge put in this request's extensions before rmcp: the
/// caller's principal, the tasks a listen request names.
fn from_edge<T: Send + Sync + 'static>(ctx: &RequestContext<RoleServer>) -> Option<&T> {
    ctx.extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<T>())
}

/// The MCP server: a cheap `Clone` handle over the host, built per request
/// in stateless mode and per session in legacy mode.
#[derive(Clone)]
pub struct McpServer {
    host: Arc<Toolhost>,
    asker: Arc<Asker>,
    /// The level a 2025-11-25 session set with `logging/setLevel` (none:
    /// its plugins' log lines are not sent). Each session has its own
    /// ([`McpServer::for_session`]).
    #[allow(deprecated)]
    log_level: Arc<std::sync::Mutex<Option<rmcp::model::LoggingLevel>>>,
    /// The resources a 2025-11-25 session subscribed to (each session has
    /// its own).
    subscriptions: SessionSubscriptions,
    /// The served tools' MCP definitions, shared by every session.
    tool_defs: Arc<ToolDefs>,
    /// The runs service, whose runs are the tasks of `tasks/*` (none: no
    /// task is found).
    runs: Option<Arc<Runs>>,
    /// How a large catalog is listed (default: [`Discovery::default`]).
    discovery: Arc<Discovery>,
}

impl McpServer {
    /// A handler over `host`, its questions sealed with a key of its own
    /// (one process; a restart forgets pending questions).
    pub fn new(host: Arc<Toolhost>) -> Self {
        Self {
            host,
            asker: Arc::new(Asker::new()),
            log_level: Arc::default(),
            subscriptions: Arc::default(),
            tool_defs: Arc::default(),
            runs: None,
            discovery: Arc::default(),
        }
    }

    /// This handler, listing a large catalog as `discovery` says.
    pub fn with_discovery(mut self, discovery: Discovery) -> Self {
        self.discovery = Arc::new(discovery);
        self
    }

    /// This handler, with `runs` as the tasks it serves.
    pub fn with_runs(mut self, runs: Arc<Runs>) -> Self {
        self.runs = Some(runs);
        self
    }

    /// Run `id` as `who` may see it (see [`Runs::visible_run`]).
    pub(crate) async fn run_for(
        &self,
        who: &Principal,
        id: &str,
    ) -> Result<Run, toolhost_invoke::InvokeError> {
        match &self.runs {
            Some(runs) => runs.visible_run(self.host.host(), who, id).await,
            None => Err(RunError::Store(RunStoreError::Failed(
                "no run store is configured".into(),
            ))
            .into()),
        }
    }

    /// How long a run is kept readable once over.
    pub(crate) fn run_retention(&self) -> Option<std::time::Duration> {
        self.runs.as_ref().map(|r| r.retention())
    }

    /// This handler for a new session (or stateless request): the same
    /// host and questions, a log level and subscriptions of its own.
    pub fn for_session(&self) -> Self {
        Self {
            log_level: Arc::default(),
            subscriptions: Arc::default(),
            ..self.clone()
        }
    }

    /// A handler over `host` whose questions any replica sharing `states`
    /// can answer (once). The keys are loaded now and reloaded every minute
    /// while the handler lives.
    pub async fn shared(
        host: Arc<Toolhost>,
        states: Arc<dyn RequestStates>,
    ) -> Result<Self, String> {
        let asker = Arc::new(Asker::shared(states).await?);
        let weak = Arc::downgrade(&asker);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(ask::KEYS_RELOAD);
            tick.tick().await;
            loop {
                tick.tick().await;
                let Some(asker) = weak.upgrade() else { break };
                if let Err(e) = asker.reload().await {
                    tracing::warn!(error = %e, "reloading the request-state keys failed");
                }
            }
        });
        Ok(Self {
            host,
            asker,
            log_level: Arc::default(),
            subscriptions: Arc::default(),
            tool_defs: Arc::default(),
            runs: None,
            discovery: Arc::default(),
        })
    }

    /// Who is calling: the principal the bearer check (in front of `/mcp`)
    /// put into the request's extensions. A request without one never
    /// reaches a tool.
    fn caller(&self, ctx: &RequestContext<RoleServer>) -> Result<Principal, ErrorData> {
        let principal = from_edge::<Principal>(ctx).ok_or_else(|| {
            tracing::error!("an unauthenticated request reached the MCP handler");
            ErrorData::internal_error("request is not authenticated", None)
        })?;
        Ok(principal.clone())
    }
}

impl McpServer {
    /// The level at or above which this request's plugin log lines reach
    /// its client: the request's own (`_meta`, 2026-07-28), else the one its
    /// session set (2025-11-25), else none.
    #[allow(deprecated)]
    fn log_level(&self, ctx: &RequestContext<RoleServer>) -> Option<rmcp::model::LoggingLevel> {
        ctx.meta
            .log_level()
            .or_else(|| *self.log_level.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// One run of the call path, relaying progress if the client asked
    /// (and will not be answered with a task instead).
    async fn run(
        &self,
        who: &Principal,
        tool: &str,
        arguments: Value,
        ctx: &RequestContext<RoleServer>,
        as_task: bool,
        inputs: &BTreeMap<String, Value>,
    ) -> Result<Answer, toolhost_invoke::InvokeError> {
        let token = ctx.meta.get_progress_token().filter(|_| !as_task);
        let (progress, relay) = match token {
            Some(token) => {
                let scanner = self.host.scanner().clone();
                let (sink, relay) = ProgressRelay::start(token, ctx.peer.clone(), scanner);
                (Some(sink), Some(relay))
            }
            None => (None, None),
        };
        let (log, log_relay) = match self.log_level(ctx).filter(|_| !as_task) {
            Some(min) => {
                let scanner = self.host.scanner().clone();
                let (sink, relay) = LogRelay::start(min, ctx.peer.clone(), scanner);
                (Some(sink), Some(relay))
            }
            None => (None, None),
        };
        let req = CallRequest {
            tool: tool.to_owned(),
            arguments,
            progress,
            log,
            conversation: conversation(ctx),
            // A run followed as a task asks its client through the task.
            client: Some(crate::client::link(ctx, inputs.clone())),
            task: as_task,
        };
        let outcome = self.host.call(who, req, &ctx.ct).await;
        if let Some(relay) = relay {
            relay.flush().await;
        }
        if let Some(relay) = log_relay {
            relay.flush().await;
        }
        outcome
    }
}

/// Asks the person in the legacy session, from the call's own future (so
/// the request rides the call's response stream). No sandbox is alive
/// while the person decides: the call that asked has ended.
async fn elicit(ctx: &RequestContext<RoleServer>, c: &Clarification) -> ask::Answer {
    let Ok(params) = ask::form(c) else {
        return ask::Answer::Declined;
    };
    let offered: Vec<i64> = c.candidates.iter().map(|c| c.id).collect();
    match ctx
        .peer
        .create_elicitation_with_timeout(params, Some(ask::ELICITATION_TIMEOUT))
        .await
    {
        Ok(answer) => ask::chosen_id(&answer, &c.field, &offered),
        Err(e) => {
            tracing::info!(error = %e, "the elicitation was not answered; answering with the question");
            ask::Answer::Declined
        }
    }
}

/// The conversation a request belongs to: its legacy session, if the edge
/// found the session to be the caller's own ([`OwnedSession`]); else the
/// invoke room's default (the principal and its client). A stateless
/// (2026-07-28) request has no session: an `Mcp-Session-Id` it carries
/// means nothing, so it cannot start a conversation (and a cache entry) of
/// its own per value sent.
fn conversation(ctx: &RequestContext<RoleServer>) -> Option<Conversation> {
    let parts = ctx.extensions.get::<http::request::Parts>()?;
    let OwnedSession(id) = parts.extensions.get::<OwnedSession>()?;
    Some(Conversation::Session(id.clone()))
}

/// A legacy session the edge in front of `/mcp` checked belongs to the
/// request's principal (put into the request's extensions by that edge).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedSession(pub String);

/// The Streamable HTTP service for `/mcp` over a handler of its own, to
/// mount in axum.
pub fn service(
    host: Arc<Toolhost>,
    config: StreamableHttpServerConfig,
) -> StreamableHttpService<McpServer, LocalSessionManager> {
    service_for(McpServer::new(host), config)
}

/// The Streamable HTTP service for `/mcp` over `server`. Its SSE events
/// are kept a while ([`MemoryEvents`]) so a client that loses a stream
/// mid-call resumes it with `Last-Event-ID`, in a session or not.
pub fn service_for(
    server: McpServer,
    config: StreamableHttpServerConfig,
) -> StreamableHttpService<McpServer, LocalSessionManager> {
    let events = Arc::new(MemoryEvents::default());
    let sessions = Arc::new(
        LocalSessionManager::default().with_event_store(Arc::new(crate::SharedEvents(events))),
    );
    service_with(server, config, sessions)
}

/// [`service_for`] over a session manager of the caller's (which keeps it,
/// to see which sessions are still open).
pub fn service_with(
    server: McpServer,
    config: StreamableHttpServerConfig,
    sessions: Arc<LocalSessionManager>,
) -> StreamableHttpService<McpServer, LocalSessionManager> {
    StreamableHttpService::new(move || Ok(server.for_session()), sessions, config)
}

impl McpServer {
    /// `tools/call`, within its span.
    async fn call_tool_in(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let who = self.caller(&ctx)?;
        let tool = request.name.to_string();
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let mut retry = match &request.request_state {
            Some(state) => {
                self.asker
                    .retry(
                        &who,
                        &tool,
                        &arguments,
                        state,
                        request.input_responses.as_ref(),
                    )
                    .await?
            }
            // Answers sent without a state (the client knew what the tool
            // asks): the plugin reads those it asks for, each checked.
            None => ask::Retry {
                inputs: request.input_responses.clone().unwrap_or_default(),
                ..ask::Retry::default()
            },
        };
        let channel = ask::channel(
            ctx.protocol_version().as_ref(),
            ctx.client_capabilities().as_ref(),
        );
        // A run started by a request that declared the Tasks extension is
        // answered as a task; a tool served only as a task refuses any
        // other request before anything runs (no row: nothing was called).
        // Only a caller that may see the tool hears why: to anyone else it
        // is not found, as ever, by the call path.
        let served = self.host.tool(&who.tenant, &tool);
        let wants_task = tasks::wanted(&ctx);
        if let Some(t) = served.as_ref().filter(|t| !wants_task && t.requires_task()) {
            let listed = (self.host.lists(&who, t).await)
                .map_err(|e| convert::rpc_failure(&e, "checking a tool's standing"))?;
            if listed {
                return Err(tasks::required(&tool));
            }
        }
        let as_task = wants_task && served.is_some_and(|t| t.is_task());
        let mut rounds = 0;
        loop {
            let pinned = ask::pinned(&arguments, &retry.chosen);
            let answer = self.run(&who, &tool, pinned, &ctx, as_task, &retry.inputs);
            let answer = answer.await;
            let question = match self.answered(&who, &tool, &arguments, &retry, as_task, answer) {
                Answered::Respond(respond) => return respond.await,
                Answered::Ask(question) => question,
                Answered::Connect { backend, url } => {
                    let version = ctx.protocol_version();
                    let caps = ctx.client_capabilities();
                    if rounds < ask::MAX_ROUNDS
                        && connect::in_session(version.as_ref(), caps.as_ref())
                    {
                        rounds += 1;
                        let asked = connect::ask(&ctx, &self.host, &who, (&backend, &url));
                        if asked.await == connect::Asked::Connected {
                            continue;
                        }
                    }
                    return Err(connect::required(&backend, &url));
                }
            };
            match channel {
                ask::Channel::InputRequired => {
                    let asked = self.asker.input_required(
                        &who,
                        &tool,
                        &arguments,
                        &question,
                        &retry.chosen,
                    )?;
                    return Ok(CallToolResponse::InputRequired(asked));
                }
                ask::Channel::Elicitation if rounds < ask::MAX_ROUNDS => {
                    rounds += 1;
                    match elicit(&ctx, &question).await {
                        ask::Answer::Chose(id) => {
                            retry.chosen.insert(question.field.clone(), id);
                        }
                        ask::Answer::Declined => {
                            return Ok(CallToolResponse::Complete(clarify::result(&question)));
                        }
                        ask::Answer::Unusable => {}
                    }
                }
                _ => return Ok(CallToolResponse::Complete(clarify::result(&question))),
            }
        }
    }

    /// What the client is answered for `answer`, a call of `tool` with
    /// `arguments`: a response, or a question to ask it (a clarification
    /// it has not declined).
    fn answered<'a>(
        &'a self,
        who: &'a Principal,
        tool: &'a str,
        arguments: &'a Value,
        retry: &'a ask::Retry,
        as_task: bool,
        answer: Result<Answer, toolhost_invoke::InvokeError>,
    ) -> Answered<'a> {
        let respond = |r: CallToolResponse| Answered::Respond(Box::pin(std::future::ready(Ok(r))));
        match answer {
            Ok(Answer::Clarify(c)) if !retry.declined => Answered::Ask(c),
            Ok(Answer::Clarify(c)) => respond(CallToolResponse::Complete(clarify::result(&c))),
            Ok(Answer::Output(out)) => match tasks::started_run(&out.structured) {
                Some(id) if as_task => {
                    let id = id.to_owned();
                    Answered::Respond(Box::pin(async move {
                        let run =
                            (self.run_for(who, &id).await).map_err(|e| tasks::error(&id, &e))?;
                        let created = tasks::created(&run, self.run_retention());
                        Ok(CallToolResponse::Task(created))
                    }))
                }
                _ => respond(CallToolResponse::Complete(convert::answer(out))),
            },
            Ok(Answer::ApprovalRequired(gate)) => {
                respond(CallToolResponse::Complete(convert::approval(&gate)))
            }
            Ok(Answer::NeedsInput(requests)) => Answered::Respond(Box::pin(std::future::ready(
                (self
                    .asker
                    .plugin_inputs(who, tool, arguments, requests, retry))
                .map(CallToolResponse::InputRequired),
            ))),
            Err(toolhost_invoke::InvokeError::Call(CallError::ConnectionRequired {
                backend,
                url,
            })) => Answered::Connect { backend, url },
            Err(toolhost_invoke::InvokeError::Call(CallError::MissingClientCapability {
                capability,
            })) => Answered::Respond(Box::pin(std::future::ready(Err(
                crate::client::missing_capability(&capability),
            )))),
            Ok(Answer::Artifact(artifact, content)) => respond(CallToolResponse::Complete(
                convert::artifact(&artifact, content),
            )),
            Err(e) => Answered::Respond(Box::pin(std::future::ready(
                convert::failure(&e, self.host.scanner()).map(CallToolResponse::Complete),
            ))),
        }
    }
}

/// What a call's answer comes to: a response (read once it is ready), or
/// a question for the client.
enum Answered<'a> {
    Respond(
        std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<CallToolResponse, ErrorData>> + Send + 'a>,
        >,
    ),
    Ask(Clarification),
    /// The person has not connected `backend`: they are asked to, at `url`.
    Connect {
        backend: String,
        url: String,
    },
}

impl ServerHandler for McpServer {
    #[allow(deprecated)] // logging (SEP-2577), which 2025-11-25 clients still use
    fn get_info(&self) -> ServerConfig {
        // Resources: plugins' (listed, subscribable) and the artifacts
        // large answers are kept as (read only by the URI a call answered
        // with; none are listed).
        // Tools, prompts, resources: the catalog is live; sessions are told
        // when it changes.
        // Tasks (2026-07-28 extension): exploration runs, for requests that
        // declare it. Logging: plugins' log lines, to clients that ask.
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_completions()
            .enable_tasks()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("toolhost", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Tools run in a sandbox. A result with isError carries a stable error code in \
                 structuredContent.error.code; TOOL_NOT_FOUND means your tool list is stale. \
                 When tools/list names find_tools, the catalog is larger than the list: search \
                 it with find_tools and call any tool it finds by name, listed or not.",
            )
    }

    /// 2025-11-25 `logging/setLevel`: this session's plugins' log lines at
    /// `level` or above reach it as `notifications/message`, redacted.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *self.log_level.lock().unwrap_or_else(|p| p.into_inner()) = Some(request.level);
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let who = self.caller(&ctx)?;
        let after = cursor::resume_after(request)?;
        let listed = self
            .host
            .list(&who)
            .await
            .map_err(|e| convert::rpc_failure(&e, "listing tools"))?;
        // A large catalog is listed as its core set and the discovery
        // tools; listing decides nothing about what may be called.
        let visible = self.discovery.listed(listed.tools);
        let version = listed.catalog_version.as_str();
        let names = visible.iter().map(|t| t.spec().name.as_str());
        let (range, next) = cursor::page(names, after.as_deref(), cursor::PAGE_SIZE);
        let tools: Vec<Tool> = (visible[range].iter())
            .map(|t| convert::tool(t, version))
            .collect();
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = next;
        // The list depends on the caller's permissions, read live: never
        // share it, and let clients re-list whenever they need (ttl 0).
        Ok(result.with_cache_scope(CacheScope::Private).with_ttl_ms(0))
    }

    /// The resources plugins export at fixed URIs that the caller may read
    /// (artifacts are never listed: they are read by the URI a call gave).
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let who = self.caller(&ctx)?;
        let visible = self
            .host
            .resources(&who)
            .await
            .map_err(|e| convert::rpc_failure(&e, "listing resources"))?;
        let result =
            ListResourcesResult::with_all_items(visible.iter().map(resources::resource).collect());
        Ok(result.with_cache_scope(CacheScope::Private).with_ttl_ms(0))
    }

    /// The resource templates plugins export that the caller may read.
    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let who = self.caller(&ctx)?;
        let visible = self
            .host
            .resource_templates(&who)
            .await
            .map_err(|e| convert::rpc_failure(&e, "listing resource templates"))?;
        let result = ListResourceTemplatesResult::with_all_items(
            visible.iter().map(resources::template).collect(),
        );
        Ok(result.with_cache_scope(CacheScope::Private).with_ttl_ms(0))
    }

    /// The prompts plugins export that the caller may use.
    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let who = self.caller(&ctx)?;
        let after = cursor::resume_after(request)?;
        let visible = self
            .host
            .prompts(&who)
            .await
            .map_err(|e| convert::rpc_failure(&e, "listing prompts"))?;
        let names = visible.iter().map(|p| p.spec.name.as_str());
        let (range, next) = cursor::page(names, after.as_deref(), cursor::PAGE_SIZE);
        let mut result =
            ListPromptsResult::with_all_items(visible[range].iter().map(prompts::prompt).collect());
        result.next_cursor = next;
        // Per caller and live, as the tool list.
        Ok(result.with_cache_scope(CacheScope::Private).with_ttl_ms(0))
    }

    /// A prompt filled in, or the client's input it needs first.
    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let who = self.caller(&ctx)?;
        prompts::get(&self.host, &self.asker, &who, request, &ctx).await
    }

    /// Completions of a prompt's argument, from the caller's tenant only.
    async fn complete(
        &self,
        request: CompleteRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let who = self.caller(&ctx)?;
        prompts::complete(&self.host, &who, request).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // rmcp may run this on another task than the HTTP request's: the
        // request's span (telemetry) comes along in its extensions.
        let request_span = ctx
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<tracing::Span>())
            .cloned()
            .unwrap_or_else(tracing::Span::current);
        // At `warn`, so that it is made at the default log level too: every
        // line logged within the call names its call id, as its audit row
        // does.
        let span = tracing::span!(
            parent: &request_span,
            tracing::Level::WARN,
            "tools/call",
            tool = %request.name,
            call_id = tracing::field::Empty,
        );
        self.call_tool_in(request, ctx).instrument(span).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let who = self.caller(&ctx)?;
        // A plugin's resource or template first; else one of the host's
        // artifacts; else not found, the same words whichever the reason.
        match self.host.read_plugin_resource(&who, &request.uri).await {
            Ok(Some(contents)) => {
                let contents = contents.into_iter().map(resources::contents).collect();
                let result =
                    ReadResourceResult::new(contents).with_cache_scope(CacheScope::Private);
                return Ok(ReadResourceResponse::Complete(result));
            }
            Ok(None) => {}
            Err(e) => return Err(resources::failure(&e, self.host.scanner(), &request.uri)),
        }
        match self.host.read_artifact(&who, &request.uri).await {
            Ok((artifact, body)) => {
                tracing::info!(artifact = %artifact.id, tool = %artifact.tool, size = artifact.size, "artifact read");
                let contents = convert::artifact_contents(&artifact, body);
                // Another reader may hold other permissions: never share it.
                let result =
                    ReadResourceResult::new(vec![contents]).with_cache_scope(CacheScope::Private);
                Ok(ReadResourceResponse::Complete(result))
            }
            Err(e @ toolhost_invoke::InvokeError::ArtifactNotFound { .. }) => {
                Err(ErrorData::resource_not_found(
                    e.to_string(),
                    Some(serde_json::json!({"uri": request.uri})),
                ))
            }
            Err(e) => Err(convert::rpc_failure(&e, "reading an artifact")),
        }
    }

    /// 2026-07-28 `subscriptions/listen`: what is offered
    /// ([`subscriptions::accepted`]).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(subscriptions::accepted(requested))
    }

    /// The stream is told what changed of what it asked, and of the
    /// tasks it named when it declared the Tasks extension
    /// ([`task_status`]).
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let ctx = context.request_context();
        let who = self.caller(ctx)?;
        let task_ids = from_edge::<ListenTasks>(ctx)
            .filter(|_| tasks::wanted(ctx))
            .map(|ListenTasks(ids)| ids.clone())
            .unwrap_or_default();
        tokio::join!(
            subscriptions::listen(&self.host, &who, &context),
            task_status::tell(self, &who, task_ids, &context),
        );
        Ok(())
    }

    /// 2025-11-25 `resources/subscribe`: a plugin resource the caller may
    /// read.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let who = self.caller(&ctx)?;
        subscriptions::subscribe(&self.host, &self.subscriptions, &who, &request.uri).await
    }

    /// 2025-11-25 `resources/unsubscribe`.
    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.caller(&ctx)?;
        subscriptions::unsubscribe(&self.subscriptions, &request.uri);
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        tokio::spawn(subscriptions::tell_session(
            self.host.clone(),
            context.peer,
            self.subscriptions.clone(),
        ));
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let who = self.caller(&ctx)?;
        let id = request.task_id;
        let run = self
            .run_for(&who, &id)
            .await
            .map_err(|e| tasks::error(&id, &e))?;
        let detailed = tasks::detailed(&run, self.run_retention())?;
        Ok(GetTaskResult::new(detailed))
    }

    /// `tasks/update`: the caller's answers to what its task waits on. Keys
    /// not pending are ignored (SEP-2663); once every request is answered
    /// the run is queued again. An empty acknowledgement for the caller's
    /// own task, -32602 for any other (or an answer too large).
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let who = self.caller(&ctx)?;
        let id = request.task_id;
        let Some(runs) = &self.runs else {
            return Err(tasks::unknown(&id));
        };
        runs.answer_input(self.host.host(), &who, &id, &request.input_responses)
            .await
            .map(drop)
            .map_err(|e| tasks::error(&id, &e))
    }

    /// `tasks/cancel`: `cancel_exploration` on the call path (audited, the
    /// caller's own runs only), which lands whatever state the run is in.
    /// Idempotent on a task that is over.
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let who = self.caller(&ctx)?;
        let id = request.task_id;
        let req = CallRequest::new("cancel_exploration", serde_json::json!({"run_id": id}));
        match self.host.call(&who, req, &ctx.ct).await {
            Ok(_) => Ok(()),
            Err(e) => Err(tasks::error(&id, &e)),
        }
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tool_defs.get(&self.host, name)
    }
}
