//! The MCP definitions of the served tools, made once per catalog.
//!
//! rmcp asks the handler for a tool's definition on every `tools/call`
//! (its input schema checks the `Mcp-Param-*` headers against the body).
//! Making one ([`convert::tool`](crate::convert::tool)) clones the tool's
//! schemas and builds its output schema, a few percent of a call's time, so
//! definitions are kept for the catalog they were made from. A catalog
//! served after it starts the keeping over; a name the catalog does not
//! hold is never kept, so what is kept is bounded by the tools served. The
//! catalog itself is not held: one replaced is freed when the host lets it
//! go, not when the next call asks for a definition.
//!
//! rmcp asks without saying who asks, so the definitions are those of the
//! catalog every tenant without one of its own is served. A tool served to
//! some tenants only has none here: its headers are not checked against
//! its schema, and no header check tells another tenant that it exists.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, Weak};

use rmcp::model::Tool;
use toolhost_catalog::Catalog;
use toolhost_invoke::Toolhost;

use crate::convert;

/// Tool definitions by name, made from one catalog.
#[derive(Default)]
pub(crate) struct ToolDefs {
    kept: RwLock<Option<Kept>>,
}

struct Kept {
    /// The catalog the definitions were made from. Weak: its allocation
    /// stays while this does, so no new catalog can have its address and be
    /// mistaken for it, but what it holds is dropped with its last user.
    catalog: Weak<Catalog>,
    tools: HashMap<String, Tool>,
}

impl ToolDefs {
    /// The definition of `name` as `host` serves it now, if it serves one.
    pub(crate) fn get(&self, host: &Toolhost, name: &str) -> Option<Tool> {
        let served = host.catalogs().everyone().clone();
        {
            let kept = self.kept.read().expect("never poisoned");
            if let Some(k) = kept.as_ref().filter(|k| made_from(k, &served))
                && let Some(tool) = k.tools.get(name)
            {
                return Some(tool.clone());
            }
        }
        // Made from the catalog served at the lookup: a catalog served
        // since is found by the next call, whose `served` is that one.
        let tool = convert::tool(&host.tool_of_everyone(name)?, served.version());
        let mut kept = self.kept.write().expect("never poisoned");
        match kept.as_mut() {
            Some(k) if made_from(k, &served) => {
                k.tools.insert(name.to_owned(), tool.clone());
            }
            _ => {
                *kept = Some(Kept {
                    catalog: Arc::downgrade(&served),
                    tools: HashMap::from([(name.to_owned(), tool.clone())]),
                });
            }
        }
        Some(tool)
    }
}

/// Whether `kept` was made from `catalog`.
fn made_from(kept: &Kept, catalog: &Arc<Catalog>) -> bool {
    std::ptr::eq(kept.catalog.as_ptr(), Arc::as_ptr(catalog))
}

#[cfg(test)]
mod tests {
    use super::*;

    use toolhost_audit::{AuditEvent, AuditSink, Effect, SinkFuture};
    use toolhost_catalog::LoadOptions;
    use toolhost_policy::FixedGrants;
    use toolhost_runtime::{Runtime, RuntimeConfig};

    struct Discard;

    impl AuditSink for Discard {
        fn record_with<'a>(&'a self, _: &'a AuditEvent, _: &'a [Effect]) -> SinkFuture<'a> {
            Box::pin(async { Ok(()) })
        }
    }

    async fn host(dir: &std::path::Path) -> (Toolhost, Arc<Runtime>) {
        let f = toolhost_fixtures::HELLO;
        toolhost_catalog::pin(f.manifest.as_ref(), f.component.as_ref(), dir).expect("pins hello");
        let runtime = Arc::new(Runtime::new(RuntimeConfig::default()).expect("runtime"));
        let loaded = Catalog::load_dir(dir, &runtime, &LoadOptions::default()).await;
        assert!(loaded.errors.is_empty(), "hello loads");
        let host = Toolhost::new(
            Arc::new(loaded.catalog),
            Arc::new(FixedGrants::default()),
            runtime.clone(),
            Arc::new(Discard),
        );
        (host, runtime)
    }

    #[tokio::test]
    async fn a_definition_is_the_served_catalogs_and_follows_a_new_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (host, runtime) = host(dir.path()).await;
        let defs = ToolDefs::default();
        let made = |name: &str| {
            host.tool_of_everyone(name)
                .map(|t| convert::tool(&t, &host.catalog_version()))
        };
        let first = defs.get(&host, "greet").expect("greet is served");
        assert_eq!(first, made("greet").expect("greet"));
        assert_eq!(defs.get(&host, "greet"), Some(first.clone()), "kept");
        assert_eq!(defs.get(&host, "no_such_tool"), None);
        let kept = |defs: &ToolDefs| {
            let kept = defs.kept.read().expect("never poisoned");
            kept.as_ref().map_or(0, |k| k.tools.len())
        };
        assert_eq!(kept(&defs), 1, "a name not served is not kept");

        // A catalog without `greet`: its kept definition is not served.
        let empty = tempfile::tempdir().expect("temp dir");
        let loaded = Catalog::load_dir(empty.path(), &runtime, &LoadOptions::default()).await;
        host.serve_catalog(Arc::new(loaded.catalog));
        let holds = |defs: &ToolDefs| {
            let kept = defs.kept.read().expect("never poisoned");
            kept.as_ref().map_or(0, |k| k.catalog.strong_count())
        };
        assert_eq!(
            holds(&defs),
            0,
            "the replaced catalog is freed before a call"
        );
        assert_eq!(
            defs.get(&host, "greet"),
            None,
            "the new catalog has no greet"
        );
    }
}
