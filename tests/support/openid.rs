//! The organisation's OpenID provider for the tests: npm `oidc-provider`
//! run by `tests/e2e/oidc_provider.mjs` on 127.0.0.1, with accounts from a
//! file the test may rewrite, and toolhost registered as client `toolhost`.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Server, TOKEN_ENV, Tools};

/// toolhost's secret at the provider.
pub const CLIENT_SECRET: &str = "toolhost-secret-at-the-provider";
/// RFC 8693's grant type, which the client may use when asked for.
pub const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";

/// The provider, killed when dropped.
pub struct Provider {
    child: Child,
    /// Its issuer URL.
    pub issuer: String,
    /// The accounts file it reads at every sign-in.
    pub accounts: PathBuf,
    /// Where its stderr goes.
    pub log: PathBuf,
    /// The token-exchange trust file, when exchange is on.
    pub trust: Option<PathBuf>,
}

impl Provider {
    /// A provider in `dir` with `accounts` (the accounts file's JSON) and
    /// toolhost as a native client (its loopback redirect URI matches on
    /// any port, so it is registered before toolhost has one); with
    /// `exchange`, toolhost may also use token exchange, trusting what
    /// [`Provider::trust_host`] later writes.
    pub fn start(tools: &Tools, dir: &Path, accounts: &Value, exchange: bool) -> Provider {
        Provider::start_with_clients(tools, dir, accounts, exchange, &[])
    }

    /// [`Provider::start`] with more clients registered at the provider
    /// (each a JSON object of client metadata).
    pub fn start_with_clients(
        tools: &Tools,
        dir: &Path,
        accounts: &Value,
        exchange: bool,
        more: &[Value],
    ) -> Provider {
        Provider::launch(tools, dir, accounts, (exchange, more), json!({}))
    }

    /// [`Provider::start_with_clients`] (no token exchange) serving the
    /// OAuth `resources` (`{"https://…": {"scope": "…", "ttl": SECONDS}}`):
    /// JWT access tokens for them, and refresh tokens to clients allowed
    /// the refresh_token grant.
    pub fn start_with_resources(
        tools: &Tools,
        dir: &Path,
        accounts: &Value,
        more: &[Value],
        resources: Value,
    ) -> Provider {
        let extra = json!({ "resources": resources });
        Provider::launch(tools, dir, accounts, (false, more), extra)
    }

    fn launch(
        tools: &Tools,
        dir: &Path,
        accounts: &Value,
        (exchange, more): (bool, &[Value]),
        extra: Value,
    ) -> Provider {
        let accounts_file = dir.join("accounts.json");
        let config = dir.join("provider.json");
        fs::write(&accounts_file, accounts.to_string()).expect("write the accounts");
        let mut grants = vec!["authorization_code"];
        if exchange {
            grants.push(TOKEN_EXCHANGE);
        }
        let client = json!({
            "client_id": "toolhost",
            "client_secret": CLIENT_SECRET,
            "application_type": "native",
            "grant_types": grants,
            "redirect_uris": ["http://127.0.0.1/oauth/sso/corp/callback"],
        });
        let trust = exchange.then(|| dir.join("trust.json"));
        let mut clients = vec![client];
        clients.extend_from_slice(more);
        let mut file = json!({
            "port": 0,
            "clients": clients,
            "accounts_file": accounts_file,
        });
        if let Some(trust) = &trust {
            file["token_exchange"] = json!({ "trust_file": trust });
        }
        for (k, v) in extra.as_object().expect("an object") {
            file[k] = v.clone();
        }
        fs::write(&config, file.to_string()).expect("write the provider config");
        let log = dir.join("provider.log");
        let mut cmd = tools.node(
            "oidc_provider.mjs",
            &["--config", config.to_str().expect("utf-8")],
        );
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(fs::File::create(&log).expect("log"))
            .spawn()
            .expect("node oidc_provider.mjs");
        let out = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|e| {
                panic!(
                    "the provider printed no issuer ({e}):\n{}",
                    fs::read_to_string(&log).unwrap_or_default()
                )
            });
        let issuer = serde_json::from_str::<Value>(&line).expect("a JSON line")["issuer"]
            .as_str()
            .expect("an issuer")
            .to_owned();
        Provider {
            child,
            issuer,
            accounts: accounts_file,
            log,
            trust,
        }
    }

    /// Replaces the accounts (read at the next sign-in).
    pub fn set_accounts(&self, accounts: &Value) {
        fs::write(&self.accounts, accounts.to_string()).expect("write the accounts");
    }

    /// Token exchange trusts subject tokens of the host at `host_issuer`
    /// and issues tokens for `audiences`.
    pub fn trust_host(&self, host_issuer: &str, audiences: &[&str]) {
        let jwks = format!("{host_issuer}/.well-known/backend-assertion-jwks.json");
        self.trust_set(json!({"issuer": host_issuer, "jwks_uri": jwks, "audiences": audiences}));
    }

    /// Token exchange issues identity assertion grants (ID-JAGs) for the
    /// host at `host_issuer` to the provider's client `provider_client`,
    /// naming it `host_client` (its client id at the host).
    pub fn issue_id_jags(&self, host_issuer: &str, provider_client: &str, host_client: &str) {
        let clients = json!({ provider_client: host_client });
        self.trust_set(json!({"id_jag": {"audience": host_issuer, "clients": clients}}));
    }

    /// Merges `fields` into the trust file.
    fn trust_set(&self, fields: Value) {
        let trust = self.trust.as_ref().expect("started with exchange");
        let mut file: Value = fs::read_to_string(trust)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_else(|| json!({}));
        for (k, v) in fields.as_object().expect("an object") {
            file[k] = v.clone();
        }
        fs::write(trust, file.to_string()).expect("write the trust file");
    }

    /// Where it publishes its keys (oidc-provider's default path).
    pub fn jwks_uri(&self) -> String {
        format!("{}/jwks", self.issuer)
    }

    /// What it wrote to stderr so far.
    pub fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The testbench seeded with the contract, its project 2 renamed `name`
