//! Single sign-on end to end: a real OpenID provider (npm `oidc-provider`,
//! run by tests/e2e/oidc_provider.mjs under the Makefile's Node 22, RSA
//! keys, its own sign-in page) and the real `toolhost serve` configured
//! with `[sso.corp]`. The Python SDK's OAuth client starts from the server
//! URL alone: discovery, registration, then the sign-in, played through
//! both the host's pages and the provider's (tests/e2e/python_sso.py with
//! oauth_browser.py), and `tools/list`. No token is pasted.
//!
//! Then: the provider's group that maps to the `admin` role is removed, and
//! at the next sign-in the role (so every tool) is gone; the logins, the
//! account made on the first sign-in, the link and the role changes are in
//! `toolhost client events` and the audit trail; and with the provider
//! down, the password still signs a person in.
//!
//! Each refusal (audience, expiry, replay, nonce, state, issuer, a disabled
//! user, key rotation) is tested against a provider the test controls, in
//! host/sso/tests/oidc.rs.

mod support;

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;
use support::oauth::{Browser, REDIRECT, approve, query, register, stdout};
use support::{DEMO_PASSWORD, Server, TOKEN_ENV, Tools};

/// alice's password at the provider; it reaches the script by environment.
const IDP_PASSWORD: &str = "alice-at-the-provider";
const IDP_PASSWORD_ENV: &str = "IDP_PASSWORD";
const CLIENT_SECRET: &str = "toolhost-secret-at-the-provider";

/// The provider, killed when dropped.
struct Provider {
    child: Child,
    issuer: String,
    accounts: PathBuf,
}

impl Provider {
    fn start(tools: &Tools, dir: &std::path::Path) -> Provider {
        let accounts = dir.join("accounts.json");
        let config = dir.join("provider.json");
        write_accounts(&accounts, &["tool-admins", "staff"]);
        // A native client: its loopback redirect URI matches on any port,
        // so it can be registered before toolhost has one.
        let client = json!({
            "client_id": "toolhost",
            "client_secret": CLIENT_SECRET,
            "application_type": "native",
            "redirect_uris": ["http://127.0.0.1/oauth/sso/corp/callback"],
        });
        let file = json!({
            "port": 0,
            "clients": [client],
            "accounts_file": accounts,
        });
        fs::write(&config, file.to_string()).expect("write the provider config");
        let mut cmd = tools.node(
            "oidc_provider.mjs",
            &["--config", config.to_str().expect("utf-8")],
        );
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(fs::File::create(dir.join("provider.log")).expect("log"))
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
                    fs::read_to_string(dir.join("provider.log")).unwrap_or_default()
                )
            });
        let issuer =
            serde_json::from_str::<serde_json::Value>(&line).expect("a JSON line")["issuer"]
                .as_str()
                .expect("an issuer")
                .to_owned();
        Provider {
            child,
            issuer,
            accounts,
        }
    }

    /// alice's groups at the provider (read at her next sign-in).
    fn set_groups(&self, groups: &[&str]) {
        write_accounts(&self.accounts, groups);
    }
}

/// The provider's one account, alice, in `groups`.
fn write_accounts(path: &std::path::Path, groups: &[&str]) {
    let accounts = json!({
            "alice": {
                "password": IDP_PASSWORD,
                "sub": "alice-sub-1",
                "email": "alice@example.com",
                "email_verified": true,
                "groups": groups,
            }
    });
    fs::write(path, accounts.to_string()).expect("write the accounts");
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The host's configuration: provider `corp`, people made in tenant
/// `demo` on their first sign-in, `tool-admins` giving `admin`.
fn host_config(dir: &std::path::Path, issuer: &str) -> PathBuf {
    let secret = dir.join("corp.secret");
    fs::write(&secret, CLIENT_SECRET).expect("write the secret");
    let config = dir.join("toolhost.toml");
    let toml = format!(
        "[sso.corp]\n\
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
    );
    fs::write(&config, toml).expect("write the host config");
    config
}

fn sign_in(tools: &Tools, server: &Server, what: &str, expect: &[&str]) -> String {
    let mut args = vec![
        server.url.as_str(),
        "--sso-label",
        "Corp",
        "--sso-username",
        "alice",
        "--sso-password-env",
        IDP_PASSWORD_ENV,
    ];
    args.extend_from_slice(expect);
    let mut cmd = tools.python("python_sso.py", &args);
    cmd.env(IDP_PASSWORD_ENV, IDP_PASSWORD)
        .env_remove(TOKEN_ENV);
    server.run_client(what, cmd, Duration::from_secs(120))
}

#[test]
fn python_sdk_signs_in_through_the_organisations_openid_provider() {
    let tools = Tools::require();
    let dir = tempfile::tempdir().expect("a temp dir");
    let provider = Provider::start(&tools, dir.path());
    let config = host_config(dir.path(), &provider.issuer);
    let server = Server::start_with(
        &[toolhost_fixtures::HELLO],
        &["--config", config.to_str().expect("utf-8")],
    );

    // First sign-in: alice gets an account in `demo` and, through her
    // group, the admin role: every tool.
    let out = sign_in(
        &tools,
        &server,
        "python SDK, SSO",
        &["--expect-tool", "greet"],
    );
    assert!(out.contains("sign-in through Corp as alice"), "{out}");

    // The group is removed at the provider: at her next sign-in the role goes.
    provider.set_groups(&["staff"]);
    sign_in(
        &tools,
        &server,
        "python SDK, SSO without the group",
        &["--expect-no-tools"],
    );

    // The security events and the audit trail have it all.
    let events = stdout(
        &server.admin(&["client", "events", "--limit", "50"]),
        "client events",
    );
    for kind in ["sso.user.created", "sso.linked", "sso.roles", "sso.login"] {
        assert!(events.contains(kind), "no {kind} in:\n{events}");
    }
    assert!(
        events.contains("+admin") && events.contains("-admin"),
        "{events}"
    );
    let audit = stdout(
        &server.admin(&["audit", "search", "--tool", "sso.login"]),
        "audit search",
    );
    assert_eq!(
        audit.lines().filter(|l| l.contains("sso.login")).count(),
        2,
        "{audit}"
    );
    let verify = server.admin(&["audit", "verify"]);
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );

    // The provider goes down: the password still signs a person in.
    drop(provider);
    let client = register(&server, REDIRECT, "password while the provider is down");
    let location = approve(
        &server,
        &mut Browser::default(),
        &client,
        "demo",
        DEMO_PASSWORD,
    );
    assert!(query(&location, "code").is_some(), "{location}");
}
