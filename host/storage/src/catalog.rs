//! [`CatalogStore`] for [`Store`]: plugin revisions, their component bytes
//! by digest, trusted signers and the catalog's generation and version.
//! Decisions about revisions are [`toolhost_audit::Effect::Catalog`]s,
//! applied with their audit row (`src/effects.rs`).

use toolhost_catalog::{
    Audience, CatalogFuture, CatalogState, CatalogStore, CatalogStoreError, NewRevision, Pin,
    Revision, RevisionState, SignerIdentity, SignerRecord, Submitted,
};
use toolhost_types::Digest;

use crate::Store;
use crate::connect::{fetch_all, fetch_optional, on_pool};
use crate::effects::{Tx, statement};
use crate::fields::{Fields, corrupt};

const STATE: &str = "SELECT generation, version FROM catalog_state WHERE id = 1";

/// Every column of a revision, then `$rest`.
macro_rules! select_revision {
    ($rest:literal) => {
        concat!(
            "SELECT id, plugin, version, component_sha256, manifest_sha256, manifest, envelope, \
             signer, source, capabilities, state, submitted_by, submitted_at, reviewed_by, \
             reviewed_at, review_reason, activated_at, retired_tools, retired_until, audience \
             FROM plugin_revisions ",
            $rest
        )
    };
}

const REVISION: &str = select_revision!("WHERE id = $1");
const SERVED: &str =
    select_revision!("WHERE state = 'active' OR retired_tools IS NOT NULL ORDER BY plugin, id");
const REVISIONS: &str = select_revision!(
    "WHERE ($1 = '' OR plugin = $1) AND ($2 = '' OR state = $2) \
     ORDER BY submitted_at DESC, id"
);
const SAME: &str =
    select_revision!("WHERE plugin = $1 AND component_sha256 = $2 AND manifest_sha256 = $3");

/// The bytes are content-addressed: a second revision of the same
/// component stores nothing new.
const INSERT_BLOB: &str = "INSERT INTO plugin_blobs (sha256, body, created_at) VALUES ($1, $2, $3) \
     ON CONFLICT (sha256) DO NOTHING";
const INSERT_REVISION: &str = "INSERT INTO plugin_revisions (id, plugin, version, \
     component_sha256, manifest_sha256, manifest, envelope, signer, source, capabilities, state, \
     submitted_by, submitted_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending_review', $11, $12)";
/// Stores a revision submitted for review on the open transaction `tx`:
/// intake's ([`CatalogStore::submit`]) and a workspace promotion's
/// (`src/effects/workspace.rs`), unless the store holds it already (the
/// same plugin, component and manifest give the same id).
pub(crate) async fn store_revision(tx: &mut impl Tx, rev: &NewRevision) -> Result<(), sqlx::Error> {
    let there = statement(REVISION_EXISTS)
        .bind(rev.id.as_str())
        .exists(tx)
        .await?;
    if there {
        return Ok(());
    }
    let (component, manifest) = (
        rev.component_digest.to_string(),
        rev.manifest_digest.to_string(),
    );
    statement(INSERT_BLOB)
        .bind(component.as_str())
        .bind(rev.component())
        .bind(rev.submitted_at_ms)
        .execute(tx)
        .await?;
    statement(INSERT_REVISION)
        .bind(rev.id.as_str())
        .bind(rev.plugin.as_str())
        .bind(rev.version.as_str())
        .bind(component.as_str())
        .bind(manifest.as_str())
        .bind(rev.manifest.as_str())
        .bind(rev.envelope.as_deref())
        .bind(rev.signer.as_deref())
        .bind(rev.source.as_str())
        .bind(rev.capabilities.as_str())
        .bind(rev.submitted_by.as_str())
        .bind(rev.submitted_at_ms)
        .execute(tx)
        .await?;
    Ok(())
}

const PINS: &str = "SELECT tenant, plugin, revision, pinned_by, pinned_at FROM catalog_pins \
     ORDER BY tenant, plugin";

const REVISION_EXISTS: &str = "SELECT id FROM plugin_revisions WHERE id = $1";
const BLOB: &str = "SELECT body FROM plugin_blobs WHERE sha256 = $1";

const SIGNERS: &str = "SELECT name, kind, key_id, public_key, issuer, subject, plugins, \
     trusted_by, trusted_at, revoked_at, revoked_by, revoke_reason FROM signers ORDER BY name";
const INSERT_SIGNER: &str = "INSERT INTO signers (name, kind, key_id, public_key, issuer, \
     subject, plugins, trusted_by, trusted_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
const REVOKE_SIGNER: &str = "UPDATE signers SET revoked_at = $2, revoked_by = $3, \
     revoke_reason = $4 WHERE name = $1 AND revoked_at IS NULL";
const SIGNER_EXISTS: &str = "SELECT name FROM signers WHERE name = $1";

fn failed(operation: &'static str) -> impl FnOnce(sqlx::Error) -> CatalogStoreError {
    move |e| match crate::error::unreachable(operation, &e) {
        Some(down) => CatalogStoreError::Unavailable(down),
        None => CatalogStoreError::Failed(format!("{operation}: {e}")),
    }
}

