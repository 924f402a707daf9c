//! `toolhost serve` configuration: a TOML file, then `TOOLHOST_*`
//! environment variables, then flags, each overriding the one before.
//! Parsed once into typed values; unknown keys are refused.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use std::collections::BTreeMap;

use anyhow::Context;
use serde::Deserialize;
use toolhost_backend::{BackendAuth, BackendConfig, Secret, TokenExchange};
use toolhost_invoke::ResultPolicy;
use toolhost_limits::{ByteSize, RequestLimits};
use toolhost_policy::Operators;
use toolhost_workspace::UploadQuota;

/// The file, every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    listen: Option<SocketAddr>,
    metrics_listen: Option<SocketAddr>,
    plugins: Option<PathBuf>,
    database_url: Option<String>,
    #[serde(default, with = "humantime_serde")]
    database_timeout: Option<Duration>,
    cache_dir: Option<PathBuf>,
    allowed_hosts: Option<Vec<String>>,
    allowed_origins: Option<Vec<String>>,
    /// Sandboxes running at once, host-wide (default 128): calls past it
    /// wait for a slot.
    slots: Option<u32>,
    /// Components compiled at once, off the request threads (default 1);
    /// a component in the compile cache is mapped, not compiled.
    compile_workers: Option<usize>,
    /// Compiles one tenant's drafts may have waiting or running at once
    /// (default 2); past it a draft's compile is `RATE_LIMITED`.
    compile_share: Option<usize>,
    /// Largest request body accepted on `/mcp`, in bytes (default 4 MiB);
    /// a larger one is 413 `LIMIT_EXCEEDED`.
    max_request_bytes: Option<usize>,
    /// `[limits]`: bounds on a call's arguments, checked before any plugin
    /// code runs.
    #[serde(default)]
    limits: RequestLimits,
    /// How long a stopping host waits for calls in flight to finish, and
    /// for the runs its workers hold to settle before it hands them over
    /// (default 30s).
    #[serde(default, with = "humantime_serde")]
    shutdown_grace: Option<Duration>,
    #[serde(default, with = "humantime_serde")]
    drain_delay: Option<Duration>,
    #[serde(default, with = "humantime_serde")]
    header_read_timeout: Option<Duration>,
    #[serde(default, with = "humantime_serde")]
    body_read_timeout: Option<Duration>,
    max_connections: Option<usize>,
    max_connections_per_source: Option<usize>,
    max_sessions_per_principal: Option<usize>,
    max_streams_per_session: Option<usize>,
    trusted_proxies: Option<Vec<String>>,
    public_url: Option<String>,
    #[serde(default, with = "humantime_serde")]
    access_token_ttl: Option<Duration>,
    #[serde(default, with = "humantime_serde")]
    refresh_token_ttl: Option<Duration>,
    #[serde(default, with = "humantime_serde")]
    grant_max_age: Option<Duration>,
    #[serde(default, with = "humantime_serde")]
    code_ttl: Option<Duration>,
    /// Dynamic client registrations per source (an IPv4 address or an IPv6
    /// /64) per minute, all replicas together (default 10).
    registrations_per_minute: Option<u32>,
    /// Login attempts per source per minute, all replicas together
    /// (default 20).
    logins_per_minute: Option<u32>,
    /// Sign-in forms a source may open per minute, all replicas together
    /// (default 60); each keeps a row until it is used or expires.
    authorizations_per_minute: Option<u32>,
    /// Sign-in forms stored at once (default 20000); past it, new sign-ins
    /// get a 429 page.
    max_pending_authorizations: Option<u64>,
    /// `[backends.NAME]`: the backends plugins may reach, by the name their
    /// manifests use.
    #[serde(default)]
    backends: BTreeMap<String, BackendFile>,
    /// The keys people's tokens at `auth = "connection"` backends are
    /// sealed with: a line `ID BASE64-KEY` (32 random bytes) each, the
    /// sealing key first; older keys after it still open what they sealed.
    connection_keys_file: Option<PathBuf>,
    #[serde(default, with = "humantime_serde")]
    gate_ttl: Option<Duration>,
    allow_self_approval: Option<bool>,
    operator_tenant: Option<String>,
    #[serde(default, with = "humantime_serde")]
    rate_limit_window: Option<Duration>,
    rate_limit_per_principal: Option<u32>,
    rate_limit_per_client: Option<u32>,
    rate_limit_writes: Option<u32>,
    rate_limit_uploads: Option<u32>,
    max_uploads_per_principal: Option<u64>,
    max_upload_bytes_per_principal: Option<ByteSize>,
    inline_result_bytes: Option<ByteSize>,
    #[serde(default, with = "humantime_serde")]
    artifact_ttl: Option<Duration>,
    sigstore_trusted_root: Option<PathBuf>,
    run_workers: Option<usize>,
    #[serde(default, with = "humantime_serde")]
    run_lease: Option<Duration>,
    runs_per_tenant: Option<u32>,
    runs_per_principal: Option<u32>,
    /// Whether local passwords sign people in (default true).
    password_login: Option<bool>,
    discovery_threshold: Option<usize>,
    /// The tools a caller over `discovery_threshold` is still listed, by
    /// name, those of them it may see (default `decide_approval`,
    /// `list_pending_approvals`).
    discovery_core: Option<Vec<String>>,
    /// `[sso.NAME]`: OpenID Connect providers people sign in through.
    #[serde(default)]
    sso: BTreeMap<String, crate::sso_config::SsoFile>,
}

/// `[backends.<name>]`: where a backend plugins may reach is, and its
/// credential (read from a file, so the secret is in no config and no
/// process list).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BackendFile {
    /// The base URL (`http` or `https`); a plugin names only the backend
    /// and a path under it, and cannot climb out of it.
    url: String,
    /// A file holding the credential sent with every request (never shown
    /// to the plugin; an echo of it in an answer is redacted).
    token_file: Option<PathBuf>,
    /// The header carrying the credential (default `authorization`, sent
    /// as `Bearer <token>`; any other header gets the raw token).
    credential_header: Option<String>,
    /// The deadline for one exchange, body included (default 10s).
    #[serde(default, with = "humantime_serde")]
    timeout: Option<Duration>,
    /// The largest response body accepted (default 4 MiB).
    max_response: Option<bytesize::ByteSize>,
    /// Exploration runs may reach it (a sandbox or test instance).
    #[serde(default)]
    exploration: bool,
    /// How the host authenticates to it: `credential` (the default: the
    /// token file's credential and `X-Tenant`) or `credential+assertion`
    /// (also a signed identity assertion naming who acts, in
    /// `X-Toolhost-Assertion`, verifiable at
    /// `/.well-known/backend-assertion-jwks.json`), or `token-exchange`
    /// (a token the `exchange_provider` issues for the person who acts,
    /// RFC 8693, in `Authorization`), or `connection` (each person's own
    /// token at the backend's `connect_issuer`, connected once in their
    /// browser, in `Authorization`).
    pub(crate) auth: Option<String>,
    /// With `auth = "token-exchange"`: the `[sso.NAME]` provider that
    /// issues the backend's tokens.
    exchange_provider: Option<String>,
    /// With `auth = "token-exchange"`: the audience asked for, as the
    /// provider knows the backend.
    exchange_audience: Option<String>,
    /// With `auth = "token-exchange"`: the scope asked for, if any.
    exchange_scope: Option<String>,
    /// With `auth = "connection"`: the backend's authorization server, as
    /// its RFC 8414 metadata names it (https; http only to a loopback
    /// address).
    pub(crate) connect_issuer: Option<String>,
    /// With `auth = "connection"`: the host's client id at that server.
    pub(crate) connect_client_id: Option<String>,
    /// With `auth = "connection"`: a file holding the host's client
    /// secret there.
    pub(crate) connect_client_secret_file: Option<PathBuf>,
    /// With `auth = "connection"`: the scope asked for, if any.
    pub(crate) connect_scope: Option<String>,
    /// With `auth = "connection"`: the RFC 8707 resource asked for, if any.
    pub(crate) connect_resource: Option<String>,
}

