//! `toolhost signer new|trust|revoke|list`: signing keys for authors, and
//! the signers the operator trusts in the store. Trusting and revoking are
//! audited; revoking withdraws what the signer vouched for, in the
//! transaction of that decision's audit row.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Subcommand;
use toolhost_audit::{AuditSink, Effect};
use toolhost_catalog::decide;
use toolhost_catalog::{CatalogStore, SignerIdentity, SignerRecord};
use toolhost_signing::{Algorithm, PluginPattern, PublicKey, SigningKey};

use toolhost_storage::Store;

use crate::admin::{StoreArg, open};
use crate::catalog_sync::{now_ms, operator, operator_event};

/// `toolhost signer …`
#[derive(Debug, Subcommand)]
pub enum SignerCommand {
    /// Generate a signing key: writes NAME.key (private, mode 0600) and
    /// NAME.pub into DIR and prints the key id.
    New {
        /// The key's name (the files' stem).
        name: String,
        /// Where to write the files.
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// `ed25519` (default) or `p256`.
        #[arg(long, default_value = "ed25519")]
        algorithm: String,
    },
    /// Trust a public key, or a keyless Sigstore identity, to sign the
    /// named plugins (`hello`, or a prefix `acme-*`; comma-separated).
    /// Audited.
    Trust {
        /// The operator's name for the signer.
        name: String,
        /// Its public key (PEM, as `signer new` wrote it).
        #[arg(long, required_unless_present = "issuer", conflicts_with_all = ["issuer", "identity"])]
        key: Option<PathBuf>,
        /// Keyless: the OIDC issuer of the signing certificate
        /// (`https://token.actions.githubusercontent.com`).
        #[arg(long, requires = "identity")]
        issuer: Option<String>,
        /// Keyless: the certificate's exact subject (SAN), e.g. a CI
        /// workflow `https://github.com/org/repo/.github/workflows/release.yml@refs/tags/v1`.
        #[arg(long, requires = "issuer")]
        identity: Option<String>,
        /// The plugin names or prefixes it may sign.
        #[arg(long, value_delimiter = ',', required = true)]
        plugins: Vec<String>,
        /// Who trusts it (an operator's name, for the audit trail).
        #[arg(long = "as", default_value = "operator")]
        by: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Revoke a signer: every revision it signed is withdrawn, its tools
    /// hidden at every replica's next poll, connected clients told.
    Revoke {
        /// The signer's name.
        name: String,
        /// Why (recorded and audited).
        #[arg(long)]
        reason: String,
        /// Who revokes it.
        #[arg(long = "as", default_value = "operator")]
        by: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Every trusted signer: name, key id, plugins, state.
    List {
        #[command(flatten)]
        store: StoreArg,
    },
}

/// The longest name `signer new` takes.
const MAX_KEY_NAME: usize = 64;

/// A key's name becomes its files' stem in `--dir`: plain letters, digits,
/// `-`, `_` and `.`, not starting with `.`, so it names a file there and
/// nowhere else (no `/`, no `..`, no hidden file).
fn check_key_name(name: &str) -> anyhow::Result<()> {
    let plain = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if name.is_empty() || name.len() > MAX_KEY_NAME || name.starts_with('.') || !plain {
        bail!(
            "signer name {name:?} must be 1 to {MAX_KEY_NAME} letters, digits, '-', '_' or '.', \
             not starting with '.': it names the key's files in --dir"
        );
    }
    Ok(())
}

/// Runs a `signer` command.
pub async fn signer(command: SignerCommand) -> anyhow::Result<ExitCode> {
    match command {
        SignerCommand::New {
            name,
            dir,
            algorithm,
        } => new_key(&name, &dir, &algorithm)?,
        SignerCommand::Trust {
            name,
            key,
            issuer,
            identity,
            plugins,
            by,
            store,
        } => {
            let (key_id, identity) = signer_identity(key, issuer, identity)?;
            check_plugin_patterns(&plugins)?;
            let store = open(&store).await?;
            let record = SignerRecord {
                name,
                key_id,
                identity,
                plugins,
                trusted_by: by,
                trusted_at_ms: now_ms(),
                revoked: None,
            };
            trust(&store, record).await?;
        }
        SignerCommand::Revoke {
            name,
            reason,
            by,
            store,
        } => revoke(&name, &reason, &by, &store).await?,
        SignerCommand::List { store } => list(&store).await?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `signer new`: writes a fresh key's private and public files into `dir`
/// and prints its key id.
fn new_key(name: &str, dir: &Path, algorithm: &str) -> anyhow::Result<()> {
    let alg: Algorithm = algorithm
        .parse()
        .map_err(|e| anyhow::anyhow!("--algorithm {algorithm:?}: {e}"))?;
    check_key_name(name)?;
    let key = SigningKey::generate(alg)?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let private = dir.join(format!("{name}.key"));
    write_private(&private, &key.to_pem())?;
    let public = dir.join(format!("{name}.pub"));
    std::fs::write(&public, key.public_key().to_pem())
        .with_context(|| format!("writing {}", public.display()))?;
    println!("{}", key.public_key().key_id());
    Ok(())
}

/// The signer `signer trust` names, and its key id: a public key's file,
/// or a keyless issuer and identity.
fn signer_identity(
    key: Option<PathBuf>,
    issuer: Option<String>,
    identity: Option<String>,
) -> anyhow::Result<(String, SignerIdentity)> {
    match (key, issuer, identity) {
        (Some(key), _, _) => {
            let pem = std::fs::read_to_string(&key)
                .with_context(|| format!("reading {}", key.display()))?;
            let public = PublicKey::from_pem(&pem).with_context(|| format!("{}", key.display()))?;
            let identity = SignerIdentity::Key {
                public_key: public.to_pem(),
            };
            Ok((public.key_id().to_string(), identity))
        }
        (None, Some(issuer), Some(subject)) => {
            let id = format!("keyless:{issuer}#{subject}");
            Ok((id, SignerIdentity::Keyless { issuer, subject }))
        }
        _ => bail!("give --key, or --issuer and --identity"),
    }
}

/// Each of `--plugins` is a plugin name or a prefix.
fn check_plugin_patterns(plugins: &[String]) -> anyhow::Result<()> {
    for p in plugins {
        p.parse::<PluginPattern>()
            .map_err(|e| anyhow::anyhow!("--plugins {p:?}: {e}"))?;
    }
    Ok(())
}

/// `signer trust`: stores the signer, audits the decision and says so.
async fn trust(store: &Store, record: SignerRecord) -> anyhow::Result<()> {
    store.trust_signer(record.clone()).await?;
    let SignerRecord {
        name,
        key_id,
        plugins,
        trusted_by,
        ..
    } = record;
    let event = operator_event(
        &trusted_by,
        "trust_signer",
        &serde_json::json!({"signer": name, "plugins": plugins}),
    );
    store.record(&event).await?;
    println!("trusted {name} ({key_id}) for {}", plugins.join(", "));
    Ok(())
}

/// `signer revoke`: revokes the signer and withdraws what it signed, in
/// the transaction of the decision's audit row.
async fn revoke(name: &str, reason: &str, by: &str, store: &StoreArg) -> anyhow::Result<()> {
    if reason.trim().is_empty() {
        bail!("--reason must say why");
    }
    let store = open(store).await?;
    store.revoke_signer(name, by, reason, now_ms()).await?;
    let who = operator(by);
    match decide::withdraw_signed_by(&store, name, &who, reason).await? {
        Some(d) => {
            store
                .record_with(&d.event, &[Effect::Catalog(d.effect.clone())])
                .await?;
            println!(
                "revoked {name}: {} revision(s) withdrawn, catalog {}",
                d.effect.moves.len(),
                d.effect.version
            );
        }
        None => {
            let event = operator_event(
                by,
                "revoke_signer",
                &serde_json::json!({"signer": name, "reason": reason}),
            );
            store.record(&event).await?;
            println!("revoked {name}: it had signed nothing served");
        }
    }
    Ok(())
}

/// `signer list`: every trusted signer, one a line.
async fn list(store: &StoreArg) -> anyhow::Result<()> {
    let store = open(store).await?;
    for s in store.signers().await? {
        let state = if s.revoked.is_some() {
            "revoked"
        } else {
            "trusted"
        };
        println!(
            "{:<16} {} {:<8} {}",
            s.name,
            s.key_id,
            state,
            s.plugins.join(",")
        );
    }
    Ok(())
}

fn write_private(path: &Path, pem: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path).with_context(|| {
        format!(
            "creating {} (an existing key is never overwritten)",
            path.display()
        )
    })?;
    f.write_all(pem.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_name_names_a_file_in_its_directory_and_nowhere_else() {
        for ok in [
            "alice",
            "acme-ci_2026",
            "release.v2",
            &"a".repeat(MAX_KEY_NAME),
        ] {
            assert!(check_key_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            "../alice",
            "keys/alice",
            "/tmp/alice",
            "a\\b",
            ".hidden",
            "al ice",
            "alice\n",
            &"a".repeat(MAX_KEY_NAME + 1),
        ] {
            let refused = check_key_name(bad).expect_err(bad);
            assert!(refused.to_string().contains("signer name"), "{refused}");
        }
    }
}
