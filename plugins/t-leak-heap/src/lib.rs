//! Hostile fixture `t-leak-heap`: `remember` leaves a secret in its
//! instance's memory (a global, a leaked allocation, and copies on heap
//! pages spread over 4 MiB), and `recall` reports what of it a later
//! instance finds: the global's contents, and how many copies of the secret
//! its whole linear memory holds. `remember` can hold its instance alive a
//! while after, so that a test can force its pages out of memory before the
//! pool resets the slot. The host gives every call a fresh
//! instance, so `recall` must find nothing, whatever slot of the pool it
//! lands in and whatever the kernel did with the pages between the calls
//! (`host/runtime/tests/freshness.rs`).
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use std::sync::Mutex;

use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "remember",
            "Keeps the secret in a global, a leaked allocation and 64 heap blocks, then holds the instance for hold_ms.",
            remember,
        )
        .permission("fixture", "run")
        .read_only(),
        Tool::new(
            "recall",
            "Reports the global and the copies of the secret in this instance's memory.",
            recall,
        )
        .permission("fixture", "run")
        .read_only(),
        fixture_kit::ping(),
    ]
}

toolhost_sdk::export_plugin!(tools);

/// What `remember` keeps for a later call of the same instance.
static KEPT: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Heap blocks `remember` leaves the secret in, and their size: 4 MiB in
/// all, every other one freed again, so the dirty pages are many regions
/// apart (more than the 32 a single `PAGEMAP_SCAN` reports).
const BLOCKS: usize = 64;
const BLOCK: usize = 64 << 10;

#[derive(Deserialize, JsonSchema)]
struct Remember {
    /// The secret to leave behind.
    secret: String,
    /// How long to keep the instance alive once the secret is left (for the
    /// test to force its pages out meanwhile); none by default.
    #[serde(default)]
    hold_ms: u64,
}

#[derive(Serialize, JsonSchema)]
struct Remembered {
    /// What the global holds now.
    kept: Vec<String>,
    /// Copies of the secret this instance now holds in its memory.
    copies: usize,
}

fn remember(_ctx: &Ctx, args: Remember) -> Result<Remembered, ToolError> {
    let secret = args.secret.into_bytes();
    if secret.is_empty() {
        return Err(ToolError::InvalidArguments(
            "secret must not be empty".into(),
        ));
    }
    let mut blocks = Vec::with_capacity(BLOCKS);
    for i in 0..BLOCKS {
        let mut block = vec![0u8; BLOCK];
        for at in (0..BLOCK - secret.len()).step_by(4096) {
            block[at..at + secret.len()].copy_from_slice(&secret);
        }
        if i % 2 == 0 {
            blocks.push(block.leak());
        } else {
            drop(block);
        }
    }
    let text =
        String::from_utf8(secret).map_err(|_| ToolError::InvalidArguments("secret".into()))?;
    Box::leak(text.clone().into_boxed_str());
    let kept = {
        let mut kept = KEPT
            .lock()
            .map_err(|_| ToolError::Failed("poisoned".into()))?;
        kept.push(text.clone());
        kept.clone()
    };
    let copies = fixture_kit::copies_in_memory(text.as_bytes(), None);
    std::thread::sleep(std::time::Duration::from_millis(args.hold_ms));
    Ok(Remembered { kept, copies })
}

#[derive(Deserialize, JsonSchema)]
struct Recall {
    /// The secret, reversed, so that this call's own input does not hold it.
    reversed: String,
}

#[derive(Serialize, JsonSchema)]
struct Recalled {
    /// What the global holds.
    kept: Vec<String>,
    /// Copies of the secret anywhere in this instance's linear memory, but
    /// the one this call made to search for.
    copies: usize,
}

fn recall(_ctx: &Ctx, args: Recall) -> Result<Recalled, ToolError> {
    // Built in place at its full size, so no partial copy is left behind.
    let mut secret = String::with_capacity(args.reversed.len());
    secret.extend(args.reversed.chars().rev());
    let kept = KEPT
        .lock()
        .map_err(|_| ToolError::Failed("poisoned".into()))?
        .clone();
    Ok(Recalled {
        kept,
        copies: fixture_kit::copies_in_memory(secret.as_bytes(), Some(secret.as_ptr() as usize)),
    })
}
