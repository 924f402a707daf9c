//! The guest SDK: a toolhost tool plugin in about thirty lines of Rust.
//!
//! This crate owns the plugin side of the WIT world `mcp-plugin` of the
//! contract `toolhost:plugin@0.2.0` (the crate carries its own copy of the
//! contract in `wit/`; its version is the contract's): it answers the host's
//! `describe`, `plan` and `call` from a list of [`Tool`]s, derives each
//! tool's JSON Schemas from its Rust argument and output types, parses
//! arguments, serializes outputs, maps [`ToolError`] onto the WIT error,
//! lists [`entities`] for the host's resolver, answers [`authoring`] for
//! the objects a plugin authors, and wraps the host's imports:
//! [`log`] lines, [`progress`] reports, [`resolve`] (names to ids),
//! [`backend`] (HTTP to the backends the manifest declares),
//! [`checkpoint`] (a person's judgement of a run), [`artifacts`] (what
//! an exploration run keeps: plans, traces, reports) and [`protocol`]
//! (ending a call with a JSON-RPC error). It enforces
//! nothing: budgets, permissions, approvals, tenancy and the resolver's
//! decisions are the host's, which trusts none of what a plugin says about
//! itself.
//!
//! Every call runs in a fresh instance, so the tool list is rebuilt per call;
//! building it is cheap (schemas are only computed for `describe`). A
//! component imports only what its code calls: a plugin that never resolves,
//! reaches a backend or keeps an artifact does not import `resolver`,
//! `backend` or `artifacts`.
//!
//! ```no_run
//! use toolhost_sdk::prelude::*;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct GreetArgs {
//!     /// Who to greet.
//!     name: String,
//! }
//!
//! #[derive(Serialize, JsonSchema)]
//! struct Greeting {
//!     message: String,
//! }
//!
//! fn greet(_ctx: &Ctx, args: GreetArgs) -> Result<Greeting, ToolError> {
//!     log::info!("greeting {}", args.name);
//!     Ok(Greeting { message: format!("Hello, {}!", args.name) })
//! }
//!
//! fn tools() -> Vec<Tool> {
//!     vec![
//!         Tool::new("greet", "Greets someone by name.", greet)
//!             .title("Greet")
//!             .permission("hello", "read")
//!             .read_only(),
//!     ]
//! }
//!
//! toolhost_sdk::export_plugin!(tools);
//! ```
//!
//! # Tools that take names
//!
//! An argument that names a thing takes a [`NameOrId`] (a string or an
//! integer). The tool asks the host to [`resolve`] it against the plugin's
//! [`Entities`], and gets the thing's id and name back ([`Resolved`]: the
//! name needs no second request). When the host cannot tell which thing
//! was meant, it turns the call's answer into a question for the person,
//! and the tool only propagates the error with `?`. The tool's manifest
//! entry declares the kinds it resolves (`resolves = ["project"]`) and the
//! backend it reaches (`[backends.tb]`).
//!
//! ```no_run
//! use toolhost_sdk::prelude::*;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct ListArgs {
//!     /// The project, by name or id; omit it to be asked.
//!     #[serde(default)]
//!     project: Option<NameOrId>,
//! }
//!
//! #[derive(Serialize, Deserialize, JsonSchema)]
//! struct Pipeline {
//!     id: i64,
//!     name: String,
//! }
//!
//! #[derive(Serialize, JsonSchema)]
//! struct Pipelines {
//!     /// The project's name, as the host's snapshot has it.
//!     project: String,
//!     pipelines: Vec<Pipeline>,
//! }
//!
//! fn list_pipelines(_ctx: &Ctx, args: ListArgs) -> Result<Pipelines, ToolError> {
//!     let project = resolve(Query::new("project", "project", args.project))?;
//!     let path = format!("/api/pipelines?project_id={}", project.id);
//!     let pipelines = backend::get("tb", &path)?.ok()?.json()?;
//!     Ok(Pipelines { project: project.name, pipelines })
//! }
//!
//! #[derive(Deserialize)]
//! struct Project {
//!     id: i64,
//!     name: String,
//!     tenant: String,
//! }
//!
//! fn entities() -> Entities {
//!     Entities::new(["project"], |_ctx, _kind| {
//!         let rows: Vec<Project> = backend::get("tb", "/api/projects")?.ok()?.json()?;
//!         Ok(rows.into_iter().map(|p| Entity::new(p.id, p.name, p.tenant)).collect())
//!     })
//! }
//!
//! fn tools() -> Vec<Tool> {
//!     vec![
//!         Tool::new("list_pipelines", "Lists a project's pipelines.", list_pipelines)
//!             .permission("tb", "read")
//!             .read_only(),
//!     ]
//! }
//!
//! toolhost_sdk::export_plugin!(tools, entities = entities);
//! ```
//!
//! A plugin crate is a `cdylib` built with `--target wasm32-wasip2`, which
//! emits a component directly. It depends on `toolhost-sdk`, `serde` and
//! `schemars`: the derive macros re-exported by the [`prelude`] expand to
//! paths in those two crates. Outside wasm (native unit tests of tool
//! functions) log lines and progress go to stderr, [`protocol::raise`]
//! panics with its error, and [`resolve`], [`backend`] requests,
//! [`checkpoint::open`] and [`artifacts::put`] fail with a [`ToolError`]
//! instead of reaching a host.
//!
//! # Exploration runs
//!
//! A tool whose manifest entry carries `run = { timeout = "2m", artifacts = 32 }`
//! is an exploration run: a call queues it, a host worker runs it (for
//! minutes, cancellably) in a sandbox whose backends are the operator's
//! exploration ones, GET and HEAD only. The tool is written as any other;
//! it reports [`progress`] as it goes and keeps what it found with
//! [`artifacts::put`] or [`artifacts::put_json`], which the host refuses
//! outside a run.
//!
//! # Authoring
//!
//! A plugin may author objects of its domain (a project's test plan): the
//! host keeps the sessions, proposals, diffs and promotion; the plugin
//! implements one [`authoring::Author`] per kind, which reads a subject's
//! current state (GET only), validates a proposal into the normalized
//! arguments of the kind's promoting tool (or every problem, each with a
//! JSON pointer) and diffs it against the current state (both pure). It
//! exports them with `export_plugin!(tools, entities = …, authoring = …)`;
//! a plugin that says nothing authors nothing ([`Authoring::none`]). See
//! [`authoring`] for an example; promotion is then an ordinary call of the
//! promoting tool, through the host's policy, gates and audit.

