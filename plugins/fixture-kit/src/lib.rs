//! What the hostile fixtures (`t-<suite>-<case>`) share, so each fixture
//! holds only its one misbehaviour: the `ping` tool that proves a plugin
//! still answers right after a hostile call, the empty argument and result
//! types, and the report of an escape attempt. A library, not a plugin.

use toolhost_sdk::prelude::*;

/// Arguments of a tool that takes none.
#[derive(Deserialize, JsonSchema)]
pub struct NoArgs {}

/// The result of a tool that never returns (it loops, traps or aborts).
#[derive(Serialize, JsonSchema)]
pub struct Never {}

/// The answer of `ping`.
#[derive(Serialize, JsonSchema)]
pub struct Pong {
    pong: bool,
}

/// The `ping` tool every fixture exports: answers `{"pong": true}`.
pub fn ping() -> Tool {
    Tool::new("ping", "Answers {\"pong\": true}.", |_: &Ctx, _: NoArgs| {
        Ok::<_, ToolError>(Pong { pong: true })
    })
    .permission("fixture", "run")
    .read_only()
}

/// The outcome of one escape attempt, reported rather than panicked on.
#[derive(Serialize, JsonSchema)]
pub struct Attempt {
    ok: bool,
    /// What succeeded (an address, a status line), if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
    /// The I/O error's text, if it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// The I/O error's kind (`Unsupported`, `PermissionDenied` …), if it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
}

impl Attempt {
    /// Reports `result`, describing a success with `detail`.
    pub fn of<T>(result: std::io::Result<T>, detail: impl FnOnce(T) -> String) -> Self {
        match result {
            Ok(v) => Attempt {
                ok: true,
                detail: Some(detail(v)),
                error: None,
                kind: None,
            },
            Err(e) => Attempt {
                ok: false,
                detail: None,
                kind: Some(format!("{:?}", e.kind())),
                error: Some(e.to_string()),
            },
        }
    }
}
