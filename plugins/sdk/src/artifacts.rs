//! What an exploration run leaves behind, through the host's `artifacts`
//! import: candidate test plans, traces, reports.
//!
//! A tool whose manifest entry says `run = { … }` runs as an exploration
//! run (queued, durable, cancellable); each [`put`] there keeps one
//! artifact, owned by the run, and answers where the run's principal reads
//! it back ([`ArtifactInfo::uri`], MCP `resources/read`) and its SHA-256,
//! which the run's receipt also lists:
//!
//! ```no_run
//! # use toolhost_sdk::prelude::*;
//! # #[derive(Serialize)] struct Plan { scenarios: Vec<i64> }
//! # fn f() -> Result<(), ToolError> {
//! let plan = Plan { scenarios: vec![204, 205] };
//! let kept = artifacts::put_json("plan-staging.json", &plan)?;
//! log::info!("kept {} ({} bytes)", kept.uri, kept.size);
//! # Ok(()) }
//! ```
//!
//! Limits, all the host's: only a call inside an exploration run may keep
//! artifacts (anywhere else, a plain call or a `plan`, every `put` is
//! refused); the run's budget bounds how many it keeps and their total
//! bytes; each `put` counts against the host-call budget. A refusal is a
//! [`ToolError::Failed`] with the host's reason, never a trap, so a tool
//! decides whether it can go on without the artifact.

use schemars::JsonSchema;
use serde::Serialize;

use crate::ToolError;
use crate::bindings::toolhost::plugin::artifacts as wit;

/// The longest name the host accepts, in characters (and it must not be
/// empty): names are shown to people next to the run.
pub const MAX_NAME_CHARS: usize = 128;

/// The media type [`put_json`] keeps its bodies as.
pub const JSON: &str = "application/json";

/// An artifact the host kept. Serializes (and has a schema) so a tool can
/// answer with the artifacts it kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ArtifactInfo {
    /// Where the run's principal (and the tenant's admins) read it back:
    /// `toolhost://artifacts/<id>`. Anyone else gets not-found.
    pub uri: String,
    /// Lower-case hex SHA-256 of the bytes, as the run's receipt lists it.
    pub sha256: String,
    /// Length of the bytes.
    pub size: u64,
}

impl From<wit::ArtifactInfo> for ArtifactInfo {
    fn from(a: wit::ArtifactInfo) -> Self {
        ArtifactInfo {
            uri: a.uri,
            sha256: a.sha256,
            size: a.size,
        }
    }
}

/// Keeps `body` as the artifact `name` (1–[`MAX_NAME_CHARS`] characters)
/// of type `mime_type` (`application/json`, `text/plain`,
/// `text/markdown`…).
///
/// A refusal (outside a run, over the run's artifact count or bytes, a
/// name out of bounds) is [`ToolError::Failed`] naming the artifact and
/// quoting the host's reason. Outside wasm (native unit tests) there is no
/// host: every call fails the same way.
pub fn put(name: &str, mime_type: &str, body: &[u8]) -> Result<ArtifactInfo, ToolError> {
    #[cfg(target_arch = "wasm32")]
    let answer: Result<wit::ArtifactInfo, String> = wit::put(name, mime_type, body);
    #[cfg(not(target_arch = "wasm32"))]
    let answer: Result<wit::ArtifactInfo, String> = {
        let _ = (mime_type, body);
        Err("artifacts are only kept inside an exploration run on the toolhost".into())
    };
    answer
        .map(ArtifactInfo::from)
        .map_err(|why| refused(name, &why))
}

/// Keeps `value` as pretty-printed JSON (`application/json`) under
/// `name`: meant for people to read back. A value that does not serialize
/// (a map with non-string keys) is [`ToolError::Failed`] before the host
/// is asked; otherwise as [`put`].
pub fn put_json(name: &str, value: &impl Serialize) -> Result<ArtifactInfo, ToolError> {
    let body = serde_json::to_vec_pretty(value).map_err(|e| {
        ToolError::Failed(format!("artifact {name:?} does not serialize to JSON: {e}"))
    })?;
    put(name, JSON, &body)
}

/// The host's refusal, naming the artifact.
fn refused(name: &str, why: &str) -> ToolError {
    ToolError::Failed(format!("artifact {name:?} was not kept: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_keeps_every_field() {
        let info = ArtifactInfo::from(wit::ArtifactInfo {
            uri: "toolhost://artifacts/art_1".into(),
            sha256: "ab".repeat(32),
            size: 42,
        });
        assert_eq!(
            (info.uri.as_str(), info.sha256.len(), info.size),
            ("toolhost://artifacts/art_1", 64, 42)
        );
    }

    #[test]
    fn a_refusal_is_failed_naming_the_artifact_and_the_hosts_reason() {
        assert_eq!(
            refused("plan-dev.json", "not inside an exploration run"),
            ToolError::Failed(
                "artifact \"plan-dev.json\" was not kept: not inside an exploration run".into()
            )
        );
    }

    #[test]
    fn a_value_that_does_not_serialize_fails_before_reaching_the_host() {
        let bad: std::collections::HashMap<(i32, i32), i32> = [((1, 2), 3)].into();
        let err = put_json("bad.json", &bad).expect_err("tuple keys are no JSON");
        assert!(
            matches!(&err, ToolError::Failed(m) if m.contains("does not serialize")),
            "{err:?}"
        );
    }

    #[test]
    fn outside_wasm_keeping_fails_instead_of_trapping() {
        let err = put_json("plan-dev.json", &serde_json::json!({"a": 1})).expect_err("no host");
        assert!(
            matches!(&err, ToolError::Failed(m) if m.contains("only kept inside an exploration run")),
            "{err:?}"
        );
    }
}
