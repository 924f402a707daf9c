//! The live catalog: what the store says is served, built into a
//! [`Catalog`] a replica can swap in whole. Calls already running keep the
//! catalog (and so the revision) they started with.
//!
//! Before serving a revision the builder checks again what intake checked:
//! the bytes still hash to the digest, and the signature still verifies
//! against the signers trusted *now*. A revoked signer's revisions stop
//! being served at the next build, even before the decision that
//! withdraws them is written.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};

use toolhost_review::{CatalogVersion, Retired};
use toolhost_runtime::{Payer, Runtime};
use toolhost_signing::{Presented, TrustRoot};
use toolhost_types::Digest;

use crate::capabilities::takes;
use crate::claims::Claims;
use crate::intake::{IntakeOptions, trusted_signers, verify_signed};
use crate::load::{admit, check_plugin};
use crate::{
    Catalog, CatalogError, CatalogStore, CatalogStoreError, Deprecation, LoadOptions, LoadedPlugin,
    Manifest, Revision, RevisionState,
};

/// Most drafts kept compiled between two builds of the catalog: past it
/// the kept drafts are dropped (and compiled again when next run), so a
/// tenant uploading draft after draft cannot grow the process.
pub const MAX_DRAFTS_KEPT: usize = 32;

/// Where a draft is kept among the compiled revisions.
const DRAFT_KEY: &str = "draft:";

/// Builds catalogs from the store, keeping each revision's compiled
/// component between builds (a revision's bytes never change).
pub struct LiveCatalog {
    store: Arc<dyn CatalogStore>,
    runtime: Arc<Runtime>,
    opts: LoadOptions,
    allow_unsigned: bool,
    trust_root: Arc<TrustRoot>,
    loaded: Mutex<HashMap<String, Arc<LoadedPlugin>>>,
}

/// A built catalog, and the served revisions it had to leave out.
pub struct Built {
    /// What to serve.
    pub catalog: Catalog,
    /// `(revision, why)` for each revision the store serves that this
    /// build refused.
    pub refused: Vec<(String, String)>,
}

impl LiveCatalog {
    /// A builder over `store`, compiling with `runtime`, checking
    /// signatures as intake does (`intake`'s trust root, and unsigned dev
    /// revisions served only when it allows them).
    pub fn new(
        store: Arc<dyn CatalogStore>,
        runtime: Arc<Runtime>,
        intake: &IntakeOptions,
    ) -> Self {
        Self {
            store,
            runtime,
            opts: intake.load.clone(),
            allow_unsigned: intake.allow_unsigned,
            trust_root: intake.trust_root.clone(),
            loaded: Mutex::new(HashMap::new()),
        }
    }

    /// The store's generation now (cheap: replicas poll it).
    pub async fn generation(&self) -> Result<i64, CatalogStoreError> {
        Ok(self.store.catalog_state().await?.generation)
    }

