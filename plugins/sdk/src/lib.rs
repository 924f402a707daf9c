//! The guest SDK: a toolhost tool plugin in about thirty lines of Rust.
//!
//! This crate owns the plugin side of the `toolhost:plugin` WIT world
//! (`wit/` at the repository root): it answers the host's `describe`, `plan`
//! and `call` from a list of [`Tool`]s, derives each tool's JSON Schemas from
//! its Rust argument and output types, parses arguments, serializes outputs,
//! maps [`ToolError`] onto the WIT error, and forwards [`log`] lines to the
//! host. It enforces nothing: budgets, permissions, approvals and tenancy are
//! the host's, which trusts none of what a plugin says about itself.
//!
//! Every call runs in a fresh instance, so the tool list is rebuilt per call;
//! building it is cheap (schemas are only computed for `describe`).
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
//! A plugin crate is a `cdylib` built with `--target wasm32-wasip2`, which
//! emits a component directly. It depends on `toolhost-sdk`, `serde` and
//! `schemars`: the derive macros re-exported by the [`prelude`] expand to
//! paths in those two crates.

mod ctx;
mod error;
pub mod log;
mod plan;
pub mod progress;
mod tool;

#[doc(hidden)]
pub mod __private;

/// The code `wit_bindgen` generates for the `plugin` world. Plugin authors
/// need none of it directly: [`export_plugin!`] wires it up.
#[doc(hidden)]
#[allow(missing_docs, unsafe_code)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "plugin",
        path: "../../wit",
        pub_export_macro: true,
        export_macro_name: "__export_bindings",
        default_bindings_module: "toolhost_sdk::bindings",
    });
}

/// What `plan` answers: the targets a call would act on, its risk, and a
/// one-line summary (the WIT `call-plan` record). Build one with [`Plan::new`].
pub use bindings::toolhost::plugin::types::CallPlan as Plan;
pub use bindings::toolhost::plugin::types::{Risk, Target};
pub use ctx::Ctx;
pub use error::ToolError;
pub use tool::{IntoOutput, Output, Tool};

/// Everything a plugin usually needs, in one `use`.
///
/// `Deserialize`, `Serialize` and `JsonSchema` are the derive macros (and
/// traits) of `serde` and `schemars`; their expansions name those crates, so
/// the plugin crate must depend on both.
pub mod prelude {
    pub use crate::log;
    pub use crate::progress;
    pub use crate::{Ctx, Output, Plan, Risk, Target, Tool, ToolError};
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}

/// Exports a plugin whose tools are listed by `$tools`, a `fn() -> Vec<Tool>`.
///
/// Use it once per plugin crate, at the crate root. `$tools` runs at every
/// `describe`, `plan` and `call` (each in a fresh instance): keep it a plain
/// list of [`Tool`] builders.
#[macro_export]
macro_rules! export_plugin {
    ($tools:path) => {
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

    $crate::bindings::__export_bindings!(Plugin with_types_in $crate::bindings);
        };
    };
}
