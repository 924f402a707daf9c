//! The discovery tools: `find_tools(query, limit)` and
//! `describe_tool(name)`, over the tools the caller may see and nothing
//! else.
//!
//! Both read the caller's listing as `tools/list` would make it
//! ([`Host::list`]: the caller's tenant's catalog, its permissions read
//! now), so a tool hidden from the caller by permission or tenant is never
//! ranked, named, counted or described: `describe_tool` of such a tool is
//! `TOOL_NOT_FOUND`, word for word what a name that exists nowhere gets.
//! Both are open host tools ([`HostTool::open`]): every principal may call
//! them, since what they answer is already decided per caller.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_invoke::{
    Host, HostCall, HostTool, HostToolFuture, InvokeError, Listing, Tool, host_spec, invalid,
};
use toolhost_runtime::{ToolOutput, ToolSpec};
use toolhost_types::Digest;

use crate::index::{Entry, Hit, Index};
use crate::listing::is_discovery_tool;
use crate::{DESCRIBE_TOOL, FIND_TOOLS, MAX_CANDIDATES};

/// The permission the discovery tools' specs name. Nobody needs it: open
/// tools are decided per caller by what they answer (see the module docs).
const OPEN_PERMISSION: &str = "tools:discover";

/// Candidates a search answers unless asked for another number.
pub const DEFAULT_LIMIT: usize = 5;

/// A runner-up within this share of the best score makes the query
/// ambiguous: no clear winner, so the caller is asked to choose.
pub const AMBIGUOUS_SHARE: f32 = 0.8;

/// The longest query searched: a sentence or two of what the caller wants.
const MAX_QUERY: usize = 500;

/// The longest echo of a query inside `ask_user`.
const MAX_ECHO: usize = 80;

/// The longest description a candidate carries (`describe_tool` gives the
/// whole definition).
const MAX_SUMMARY: usize = 240;

/// How a tool's full definition is rendered for `describe_tool`: the MCP
/// edge's own rendering of a listed tool, so the two never differ.
pub type Describe = Arc<dyn Fn(&Tool, &str) -> Value + Send + Sync>;

/// The discovery tools, `describe_tool` rendering with `describe`.
pub fn host_tools(describe: Describe) -> Vec<Arc<dyn HostTool>> {
    vec![
        Arc::new(FindTools::new()),
        Arc::new(DescribeTool::new(describe)),
    ]
}

/// The entry `tool` is found by.
pub fn entry(tool: &Tool) -> Entry {
    let spec = tool.spec();
    let arguments = (spec.input_schema.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    Entry {
        name: spec.name.to_string(),
        title: spec.title.clone().unwrap_or_default(),
        description: spec.description.clone(),
        tags: tool.tags().to_vec(),
        arguments,
    }
}

/// `who`'s listing less the discovery tools: what a search covers.
async fn searchable(host: Host<'_>, call: &HostCall<'_>) -> Result<Listing, InvokeError> {
    let mut listing = host.list(call.who).await?;
    listing
        .tools
        .retain(|t| !is_discovery_tool(t.spec().name.as_str()));
    Ok(listing)
}

/// `find_tools`.
pub struct FindTools {
    spec: ToolSpec,
    indexes: Indexes,
}

/// The most indexes kept: one per distinct set of tools searched (a
/// tenant's catalog as a set of permissions sees it, narrowed by a pin).
/// Past it every index is dropped and built again as asked.
pub const MAX_KEPT_INDEXES: usize = 64;

/// Indexes already built, by the digest of the definitions they index.
///
/// Building an index costs far more than a search (each tool's words are
/// cut and stemmed), and callers of one tenant with the same roles search
/// the same tools. The key is the SHA-256 of every indexed tool's name
/// and definition digest, so an index is shared only by searches over
/// exactly the same definitions: a caller never gets an index holding a
/// tool it may not see, and a changed definition is a new key.
#[derive(Default)]
struct Indexes {
    kept: Mutex<HashMap<Digest, Arc<Index>>>,
}

impl Indexes {
    fn of(&self, scope: &[&Tool]) -> Arc<Index> {
        // A name never holds a newline, and a digest is 32 bytes: each
        // tool's piece ends where the next begins, whatever the names.
        let mut key = Digest::hasher();
        for t in scope {
            key.update(t.spec().name.as_str().as_bytes());
            key.update(b"\n");
            key.update(t.definition_digest().as_bytes());
        }
        let key = key.finish();
        let kept = |k: &Digest| {
            self.kept
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(k)
                .cloned()
        };
        if let Some(index) = kept(&key) {
            return index;
        }
        let entries: Vec<Entry> = scope.iter().map(|t| entry(t)).collect();
        let index = Arc::new(Index::new(&entries));
        let mut all = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if all.len() >= MAX_KEPT_INDEXES {
            all.clear();
        }
        all.insert(key, index.clone());
        index
    }
}

/// `find_tools`' arguments.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Find {
    query: String,
    limit: Option<usize>,
    plugin: Option<String>,
    tag: Option<String>,
}

