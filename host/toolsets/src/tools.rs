//! The host tools composing a tenant's toolsets: `list_toolsets`,
//! `define_toolset`, `delete_toolset`. Each acts on the caller's own
//! tenant only; a change is returned as an effect, written with the
//! call's audit row.

use std::sync::Arc;

use serde_json::{Value, json};
use toolhost_audit::{Effect, ToolsetEffect};
use toolhost_invoke::{
    AnswerFuture, Host, HostCall, HostTool, HostToolFuture, InvokeError, Tool, host_spec, invalid,
};
use toolhost_policy::{
    Grants, MAX_TOOLSETS, PolicyStore, PolicyStoreError, TOOLSET_SCOPE, Toolset, Within,
};
use toolhost_runtime::{ToolOutput, ToolSpec};

use crate::ToolsetError;

/// The tool listing a tenant's toolsets.
pub const LIST_TOOLSETS: &str = "list_toolsets";
/// The tool defining (or redefining) one.
pub const DEFINE_TOOLSET: &str = "define_toolset";
/// The tool deleting one.
pub const DELETE_TOOLSET: &str = "delete_toolset";

/// What listing a tenant's toolsets needs (a tenant admin has it).
pub const READ_PERMISSION: &str = "toolsets:read";
/// What changing them needs (a tenant admin has it).
pub const WRITE_PERMISSION: &str = "toolsets:admin";

/// The most names of a definition's that no catalog tool, plugin or tag
/// has, named back in `define_toolset`'s answer.
const MAX_UNKNOWN_NAMED: usize = 20;

/// The three tools over `store`.
pub fn host_tools(store: Arc<dyn PolicyStore>) -> Vec<Arc<dyn HostTool>> {
    vec![
        Arc::new(ListToolsets::new(store.clone())),
        Arc::new(DefineToolset::new(store.clone())),
        Arc::new(DeleteToolset::new(store)),
    ]
}

fn names(description: &str) -> Value {
    json!({"type": "array", "items": {"type": "string"}, "maxItems": toolhost_policy::MAX_TOOLSET_ENTRIES,
           "description": description})
}

fn name_argument() -> Value {
    json!({"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,63}$",
           "description": "The toolset's name: 1–64 of [a-z0-9-]."})
}

fn store_failed(e: PolicyStoreError) -> InvokeError {
    InvokeError::Policy(e)
}

/// A toolset as the tools answer it: its definition, how many of the
/// tenant's catalog tools it holds now, and how a client is bound to it.
fn view(host: Host<'_>, tenant: &str, toolset: &Toolset) -> Value {
    let grants = Grants::none().narrowed(Some(Within::new(
        vec![toolset.name.clone()],
        vec![toolset.clone()],
    )));
    let catalog = host.catalog(tenant);
    let holds = (catalog.tools())
        .filter(|t| Tool::Plugin((*t).clone()).within(&grants))
        .count();
    json!({
        "name": toolset.name,
        "tools": toolset.tools,
        "plugins": toolset.plugins,
        "tags": toolset.tags,
        "exclude": toolset.exclude,
        "catalog_tools": holds,
        "scope": format!("{TOOLSET_SCOPE}{}", toolset.name),
        "endpoint": format!("/mcp/toolsets/{}", toolset.name),
    })
}

/// `list_toolsets()`.
struct ListToolsets {
    spec: ToolSpec,
    store: Arc<dyn PolicyStore>,
}

impl ListToolsets {
    fn new(store: Arc<dyn PolicyStore>) -> Self {
        let input = json!({"type": "object", "properties": {}, "additionalProperties": false});
        let spec = host_spec(
            LIST_TOOLSETS,
            "Toolsets",
            "Lists your tenant's toolsets: named subsets of its tools that clients are bound to (by the scope toolset:NAME, a choice at consent, or the endpoint /mcp/toolsets/NAME). Each names its tools, plugins, tags and exclusions, and how many catalog tools it holds now.",
            input,
            READ_PERMISSION,
            false,
        );
        Self { spec, store }
    }
}

impl HostTool for ListToolsets {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(async move {
            let tenant = &c.who.tenant;
            let toolsets = (self.store.all_toolsets(tenant).await).map_err(store_failed)?;
            let shown: Vec<Value> = toolsets.iter().map(|t| view(c.host, tenant, t)).collect();
            let text = format!("{} toolset(s) in tenant {tenant}", shown.len());
            let out = ToolOutput {
                structured: json!({"tenant": tenant, "toolsets": shown}),
                text: Some(text),
                content: Vec::new(),
            };
            Ok((out, Vec::new()))
        })
    }
}

/// `define_toolset(name, tools?, plugins?, tags?, exclude?)`.
struct DefineToolset {
    spec: ToolSpec,
    store: Arc<dyn PolicyStore>,
}

impl DefineToolset {
    fn new(store: Arc<dyn PolicyStore>) -> Self {
        let input = json!({
            "type": "object",
            "properties": {
                "name": name_argument(),
                "tools": names("Tools in it by name (the host's own tools are in a toolset only by name)."),
                "plugins": names("Every tool of these plugins."),
                "tags": names("Every tool tagged with one of these in its manifest."),
                "exclude": names("Tools left out, whatever named them."),
            },
            "required": ["name"],
            "additionalProperties": false
        });
        let spec = host_spec(
            DEFINE_TOOLSET,
            "Define a toolset",
            "Defines one of your tenant's toolsets (replacing one of the same name): tools by name, whole plugins and tags, less exclusions. A client bound to it sees and calls only those tools, and among them what its person's roles allow. Names no tool has are named back.",
            input,
            WRITE_PERMISSION,
            true,
        );
        Self { spec, store }
    }
}