/// Flags (and their `TOOLHOST_*` environment variables) of `toolhost serve`.
#[derive(Debug, Default, clap::Args)]
pub struct ServeArgs {
    /// A TOML configuration file; flags and environment override its keys.
    #[arg(long, env = "TOOLHOST_CONFIG")]
    pub config: Option<PathBuf>,
    /// Address to listen on (`127.0.0.1:0` picks a free port).
    #[arg(long, env = "TOOLHOST_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// The plugin directory: pinned manifests and their components.
    #[arg(long, env = "TOOLHOST_PLUGINS")]
    pub plugins: Option<PathBuf>,
    /// `sqlite://FILE?mode=rwc` (default) or `postgres://…`.
    #[arg(long, env = "TOOLHOST_DATABASE_URL")]
    pub database_url: Option<String>,
    /// Longest wait for a database connection (default 10s): a restart
    /// shorter than this is ridden out; past it a call answers
    /// `STORE_UNAVAILABLE` (retryable) and `/readyz` fails.
    #[arg(long, env = "TOOLHOST_DATABASE_TIMEOUT", value_parser = humantime::parse_duration)]
    pub database_timeout: Option<Duration>,
    /// Where precompiled components are cached.
    #[arg(long, env = "TOOLHOST_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// A Host header value to accept besides loopback (repeatable).
    #[arg(
        long = "allowed-host",
        env = "TOOLHOST_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<String>,
    /// A browser Origin to accept (repeatable); replaces the loopback default.
    #[arg(
        long = "allowed-origin",
        env = "TOOLHOST_ALLOWED_ORIGINS",
        value_delimiter = ','
    )]
    pub allowed_origins: Vec<String>,
    /// The URL clients reach this host at, without a trailing slash: the
    /// OAuth issuer, and `{url}/mcp` is the protected resource. Default:
    /// `http://` and the bound address.
    #[arg(long, env = "TOOLHOST_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Lifetime of access tokens (default 10m).
    #[arg(long, env = "TOOLHOST_ACCESS_TOKEN_TTL", value_parser = humantime::parse_duration)]
    pub access_token_ttl: Option<Duration>,
    /// How long a refresh token lasts unused (default 30d); each refresh
    /// makes a new one, never past the grant's `grant_max_age`.
    #[arg(long, env = "TOOLHOST_REFRESH_TOKEN_TTL", value_parser = humantime::parse_duration)]
    pub refresh_token_ttl: Option<Duration>,
    /// How long a grant lasts from the sign-in that made it, however often
    /// it is refreshed (default 30d): then its person signs in again. The
    /// longest a person removed or disabled at a single-sign-on provider
    /// keeps access here (plus one access token's lifetime).
    #[arg(long, env = "TOOLHOST_GRANT_MAX_AGE", value_parser = humantime::parse_duration)]
    pub grant_max_age: Option<Duration>,
    /// Lifetime of authorization codes (default 60s).
    #[arg(long, env = "TOOLHOST_CODE_TTL", value_parser = humantime::parse_duration)]
    pub code_ttl: Option<Duration>,
    /// Create the demo tenant and its admin user `demo` if missing; the
    /// password is `$TOOLHOST_DEMO_PASSWORD`, else generated and printed.
    #[arg(long, env = "TOOLHOST_SEED_DEMO")]
    pub seed_demo: bool,
    /// How long an approval gate can be decided and used (default 1h).
    #[arg(long, env = "TOOLHOST_GATE_TTL", value_parser = humantime::parse_duration)]
    pub gate_ttl: Option<Duration>,
    /// Let the person who raised a gate decide it (default: another person
    /// must). For single-person demos.
    #[arg(long, env = "TOOLHOST_ALLOW_SELF_APPROVAL")]
    pub allow_self_approval: bool,
    /// The operator tenant: its people (through its roles, its admin role
    /// included) and its services (through their scopes) alone hold the
    /// host-level permissions, `catalog:submit` and `catalog:review`:
    /// submitting to, reviewing and rolling back the catalog every tenant
    /// is served. No other tenant's admin role reaches them. Default:
    /// none (nobody decides the catalog over MCP or in the console).
    #[arg(long, env = "TOOLHOST_OPERATOR_TENANT")]
    pub operator_tenant: Option<String>,
    /// Serve unsigned plugin revisions (a local author's loop): refused
    /// unless the host listens on loopback only; logged at every start,
    /// shown in `/readyz` and recorded in the audit trail.
    #[arg(long, env = "TOOLHOST_DEV_ALLOW_UNSIGNED")]
    pub dev_allow_unsigned: bool,
    /// After SIGTERM, how long to keep serving with `/readyz` failing before
    /// the listener closes, so a load balancer stops sending here first
    /// (default 0s; a balancer's check interval and fall count).
    #[arg(long, env = "TOOLHOST_DRAIN_DELAY", value_parser = humantime::parse_duration)]
    pub drain_delay: Option<Duration>,
    /// After the drain delay, how long calls in flight get to finish; and
    /// from SIGTERM, how long the runs this host's workers hold get to
    /// settle before each is handed over to another worker (default 30s).
    #[arg(long, env = "TOOLHOST_SHUTDOWN_GRACE", value_parser = humantime::parse_duration)]
    pub shutdown_grace: Option<Duration>,
    /// How long a client has to send a whole request head; a connection
    /// that takes longer (or idles that long between requests) is closed
    /// (default 10s).
    #[arg(long, env = "TOOLHOST_HEADER_READ_TIMEOUT", value_parser = humantime::parse_duration)]
    pub header_read_timeout: Option<Duration>,
    /// How long a client has to send a whole request body once its head
    /// arrived; a slower one is answered 408 and closed (default 30s).
    #[arg(long, env = "TOOLHOST_BODY_READ_TIMEOUT", value_parser = humantime::parse_duration)]
    pub body_read_timeout: Option<Duration>,
    /// Most open connections; more are answered 503 and closed (default:
    /// three quarters of the open-file limit less 64, at most 16384).
    #[arg(long, env = "TOOLHOST_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// Most open connections from one address (an IPv6 /64); trusted
    /// proxies have no share of their own (default: a quarter of the total).
    #[arg(long, env = "TOOLHOST_MAX_CONNECTIONS_PER_SOURCE")]
    pub max_connections_per_source: Option<usize>,
    /// Most open MCP sessions (2025-11-25) per principal; an `initialize`
    /// past it is refused 429 (default 64).
    #[arg(long, env = "TOOLHOST_MAX_SESSIONS_PER_PRINCIPAL")]
    pub max_sessions_per_principal: Option<usize>,
    /// Most standalone GET streams open at once in one MCP session (default 4).
    #[arg(long, env = "TOOLHOST_MAX_STREAMS_PER_SESSION")]
    pub max_streams_per_session: Option<usize>,
    /// Where Prometheus metrics are served (`/metrics`), apart from the
    /// public listener, which never serves them (default: nowhere).
    #[arg(long, env = "TOOLHOST_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// A proxy whose `X-Forwarded-For` names the client (an address or a
    /// CIDR range; repeatable): the load balancer in front of replicas.
    #[arg(
        long = "trusted-proxy",
        env = "TOOLHOST_TRUSTED_PROXIES",
        value_delimiter = ','
    )]
    pub trusted_proxies: Vec<String>,
    /// Turn local password sign-in off: people sign in only through the
    /// file's `[sso.NAME]` providers.
    #[arg(long, env = "TOOLHOST_NO_PASSWORD_LOGIN")]
    pub no_password_login: bool,
    /// The Sigstore `trusted_root.json` keyless signatures are verified
    /// against (default: the public-good root built into the host).
    #[arg(long, env = "TOOLHOST_SIGSTORE_TRUSTED_ROOT")]
    pub sigstore_trusted_root: Option<PathBuf>,
    /// Bounds on a call's arguments (the file's `[limits]`).
    #[command(flatten)]
    pub limits: LimitArgs,
    /// A backend plugins may reach, `NAME=URL` (repeatable; replaces the
    /// file's entry of that name).
    #[arg(long = "backend", value_name = "NAME=URL")]
    pub backends: Vec<String>,
    /// The file holding a backend's bearer token, `NAME=PATH` (repeatable).
    #[arg(long = "backend-token-file", value_name = "NAME=PATH")]
    pub backend_token_files: Vec<String>,
    /// Marks a configured backend as one exploration runs may reach (a
    /// sandbox or test instance, never production; repeatable; the file's
    /// `exploration = true`).
    #[arg(long = "exploration-backend", value_name = "NAME")]
    pub exploration_backends: Vec<String>,
    /// Tells a configured backend who acts: each request also carries a
    /// signed identity assertion (repeatable; the file's
    /// `auth = "credential+assertion"`).
    #[arg(long = "backend-assertion", value_name = "NAME")]
    pub backend_assertions: Vec<String>,
    /// Exploration runs this replica executes at once (default 2; 0: none,
    /// queued runs wait for another replica or `toolhost worker`).
    #[arg(long, env = "TOOLHOST_RUN_WORKERS")]
    pub run_workers: Option<usize>,
    /// How long a worker's claim on a run holds without a heartbeat
    /// (default 30s): a run whose worker died is taken over after it.
    #[arg(long, env = "TOOLHOST_RUN_LEASE", value_parser = humantime::parse_duration)]
    pub run_lease: Option<Duration>,
    /// Runs one tenant may have queued or running (default 64).
    #[arg(long, env = "TOOLHOST_RUNS_PER_TENANT")]
    pub runs_per_tenant: Option<u32>,
    /// Runs one principal may have queued or running (default 8).
    #[arg(long, env = "TOOLHOST_RUNS_PER_PRINCIPAL")]
    pub runs_per_principal: Option<u32>,
    /// The rate limits' counting window (default 60s, at least 1s).
    #[arg(long, env = "TOOLHOST_RATE_LIMIT_WINDOW", value_parser = humantime::parse_duration)]
    pub rate_limit_window: Option<Duration>,
    /// `/mcp` requests per principal per window (default 600; 0: no limit).
    #[arg(long, env = "TOOLHOST_RATE_LIMIT_PER_PRINCIPAL")]
    pub rate_limit_per_principal: Option<u32>,
    /// `/mcp` requests per OAuth client, in each tenant, per window
    /// (default 3000; 0: no limit).
    #[arg(long, env = "TOOLHOST_RATE_LIMIT_PER_CLIENT")]
    pub rate_limit_per_client: Option<u32>,
    /// Calls of mutating tools per principal per window (default 120; 0: no limit).
    #[arg(long, env = "TOOLHOST_RATE_LIMIT_WRITES")]
    pub rate_limit_writes: Option<u32>,
    /// Uploads (`/workspace/uploads`, and `begin_upload` over MCP) per
    /// principal per window (default 30; 0: no limit).
    #[arg(long, env = "TOOLHOST_RATE_LIMIT_UPLOADS")]
    pub rate_limit_uploads: Option<u32>,
    /// Uploads one principal may hold that no proposal names, arriving or
    /// unexpired (default 64); past it an upload is refused 413
    /// `QUOTA_EXCEEDED` before its body is read.
    #[arg(long, env = "TOOLHOST_MAX_UPLOADS_PER_PRINCIPAL")]
    pub max_uploads_per_principal: Option<u64>,
    /// Bytes across those uploads, e.g. `64MiB` (default 256 MiB), checked
    /// against the declared length before the body is read and again as
    /// it arrives.
    #[arg(long, env = "TOOLHOST_MAX_UPLOAD_BYTES_PER_PRINCIPAL")]
    pub max_upload_bytes_per_principal: Option<ByteSize>,
    /// Largest answer sent inline, e.g. `256KiB` (default 1 MiB); a larger
    /// one is kept as an artifact and answered with a resource link.
    #[arg(long, env = "TOOLHOST_INLINE_RESULT_BYTES")]
    pub inline_result_bytes: Option<ByteSize>,
    /// How long an artifact stays readable (default 24h).
    #[arg(long, env = "TOOLHOST_ARTIFACT_TTL", value_parser = humantime::parse_duration)]
    pub artifact_ttl: Option<Duration>,
    /// The most catalog tools (plugins'; the host's own are not counted)
    /// a caller is listed in full (default 40); a caller who may see more
    /// is listed the core set (`discovery_core`), `find_tools` and
    /// `describe_tool`, and finds the rest by searching. Every tool it may
    /// see stays callable.
    #[arg(long, env = "TOOLHOST_DISCOVERY_THRESHOLD")]
    pub discovery_threshold: Option<usize>,
}

