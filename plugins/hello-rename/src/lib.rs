//! Test fixture `hello-rename`: `hello` 1.0.0, which renames `word_stats`
//! to `text_stats` (its manifest says `replaces = "word_stats"`) and adds
//! `pause`, a call that lasts (it sleeps on the monotonic clock, so this
//! revision also imports the clocks). The catalog's tests submit it after
//! `hello-next`: a breaking change, so the catalog's major version moves
//! and `word_stats` stays listed, deprecated, for one minor cycle. Never
//! deployed.

mod pause;
#[path = "../../hello-next/src/shout.rs"]
mod shout;
#[path = "../../hello/src/tools.rs"]
mod tools;

use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        tools::greet_tool(),
        tools::add_tool(),
        tools::word_stats_tool("text_stats"),
        shout::shout_tool(),
        pause::pause_tool(),
    ]
}

toolhost_sdk::export_plugin!(tools);
