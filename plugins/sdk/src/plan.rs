//! Builders for the WIT `plan` and `target` records.

use crate::{Plan, Risk, Target};

impl Plan {
    /// A plan with no targets yet: `risk` for this invocation and one
    /// `summary` line a person can read when asked to approve the call.
    pub fn new(risk: Risk, summary: impl Into<String>) -> Self {
        Plan {
            targets: Vec::new(),
            risk,
            summary: summary.into(),
        }
    }

    /// Names one more thing the call would act on.
    pub fn target(mut self, target: Target) -> Self {
        self.targets.push(target);
        self
    }
}

impl Target {
    /// A thing of `kind` (`"file"`, `"dataset"` …) with a stable `id` and a
    /// display `name`, without tags.
    pub fn new(kind: impl Into<String>, id: impl Into<String>, name: impl Into<String>) -> Self {
        Target {
            kind: kind.into(),
            id: id.into(),
            name: name.into(),
            tags: Vec::new(),
        }
    }

    /// Adds one tag (the host's risk rules may match on tags).
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.tags.push(tag.into());
        self
    }
}