/// Flags (and `TOOLHOST_*` variables) of the request limits; each replaces
/// the same key of the file's `[limits]`. Defaults and their reasons:
/// [`RequestLimits::DEFAULT`].
#[derive(Debug, Default, clap::Args)]
pub struct LimitArgs {
    /// Deepest nesting of arrays and objects in a call's arguments (default 32).
    #[arg(long, env = "TOOLHOST_MAX_JSON_DEPTH")]
    pub max_json_depth: Option<u32>,
    /// Most items in any one array of a call's arguments (default 10000).
    #[arg(long, env = "TOOLHOST_MAX_ARRAY_LEN")]
    pub max_array_len: Option<u32>,
    /// Most members of any one object of a call's arguments (default 1000).
    #[arg(long, env = "TOOLHOST_MAX_OBJECT_LEN")]
    pub max_object_len: Option<u32>,
    /// Longest string or key in a call's arguments, e.g. `64KiB` (default 1 MiB).
    #[arg(long, env = "TOOLHOST_MAX_STRING_BYTES")]
    pub max_string_bytes: Option<ByteSize>,
    /// Largest arguments of a call, as compact JSON (default 2 MiB).
    #[arg(long, env = "TOOLHOST_MAX_ARGUMENT_BYTES")]
    pub max_argument_bytes: Option<ByteSize>,
}