    /// The catalog the store says is served now.
    pub async fn build(&self) -> Result<Built, CatalogStoreError> {
        let state = self.store.catalog_state().await?;
        let version: CatalogVersion = state
            .version
            .parse()
            .map_err(|e| CatalogStoreError::Failed(format!("catalog_state.version: {e}")))?;
        let mut served = self.store.served().await?;
        // Active revisions first, so a retired tool never shadows a live
        // one; then in the order they became active, so an incumbent keeps
        // its names against a newcomer whatever the names' order.
        served.sort_by_key(|r| {
            let active = r.state == RevisionState::Active;
            (
                !active,
                r.activated_at_ms.unwrap_or(i64::MAX),
                r.plugin.clone(),
            )
        });
        let signers = trusted_signers(&*self.store).await?;
        let mut refused = Vec::new();
        let mut keep = HashMap::new();
        let mut admitted = Vec::new();
        for rev in served {
            let retired = match retired_tools(&rev, version) {
                Ok(r) => r,
                Err(why) => {
                    refused.push((rev.id.clone(), why));
                    continue;
                }
            };
            if rev.state != RevisionState::Active && retired.is_empty() {
                continue;
            }
            if let Err(why) = still_signed(&rev, &signers, self.allow_unsigned, &self.trust_root) {
                tracing::error!(revision = %rev.id, plugin = %rev.plugin, %why, "a served revision is no longer trusted: not serving it");
                refused.push((rev.id.clone(), why));
                continue;
            }
            match self.load(&rev).await {
                Ok(loaded) => {
                    keep.insert(rev.id.clone(), loaded.clone());
                    admitted.push((rev, loaded, retired));
                }
                Err(why) => {
                    tracing::error!(revision = %rev.id, plugin = %rev.plugin, %why, "a served revision did not load");
                    refused.push((rev.id.clone(), why));
                }
            }
        }
        let withheld = withheld(&admitted);
        let none = BTreeSet::new();
        let mut catalog = Catalog::at(&state.version, state.generation);
        for (rev, loaded, retired) in admitted {
            if rev.state != RevisionState::Active {
                catalog.insert_retired(loaded, &retired);
                continue;
            }
            let mine = withheld.get(&rev.plugin).unwrap_or(&none);
            let label = format!("revision {}", rev.id);
            if let Err(e) = admit(&mut catalog, loaded, mine, Path::new(&label)) {
                tracing::error!(revision = %rev.id, plugin = %rev.plugin, error = %e,
                    "an active revision claims what an incumbent serves: not serving it");
                refused.push((rev.id.clone(), e.to_string()));
            }
        }
        *self
            .loaded
            .lock()
            .expect("the cache lock is never poisoned") = keep;
        Ok(Built { catalog, refused })
    }

    /// The store the catalog is built from.
    pub fn store(&self) -> &Arc<dyn CatalogStore> {
        &self.store
    }

    /// Revision `id`, whatever its state, loaded if its signature still
    /// verifies against the signers trusted now: what an exploration run of
    /// a candidate (or of a revision replaced since the run was queued)
    /// executes. It is not served by this.
    pub async fn load_revision(&self, id: &str) -> Result<(Revision, Arc<LoadedPlugin>), String> {
        let rev = self
            .store
            .revision(id)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("no revision {id}"))?;
        let signers = trusted_signers(&*self.store)
            .await
            .map_err(|e| e.to_string())?;
        still_signed(&rev, &signers, self.allow_unsigned, &self.trust_root)?;
        let loaded = self.load(&rev).await?;
        Ok((rev, loaded))
    }

    /// A draft's plugin (a workspace proposal's manifest and component,
    /// perhaps unsigned), loaded for an exploration run of it: checked as
    /// intake checks a component, never served. Compiled once per process
    /// (at most [`MAX_DRAFTS_KEPT`] drafts are kept compiled between two
    /// builds of the catalog), charged to `payer` in the compile queue.
    pub async fn load_draft(
        &self,
        manifest: &str,
        component: &[u8],
        payer: Payer,
    ) -> Result<Arc<LoadedPlugin>, CatalogError> {
        let key = format!(
            "{DRAFT_KEY}{}:{}",
            Digest::of(component),
            Digest::of(manifest.as_bytes())
        );
        let cached = self
            .loaded
            .lock()
            .expect("the cache lock is never poisoned")
            .get(&key)
            .cloned();
        if let Some(hit) = cached {
            return Ok(hit);
        }
        let path = Path::new("draft");
        let parsed = Manifest::parse(manifest, path)?;
        let opts = LoadOptions {
            payer,
            ..self.opts.clone()
        };
        let (mut loaded, _) = check_plugin(parsed, component, path, &self.runtime, &opts).await?;
        loaded.source = "workspace draft".into();
        let loaded = Arc::new(loaded);
        let mut kept = self
            .loaded
            .lock()
            .expect("the cache lock is never poisoned");
        let drafts: Vec<String> = (kept.keys())
            .filter(|k| k.starts_with(DRAFT_KEY))
            .cloned()
            .collect();
        if drafts.len() >= MAX_DRAFTS_KEPT {
            for old in drafts {
                kept.remove(&old);
            }
        }
        kept.insert(key, loaded.clone());
        Ok(loaded)
    }

    /// The revision's plugin, compiled once per process.
    async fn load(&self, rev: &Revision) -> Result<Arc<LoadedPlugin>, String> {
        let label = format!("revision {}", rev.id);
        let path = Path::new(&label);
        let manifest = Manifest::parse(&rev.manifest, path).map_err(|e| e.to_string())?;
        let cached = self
            .loaded
            .lock()
            .expect("the cache lock is never poisoned")
            .get(&rev.id)
            .cloned();
        if let Some(hit) = cached {
            return Ok(hit);
        }
        let bytes = self
            .store
            .blob(&rev.component_digest)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| {
                format!(
                    "component {} is missing from the store",
                    rev.component_digest
                )
            })?;
        let actual = Digest::of(&bytes);
        if actual != rev.component_digest {
            return Err(format!(
                "stored component hashes to {actual}, the revision pins {}",
                rev.component_digest
            ));
        }
        let (mut loaded, _) = check_plugin(manifest, &bytes, path, &self.runtime, &self.opts)
            .await
            .map_err(|e| e.to_string())?;
        loaded.source = rev.source.clone();
        loaded.revision = Some(rev.id.clone());
        Ok(Arc::new(loaded))
    }
}