/// and shown only to the person `subject` (as `provider` knows them), and
/// taking only `provider`'s access tokens for `audience` from now on.
pub fn private_project_behind(
    backend: &super::bench::Backend,
    (name, subject): (&str, &str),
    provider: &Provider,
    audience: &str,
) {
    let mut seed = testbench::Seed::contract();
    for p in seed.projects.iter_mut().filter(|p| p.id == 2) {
        p.name = name.into();
        p.people = Some(vec![subject.into()]);
    }
    let handle = &backend.running.handle;
    handle.load(seed).expect("a valid seed");
    handle.require_provider_tokens(testbench::ProviderCheck {
        issuer: provider.issuer.clone(),
        jwks_uri: provider.jwks_uri(),
        audience: audience.into(),
    });
}

/// An account of the provider's accounts file.
pub fn account(password: &str, sub: &str, email: &str, groups: &[&str]) -> Value {
    json!({
        "password": password,
        "sub": sub,
        "email": email,
        "email_verified": true,
        "groups": groups,
    })
}

/// toolhost's `[sso.corp]` section for `issuer`: people made in tenant
/// `demo` on their first sign-in, `tool-admins` giving `admin`; the client
/// secret written to `dir`.
pub fn corp_section(dir: &Path, issuer: &str) -> String {
    corp_section_with(dir, issuer, "")
}

/// [`corp_section`] with `more` lines in `[sso.corp]`.
pub fn corp_section_with(dir: &Path, issuer: &str, more: &str) -> String {
    let secret = dir.join("corp.secret");
    fs::write(&secret, CLIENT_SECRET).expect("write the secret");
    format!(
        "[sso.corp]\n\
         {more}\
         label = \"Corp\"\n\
         issuer = \"{issuer}\"\n\
         client_id = \"toolhost\"\n\
         client_secret_file = \"{}\"\n\
         scopes = [\"openid\", \"email\", \"profile\", \"groups\"]\n\
         claim = \"preferred_username\"\n\
         [sso.corp.provision]\n\
         tenant = \"demo\"\n\
         [sso.corp.roles]\n\
         \"tool-admins\" = \"admin\"\n",
        secret.display()
    )
}

/// The environment variable the person's provider password reaches
/// python_sso.py by.
const IDP_PASSWORD_ENV: &str = "IDP_PASSWORD";

/// The Python SDK signs `username` in to `server` through the provider
/// labelled `Corp` (tests/e2e/python_sso.py, with `args` added): its
/// output.
pub fn sign_in(
    tools: &Tools,
    server: &Server,
    what: &str,
    (username, password): (&str, &str),
    args: &[&str],
) -> String {
    let mut all = vec![
        server.url.as_str(),
        "--sso-label",
        "Corp",
        "--sso-username",
        username,
        "--sso-password-env",
        IDP_PASSWORD_ENV,
    ];
    all.extend_from_slice(args);
    let mut cmd = tools.python("python_sso.py", &all);
    cmd.env(IDP_PASSWORD_ENV, password).env_remove(TOKEN_ENV);
    server.run_client(what, cmd, Duration::from_secs(120))
}

/// The access token python_sso.py printed with `--print-token`.
pub fn printed_token(out: &str) -> String {
    let line = out.lines().find_map(|l| l.strip_prefix("access_token: "));
    line.unwrap_or_else(|| panic!("no access token printed:\n{out}"))
        .trim()
        .to_owned()
}