impl LimitArgs {
    /// The file's limits with these flags over them; a zero is refused.
    fn over(&self, file: RequestLimits) -> anyhow::Result<RequestLimits> {
        let limits = RequestLimits {
            max_depth: self.max_json_depth.unwrap_or(file.max_depth),
            max_array_len: self.max_array_len.unwrap_or(file.max_array_len),
            max_object_len: self.max_object_len.unwrap_or(file.max_object_len),
            max_string_bytes: self.max_string_bytes.unwrap_or(file.max_string_bytes),
            max_argument_bytes: self.max_argument_bytes.unwrap_or(file.max_argument_bytes),
        };
        limits.validate().context("[limits]")?;
        Ok(limits)
    }
}

/// The resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen.
    pub listen: SocketAddr,
    /// A plugin directory synced into the store's catalog at start (the
    /// bootstrap and GitOps path), if any.
    pub plugins: Option<PathBuf>,
    /// Whether unsigned revisions are served (loopback only).
    pub dev_allow_unsigned: bool,
    /// The Sigstore trust root file, if not the built-in public-good one.
    pub sigstore_trusted_root: Option<PathBuf>,
    /// The store.
    pub database_url: String,
    /// Longest wait for one of the store's connections.
    pub database_timeout: Duration,
    /// The precompiled-component cache.
    pub cache_dir: Option<PathBuf>,
    /// Accepted Host headers (loopback names always included).
    pub allowed_hosts: Vec<String>,
    /// Accepted browser Origins; a request without Origin is not a browser's.
    pub allowed_origins: Vec<String>,
    /// Concurrent sandboxes.
    pub slots: u32,
    /// Components compiled at once, host-wide.
    pub compile_workers: usize,
    /// Compiles one tenant's drafts may have waiting or running at once.
    pub compile_share: usize,
    /// Largest request body accepted on `/mcp`.
    pub max_request_bytes: usize,
    /// Bounds on a call's arguments, checked before any plugin code runs.
    pub request_limits: RequestLimits,
    /// How long shutdown waits for calls in flight.
    pub shutdown_grace: Duration,
    /// How long a stopping host keeps serving with `/readyz` failing.
    pub drain_delay: Duration,
    /// What one connection may hold before its request is read.
    pub connection_limits: crate::listen::ConnectionLimits,
    /// How many connections are kept open, in all and per source.
    pub connection_caps: crate::connections::ConnectionCaps,
    /// What one principal may hold of MCP sessions and streams.
    pub session_caps: crate::mcp_sessions::SessionCaps,
    /// Where `/metrics` is served, if anywhere.
    pub metrics_listen: Option<SocketAddr>,
    /// The proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: crate::forwarded::TrustedProxies,
    /// The OAuth issuer, if set; else derived from the bound address.
    pub public_url: Option<String>,
    /// Access-token lifetime, if not the default.
    pub access_token_ttl: Option<Duration>,
    /// Refresh-token lifetime, if not the default.
    pub refresh_token_ttl: Option<Duration>,
    /// A grant's longest life, if not the default.
    pub grant_max_age: Option<Duration>,
    /// Authorization-code lifetime, if not the default.
    pub code_ttl: Option<Duration>,
    /// Dynamic registrations per source address per minute, if not the default.
    pub registrations_per_minute: Option<u32>,
    /// Login attempts per source address per minute, if not the default.
    pub logins_per_minute: Option<u32>,
    /// Sign-in forms per source address per minute, if not the default.
    pub authorizations_per_minute: Option<u32>,
    /// Most pending sign-in forms stored at once, if not the default.
    pub max_pending_authorizations: Option<u64>,
    /// Seed the demo tenant and user.
    pub seed_demo: bool,
    /// The backends plugins may reach, credentials loaded.
    pub backends: Vec<BackendConfig>,
    /// Exploration runs executed at once by this process.
    pub run_workers: usize,
    /// A worker's claim on a run without a heartbeat.
    pub run_lease: Duration,
    /// Queue bounds.
    pub run_limits: toolhost_runs::QueueLimits,
    /// Only run workers: no HTTP (`toolhost worker`).
    pub worker_only: bool,
    /// How long a gate lives.
    pub gate_ttl: Duration,
    /// Whether the person who raised a gate may decide it.
    pub allow_self_approval: bool,
    /// The tenant whose principals alone decide the catalog.
    pub operators: Operators,
    /// Requests per principal, client and tool class per window.
    pub rate_limits: crate::rate_limit::RateLimits,
    /// What one principal may hold in uploads no proposal names.
    pub upload_quota: UploadQuota,
    /// How large an answer is sent inline, and how long a larger one is kept.
    pub results: ResultPolicy,
    /// Whether local passwords sign people in.
    pub password_login: bool,
    /// How a large catalog is listed.
    pub discovery: toolhost_discovery::Discovery,
    /// The single-sign-on providers, secrets read.
    pub sso: Vec<toolhost_sso::ProviderConfig>,
    /// People's own connections: the connection backends and the keys.
    pub connections: crate::person_connections::ConnectionsConfig,
}

/// The answer bounds: defaults for what is not set; zero is refused.
fn results(inline: Option<ByteSize>, ttl: Option<Duration>) -> anyhow::Result<ResultPolicy> {
    let defaults = ResultPolicy::default();
    let inline_limit = match inline {
        Some(b) if b.as_u64() == 0 => anyhow::bail!("inline_result_bytes must be at least 1 byte"),
        Some(b) => usize::try_from(b.as_u64()).unwrap_or(usize::MAX),
        None => defaults.inline_limit,
    };
    let artifact_ttl = match ttl {
        Some(t) if t.is_zero() => anyhow::bail!("artifact_ttl must be longer than zero"),
        Some(t) => t,
        None => defaults.artifact_ttl,
    };
    Ok(ResultPolicy {
        inline_limit,
        artifact_ttl,
    })
}

