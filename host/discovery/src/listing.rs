//! [`Discovery`]: what `tools/list` shows a caller whose catalog is large.
//!
//! Several popular clients hold 40–50 tools at most, models choose worse
//! as the list grows, and every listed definition costs context. A caller
//! who may see more than [`Discovery::threshold`] tools of the catalog
//! (plugins' tools; the host's own, a fixed two dozen at most, are not
//! counted) is listed the core set the operator named (those of it the
//! caller may see) and the two discovery tools; the rest are found with
//! `find_tools`, read with `describe_tool`, and called as ever. Listing
//! never decides what may be called: the call path decides each call,
//! listed or not.
//!
//! A caller at or under the threshold is listed every tool it may see,
//! and not the discovery tools (callable all the same): a small catalog
//! lists as it did before discovery existed.

use toolhost_invoke::Tool;

use crate::{DESCRIBE_TOOL, FIND_TOOLS};

/// Default [`Discovery::threshold`]: the smallest cap of the popular
/// clients (40 tools), so a catalog any client can hold is listed whole.
pub const DEFAULT_THRESHOLD: usize = 40;

/// Default [`Discovery::core`]: the approval loop, since a gated call's
/// answer sends its caller to `decide_approval`, and a person looks for
/// what waits on them with `list_pending_approvals`.
pub const DEFAULT_CORE: [&str; 2] = ["decide_approval", "list_pending_approvals"];

/// How a large catalog is listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    /// The most catalog tools (plugins') a caller is listed in full
    /// beside the host's own; above it, the core set and the discovery
    /// tools. `usize::MAX`: always in full.
    pub threshold: usize,
    /// The tools a large catalog's listing keeps, by name (those of them
    /// the caller may see).
    pub core: Vec<String>,
}

impl Default for Discovery {
    fn default() -> Self {
        Discovery {
            threshold: DEFAULT_THRESHOLD,
            core: DEFAULT_CORE.map(String::from).to_vec(),
        }
    }
}

impl Discovery {
    /// What `tools/list` shows of `visible` (every tool the caller may
    /// see, in name order; the discovery tools among them): see the
    /// module docs. Stays in name order.
    pub fn listed(&self, visible: Vec<Tool>) -> Vec<Tool> {
        let is_discovery = |t: &Tool| is_discovery_tool(t.spec().name.as_str());
        let catalog = visible
            .iter()
            .filter(|t| t.catalog_tool().is_some())
            .count();
        if catalog <= self.threshold {
            return visible.into_iter().filter(|t| !is_discovery(t)).collect();
        }
        let kept =
            |t: &Tool| is_discovery(t) || self.core.iter().any(|c| c == t.spec().name.as_str());
        visible.into_iter().filter(kept).collect()
    }
}

/// Whether `name` is one of the discovery tools.
pub fn is_discovery_tool(name: &str) -> bool {
    name == FIND_TOOLS || name == DESCRIBE_TOOL
}
