//! Which exports a component answers, by the contract version it was built
//! against: the current `toolhost:plugin@0.2.0`, or 0.1.0 ([`crate::v0_1`]).
//! `tool` is required; `entities` and `authoring` are optional. Every ask
//! answers in the current types, whichever version ran.

use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre};

use crate::authoring::{self, AUTHORING_EXPORT};
use crate::bindings::exports::toolhost::plugin::authoring as wit_authoring;
use crate::bindings::exports::toolhost::plugin::entities as wit_entities;
use crate::bindings::exports::toolhost::plugin::prompts as wit_prompts;
use crate::bindings::exports::toolhost::plugin::resources as wit_resources;
use crate::bindings::exports::toolhost::plugin::tool as wit_tool;
use crate::error::LoadError;
use crate::prompts::PROMPTS_EXPORT;
use crate::resources::RESOURCES_EXPORT;
use crate::sandbox::{Answer, Ask};
use crate::state::HostState;
use crate::v0_1;

/// The current `tool` export's instance name.
pub(crate) const TOOL_EXPORT: &str = "toolhost:plugin/tool@0.2.0";
/// The current `entities` export's instance name.
pub(crate) const ENTITIES_EXPORT: &str = "toolhost:plugin/entities@0.2.0";

/// A loaded component's exports.
pub(crate) enum Contract {
    /// Built against `toolhost:plugin@0.2.0`.
    Current(Exports),
    /// Built against `toolhost:plugin@0.1.0`.
    V0_1(v0_1::exports::Exports),
}

/// The current contract's export indices.
pub(crate) struct Exports {
    tool: wit_tool::GuestIndices,
    entities: Option<wit_entities::GuestIndices>,
    authoring: Option<wit_authoring::GuestIndices>,
    prompts: Option<wit_prompts::GuestIndices>,
    resources: Option<wit_resources::GuestIndices>,
}

impl Contract {
    /// The exports of `pre`: 0.1.0 when it exports the 0.1.0 `tool` and
    /// not the current one, else the current contract (whose `tool` is then
    /// required: its absence is the error).
    pub(crate) fn of(pre: &InstancePre<HostState>, plugin: &str) -> Result<Self, LoadError> {
        let exports = |name: &str| pre.component().get_export_index(None, name).is_some();
        if !exports(TOOL_EXPORT) && exports(v0_1::exports::TOOL_EXPORT) {
            return v0_1::exports::Exports::of(pre, plugin).map(Contract::V0_1);
        }
        let tool = wit_tool::GuestIndices::new(pre).map_err(|e| exports_error(plugin, &e))?;
        let entities = optional(
            pre,
            plugin,
            ENTITIES_EXPORT,
            wit_entities::GuestIndices::new,
        )?;
        let authoring = optional(
            pre,
            plugin,
            AUTHORING_EXPORT,
            wit_authoring::GuestIndices::new,
        )?;
        let prompts = optional(pre, plugin, PROMPTS_EXPORT, wit_prompts::GuestIndices::new)?;
        let resources = optional(
            pre,
            plugin,
            RESOURCES_EXPORT,
            wit_resources::GuestIndices::new,
        )?;
        Ok(Contract::Current(Exports {
            tool,
            entities,
            authoring,
            prompts,
            resources,
        }))
    }

    /// The contract version, `0.2.0` or `0.1.0`.
    pub(crate) fn version(&self) -> &'static str {
        match self {
            Contract::Current(_) => "0.2.0",
            Contract::V0_1(_) => "0.1.0",
        }
    }

    /// Whether the component exports `entities`.
    pub(crate) fn has_entities(&self) -> bool {
        match self {
            Contract::Current(e) => e.entities.is_some(),
            Contract::V0_1(e) => e.has_entities(),
        }
    }

    /// Whether the component exports `authoring`.
    pub(crate) fn has_authoring(&self) -> bool {
        match self {
            Contract::Current(e) => e.authoring.is_some(),
            Contract::V0_1(e) => e.has_authoring(),
        }
    }

    /// Whether the component exports `prompts` (0.2.0 only).
    pub(crate) fn has_prompts(&self) -> bool {
        match self {
            Contract::Current(e) => e.prompts.is_some(),
            Contract::V0_1(_) => false,
        }
    }

    /// Whether the component exports `resources` (0.2.0 only).
    pub(crate) fn has_resources(&self) -> bool {
        match self {
            Contract::Current(e) => e.resources.is_some(),
            Contract::V0_1(_) => false,
        }
    }

    /// Runs `ask` on `instance`.
    pub(crate) async fn run(
        &self,
        store: &mut Store<HostState>,
        instance: &Instance,
        ask: Ask<'_>,
    ) -> wasmtime::Result<Answer> {
        match self {
            Contract::Current(e) => e.run(store, instance, ask).await,
            Contract::V0_1(e) => e.run(store, instance, ask).await,
        }
    }
}