pub mod artifacts;
pub mod authoring;
pub mod backend;
pub mod checkpoint;
pub mod client;
mod content;
mod ctx;
pub mod entities;
mod error;
pub mod log;
mod name_or_id;
mod permission;
mod plan;
pub mod progress;
pub mod prompts;
pub mod protocol;
pub mod resolve;
pub mod resources;
mod tool;

#[doc(hidden)]
pub mod __private;

/// The code `wit_bindgen` generates for the `authoring-plugin` world. Plugin authors
/// need none of it directly: [`export_plugin!`] wires it up.
#[doc(hidden)]
#[allow(missing_docs, unsafe_code)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "mcp-plugin",
        // The crate's own copy of the contract (the repository's `wit/`,
        // byte for byte: tests/wit_copies.rs), so the packaged crate builds.
        path: "wit",
        pub_export_macro: true,
        export_macro_name: "__export_bindings",
        default_bindings_module: "toolhost_sdk::bindings",
        additional_derives: [PartialEq],
    });
}

pub use artifacts::ArtifactInfo;
pub use authoring::Authoring;
/// One thing the entities export lists (the WIT `entity` record). Build one
/// with [`Entity::new`].
pub use bindings::exports::toolhost::plugin::entities::{Entity, Parent};
/// What `plan` answers: the targets a call would act on, its risk, and a
/// one-line summary (the WIT `call-plan` record). Build one with [`Plan::new`].
pub use bindings::toolhost::plugin::types::CallPlan as Plan;
pub use bindings::toolhost::plugin::types::{Risk, Target};
pub use checkpoint::CheckpointInfo;
pub use content::{Content, Link};
pub use ctx::Ctx;
pub use entities::Entities;
pub use error::ToolError;
pub use name_or_id::NameOrId;
pub use prompts::{Message, Prompt, PromptArgs};
pub use resolve::{Query, Resolved, resolve};
pub use resources::{Contents, Resource, Resources, Template, Vars};
pub use tool::{IntoOutput, Output, Tool};