impl FindTools {
    fn new() -> Self {
        let input = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY,
                          "description": "What you want to do, in words: \"refund a payment\", \"open tickets of a customer\"."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_CANDIDATES,
                          "description": "Most candidates answered (default 5)."},
                "plugin": {"type": "string", "maxLength": 64, "description": "Only this plugin's tools."},
                "tag": {"type": "string", "maxLength": 32, "description": "Only tools with this tag."}
            },
            "required": ["query"],
            "additionalProperties": false
        });
        let spec = host_spec(
            FIND_TOOLS,
            "Find tools",
            "Searches the tools you may use (names, titles, descriptions, tags and argument names) and answers the best candidates, best first. Any candidate may be called at once by its name, listed or not; describe_tool gives its full definition and arguments. reason is matched (a clear best), ambiguous (several fit about as well: choose, or ask the person with ask_user) or not_found. Nothing is ever called for you.",
            input,
            OPEN_PERMISSION,
            false,
        );
        FindTools {
            spec,
            indexes: Indexes::default(),
        }
    }

    async fn run(&self, call: &HostCall<'_>) -> Result<ToolOutput, InvokeError> {
        let args: Find =
            serde_json::from_value(call.args.clone()).map_err(|e| invalid(e.to_string()))?;
        // Host tools check their own arguments (the call path checks
        // bounds; schemas are the catalog's).
        let limit = match args.limit {
            None => DEFAULT_LIMIT,
            Some(n @ 1..=MAX_CANDIDATES) => n,
            Some(n) => return Err(invalid(format!("limit {n} is not 1–{MAX_CANDIDATES}"))),
        };
        if args.query.trim().is_empty() || args.query.chars().count() > MAX_QUERY {
            return Err(invalid(format!("query must be 1–{MAX_QUERY} characters")));
        }
        let listing = searchable(call.host, call).await?;
        let pinned = |t: &&Tool| {
            let plugin = args
                .plugin
                .as_deref()
                .is_none_or(|p| plugin_of(t) == Some(p));
            let tag = args
                .tag
                .as_deref()
                .is_none_or(|g| t.tags().iter().any(|x| x == g));
            plugin && tag
        };
        let scope: Vec<&Tool> = listing.tools.iter().filter(pinned).collect();
        let hits = self.indexes.of(&scope).search(&args.query, limit);
        let by_name: BTreeMap<&str, &Tool> =
            scope.iter().map(|t| (t.spec().name.as_str(), *t)).collect();
        let candidates: Vec<Value> = (hits.iter())
            .map(|h| candidate(by_name[h.name.as_str()], h))
            .collect();
        let scoped_by: BTreeMap<&str, &str> = [("plugin", &args.plugin), ("tag", &args.tag)]
            .into_iter()
            .filter_map(|(k, v)| Some((k, v.as_deref()?)))
            .collect();
        let (reason, ask_user) = verdict(&args.query, &hits);
        let text = match &ask_user {
            Some(ask) => ask.clone(),
            None => format!("Best match: {}", hits[0].name),
        };
        let structured = json!({
            "query": args.query,
            "reason": reason,
            "ask_user": ask_user,
            "candidates": candidates,
            "scoped_by": scoped_by,
        });
        Ok(ToolOutput::new(structured, Some(text)))
    }
}