/// The upload quota: defaults for what is not set; zero is refused (an
/// upload route nobody can use is turned off by not granting
/// `workspace:author`).
fn upload_quota(uploads: Option<u64>, bytes: Option<ByteSize>) -> anyhow::Result<UploadQuota> {
    let quota = UploadQuota {
        uploads: uploads.unwrap_or(UploadQuota::DEFAULT.uploads),
        bytes: bytes.map_or(UploadQuota::DEFAULT.bytes, |b| b.as_u64()),
    };
    if quota.uploads == 0 || quota.bytes == 0 {
        anyhow::bail!(
            "max_uploads_per_principal and max_upload_bytes_per_principal must be at least 1"
        );
    }
    Ok(quota)
}

/// How a large catalog is listed: the defaults for what is not set.
fn discovery(threshold: Option<usize>, core: Option<Vec<String>>) -> toolhost_discovery::Discovery {
    let defaults = toolhost_discovery::Discovery::default();
    toolhost_discovery::Discovery {
        threshold: threshold.unwrap_or(defaults.threshold),
        core: core.unwrap_or(defaults.core),
    }
}

/// Default listen address: loopback only; exposing the host is a decision.
/// The connection caps: the defaults for this process, with whichever the
/// configuration sets (a share larger than the total is the total).
fn connection_caps(
    total: Option<usize>,
    per_source: Option<usize>,
) -> anyhow::Result<crate::connections::ConnectionCaps> {
    let defaults = crate::connections::ConnectionCaps::for_this_process();
    let total = total.unwrap_or(defaults.total);
    let per_source = per_source.unwrap_or(defaults.per_source).min(total);
    if total == 0 || per_source == 0 {
        anyhow::bail!("max-connections and max-connections-per-source must be at least 1");
    }
    Ok(crate::connections::ConnectionCaps { total, per_source })
}

const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// Default store: one SQLite file in the working directory.
const DEFAULT_DATABASE: &str = "sqlite://toolhost.db?mode=rwc";
/// Hosts a local server answers to (DNS-rebinding protection).
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
/// Origins a local server trusts by default: pages served from loopback.
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];
/// Calls in flight get this long to finish at shutdown.
const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// Runs a replica executes at once: a few, so explorations never crowd
/// out interactive calls on a small host.
const DEFAULT_RUN_WORKERS: usize = 2;
/// A worker's claim without a heartbeat: long enough for a busy host to
/// renew it, short enough that a dead worker's run restarts soon.
const DEFAULT_RUN_LEASE: Duration = Duration::from_secs(30);

impl Config {
    /// Resolves file, environment and flags (flags win).
    pub fn resolve(args: ServeArgs) -> anyhow::Result<Config> {
        let mut file = match &args.config {
            Some(path) => read_file(path)?,
            None => ConfigFile::default(),
        };
        let checked = Checked::resolve(&args, &mut file)?;
        Ok(Config::assemble(args, file, checked))
    }

    /// The configuration of the checked values and the rest: flags over
    /// the file, defaults for what neither sets.
    fn assemble(args: ServeArgs, file: ConfigFile, checked: Checked) -> Config {
        Config {
            password_login: checked.password_login,
            sso: checked.sso,
            connections: checked.connections,
            listen: checked.listen,
            plugins: args.plugins.or(file.plugins),
            dev_allow_unsigned: args.dev_allow_unsigned,
            sigstore_trusted_root: args.sigstore_trusted_root.or(file.sigstore_trusted_root),
            database_url: args
                .database_url
                .or(file.database_url)
                .unwrap_or_else(|| DEFAULT_DATABASE.into()),
            database_timeout: args
                .database_timeout
                .or(file.database_timeout)
                .unwrap_or(toolhost_storage::DEFAULT_ACQUIRE_TIMEOUT),
            cache_dir: args.cache_dir.or(file.cache_dir),
            allowed_hosts: allowed_hosts(file.allowed_hosts, args.allowed_hosts),
            allowed_origins: allowed_origins(file.allowed_origins, args.allowed_origins),
            slots: file
                .slots
                .unwrap_or(toolhost_runtime::RuntimeConfig::DEFAULT_SLOTS),
            compile_workers: at_least_one(
                file.compile_workers,
                toolhost_runtime::RuntimeConfig::DEFAULT_COMPILE_WORKERS,
            ),
            compile_share: at_least_one(
                file.compile_share,
                toolhost_runtime::RuntimeConfig::DEFAULT_COMPILE_SHARE,
            ),
            max_request_bytes: file
                .max_request_bytes
                .unwrap_or(crate::guard::DEFAULT_MAX_REQUEST_BYTES),
            request_limits: checked.request_limits,
            shutdown_grace: (args.shutdown_grace)
                .or(file.shutdown_grace)
                .unwrap_or(DEFAULT_SHUTDOWN_GRACE),
            drain_delay: args.drain_delay.or(file.drain_delay).unwrap_or_default(),
            connection_limits: checked.connection_limits,
            connection_caps: checked.connection_caps,
            metrics_listen: args.metrics_listen.or(file.metrics_listen),
            session_caps: session_caps(
                args.max_sessions_per_principal
                    .or(file.max_sessions_per_principal),
                args.max_streams_per_session
                    .or(file.max_streams_per_session),
            ),
            trusted_proxies: checked.trusted_proxies,
            public_url: args
                .public_url
                .or(file.public_url)
                .map(|u| u.trim_end_matches('/').to_owned()),
            access_token_ttl: args.access_token_ttl.or(file.access_token_ttl),
            refresh_token_ttl: args.refresh_token_ttl.or(file.refresh_token_ttl),
            grant_max_age: args.grant_max_age.or(file.grant_max_age),
            code_ttl: args.code_ttl.or(file.code_ttl),
            registrations_per_minute: file.registrations_per_minute,
            logins_per_minute: file.logins_per_minute,
            authorizations_per_minute: file.authorizations_per_minute,
            max_pending_authorizations: file.max_pending_authorizations,
            seed_demo: args.seed_demo,
            backends: checked.backends,
            run_workers: args
                .run_workers
                .or(file.run_workers)
                .unwrap_or(DEFAULT_RUN_WORKERS),
            run_lease: checked.run_lease,
            run_limits: run_limits(
                args.runs_per_tenant.or(file.runs_per_tenant),
                args.runs_per_principal.or(file.runs_per_principal),
            ),
            worker_only: false,
            gate_ttl: args
                .gate_ttl
                .or(file.gate_ttl)
                .unwrap_or(toolhost_invoke::DEFAULT_GATE_TTL),
            allow_self_approval: args.allow_self_approval
                || file.allow_self_approval.unwrap_or(false),
            operators: checked.operators,
            rate_limits: checked.rate_limits,
            upload_quota: checked.upload_quota,
            results: checked.results,
            discovery: discovery(
                args.discovery_threshold.or(file.discovery_threshold),
                file.discovery_core,
            ),
        }
    }
}