/// Everything a plugin usually needs, in one `use`.
///
/// `Deserialize`, `Serialize` and `JsonSchema` are the derive macros (and
/// traits) of `serde` and `schemars`; their expansions name those crates, so
/// the plugin crate must depend on both.
pub mod prelude {
    pub use crate::artifacts;
    pub use crate::backend;
    pub use crate::checkpoint;
    pub use crate::client;
    pub use crate::log;
    pub use crate::progress;
    pub use crate::protocol;
    pub use crate::{
        ArtifactInfo, Authoring, CheckpointInfo, Content, Ctx, Entities, Entity, Message, NameOrId,
        Output, Plan, Prompt, PromptArgs, Query, Resolved, Resource, Resources, Risk, Target,
        Template, Tool, ToolError, resolve,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}

/// Exports a plugin whose tools are listed by `$tools`, a `fn() -> Vec<Tool>`.
///
/// Use it once per plugin crate, at the crate root. `$tools` runs at every
/// `describe`, `plan` and `call` (each in a fresh instance): keep it a plain
/// list of [`Tool`] builders.
///
/// - `export_plugin!(tools)`: the plugin lists no entities
///   ([`Entities::none`]) and authors nothing ([`Authoring::none`]), as
///   every plugin whose tools take no names.
/// - `export_plugin!(tools, entities = my_entities)`: `my_entities` is a
///   `fn() -> Entities` giving the kinds the host's resolver may ask for
///   and the snapshot function that lists one; it runs at every `kinds` and
///   `snapshot`, like `$tools`.
/// - `export_plugin!(tools, entities = my_entities, authoring = my_authoring)`
///   (or `authoring = …` alone): `my_authoring` is a `fn() -> Authoring`
///   giving the kinds the plugin authors and their [`authoring::Author`]s;
///   it runs at every `kinds`, `current`, `validate` and `diff`.
///
/// - `…, prompts = my_prompts`: `my_prompts` is a `fn() -> Vec<Prompt>`
///   listing the plugin's [`Prompt`]s; it runs at every `list` and `get`.
/// - `…, resources = my_resources`: `my_resources` is a `fn() -> Resources`
///   (see [`resources`]); it runs at every `list`, `templates` and `read`.
///
/// The keywords are optional and come in this order: `entities`,
/// `authoring`, `prompts`, `resources`. Either way the component exports
/// the WIT world `mcp-plugin`: `tool`, `entities`, `authoring`, `prompts`
/// and `resources`.
#[macro_export]
macro_rules! export_plugin {
    (
        $tools:path
        $(, entities = $entities:path)?
        $(, authoring = $authoring:path)?
        $(, prompts = $prompts:path)?
        $(, resources = $resources:path)?
        $(,)?
    ) => {
        $crate::__export_plugin!(
            $tools,
            $crate::__pick!($($entities)? ; $crate::Entities::none),
            $crate::__pick!($($authoring)? ; $crate::Authoring::none),
            $crate::__pick!($($prompts)? ; $crate::prompts::none),
            $crate::__pick!($($resources)? ; $crate::Resources::none)
        );
    };
}

/// The given path, or the default: [`export_plugin!`]'s optional keywords.
#[doc(hidden)]
#[macro_export]
macro_rules! __pick {
    ($given:path ; $default:path) => {
        $given
    };
    (; $default:path) => {
        $default
    };
}

/// [`export_plugin!`] with every export named (each a function to call).
#[doc(hidden)]
#[macro_export]
macro_rules! __export_plugin {
    ($tools:path, $entities:expr, $authoring:expr, $prompts:expr, $resources:expr) => {
        const _: () = {
            struct Plugin;

            impl $crate::bindings::exports::toolhost::plugin::tool::Guest for Plugin {
                fn describe() -> ::std::vec::Vec<$crate::__private::ToolSpec> {
                    $crate::__private::describe($tools())
                }

                fn plan(
                    ctx: $crate::__private::CallContext,
                    tool: ::std::string::String,
                    arguments: ::std::string::String,
                ) -> ::std::result::Result<$crate::Plan, $crate::__private::WitToolError> {
                    $crate::__private::plan($tools(), ctx, &tool, &arguments)
                }

                fn call(
                    ctx: $crate::__private::CallContext,
                    tool: ::std::string::String,
                    arguments: ::std::string::String,
                ) -> ::std::result::Result<
                    $crate::__private::ToolOutput,
                    $crate::__private::WitToolError,
                > {
                    $crate::__private::call($tools(), ctx, &tool, &arguments)
                }
            }

            impl $crate::bindings::exports::toolhost::plugin::entities::Guest for Plugin {
                fn kinds() -> ::std::vec::Vec<::std::string::String> {
                    $crate::__private::kinds($entities())
                }

                fn snapshot(
                    ctx: $crate::__private::CallContext,
                    kind: ::std::string::String,
                ) -> ::std::result::Result<
                    ::std::vec::Vec<$crate::__private::Entity>,
                    $crate::__private::WitToolError,
                > {
                    $crate::__private::snapshot($entities(), ctx, &kind)
                }
            }

            impl $crate::bindings::exports::toolhost::plugin::authoring::Guest for Plugin {
                fn kinds() -> ::std::vec::Vec<$crate::authoring::AuthoringKind> {
                    $crate::__private::authoring_kinds($authoring())
                }

                fn current(
                    ctx: $crate::__private::CallContext,
                    kind: ::std::string::String,
                    subject: i64,
                ) -> ::std::result::Result<
                    $crate::__private::CurrentState,
                    $crate::__private::WitToolError,
                > {
                    $crate::__private::current($authoring(), ctx, &kind, subject)
                }

                fn validate(
                    ctx: $crate::__private::CallContext,
                    kind: ::std::string::String,
                    current: ::std::string::String,
                    proposal: ::std::string::String,
                ) -> ::std::result::Result<
                    ::std::string::String,
                    ::std::vec::Vec<$crate::authoring::Problem>,
                > {
                    $crate::__private::validate($authoring(), ctx, &kind, &current, &proposal)
                }

                fn diff(
                    ctx: $crate::__private::CallContext,
                    kind: ::std::string::String,
                    current: ::std::string::String,
                    normalized: ::std::string::String,
                ) -> ::std::result::Result<
                    ::std::vec::Vec<$crate::authoring::Change>,
                    $crate::__private::WitToolError,
                > {
                    $crate::__private::diff($authoring(), ctx, &kind, &current, &normalized)
                }
            }

            impl $crate::bindings::exports::toolhost::plugin::prompts::Guest for Plugin {
                fn list() -> ::std::vec::Vec<$crate::__private::PromptSpec> {
                    $crate::__private::prompt_specs($prompts())
                }

                fn get(
                    ctx: $crate::__private::CallContext,
                    name: ::std::string::String,
                    arguments: ::std::vec::Vec<(::std::string::String, ::std::string::String)>,
                ) -> ::std::result::Result<
                    $crate::__private::WitPrompt,
                    $crate::__private::WitToolError,
                > {
                    $crate::__private::prompt_get($prompts(), ctx, &name, arguments)
                }
            }

            impl $crate::bindings::exports::toolhost::plugin::resources::Guest for Plugin {
                fn list() -> ::std::vec::Vec<$crate::__private::ResourceSpec> {
                    $crate::__private::resource_specs($resources())
                }

                fn templates() -> ::std::vec::Vec<$crate::__private::TemplateSpec> {
                    $crate::__private::template_specs($resources())
                }

                fn read(
                    ctx: $crate::__private::CallContext,
                    uri: ::std::string::String,
                ) -> ::std::result::Result<
                    ::std::vec::Vec<$crate::__private::ResourceContents>,
                    $crate::__private::WitToolError,
                > {
                    $crate::__private::resource_read($resources(), ctx, &uri)
                }
            }

    $crate::bindings::__export_bindings!(Plugin with_types_in $crate::bindings);
        };
    };
}
