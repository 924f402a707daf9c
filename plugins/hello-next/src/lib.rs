//! Test fixture `hello-next`: `hello` 0.2.0, the reference plugin's three
//! tools plus one, `shout`. The catalog's tests submit it as the next
//! revision of `hello`: exactly one tool added, nothing else. Never deployed.

mod shout;
#[path = "../../hello/src/tools.rs"]
mod tools;

use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        tools::greet_tool(),
        tools::add_tool(),
        tools::word_stats_tool("word_stats"),
        shout::shout_tool(),
    ]
}

toolhost_sdk::export_plugin!(tools);