fn digest(row: &impl Fields, id: &str, column: &'static str) -> Result<Digest, sqlx::Error> {
    let text = row.text(column)?;
    text.parse()
        .map_err(|_| corrupt("plugin_revisions", id, column, &text, "not a SHA-256"))
}

fn revision(row: &impl Fields) -> Result<Revision, sqlx::Error> {
    let id = row.text("id")?;
    let state = row.text("state")?;
    let audience = row.maybe_text("audience")?;
    let retired = match (
        row.maybe_text("retired_tools")?,
        row.maybe_text("retired_until")?,
    ) {
        (Some(tools), Some(until)) => Some((tools, until)),
        _ => None,
    };
    Ok(Revision {
        plugin: row.text("plugin")?,
        version: row.text("version")?,
        component_digest: digest(row, &id, "component_sha256")?,
        manifest_digest: digest(row, &id, "manifest_sha256")?,
        manifest: row.text("manifest")?,
        envelope: row.maybe_text("envelope")?,
        signer: row.maybe_text("signer")?,
        source: row.text("source")?,
        capabilities: row.text("capabilities")?,
        state: state
            .parse()
            .map_err(|e: String| corrupt("plugin_revisions", &id, "state", &state, &e))?,
        submitted_by: row.text("submitted_by")?,
        submitted_at_ms: row.int("submitted_at")?,
        reviewed_by: row.maybe_text("reviewed_by")?,
        reviewed_at_ms: row.maybe_int("reviewed_at")?,
        review_reason: row.maybe_text("review_reason")?,
        activated_at_ms: row.maybe_int("activated_at")?,
        retired,
        audience: Audience::from_stored(audience.as_deref()).map_err(|e| {
            let text = audience.as_deref().unwrap_or_default();
            corrupt("plugin_revisions", &id, "audience", text, &e.to_string())
        })?,
        id,
    })
}

fn pin(row: &impl Fields) -> Result<Pin, sqlx::Error> {
    Ok(Pin {
        tenant: row.text("tenant")?,
        plugin: row.text("plugin")?,
        revision: row.text("revision")?,
        pinned_by: row.text("pinned_by")?,
        pinned_at_ms: row.int("pinned_at")?,
    })
}

fn signer(row: &impl Fields) -> Result<SignerRecord, sqlx::Error> {
    let name = row.text("name")?;
    let plugins = row.text("plugins")?;
    let revoked = match row.maybe_int("revoked_at")? {
        Some(at) => Some((
            at,
            row.maybe_text("revoked_by")?.unwrap_or_default(),
            row.maybe_text("revoke_reason")?.unwrap_or_default(),
        )),
        None => None,
    };
    let kind = row.text("kind")?;
    let identity = match (kind.as_str(), row.maybe_text("public_key")?) {
        ("key", Some(public_key)) => SignerIdentity::Key { public_key },
        ("keyless", None) => SignerIdentity::Keyless {
            issuer: row.maybe_text("issuer")?.unwrap_or_default(),
            subject: row.maybe_text("subject")?.unwrap_or_default(),
        },
        _ => {
            return Err(corrupt(
                "signers",
                &name,
                "kind",
                &kind,
                "not a key or keyless signer",
            ));
        }
    };
    Ok(SignerRecord {
        key_id: row.text("key_id")?,
        identity,
        plugins: serde_json::from_str(&plugins)
            .map_err(|e| corrupt("signers", &name, "plugins", &plugins, &e.to_string()))?,
        trusted_by: row.text("trusted_by")?,
        trusted_at_ms: row.int("trusted_at")?,
        revoked,
        name,
    })
}

fn state(row: &impl Fields) -> Result<CatalogState, sqlx::Error> {
    Ok(CatalogState {
        generation: row.int("generation")?,
        version: row.text("version")?,
    })
}

