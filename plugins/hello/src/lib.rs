//! `hello`, the reference plugin: three small read-only tools with typed
//! arguments, structured output and output schemas. Read it (and
//! `tools.rs`) as the example of how a plugin is written with `toolhost-sdk`.

mod tools;

use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        tools::greet_tool(),
        tools::add_tool(),
        tools::word_stats_tool("word_stats"),
    ]
}

toolhost_sdk::export_plugin!(tools);