impl HostTool for DefineToolset {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(async move {
            let toolset: Toolset =
                serde_json::from_value(c.args.clone()).map_err(|e| invalid(e.to_string()))?;
            toolset.check().map_err(|e| invalid(e.to_string()))?;
            let tenant = &c.who.tenant;
            let defined = (self.store.all_toolsets(tenant).await).map_err(store_failed)?;
            let created = !defined.iter().any(|t| t.name == toolset.name);
            if created && defined.len() >= MAX_TOOLSETS {
                return Err(ToolsetError::TooMany.into());
            }
            let definition = serde_json::to_string(&toolset)
                .map_err(|e| InvokeError::Policy(PolicyStoreError::Database(e.to_string())))?;
            let effect = Effect::Toolset(ToolsetEffect::Define {
                tenant: tenant.clone(),
                name: toolset.name.clone(),
                definition,
                at_ms: c.host.now_ms(),
                bound: i64::try_from(MAX_TOOLSETS).unwrap_or(i64::MAX),
            });
            let mut answer = view(c.host, tenant, &toolset);
            answer["created"] = json!(created);
            answer["unknown"] = json!(unknown(c.host, tenant, &toolset));
            let text = format!(
                "toolset {} {}: {} catalog tool(s)",
                toolset.name,
                if created { "defined" } else { "redefined" },
                answer["catalog_tools"]
            );
            let out = ToolOutput {
                structured: answer,
                text: Some(text),
                content: Vec::new(),
            };
            Ok((out, vec![effect]))
        })
    }

    fn lost<'a>(&'a self, _: HostCall<'a>, _: &'a Effect) -> AnswerFuture<'a> {
        Box::pin(std::future::ready(Err(changed_meanwhile())))
    }
}

/// The names of `toolset`'s lists that nothing in `tenant`'s catalog has
/// (a typo, or a plugin not served yet): at most [`MAX_UNKNOWN_NAMED`].
fn unknown(host: Host<'_>, tenant: &str, toolset: &Toolset) -> Vec<String> {
    let catalog = host.catalog(tenant);
    let tools: Vec<Tool> = catalog.tools().map(|t| Tool::Plugin(t.clone())).collect();
    let has_tool = |n: &String| host.tool(tenant, n).is_some();
    let has_plugin = |p: &String| {
        (tools.iter()).any(|t| {
            t.catalog_tool()
                .is_some_and(|c| c.plugin().manifest.plugin.name.as_str() == p)
        })
    };
    let has_tag = |g: &String| tools.iter().any(|t| t.tags().contains(g));
    let tools_named = toolset
        .tools
        .iter()
        .chain(&toolset.exclude)
        .filter(|n| !has_tool(n));
    let plugins = toolset.plugins.iter().filter(|p| !has_plugin(p));
    let tags = toolset.tags.iter().filter(|g| !has_tag(g));
    (tools_named.chain(plugins).chain(tags))
        .take(MAX_UNKNOWN_NAMED)
        .cloned()
        .collect()
}

/// `delete_toolset(name)`.
struct DeleteToolset {
    spec: ToolSpec,
    store: Arc<dyn PolicyStore>,
}

impl DeleteToolset {
    fn new(store: Arc<dyn PolicyStore>) -> Self {
        let input = json!({
            "type": "object",
            "properties": {"name": name_argument()},
            "required": ["name"],
            "additionalProperties": false
        });
        let spec = host_spec(
            DELETE_TOOLSET,
            "Delete a toolset",
            "Deletes one of your tenant's toolsets. Clients bound to it reach none of its tools from their next request on (a binding never widens to the whole catalog).",
            input,
            WRITE_PERMISSION,
            true,
        );
        Self { spec, store }
    }
}

impl HostTool for DeleteToolset {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, c: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(async move {
            let name = (c.args.get("name").and_then(Value::as_str))
                .ok_or_else(|| invalid("name must be a string"))?;
            let tenant = &c.who.tenant;
            let found = self.store.toolsets(tenant, &[name.to_owned()]).await;
            if found.map_err(store_failed)?.is_empty() {
                return Err(ToolsetError::NotFound(name.to_owned()).into());
            }
            let effect = Effect::Toolset(ToolsetEffect::Delete {
                tenant: tenant.clone(),
                name: name.to_owned(),
            });
            let out = ToolOutput {
                structured: json!({"name": name, "deleted": true}),
                text: Some(format!("toolset {name} deleted")),
                content: Vec::new(),
            };
            Ok((out, vec![effect]))
        })
    }

    fn lost<'a>(&'a self, _: HostCall<'a>, _: &'a Effect) -> AnswerFuture<'a> {
        Box::pin(std::future::ready(Err(changed_meanwhile())))
    }
}

/// A change to the tenant's toolsets that another came before.
fn changed_meanwhile() -> InvokeError {
    ToolsetError::Changed.into()
}