/// The values a configuration may get wrong, each checked (in this order)
/// before the host starts.
struct Checked {
    backends: Vec<BackendConfig>,
    run_lease: Duration,
    listen: SocketAddr,
    connection_limits: crate::listen::ConnectionLimits,
    connection_caps: crate::connections::ConnectionCaps,
    trusted_proxies: crate::forwarded::TrustedProxies,
    password_login: bool,
    sso: Vec<toolhost_sso::ProviderConfig>,
    connections: crate::person_connections::ConnectionsConfig,
    request_limits: RequestLimits,
    rate_limits: crate::rate_limit::RateLimits,
    upload_quota: UploadQuota,
    results: ResultPolicy,
    operators: Operators,
}

impl Checked {
    /// Checks the flags over the file; the file's backends and providers
    /// are taken from it.
    fn resolve(args: &ServeArgs, file: &mut ConfigFile) -> anyhow::Result<Checked> {
        let connections = crate::person_connections::connections(
            &file.backends,
            file.connection_keys_file.as_deref(),
        )?;
        let backends = backends(
            std::mem::take(&mut file.backends),
            &args.backends,
            &args.backend_token_files,
            &BackendMarks {
                exploration: &args.exploration_backends,
                assertion: &args.backend_assertions,
            },
        )?;
        let run_lease = run_lease(args.run_lease.or(file.run_lease))?;
        let listen = listen(args.listen.or(file.listen), args.dev_allow_unsigned)?;
        let connection_limits = connection_limits(
            args.header_read_timeout.or(file.header_read_timeout),
            args.body_read_timeout.or(file.body_read_timeout),
        )?;
        let connection_caps = connection_caps(
            args.max_connections.or(file.max_connections),
            args.max_connections_per_source
                .or(file.max_connections_per_source),
        )?;
        let trusted_proxies =
            trusted_proxies(&args.trusted_proxies, file.trusted_proxies.as_deref())?;
        let password_login = !args.no_password_login && file.password_login.unwrap_or(true);
        let sso = sign_in_providers(password_login, std::mem::take(&mut file.sso))?;
        exchanges_name_providers(&backends, &sso)?;
        Ok(Checked {
            backends,
            run_lease,
            listen,
            connection_limits,
            connection_caps,
            trusted_proxies,
            password_login,
            sso,
            connections,
            request_limits: args.limits.over(file.limits)?,
            rate_limits: rate_limits(
                args.rate_limit_window.or(file.rate_limit_window),
                args.rate_limit_per_principal
                    .or(file.rate_limit_per_principal),
                args.rate_limit_per_client.or(file.rate_limit_per_client),
                args.rate_limit_writes.or(file.rate_limit_writes),
                args.rate_limit_uploads.or(file.rate_limit_uploads),
            )?,
            upload_quota: upload_quota(
                args.max_uploads_per_principal
                    .or(file.max_uploads_per_principal),
                args.max_upload_bytes_per_principal
                    .or(file.max_upload_bytes_per_principal),
            )?,
            results: results(
                args.inline_result_bytes.or(file.inline_result_bytes),
                args.artifact_ttl.or(file.artifact_ttl),
            )?,
            operators: operators(args.operator_tenant.clone().or(file.operator_tenant.take()))?,
        })
    }
}

/// The host's operators: the tenant named (a tenant's id, as `tenant add`
/// takes it), or nobody.
pub(crate) fn operators(tenant: Option<String>) -> anyhow::Result<Operators> {
    match tenant {
        None => Ok(Operators::none()),
        Some(t) => {
            crate::rbac::valid_name("operator tenant", &t)?;
            Ok(Operators::tenant(t))
        }
    }
}

/// The Host headers answered: loopback's, the file's, then the flags'.
fn allowed_hosts(file: Option<Vec<String>>, flags: Vec<String>) -> Vec<String> {
    let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
    hosts.extend(file.unwrap_or_default());
    hosts.extend(flags);
    hosts
}

/// The Origins trusted: the flags' if any, else the file's, else loopback's.
fn allowed_origins(file: Option<Vec<String>>, flags: Vec<String>) -> Vec<String> {
    let origins = if flags.is_empty() { file } else { Some(flags) };
    origins.unwrap_or_else(|| LOOPBACK_ORIGINS.iter().map(|o| o.to_string()).collect())
}

/// The address listened on; unsigned plugins are served on loopback only.
fn listen(listen: Option<SocketAddr>, dev_allow_unsigned: bool) -> anyhow::Result<SocketAddr> {
    let listen = listen.unwrap_or_else(|| DEFAULT_LISTEN.parse().expect("a valid address"));
    if dev_allow_unsigned && !listen.ip().is_loopback() {
        anyhow::bail!(
            "--dev-allow-unsigned serves unsigned plugins and works on a loopback address only, not {listen}"
        );
    }
    Ok(listen)
}

/// How long a connection may take over a request's head and body; zero is
/// refused.
fn connection_limits(
    header_read_timeout: Option<Duration>,
    body_read_timeout: Option<Duration>,
) -> anyhow::Result<crate::listen::ConnectionLimits> {
    let header_read_timeout =
        header_read_timeout.unwrap_or(crate::listen::DEFAULT_HEADER_READ_TIMEOUT);
    if header_read_timeout.is_zero() {
        anyhow::bail!("header-read-timeout must be longer than 0s");
    }
    let body_read_timeout = body_read_timeout.unwrap_or(crate::listen::DEFAULT_BODY_READ_TIMEOUT);
    if body_read_timeout.is_zero() {
        anyhow::bail!("body-read-timeout must be longer than 0s");
    }
    Ok(crate::listen::ConnectionLimits {
        header_read_timeout,
        body_read_timeout,
        ..crate::listen::ConnectionLimits::default()
    })
}

/// The proxies believed: the flags' if any, else the file's.
fn trusted_proxies(
    flags: &[String],
    file: Option<&[String]>,
) -> anyhow::Result<crate::forwarded::TrustedProxies> {
    crate::forwarded::TrustedProxies::parse(if flags.is_empty() {
        file.unwrap_or_default()
    } else {
        flags
    })
}

/// The single-sign-on providers; refused when nobody could sign in.
fn sign_in_providers(
    password_login: bool,
    file: BTreeMap<String, crate::sso_config::SsoFile>,
) -> anyhow::Result<Vec<toolhost_sso::ProviderConfig>> {
    let sso = crate::sso_config::providers(file)?;
    if !password_login && sso.is_empty() {
        anyhow::bail!(
            "password sign-in is off and no [sso.NAME] provider is configured: nobody could sign in"
        );
    }
    Ok(sso)
}

/// A worker's claim without a heartbeat: at least a second.
fn run_lease(lease: Option<Duration>) -> anyhow::Result<Duration> {
    let run_lease = lease.unwrap_or(DEFAULT_RUN_LEASE);
    if run_lease < Duration::from_secs(1) {
        anyhow::bail!("--run-lease must be at least 1s, not {run_lease:?}");
    }
    Ok(run_lease)
}

