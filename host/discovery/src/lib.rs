//! Progressive discovery of large catalogs: a caller who may see many
//! tools is listed a few, and finds the rest by asking.
//!
//! This room owns three things:
//!
//! - [`Discovery`]: what `tools/list` shows a caller whose visible catalog
//!   is larger than a threshold (the operator's core set and the two
//!   discovery tools), and that a small catalog lists as before;
//! - the discovery tools, `find_tools(query, limit, plugin?, tag?)` and
//!   `describe_tool(name)` ([`host_tools`]), open host tools that answer
//!   from the caller's own listing: the same decision `tools/list` makes,
//!   so nothing hidden by permission or tenant is ever named;
//! - [`Index`]: Okapi BM25 (the `bm25` crate) over each tool's name,
//!   title, tags, description and argument names, with a tokenizer of its
//!   own ([`Words`]) that splits identifiers and stems English.
//!
//! It does not own who may see or call a tool (`toolhost_policy`, through
//! the call path's listing), tags (the manifest's, reviewed with the rest
//! of the definition: `toolhost_catalog`), the MCP rendering of a tool
//! (`toolhost_mcp`, handed in as [`Describe`]) or calling what was found:
//! a found tool is called like any other, and listing was never a
//! precondition of a call.
//!
//! A search answers in the resolver's shape (seed 000): `candidates`
//! (capped at [`MAX_CANDIDATES`]), `scoped_by` (what the caller pinned:
//! `plugin`, `tag`), and a `reason` (`matched`, `ambiguous`, `not_found`)
//! with `ask_user` when a person should choose. It never picks for the
//! caller.
//!
//! ```
//! use toolhost_discovery::{Entry, Index};
//! let tool = |name: &str, description: &str| Entry {
//!     name: name.into(), description: description.into(), ..Entry::default()
//! };
//! let index = Index::new(&[
//!     tool("create_invoice", "Creates an invoice for a customer."),
//!     tool("open_ticket", "Opens a support ticket."),
//! ]);
//! assert_eq!(index.search("bill a customer: new invoice", 3)[0].name, "create_invoice");
//! ```

mod index;
mod listing;
mod tools;
mod words;

pub use index::{Entry, Hit, Index};
pub use listing::{DEFAULT_CORE, DEFAULT_THRESHOLD, Discovery, is_discovery_tool};
pub use tools::{
    AMBIGUOUS_SHARE, DEFAULT_LIMIT, Describe, DescribeTool, FindTools, MAX_KEPT_INDEXES, entry,
    host_tools,
};
pub use words::{VERBS, Words};

/// The search tool's name.
pub const FIND_TOOLS: &str = "find_tools";

/// The describing tool's name.
pub const DESCRIBE_TOOL: &str = "describe_tool";

/// The most candidates one search answers: the resolver's cap (seed 000),
/// so no answer of the host offers a person more choices than one
/// question may.
pub const MAX_CANDIDATES: usize = toolhost_resolver::MAX_CANDIDATES;
