//! `shout`: the text in capitals. Pure computation: it needs nothing the
//! reference plugin does not already import, so a revision that adds it
//! changes exactly one thing, a tool.

use toolhost_sdk::prelude::*;

/// `shout`.
pub(crate) fn shout_tool() -> Tool {
    Tool::new("shout", "Returns the text in capital letters.", shout)
        .title("Shout")
        .permission("hello", "read")
        .read_only()
        .idempotent()
}

/// Arguments of `shout`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ShoutArgs {
    /// The text.
    text: String,
}

/// The answer of `shout`.
#[derive(Debug, Serialize, JsonSchema)]
struct Shouted {
    /// The text in capitals.
    text: String,
}

fn shout(_ctx: &Ctx, args: ShoutArgs) -> Result<Shouted, ToolError> {
    Ok(Shouted {
        text: args.text.to_uppercase(),
    })
}