/// The queue bounds: defaults for what is not set.
fn run_limits(per_tenant: Option<u32>, per_principal: Option<u32>) -> toolhost_runs::QueueLimits {
    let defaults = toolhost_runs::QueueLimits::DEFAULT;
    toolhost_runs::QueueLimits {
        per_tenant: per_tenant.unwrap_or(defaults.per_tenant),
        per_principal: per_principal.unwrap_or(defaults.per_principal),
    }
}

/// What one principal may hold of MCP sessions and streams: defaults for
/// what is not set, at least one of each.
fn session_caps(
    per_principal: Option<usize>,
    streams_per_session: Option<usize>,
) -> crate::mcp_sessions::SessionCaps {
    crate::mcp_sessions::SessionCaps {
        per_principal: at_least_one(
            per_principal,
            crate::mcp_sessions::DEFAULT_SESSIONS_PER_PRINCIPAL,
        ),
        streams_per_session: at_least_one(
            streams_per_session,
            crate::mcp_sessions::DEFAULT_STREAMS_PER_SESSION,
        ),
    }
}

/// The rate limits: the window and the three `/mcp` limits, and uploads.
fn rate_limits(
    window: Option<Duration>,
    per_principal: Option<u32>,
    per_client: Option<u32>,
    writes: Option<u32>,
    uploads: Option<u32>,
) -> anyhow::Result<crate::rate_limit::RateLimits> {
    Ok(crate::rate_limit::RateLimits {
        uploads: uploads.unwrap_or(crate::rate_limit::DEFAULT_UPLOADS),
        ..crate::rate_limit::RateLimits::configured(window, per_principal, per_client, writes)?
    })
}

/// A count set or its default, and never below one.
fn at_least_one(value: Option<usize>, default: usize) -> usize {
    value.unwrap_or(default).max(1)
}

/// `NAME=VALUE` of a repeatable flag.
fn pair<'a>(flag: &str, s: &'a str) -> anyhow::Result<(&'a str, &'a str)> {
    s.split_once('=')
        .filter(|(n, v)| !n.is_empty() && !v.is_empty())
        .with_context(|| format!("--{flag} {s:?}: expected NAME=VALUE"))
}

/// The flags that mark configured backends, by name.
#[derive(Default)]
pub(crate) struct BackendMarks<'a> {
    /// `--exploration-backend`.
    pub exploration: &'a [String],
    /// `--backend-assertion`.
    pub assertion: &'a [String],
}

/// The backends named on the command line (`--backend`, `--backend-token-file`,
/// `--exploration-backend`, `--backend-assertion`) over the file's.
pub(crate) fn backends(
    mut file: BTreeMap<String, BackendFile>,
    urls: &[String],
    token_files: &[String],
    marks: &BackendMarks<'_>,
) -> anyhow::Result<Vec<BackendConfig>> {
    for u in urls {
        let (name, url) = pair("backend", u)?;
        let entry = file.entry(name.into()).or_insert_with(|| BackendFile {
            url: String::new(),
            token_file: None,
            credential_header: None,
            timeout: None,
            max_response: None,
            exploration: false,
            auth: None,
            exchange_provider: None,
            exchange_audience: None,
            exchange_scope: None,
            connect_issuer: None,
            connect_client_id: None,
            connect_client_secret_file: None,
            connect_scope: None,
            connect_resource: None,
        });
        entry.url = url.into();
    }
    for name in marks.exploration {
        let entry = file.get_mut(name.as_str()).with_context(|| {
            format!("--exploration-backend {name}: no backend {name:?} is configured")
        })?;
        entry.exploration = true;
    }
    for name in marks.assertion {
        let entry = file.get_mut(name.as_str()).with_context(|| {
            format!("--backend-assertion {name}: no backend {name:?} is configured")
        })?;
        entry.auth = Some(BackendAuth::CredentialAndAssertion.as_str().into());
    }
    for t in token_files {
        let (name, path) = pair("backend-token-file", t)?;
        let entry = file.get_mut(name).with_context(|| {
            format!("--backend-token-file {name}=…: no backend {name:?} is configured")
        })?;
        entry.token_file = Some(path.into());
    }
    let mut out = Vec::new();
    for (name, b) in file {
        let url = url::Url::parse(&b.url)
            .with_context(|| format!("backend {name:?}: url {:?} is not a URL", b.url))?;
        let mut c = BackendConfig::new(&name, url);
        c.exchange = exchange(&name, &b)?;
        if let Some(path) = &b.token_file {
            let token = std::fs::read_to_string(path).with_context(|| {
                format!("backend {name:?}: reading token file {}", path.display())
            })?;
            c.credential = Some(Secret::new(token.trim().to_owned()));
        }
        if let Some(h) = b.credential_header {
            c.credential_header = h;
        }
        if let Some(t) = b.timeout {
            c.timeout = t;
        }
        if let Some(m) = b.max_response {
            c.max_response = m.as_u64();
        }
        c.exploration = b.exploration;
        if let Some(auth) = &b.auth {
            c.auth = BackendAuth::parse(auth).with_context(|| {
                format!(
                    "backend {name:?}: auth {auth:?} is not \"credential\", \
                     \"credential+assertion\", \"token-exchange\" or \"connection\""
                )
            })?;
        }
        out.push(c);
    }
    Ok(out)
}

/// A backend's token-exchange settings, if it has any: the provider and
/// the audience go together (the backend checks they fit its mode).
fn exchange(name: &str, b: &BackendFile) -> anyhow::Result<Option<TokenExchange>> {
    match (&b.exchange_provider, &b.exchange_audience) {
        (None, None) if b.exchange_scope.is_none() => Ok(None),
        (Some(provider), Some(audience)) => Ok(Some(TokenExchange {
            provider: provider.clone(),
            audience: audience.clone(),
            scope: b.exchange_scope.clone(),
        })),
        _ => anyhow::bail!(
            "backend {name:?}: exchange_provider and exchange_audience go together \
             (with auth = \"token-exchange\")"
        ),
    }
}

/// Every token-exchange backend names a configured `[sso.NAME]` provider.
fn exchanges_name_providers(
    backends: &[BackendConfig],
    sso: &[toolhost_sso::ProviderConfig],
) -> anyhow::Result<()> {
    for b in backends {
        if let Some(x) = &b.exchange
            && !sso.iter().any(|p| p.name == x.provider)
        {
            anyhow::bail!(
                "backend {:?}: exchange_provider {:?} is no configured [sso.NAME] provider",
                b.name,
                x.provider
            );
        }
    }
    Ok(())
}