/// The answer's reason and the question for the person, if any: no hit
/// is `not_found`; a runner-up within [`AMBIGUOUS_SHARE`] of the best is
/// `ambiguous`; else `matched`.
fn verdict(query: &str, hits: &[Hit]) -> (&'static str, Option<String>) {
    let echo: String = query.chars().take(MAX_ECHO).collect();
    match hits {
        [] => (
            "not_found",
            Some(format!(
                "No tool you may use matches {echo:?}; try other words."
            )),
        ),
        [best, next, ..] if next.score >= best.score * AMBIGUOUS_SHARE => {
            let close: Vec<&str> = (hits.iter())
                .take_while(|h| h.score >= best.score * AMBIGUOUS_SHARE)
                .map(|h| h.name.as_str())
                .collect();
            let ask = format!("Which tool for {echo:?}? Candidates: {}.", close.join(", "));
            ("ambiguous", Some(ask))
        }
        _ => ("matched", None),
    }
}

/// What a search answers of `tool`.
fn candidate(tool: &Tool, hit: &Hit) -> Value {
    let spec = tool.spec();
    let mut summary: String = spec.description.chars().take(MAX_SUMMARY).collect();
    if summary.len() < spec.description.len() {
        summary.push('…');
    }
    json!({
        "name": spec.name.as_str(),
        "title": spec.title,
        "description": summary,
        "tags": tool.tags(),
        "plugin": plugin_of(tool),
        "score": (hit.score * 1000.0).round() / 1000.0,
    })
}

/// The plugin serving `tool`; none for the host's own.
fn plugin_of(tool: &Tool) -> Option<&str> {
    tool.catalog_tool()
        .map(|t| t.plugin().manifest.plugin.name.as_str())
}

impl HostTool for FindTools {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, call: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(async move { Ok((self.run(&call).await?, Vec::new())) })
    }

    fn open(&self) -> bool {
        true
    }
}

/// `describe_tool`.
pub struct DescribeTool {
    spec: ToolSpec,
    describe: Describe,
}

/// `describe_tool`'s arguments.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Described {
    name: String,
}

impl DescribeTool {
    fn new(describe: Describe) -> Self {
        let input = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 128,
                         "description": "The tool's name, as find_tools answered it."}
            },
            "required": ["name"],
            "additionalProperties": false
        });
        let spec = host_spec(
            DESCRIBE_TOOL,
            "Describe a tool",
            "Answers the full definition of a tool you may use, exactly as tools/list would list it (description, input schema, output schema, annotations, tags), so you can call it at once. A tool you may not use is TOOL_NOT_FOUND.",
            input,
            OPEN_PERMISSION,
            false,
        );
        DescribeTool { spec, describe }
    }

    async fn run(&self, call: &HostCall<'_>) -> Result<ToolOutput, InvokeError> {
        let args: Described =
            serde_json::from_value(call.args.clone()).map_err(|e| invalid(e.to_string()))?;
        let listing = searchable(call.host, call).await?;
        let not_found = || InvokeError::ToolNotFound {
            tool: args.name.clone(),
        };
        let tool = (listing.tools.iter())
            .find(|t| t.spec().name.as_str() == args.name)
            .ok_or_else(not_found)?;
        let definition = (self.describe)(tool, &listing.catalog_version);
        let text = format!("{}: {}", args.name, tool.spec().description);
        Ok(ToolOutput::new(json!({ "tool": definition }), Some(text)))
    }
}

impl HostTool for DescribeTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, call: HostCall<'a>) -> HostToolFuture<'a> {
        Box::pin(async move { Ok((self.run(&call).await?, Vec::new())) })
    }

    fn open(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(name: &str, score: f32) -> Hit {
        Hit {
            name: name.into(),
            score,
        }
    }

    #[test]
    fn a_clear_best_matches_close_runners_up_are_ambiguous_and_nothing_is_not_found() {
        assert_eq!(
            verdict("q", &[hit("a", 10.0), hit("b", 7.9)]),
            ("matched", None)
        );
        assert_eq!(verdict("q", &[hit("a", 10.0)]), ("matched", None));
        let (reason, ask) = verdict("q", &[hit("a", 10.0), hit("b", 8.5), hit("c", 2.0)]);
        assert_eq!(reason, "ambiguous");
        assert_eq!(
            ask.as_deref(),
            Some("Which tool for \"q\"? Candidates: a, b.")
        );
        let (reason, ask) = verdict(&"x".repeat(200), &[]);
        assert_eq!(reason, "not_found");
        assert!(ask.expect("a question").len() < 140, "the echo is capped");
    }
}
