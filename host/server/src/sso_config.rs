//! Single sign-on in the host's configuration file, and its events in the
//! audit trail.
//!
//! ```toml
//! [sso.corp]
//! label = "Corp SSO"                       # "Sign in with Corp SSO"
//! issuer = "https://login.example.com/org/v2.0"
//! client_id = "toolhost"
//! client_secret_file = "/etc/toolhost/corp.secret"
//! scopes = ["openid", "email", "profile", "groups"]
//! claim = "email"                          # names the local user
//! groups_claim = "groups"
//! [sso.corp.provision]                     # optional: make unknown people
//! tenant = "acme"
//! role = "viewer"
//! [sso.corp.roles]                         # provider group = local role(s)
//! "tool-admins" = "admin"
//! "staff" = ["viewer", "caller"]
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use anyhow::Context;
use serde::Deserialize;
use toolhost_audit::{AuditEvent, AuditSink, Outcome, argument_digest};
use toolhost_auth::AuthEvent;
use toolhost_auth::upstream::SsoAudit;
use toolhost_sso::{ClientSecret, ProviderConfig, Provision};
use toolhost_storage::Store;

/// `[sso.NAME]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SsoFile {
    /// The login page's button: "Sign in with LABEL" (default: the name).
    label: Option<String>,
    /// The issuer, exactly as the provider's discovery document names it.
    issuer: String,
    /// This host's client id at the provider.
    client_id: String,
    /// A file holding the client's secret at the provider.
    client_secret_file: PathBuf,
    /// The scopes asked for (default `openid email profile`); `openid` is
    /// always among them.
    scopes: Option<Vec<String>>,
    /// The ID-token claim naming the local user (default `email`; also
    /// `preferred_username`, `sub`…).
    claim: Option<String>,
    /// The claim listing the person's groups (default `groups`).
    groups_claim: Option<String>,
    /// `[sso.NAME.provision]`: people with no account get one (absent:
    /// they are refused).
    provision: Option<ProvisionFile>,
    /// `[sso.NAME.roles]`: provider group = a local role or a list of
    /// them, given while one of its groups is present and taken away when
    /// none is, at every sign-in.
    #[serde(default)]
    roles: BTreeMap<String, Roles>,
    /// Whether the provider's identity assertion grants (ID-JAGs, MCP's
    /// enterprise-managed authorization) get the people they name tokens
    /// at `/oauth/token` without a consent page (default false).
    #[serde(default)]
    id_jag: bool,
}

/// `[sso.NAME.provision]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProvisionFile {
    /// The tenant their account is made in.
    tenant: String,
    /// A role given to the account (it must exist).
    role: Option<String>,
}

/// A group's role, or roles.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Roles {
    One(String),
    Many(Vec<String>),
}

/// The providers of the file, their secrets read.
pub(crate) fn providers(file: BTreeMap<String, SsoFile>) -> anyhow::Result<Vec<ProviderConfig>> {
    let mut out = Vec::new();
    for (name, f) in file {
        let secret = std::fs::read_to_string(&f.client_secret_file).with_context(|| {
            format!(
                "sso provider {name:?}: reading client_secret_file {}",
                f.client_secret_file.display()
            )
        })?;
        let mut c = ProviderConfig::new(&name, f.issuer, f.client_id, ClientSecret::new(secret));
        if let Some(label) = f.label {
            c.label = label;
        }
        if let Some(scopes) = f.scopes {
            c.scopes = scopes;
        }
        if let Some(claim) = f.claim {
            c.claim = claim;
        }
        if let Some(groups) = f.groups_claim {
            c.groups_claim = groups;
        }
        c.id_jag = f.id_jag;
        c.provision = f.provision.map(|p| Provision {
            tenant: p.tenant,
            role: p.role,
        });
        c.roles = f
            .roles
            .into_iter()
            .map(|(group, roles)| {
                let roles = match roles {
                    Roles::One(r) => vec![r],
                    Roles::Many(rs) => rs,
                };
                (group, roles)
            })
            .collect();
        out.push(c);
    }
    Ok(out)
}

/// SSO events as rows of the hash-chained audit trail: the operation is
/// the event's kind (`sso.login`, `sso.login.failed`, `sso.linked`,
/// `sso.user.created`, `sso.roles`), the principal the local user (or
/// `(anonymous)` before one is known), and the argument digest covers the
/// event's detail, source and client.
pub(crate) struct StoreAudit(pub Arc<Store>);

impl SsoAudit for StoreAudit {
    fn record<'a>(
        &'a self,
        event: &'a AuthEvent,
        tenant: Option<&'a str>,
        ok: bool,
    ) -> Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            let principal = event.subject.as_deref().unwrap_or("(anonymous)");
            let digest = argument_digest(&serde_json::json!({
                "detail": event.detail,
                "source": event.source,
                "client_id": event.client_id,
            }));
            let row = AuditEvent {
                client_id: event.client_id.clone(),
                plugin: Some("(host)".into()),
                outcome: if ok {
                    Outcome::Executed
                } else {
                    Outcome::Denied
                },
                error_code: (!ok).then(|| "SSO_LOGIN_FAILED".to_owned()),
                ..AuditEvent::new(tenant.unwrap_or("(none)"), principal, &event.kind, digest)
            };
            if let Err(e) = self.0.record(&row).await {
                tracing::error!(error = %e, kind = %event.kind, "auditing an sso event");
            }
        })
    }
}