fn read_file(path: &Path) -> anyhow::Result<ConfigFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    toml::from_str(&text).map_err(|e| anyhow::anyhow!("config {}: {}", path.display(), e.message()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(plugins: &str) -> ServeArgs {
        ServeArgs {
            plugins: Some(plugins.into()),
            ..ServeArgs::default()
        }
    }

    #[test]
    fn defaults_listen_on_loopback_with_an_embedded_sqlite() {
        let c = Config::resolve(args("p")).expect("resolves");
        assert_eq!(c.listen.to_string(), "127.0.0.1:8080");
        assert!(c.database_url.starts_with("sqlite://"));
        assert!(c.allowed_hosts.contains(&"localhost".to_owned()));
        assert!(c.allowed_origins.iter().all(|o| o.starts_with("http://")));
    }

    #[test]
    fn flags_override_the_file_and_unknown_keys_are_refused() {
        let dir = tempfile::tempdir().expect("temp");
        let path = dir.path().join("toolhost.toml");
        std::fs::write(
            &path,
            "listen = \"127.0.0.1:9000\"\nplugins = \"from-file\"\nslots = 7\n",
        )
        .expect("write");
        let c = Config::resolve(ServeArgs {
            config: Some(path.clone()),
            ..args("from-flag")
        })
        .expect("resolves");
        assert_eq!(
            (c.listen.port(), c.plugins.as_deref().expect("set"), c.slots),
            (9000, Path::new("from-flag"), 7)
        );

        std::fs::write(&path, "listen = \"127.0.0.1:9000\"\nplugin_dir = \"x\"\n").expect("write");
        let err = Config::resolve(ServeArgs {
            config: Some(path),
            ..args("p")
        })
        .expect_err("unknown key");
        assert!(err.to_string().contains("plugin_dir"), "{err}");
    }

    #[test]
    fn a_backend_is_told_who_acts_by_its_auth_key_or_the_flag_and_never_by_default() {
        let dir = tempfile::tempdir().expect("temp");
        let path = dir.path().join("toolhost.toml");
        let text = "[backends.crm]\nurl = \"http://127.0.0.1:1\"\nauth = \"credential+assertion\"\n\
                    [backends.billing]\nurl = \"http://127.0.0.1:2\"\n\
                    [backends.wiki]\nurl = \"http://127.0.0.1:3\"\n";
        std::fs::write(&path, text).expect("write");
        let c = Config::resolve(ServeArgs {
            config: Some(path.clone()),
            backend_assertions: vec!["wiki".into()],
            ..args("p")
        })
        .expect("resolves");
        let auth: Vec<_> = (c.backends.iter())
            .map(|b| (b.name.as_str(), b.auth))
            .collect();
        assert_eq!(
            auth,
            [
                ("billing", BackendAuth::Credential),
                ("crm", BackendAuth::CredentialAndAssertion),
                ("wiki", BackendAuth::CredentialAndAssertion),
            ]
        );
        let unknown = Config::resolve(ServeArgs {
            config: Some(path.clone()),
            backend_assertions: vec!["nope".into()],
            ..args("p")
        })
        .expect_err("an unknown backend");
        assert!(
            unknown.to_string().contains("--backend-assertion nope"),
            "{unknown}"
        );
        std::fs::write(
            &path,
            "[backends.crm]\nurl = \"http://127.0.0.1:1\"\nauth = \"assertion\"\n",
        )
        .expect("write");
        let bad = Config::resolve(ServeArgs {
            config: Some(path),
            ..args("p")
        })
        .expect_err("an unknown mode");
        assert!(format!("{bad:#}").contains("\"assertion\""), "{bad:#}");
    }

    #[test]
    fn rate_limits_come_from_the_file_and_flags_with_defaults_for_the_rest() {
        let dir = tempfile::tempdir().expect("temp");
        let path = dir.path().join("toolhost.toml");
        let text =
            "rate_limit_window = \"2s\"\nrate_limit_per_principal = 5\nrate_limit_writes = 0\n";
        std::fs::write(&path, text).expect("write");
        let c = Config::resolve(ServeArgs {
            config: Some(path),
            rate_limit_per_principal: Some(7),
            ..args("p")
        })
        .expect("resolves");
        let r = c.rate_limits;
        assert_eq!(
            (r.window, r.per_principal, r.per_client, r.writes),
            (
                Duration::from_secs(2),
                7,
                crate::rate_limit::DEFAULT_PER_CLIENT,
                0
            )
        );
        let too_short = Config::resolve(ServeArgs {
            rate_limit_window: Some(Duration::from_millis(10)),
            ..args("p")
        });
        assert!(too_short.is_err());
    }

    #[test]
    fn request_limits_come_from_the_limits_table_and_flags_and_refuse_zero() {
        let dir = tempfile::tempdir().expect("temp");
        let path = dir.path().join("toolhost.toml");
        let text =
            "[limits]\nmax_json_depth = 8\nmax_string_bytes = \"64 KiB\"\nmax_array_len = 5\n";
        std::fs::write(&path, text).expect("write");
        let c = Config::resolve(ServeArgs {
            config: Some(path.clone()),
            limits: LimitArgs {
                max_array_len: Some(7),
                ..LimitArgs::default()
            },
            ..args("p")
        })
        .expect("resolves");
        let l = c.request_limits;
        assert_eq!(
            (l.max_depth, l.max_string_bytes, l.max_array_len),
            (8, ByteSize::kib(64), 7)
        );
        assert_eq!(l.max_object_len, RequestLimits::DEFAULT.max_object_len);

        std::fs::write(&path, "[limits]\nmax_object_len = 0\n").expect("write");
        let err = Config::resolve(ServeArgs {
            config: Some(path),
            ..args("p")
        })
        .expect_err("zero");
        assert!(format!("{err:#}").contains("max_object_len"), "{err:#}");
    }

    #[test]
    fn the_operator_tenant_is_nobody_unless_named_and_the_flag_wins_over_the_file() {
        let c = Config::resolve(args("p")).expect("resolves");
        assert_eq!(c.operators, Operators::none());
        let dir = tempfile::tempdir().expect("temp");
        let path = dir.path().join("toolhost.toml");
        std::fs::write(&path, "operator_tenant = \"ops\"\n").expect("write");
        let from = |flag: Option<&str>| {
            Config::resolve(ServeArgs {
                config: Some(path.clone()),
                operator_tenant: flag.map(str::to_owned),
                ..args("p")
            })
        };
        let named = |c: Config| c.operators.name().map(str::to_owned);
        assert_eq!(named(from(None).expect("resolves")).as_deref(), Some("ops"));
        assert_eq!(
            named(from(Some("root")).expect("resolves")).as_deref(),
            Some("root")
        );
        let err = from(Some("ops team")).expect_err("not a tenant's name");
        assert!(err.to_string().contains("operator tenant"), "{err}");
    }

    #[test]
    fn unsigned_plugins_are_served_on_loopback_only() {
        let open = ServeArgs {
            dev_allow_unsigned: true,
            listen: Some("0.0.0.0:8080".parse().expect("an address")),
            ..ServeArgs::default()
        };
        let err = Config::resolve(open).expect_err("not loopback");
        assert!(err.to_string().contains("loopback"), "{err}");
        let local = ServeArgs {
            dev_allow_unsigned: true,
            ..ServeArgs::default()
        };
        assert!(Config::resolve(local).expect("loopback").dev_allow_unsigned);
    }
}
