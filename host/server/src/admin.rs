//! `toolhost user …` and `toolhost client …`: operator commands on the
//! store the server uses (run them against the same `--database-url`).

use std::io::BufRead;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use toolhost_auth::admin;
use toolhost_auth::{AuthStore, Client};
use toolhost_storage::Store;

/// Where the store is, for every admin command.
#[derive(Debug, clap::Args)]
pub struct StoreArg {
    /// `sqlite://FILE?mode=rwc` (default) or `postgres://…`: the server's store.
    #[arg(
        long,
        env = "TOOLHOST_DATABASE_URL",
        default_value = "sqlite://toolhost.db?mode=rwc"
    )]
    database_url: String,
}

/// One stored record by its id, for a `show` command.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// Its id: a revision's, or a run's (`run_…`).
    pub id: String,
    #[command(flatten)]
    pub store: StoreArg,
}

/// `toolhost user …`
#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Create a user. The password is read from stdin (one line) with
    /// `--password-stdin`, else from `$TOOLHOST_PASSWORD`, else generated and printed.
    Add {
        /// The login name.
        username: String,
        /// The user's tenant (created if missing).
        #[arg(long)]
        tenant: String,
        /// Read the password from the first line of stdin.
        #[arg(long)]
        password_stdin: bool,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Set a user's password (same sources as `add`); ends their browser sessions.
    Passwd {
        /// The login name.
        username: String,
        /// Read the password from the first line of stdin.
        #[arg(long)]
        password_stdin: bool,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Disable a user: no login, and their tokens stop working at once.
    Disable {
        /// The login name.
        username: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Enable a disabled user again (old tokens stay revoked).
    Enable {
        /// The login name.
        username: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Create the demo tenant and its admin user `demo`, as `serve
    /// --seed-demo` does (password `$TOOLHOST_DEMO_PASSWORD`, else generated
    /// and printed once); nothing if `demo` exists.
    SeedDemo {
        #[command(flatten)]
        store: StoreArg,
    },
}

/// `toolhost client …`
#[derive(Debug, Subcommand)]
pub enum ClientCommand {
    /// Every client: id, kind, origin, owner, redirect URIs, created, last used, state.
    List {
        #[command(flatten)]
        store: StoreArg,
    },
    /// Revoke a client: its tokens stop working at once.
    Revoke {
        /// The client id (a registered one may begin with `-`).
        #[arg(allow_hyphen_values = true)]
        client_id: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// The latest security events: registrations (and refusals), logins and
    /// failed logins, revocations, replays.
    Events {
        /// How many, newest first.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Replace a service client's scope set; its tokens lose removed scopes
    /// on their next request.
    Scope {
        /// The service client's id.
        #[arg(allow_hyphen_values = true)]
        client_id: String,
        /// The new scope set, space-separated.
        scope: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Add a service (machine) client for the client credentials grant.
    /// Prints its id and secret; the secret is not shown again. With
    /// `--jwks`, it has no secret: it authenticates with assertions signed
    /// by one of those keys (`private_key_jwt`).
    AddService {
        /// A readable name.
        name: String,
        /// The tenant its principal belongs to (created if missing).
        #[arg(long)]
        tenant: String,
        /// Its scope set, space-separated (`mcp` is needed to reach /mcp).
        #[arg(long, default_value = "mcp")]
        scope: String,
        /// A file holding its public keys: a JWK Set or one JWK (Ed25519,
        /// P-256 or RSA of 2048 bits or more; at most 8).
        #[arg(long, value_name = "FILE")]
        jwks: Option<std::path::PathBuf>,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Set or replace a service client's public keys (a JWK Set or one JWK
    /// in FILE). From then on it authenticates only with assertions signed
    /// by one of them (`private_key_jwt`); its secret is refused. To
    /// rotate, list the new key beside the old until the workload uses it.
    Keys {
        /// The service client's id.
        #[arg(allow_hyphen_values = true)]
        client_id: String,
        /// The file with the keys.
        #[arg(value_name = "FILE")]
        jwks: std::path::PathBuf,
        #[command(flatten)]
        store: StoreArg,
    },
}

/// Opens (and migrates) the store `store` names. The command's process
/// closes it before it exits ([`close_opened`]).
pub(crate) async fn open(store: &StoreArg) -> anyhow::Result<Store> {
    let opened = Store::connect(&store.database_url)
        .await
        .context("opening the store")?;
    OPENED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(opened.clone());
    Ok(opened)
}

/// The stores a command opened with [`open`].
static OPENED: std::sync::Mutex<Vec<Store>> = std::sync::Mutex::new(Vec::new());

/// Closes every store a command opened: the audit rows it wrote are
/// anchored before the process exits (a command lives for less than the
/// second between a store's anchoring rounds), and SQLite checkpoints.
pub(crate) async fn close_opened() {
    let opened = std::mem::take(&mut *OPENED.lock().unwrap_or_else(|e| e.into_inner()));
    for store in opened {
        store.close().await;
    }
}

/// Runs a `user` command.
pub async fn user(command: UserCommand) -> anyhow::Result<ExitCode> {
    match command {
        UserCommand::Add {
            username,
            tenant,
            password_stdin,
            store,
        } => {
            let store = open(&store).await?;
            let (password, generated) = password(password_stdin)?;
            let user = admin::add_user(&store, &tenant, &username, &password).await?;
            println!(
                "user {} ({}) added to tenant {}",
                user.username, user.id, user.tenant
            );
            if generated {
                println!("password: {password}");
            }
        }
        UserCommand::Passwd {
            username,
            password_stdin,
            store,
        } => {
            let store = open(&store).await?;
            let (password, generated) = password(password_stdin)?;
            admin::set_password(&store, &username, &password).await?;
            println!("password of {username} changed; their browser sessions ended");
            if generated {
                println!("password: {password}");
            }
        }
        UserCommand::SeedDemo { store } => {
            match crate::demo::seed_demo(&open(&store).await?).await? {
                Some((_, true)) => {
                    println!("Demo login: user demo, password from $TOOLHOST_DEMO_PASSWORD")
                }
                Some((p, false)) => println!("Demo login: user demo, password {p}"),
                None => println!("Demo login: user demo (created earlier; password unchanged)"),
            }
        }
        UserCommand::Disable { username, store } => {
            admin::set_disabled(&open(&store).await?, &username, true).await?;
            println!("{username} disabled; their tokens are revoked");
        }
        UserCommand::Enable { username, store } => {
            admin::set_disabled(&open(&store).await?, &username, false).await?;
            println!("{username} enabled");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs a `client` command.
pub async fn client(command: ClientCommand) -> anyhow::Result<ExitCode> {
    match command {
        ClientCommand::List { store } => {
            let store = open(&store).await?;
            println!(
                "{:<32} {:<12} {:<6} {:<16} {:<20} {:<20} {:<8} {:<24} REDIRECT URIS",
                "CLIENT ID", "KIND", "ORIGIN", "OWNER", "CREATED", "LAST USED", "STATE", "NAME"
            );
            for c in store.clients().await? {
                print_client(&c);
            }
        }
        ClientCommand::Revoke { client_id, store } => {
            admin::revoke_client(&open(&store).await?, &client_id).await?;
            println!("client {client_id} revoked; its tokens stop working now");
        }
        ClientCommand::Scope {
            client_id,
            scope,
            store,
        } => {
            admin::set_service_scope(&open(&store).await?, &client_id, &scope).await?;
            println!("client {client_id} now has scope {scope:?}");
        }
        ClientCommand::Events { limit, store } => {
            for e in open(&store).await?.recent_events(limit).await? {
                println!(
                    "{} {:<28} client={} subject={} source={} {}",
                    timestamp(e.at),
                    e.kind,
                    e.client_id.as_deref().unwrap_or("-"),
                    e.subject.as_deref().unwrap_or("-"),
                    e.source.as_deref().unwrap_or("-"),
                    e.detail
                );
            }
        }
        ClientCommand::AddService {
            name,
            tenant,
            scope,
            jwks,
            store,
        } => {
            let store = open(&store).await?;
            let client = match jwks {
                Some(file) => {
                    let keys = read_keys(&file)?;
                    let client =
                        admin::add_keyed_service(&store, &tenant, &name, &scope, &keys).await?;
                    println!("client_id: {}", client.client_id);
                    println!("authentication: private_key_jwt (no secret)");
                    client
                }
                None => {
                    let (client, secret) =
                        admin::add_service(&store, &tenant, &name, &scope).await?;
                    println!("client_id: {}", client.client_id);
                    println!("client_secret: {secret}");
                    client
                }
            };
            println!("tenant: {tenant}");
            println!("scope: {}", client.scope);
        }
        ClientCommand::Keys {
            client_id,
            jwks,
            store,
        } => {
            let keys = read_keys(&jwks)?;
            let count = admin::set_service_keys(&open(&store).await?, &client_id, &keys).await?;
            println!(
                "client {client_id} now authenticates with assertions signed by one of {count} key(s)"
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A key file's text (a JWK Set is small: at most 64 KiB is read).
fn read_keys(file: &std::path::Path) -> anyhow::Result<String> {
    use std::io::Read as _;
    let mut text = String::new();
    std::fs::File::open(file)
        .with_context(|| format!("opening {}", file.display()))?
        .take(64 * 1024)
        .read_to_string(&mut text)
        .with_context(|| format!("reading {}", file.display()))?;
    Ok(text)
}

fn print_client(c: &Client) {
    let when = |t: Option<i64>| t.map_or_else(|| "-".to_owned(), timestamp);
    let state = if c.revoked_at.is_some() {
        "revoked"
    } else {
        "active"
    };
    println!(
        "{:<32} {:<12} {:<6} {:<16} {:<20} {:<20} {:<8} {:<24} {}",
        c.client_id,
        c.kind.as_str(),
        c.origin.as_str(),
        c.owner.as_deref().unwrap_or("-"),
        timestamp(c.created_at),
        when(c.last_used_at),
        state,
        c.name,
        c.redirect_uris.join(" ")
    );
}

/// Unix seconds as RFC 3339 UTC.
fn timestamp(secs: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// The password for `add`/`passwd`, and whether it was generated here.
fn password(from_stdin: bool) -> anyhow::Result<(String, bool)> {
    if from_stdin {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .context("reading the password from stdin")?;
        return Ok((line.trim_end_matches(['\r', '\n']).to_owned(), false));
    }
    if let Ok(p) = std::env::var("TOOLHOST_PASSWORD")
        && !p.is_empty()
    {
        return Ok((p, false));
    }
    Ok((toolhost_auth::secret::random(12), true))
}
