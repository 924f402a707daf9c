//! Hostile fixture `t-limits-huge-output`: `huge` answers `{"data": "xxx…"}`
//! with `bytes` characters of data (default 20 MiB). With `output = "1 MiB"` in
//! the manifest the host must refuse it, while a small `bytes` goes through.
//!
//! The data is streamed into the JSON text rather than built first, and
//! the SDK sizes its JSON buffer exactly, so the guest needs about `bytes`
//! of memory: 20 MiB stays well within the default memory budget, and the
//! host's output budget, not its memory cap, is what stops the answer.
//!
//! `huge_image` answers the same way in content blocks: an image of `bytes`
//! bytes (a PNG signature, then filler) beside an embedded text resource
//! holding `note`, so the host's bounds, artifacts and secret scan are
//! proved on content as on structured answers.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use std::fmt;
use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "huge",
            "Returns a structured answer of the requested size.",
            huge,
        )
        .permission("fixture", "run")
        .read_only(),
        Tool::new(
            "huge_image",
            "Returns an image block of the requested size, and an embedded text resource.",
            huge_image,
        )
        .permission("fixture", "run")
        .read_only(),
        fixture_kit::ping(),
    ]
}

toolhost_sdk::export_plugin!(tools);

/// Arguments of `huge`.
#[derive(Deserialize, JsonSchema)]
struct HugeArgs {
    /// How many characters of data to return (default 20 MiB).
    #[serde(default = "default_bytes")]
    bytes: usize,
}

fn default_bytes() -> usize {
    20 << 20
}

/// The answer of `huge`.
#[derive(Serialize, JsonSchema)]
struct Huge {
    #[schemars(with = "String")]
    data: Filler,
}

/// `n` copies of `x`, written straight into the serializer's output.
struct Filler(usize);

impl fmt::Display for Filler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const CHUNK: &str = match std::str::from_utf8(&[b'x'; 4096]) {
            Ok(s) => s,
            Err(_) => panic!("ASCII is UTF-8"),
        };
        let mut left = self.0;
        while left > 0 {
            let n = left.min(CHUNK.len());
            f.write_str(&CHUNK[..n])?;
            left -= n;
        }
        Ok(())
    }
}

impl Serialize for Filler {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

fn huge(_ctx: &Ctx, args: HugeArgs) -> Result<Huge, ToolError> {
    Ok(Huge {
        data: Filler(args.bytes),
    })
}

/// Arguments of `huge_image`.
#[derive(Deserialize, JsonSchema)]
struct HugeImageArgs {
    /// How many bytes the image has (the PNG signature included).
    bytes: usize,
    /// The embedded resource's text.
    #[serde(default)]
    note: String,
}

/// The structured part of `huge_image`'s answer.
#[derive(Serialize, JsonSchema)]
struct ImageInfo {
    bytes: usize,
}

/// The PNG file signature.
const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

fn huge_image(_ctx: &Ctx, args: HugeImageArgs) -> Result<Output<ImageInfo>, ToolError> {
    let mut data = PNG_SIGNATURE.to_vec();
    data.resize(args.bytes.max(PNG_SIGNATURE.len()), b'x');
    let bytes = data.len();
    Ok(Output::new(ImageInfo { bytes })
        .with_content(Content::image("image/png", data))
        .with_content(Content::embedded_text(
            "fixture://note",
            "text/plain",
            args.note,
        )))
}
