//! A 0.1.0 component's exports, called with 0.1.0 arguments and answering
//! in the current types.

use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre};

use super::bindings::exports::toolhost::plugin::{
    authoring as old_authoring, entities as old_entities, tool as old_tool,
};
use super::bindings::toolhost::plugin::types as old;
use super::convert::Convert;
use crate::authoring::{AuthoringAnswer, AuthoringAsk};
use crate::bindings::toolhost::plugin::types as new;
use crate::contract::{exported, exports_error, optional};
use crate::error::LoadError;
use crate::sandbox::{Answer, Ask};
use crate::state::HostState;

/// The 0.1.0 `tool` export's instance name: a component exporting it (and
/// not the current one) was built against 0.1.0.
pub(crate) const TOOL_EXPORT: &str = "toolhost:plugin/tool@0.1.0";
const ENTITIES_EXPORT: &str = "toolhost:plugin/entities@0.1.0";
const AUTHORING_EXPORT: &str = "toolhost:plugin/authoring@0.1.0";

/// A 0.1.0 component's export indices.
pub(crate) struct Exports {
    tool: old_tool::GuestIndices,
    entities: Option<old_entities::GuestIndices>,
    authoring: Option<old_authoring::GuestIndices>,
}

impl Exports {
    pub(crate) fn of(pre: &InstancePre<HostState>, plugin: &str) -> Result<Self, LoadError> {
        Ok(Exports {
            tool: old_tool::GuestIndices::new(pre).map_err(|e| exports_error(plugin, &e))?,
            entities: optional(
                pre,
                plugin,
                ENTITIES_EXPORT,
                old_entities::GuestIndices::new,
            )?,
            authoring: optional(
                pre,
                plugin,
                AUTHORING_EXPORT,
                old_authoring::GuestIndices::new,
            )?,
        })
    }

    pub(crate) fn has_entities(&self) -> bool {
        self.entities.is_some()
    }

    pub(crate) fn has_authoring(&self) -> bool {
        self.authoring.is_some()
    }

    pub(crate) async fn run(
        &self,
        store: &mut Store<HostState>,
        instance: &Instance,
        ask: Ask<'_>,
    ) -> wasmtime::Result<Answer> {
        let ctx = |c: &new::CallContext| -> old::CallContext { c.clone().convert() };
        let entities = |store: &mut Store<HostState>| {
            exported(self.entities.as_ref(), "entities")?.load(store, instance)
        };
        Ok(match ask {
            Ask::Kinds => Answer::Kinds(entities(store)?.call_kinds(&mut *store).await?),
            Ask::Snapshot(c, k) => {
                let (guest, c) = (entities(store)?, ctx(c));
                let rows = guest.call_snapshot(&mut *store, &c, k).await?;
                Answer::Snapshot(rows.convert())
            }
            Ask::Describe => {
                let tool = self.tool.load(&mut *store, instance)?;
                Answer::Describe(tool.call_describe(&mut *store).await?.convert())
            }
            Ask::Plan(c, t, a) => {
                let tool = self.tool.load(&mut *store, instance)?;
                let out = tool.call_plan(&mut *store, &ctx(c), t, a).await?;
                Answer::Plan(out.convert(), store.data_mut().resolver.pending.take())
            }
            Ask::Call(c, t, a) => {
                let tool = self.tool.load(&mut *store, instance)?;
                let out = tool.call_call(&mut *store, &ctx(c), t, a).await?;
                Answer::Call(out.convert(), store.data_mut().resolver.pending.take())
            }
            Ask::Prompts | Ask::PromptGet(..) | Ask::Resources | Ask::ResourceRead(..) => {
                return Err(wasmtime::format_err!(
                    "a 0.1.0 plugin exports no prompts or resources"
                ));
            }
            Ask::Authoring(a) => {
                let guest =
                    exported(self.authoring.as_ref(), "authoring")?.load(&mut *store, instance)?;
                Answer::Authoring(authoring(&guest, store, a, ctx).await?)
            }
        })
    }
}

async fn authoring(
    guest: &old_authoring::Guest,
    store: &mut Store<HostState>,
    ask: AuthoringAsk<'_>,
    ctx: impl Fn(&new::CallContext) -> old::CallContext,
) -> wasmtime::Result<AuthoringAnswer> {
    Ok(match ask {
        AuthoringAsk::Kinds => {
            AuthoringAnswer::Kinds(guest.call_kinds(&mut *store).await?.convert())
        }
        AuthoringAsk::Current(c, k, s) => {
            let state = guest.call_current(&mut *store, &ctx(c), k, s).await?;
            AuthoringAnswer::Current(state.convert())
        }
        AuthoringAsk::Validate(c, k, cur, p) => {
            let checked = guest.call_validate(&mut *store, &ctx(c), k, cur, p).await?;
            AuthoringAnswer::Validate(checked.convert())
        }
        AuthoringAsk::Diff(c, k, cur, n) => {
            let changes = guest.call_diff(&mut *store, &ctx(c), k, cur, n).await?;
            AuthoringAnswer::Diff(changes.convert())
        }
    })
}
