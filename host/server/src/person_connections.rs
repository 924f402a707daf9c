//! The configuration of people's own connections (issue 46): each
//! `[backends.NAME]` with `auth = "connection"` names its authorization
//! server and the host's client there; `connection_keys_file` holds the
//! keys their tokens are sealed with.
//!
//! ```toml
//! connection_keys_file = "/etc/toolhost/connection-keys"
//!
//! [backends.crm]
//! url = "https://crm.internal/api"
//! auth = "connection"
//! connect_issuer = "https://login.crm.example"
//! connect_client_id = "toolhost"
//! connect_client_secret_file = "/etc/toolhost/crm-client.secret"
//! connect_scope = "crm.read offline_access"
//! connect_resource = "https://crm.internal/api"
//! ```

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use toolhost_sso::ClientSecret;
use toolhost_sso::connections::{ConnectionBackend, SealingKeys};

use crate::config::BackendFile;

/// What a host with connection backends needs at start.
#[derive(Debug, Clone, Default)]
pub struct ConnectionsConfig {
    /// Each connection backend's server and the host's client there.
    pub backends: Vec<ConnectionBackend>,
    /// The sealing keys, read (none without a connection backend).
    pub keys: Option<Arc<SealingKeys>>,
}

/// The connection backends of `file`'s `[backends.NAME]`, and the keys of
/// `keys_file`: a connection backend needs the issuer, the client id and
/// the secret file, and then the key file; `connect_*` keys on any other
/// backend are refused.
pub(crate) fn connections(
    file: &BTreeMap<String, BackendFile>,
    keys_file: Option<&Path>,
) -> anyhow::Result<ConnectionsConfig> {
    let mut backends = Vec::new();
    for (name, b) in file {
        let keys = b;
        let connection = b.auth.as_deref() == Some("connection");
        let any = keys.connect_issuer.is_some()
            || keys.connect_client_id.is_some()
            || keys.connect_client_secret_file.is_some()
            || keys.connect_scope.is_some()
            || keys.connect_resource.is_some();
        if !connection {
            anyhow::ensure!(
                !any,
                "backend {name:?}: connect_* keys apply only with auth = \"connection\""
            );
            continue;
        }
        let (Some(issuer), Some(client_id), Some(secret_file)) = (
            &keys.connect_issuer,
            &keys.connect_client_id,
            &keys.connect_client_secret_file,
        ) else {
            anyhow::bail!(
                "backend {name:?}: auth = \"connection\" needs connect_issuer, \
                 connect_client_id and connect_client_secret_file"
            );
        };
        let secret = std::fs::read_to_string(secret_file).with_context(|| {
            format!(
                "backend {name:?}: reading connect_client_secret_file {}",
                secret_file.display()
            )
        })?;
        backends.push(ConnectionBackend {
            name: name.clone(),
            issuer: issuer.clone(),
            client_id: client_id.clone(),
            client_secret: ClientSecret::new(secret),
            scope: keys.connect_scope.clone(),
            resource: keys.connect_resource.clone(),
        });
    }
    if backends.is_empty() {
        return Ok(ConnectionsConfig::default());
    }
    let path = keys_file.with_context(|| {
        "a backend with auth = \"connection\" needs connection_keys_file (the keys people's \
         tokens are sealed with)"
    })?;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading connection_keys_file {}", path.display()))?;
    let keys = SealingKeys::parse(&text)
        .with_context(|| format!("connection_keys_file {}", path.display()))?;
    Ok(ConnectionsConfig {
        backends,
        keys: Some(Arc::new(keys)),
    })
}