/// The subjects each plugin no longer serves because an active plugin
/// took them over (`takes_from`), by plugin: every subject of the giver
/// whose claim overlaps what the taker took.
fn withheld(
    admitted: &[(Revision, Arc<LoadedPlugin>, BTreeMap<String, Deprecation>)],
) -> HashMap<String, BTreeSet<String>> {
    let active = || {
        admitted
            .iter()
            .filter(|(r, _, _)| r.state == RevisionState::Active)
    };
    let mut out: HashMap<String, BTreeSet<String>> = HashMap::new();
    for (_, taker, _) in active() {
        let claims = Claims::of_loaded(taker);
        for (subject, from) in takes(&taker.manifest) {
            let Some((_, giver, _)) = active().find(|(r, _, _)| r.plugin == from) else {
                continue;
            };
            let took = claims.clone().only(&subject);
            let given = Claims::of_loaded(giver);
            let gone = took.overlapped_in(&given);
            (out.entry(from).or_default()).extend(gone.into_iter().map(str::to_owned));
        }
    }
    out
}

/// The retired tools a replaced revision still lists at `version` (none
/// once the catalog reached their `until`).
fn retired_tools(
    rev: &Revision,
    version: CatalogVersion,
) -> Result<BTreeMap<String, Deprecation>, String> {
    let Some((tools, until)) = &rev.retired else {
        return Ok(BTreeMap::new());
    };
    let until_v: CatalogVersion = until.parse().map_err(|e| format!("retired_until: {e}"))?;
    if version >= until_v {
        return Ok(BTreeMap::new());
    }
    let tools: Vec<Retired> =
        serde_json::from_str(tools).map_err(|e| format!("retired_tools: {e}"))?;
    Ok(tools
        .into_iter()
        .map(|r| {
            let d = Deprecation {
                replacement: r.replacement,
                until: until.clone(),
            };
            (r.tool, d)
        })
        .collect())
}

/// The revision's signature still verifies against the signers trusted now
/// (an unsigned dev revision passes only in dev mode).
fn still_signed(
    rev: &Revision,
    signers: &[toolhost_signing::TrustedSigner],
    allow_unsigned: bool,
    root: &TrustRoot,
) -> Result<(), String> {
    let Some(signature) = &rev.envelope else {
        return if allow_unsigned {
            Ok(())
        } else {
            Err("unsigned: served only in dev mode".into())
        };
    };
    let presented = Presented {
        plugin: &rev.plugin,
        version: &rev.version,
        component: &rev.component_digest,
        manifest: &rev.manifest_digest,
        envelope: None,
    };
    verify_signed(&presented, Some(signature.as_bytes()), signers, root)
        .map(drop)
        .map_err(|e| e.to_string())
}
