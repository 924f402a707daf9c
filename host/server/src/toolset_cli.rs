//! `toolhost toolset …`: an operator's commands on a tenant's toolsets,
//! against the server's store (the same `--database-url`). A change takes
//! effect on a bound client's next MCP request: toolsets are read live.
//! Tenant admins compose their own through the console's Toolsets page or
//! the `define_toolset` host tool, each change with its audit row.

use std::process::ExitCode;

use anyhow::bail;
use clap::Subcommand;
use toolhost_policy::{PolicyStore, Toolset};

use crate::admin::{StoreArg, open};

/// `toolhost toolset …`
#[derive(Debug, Subcommand)]
pub enum ToolsetCommand {
    /// Define a toolset (replacing one of the same name): tools by name,
    /// whole plugins and tags, less exclusions. A client is bound to it by
    /// the scope `toolset:NAME`, a person's choice at consent, or the
    /// endpoint `/mcp/toolsets/NAME`.
    Define {
        /// The toolset's name: 1–64 of [a-z0-9-].
        name: String,
        /// Its tenant (must exist).
        #[arg(long)]
        tenant: String,
        /// A tool in it by name (repeat for more).
        #[arg(long = "tool")]
        tools: Vec<String>,
        /// Every tool of this plugin (repeat for more).
        #[arg(long = "plugin")]
        plugins: Vec<String>,
        /// Every tool with this manifest tag (repeat for more).
        #[arg(long = "tag")]
        tags: Vec<String>,
        /// A tool left out whatever named it (repeat for more).
        #[arg(long = "exclude")]
        exclude: Vec<String>,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Delete a toolset: clients bound to it reach none of its tools from
    /// their next request on.
    Delete {
        /// The toolset's name.
        name: String,
        /// Its tenant.
        #[arg(long)]
        tenant: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// A tenant's toolsets, one per line as JSON.
    List {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        #[command(flatten)]
        store: StoreArg,
    },
}

/// Runs a `toolset` command.
pub async fn toolset(command: ToolsetCommand) -> anyhow::Result<ExitCode> {
    match command {
        ToolsetCommand::Define {
            name,
            tenant,
            tools,
            plugins,
            tags,
            exclude,
            store,
        } => {
            let toolset = Toolset {
                name,
                tools: tools.into_iter().collect(),
                plugins: plugins.into_iter().collect(),
                tags: tags.into_iter().collect(),
                exclude: exclude.into_iter().collect(),
            };
            toolset.check()?;
            let store = open(&store).await?;
            if !store.tenants().await?.contains(&tenant) {
                bail!("tenant {tenant:?} does not exist");
            }
            let created = store.define_toolset(&tenant, &toolset).await?;
            let done = if created { "defined" } else { "redefined" };
            println!(
                "toolset {} {done} in tenant {tenant}: bind a client with scope {}, or use /mcp/toolsets/{}",
                toolset.name,
                toolset.scope(),
                toolset.name
            );
        }
        ToolsetCommand::Delete {
            name,
            tenant,
            store,
        } => {
            if !open(&store).await?.delete_toolset(&tenant, &name).await? {
                bail!("toolset {name:?} does not exist in tenant {tenant:?}");
            }
            println!("toolset {name} deleted from tenant {tenant}");
        }
        ToolsetCommand::List { tenant, store } => {
            for t in open(&store).await?.all_toolsets(&tenant).await? {
                println!("{}", serde_json::to_string(&t)?);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