impl Exports {
    async fn run(
        &self,
        store: &mut Store<HostState>,
        instance: &Instance,
        ask: Ask<'_>,
    ) -> wasmtime::Result<Answer> {
        let entities = |store: &mut Store<HostState>| {
            exported(self.entities.as_ref(), "entities")?.load(store, instance)
        };
        let resources = |store: &mut Store<HostState>| {
            exported(self.resources.as_ref(), "resources")?.load(store, instance)
        };
        let prompts = |store: &mut Store<HostState>| {
            exported(self.prompts.as_ref(), "prompts")?.load(store, instance)
        };
        Ok(match ask {
            Ask::Kinds => Answer::Kinds(entities(store)?.call_kinds(&mut *store).await?),
            Ask::Snapshot(c, k) => {
                Answer::Snapshot(entities(store)?.call_snapshot(&mut *store, c, k).await?)
            }
            Ask::Describe => {
                let tool = self.tool.load(&mut *store, instance)?;
                Answer::Describe(tool.call_describe(&mut *store).await?)
            }
            Ask::Plan(c, t, a) => {
                let tool = self.tool.load(&mut *store, instance)?;
                let out = tool.call_plan(&mut *store, c, t, a).await?;
                Answer::Plan(out, store.data_mut().resolver.pending.take())
            }
            Ask::Call(c, t, a) => {
                let tool = self.tool.load(&mut *store, instance)?;
                let out = tool.call_call(&mut *store, c, t, a).await?;
                Answer::Call(out, store.data_mut().resolver.pending.take())
            }
            Ask::Authoring(a) => {
                let guest =
                    exported(self.authoring.as_ref(), "authoring")?.load(&mut *store, instance)?;
                Answer::Authoring(authoring::run(&guest, store, a).await?)
            }
            Ask::Prompts => Answer::Prompts(prompts(store)?.call_list(&mut *store).await?),
            Ask::PromptGet(c, name, args) => {
                let guest = prompts(store)?;
                Answer::PromptGet(guest.call_get(&mut *store, c, name, args).await?)
            }
            Ask::Resources => {
                let guest = resources(store)?;
                let listed = guest.call_list(&mut *store).await?;
                Answer::Resources(listed, guest.call_templates(&mut *store).await?)
            }
            Ask::ResourceRead(c, uri) => {
                let guest = resources(store)?;
                Answer::ResourceRead(guest.call_read(&mut *store, c, uri).await?)
            }
        })
    }
}

/// The indices of an optional export, when the component has `export`.
pub(crate) fn optional<T>(
    pre: &InstancePre<HostState>,
    plugin: &str,
    export: &str,
    indices: impl FnOnce(&InstancePre<HostState>) -> wasmtime::Result<T>,
) -> Result<Option<T>, LoadError> {
    if pre.component().get_export_index(None, export).is_none() {
        return Ok(None);
    }
    indices(pre)
        .map(Some)
        .map_err(|e| exports_error(plugin, &e))
}

/// An optional export's indices, if the component has it; else the error
/// of an ask it cannot answer.
pub(crate) fn exported<'a, T>(indices: Option<&'a T>, what: &str) -> wasmtime::Result<&'a T> {
    indices.ok_or_else(|| wasmtime::format_err!("the plugin exports no {what}"))
}

pub(crate) fn exports_error(plugin: &str, e: &wasmtime::Error) -> LoadError {
    LoadError::Exports {
        plugin: plugin.to_owned(),
        detail: format!("{e:#}"),
    }
}
