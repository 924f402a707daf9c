//! What the hostile fixtures (`t-<suite>-<case>`) share, so each fixture
//! holds only its one misbehaviour: the `ping` tool that proves a plugin
//! still answers right after a hostile call, the empty argument and result
//! types, the report of an escape attempt, and a search of the instance's
//! whole linear memory. A library, not a plugin.

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

/// How many times `needle` occurs in the whole of this instance's linear
/// memory, the occurrence at `except` (the needle itself) not counted.
#[allow(unsafe_code)]
pub fn copies_in_memory(needle: &[u8], except: Option<usize>) -> usize {
    // Address 0 is the null pointer to Rust; nothing the guest writes is
    // placed in the first bytes.
    const FROM: usize = 16;
    let size = core::arch::wasm32::memory_size::<0>() * 65_536;
    // SAFETY: in a wasm32 guest, every address below the memory's size is
    // readable; the bytes are only compared.
    let memory = unsafe { std::slice::from_raw_parts(FROM as *const u8, size - FROM) };
    let Some(&first) = needle.first() else {
        return 0;
    };
    memory
        .iter()
        .enumerate()
        .filter(|&(i, &b)| {
            b == first && Some(FROM + i) != except && memory[i..].starts_with(needle)
        })
        .count()
}