impl CatalogStore for Store {
    fn catalog_state(&self) -> CatalogFuture<'_, CatalogState> {
        Box::pin(async move {
            fetch_optional!(&self.pools, state, STATE)
                .map_err(failed("read catalog state"))?
                .ok_or_else(|| CatalogStoreError::Failed("catalog_state has no row".into()))
        })
    }

    fn submit(&self, rev: NewRevision) -> CatalogFuture<'_, Submitted> {
        Box::pin(async move {
            let (component, manifest) = (
                rev.component_digest.to_string(),
                rev.manifest_digest.to_string(),
            );
            let same = fetch_optional!(
                &self.pools,
                revision,
                SAME,
                rev.plugin.as_str(),
                component.as_str(),
                manifest.as_str()
            )
            .map_err(failed("find the same revision"))?;
            if let Some(existing) = same {
                return Ok(Submitted::Existing(Box::new(existing)));
            }
            on_pool!(&self.pools, pool => async {
                let _turn = crate::connect::transaction_turn(&self.pools).await;
                let mut tx = pool.begin().await?;
                store_revision(&mut *tx, &rev).await?;
                tx.commit().await
            }
            .await)
            .map_err(failed("store a revision"))?;
            Ok(Submitted::New)
        })
    }

    fn revision<'a>(&'a self, id: &'a str) -> CatalogFuture<'a, Option<Revision>> {
        Box::pin(async move {
            fetch_optional!(&self.pools, revision, REVISION, id).map_err(failed("read a revision"))
        })
    }

    fn revisions<'a>(
        &'a self,
        plugin: Option<&'a str>,
        state: Option<RevisionState>,
    ) -> CatalogFuture<'a, Vec<Revision>> {
        Box::pin(async move {
            let state = state.map(RevisionState::as_str).unwrap_or("");
            fetch_all!(
                &self.pools,
                revision,
                REVISIONS,
                plugin.unwrap_or(""),
                state
            )
            .map_err(failed("list revisions"))
        })
    }

    fn served(&self) -> CatalogFuture<'_, Vec<Revision>> {
        Box::pin(async move {
            fetch_all!(&self.pools, revision, SERVED).map_err(failed("list served revisions"))
        })
    }

    fn pins(&self) -> CatalogFuture<'_, Vec<Pin>> {
        Box::pin(async move { fetch_all!(&self.pools, pin, PINS).map_err(failed("list pins")) })
    }

    fn blob<'a>(&'a self, digest: &'a Digest) -> CatalogFuture<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            let hex = digest.to_string();
            fetch_optional!(&self.pools, |row| row.bytes("body"), BLOB, hex.as_str())
                .map_err(failed("read a component"))
        })
    }

    fn trust_signer(&self, s: SignerRecord) -> CatalogFuture<'_, ()> {
        Box::pin(async move {
            let plugins = serde_json::to_string(&s.plugins).expect("strings always serialize");
            let (kind, key, issuer, subject) = match &s.identity {
                SignerIdentity::Key { public_key } => {
                    ("key", Some(public_key.as_str()), None, None)
                }
                SignerIdentity::Keyless { issuer, subject } => (
                    "keyless",
                    None,
                    Some(issuer.as_str()),
                    Some(subject.as_str()),
                ),
            };
            let inserted = crate::connect::execute!(
                &self.pools,
                INSERT_SIGNER,
                s.name.as_str(),
                kind,
                s.key_id.as_str(),
                key,
                issuer,
                subject,
                plugins.as_str(),
                s.trusted_by.as_str(),
                s.trusted_at_ms
            );
            match inserted {
                Ok(_) => Ok(()),
                Err(e)
                    if e.as_database_error()
                        .is_some_and(|d| d.is_unique_violation()) =>
                {
                    Err(CatalogStoreError::SignerExists {
                        name: s.name,
                        key_id: s.key_id,
                    })
                }
                Err(e) => Err(failed("trust a signer")(e)),
            }
        })
    }

    fn revoke_signer<'a>(
        &'a self,
        name: &'a str,
        by: &'a str,
        reason: &'a str,
        at_ms: i64,
    ) -> CatalogFuture<'a, ()> {
        Box::pin(async move {
            let done =
                crate::connect::execute!(&self.pools, REVOKE_SIGNER, name, at_ms, by, reason)
                    .map_err(failed("revoke a signer"))?;
            if done == 0 {
                let exists =
                    fetch_optional!(&self.pools, |row| row.text("name"), SIGNER_EXISTS, name)
                        .map_err(failed("find a signer"))?;
                if exists.is_none() {
                    return Err(CatalogStoreError::NoSuchSigner(name.to_owned()));
                }
            }
            Ok(())
        })
    }

    fn signers(&self) -> CatalogFuture<'_, Vec<SignerRecord>> {
        Box::pin(
            async move { fetch_all!(&self.pools, signer, SIGNERS).map_err(failed("list signers")) },
        )
    }
}

/// The channel the PostgreSQL trigger on `catalog_state` notifies
/// (migration 0010) when a decision moves the catalog's generation.
pub const CATALOG_CHANNEL: &str = "toolhost_catalog";

/// Catalog changes pushed by the database as they commit (PostgreSQL's
/// `LISTEN`). A lost connection is re-established by the driver;
/// notifications sent meanwhile are lost, so hosts poll as well.
pub struct CatalogListener(sqlx::postgres::PgListener);

impl CatalogListener {
    /// Waits for the next change.
    pub async fn changed(&mut self) -> Result<(), crate::StorageError> {
        self.0
            .recv()
            .await
            .map(drop)
            .map_err(crate::StorageError::query("wait for a catalog change"))
    }
}

impl Store {
    /// A listener for catalog changes on PostgreSQL; `None` on SQLite,
    /// which cannot push them (hosts poll it).
    pub async fn listen_catalog(&self) -> Result<Option<CatalogListener>, crate::StorageError> {
        let listener = (self.pools)
            .listen(&[CATALOG_CHANNEL], "listen for catalog changes")
            .await?;
        Ok(listener.map(CatalogListener))
    }
}
