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
    Audience, Catalog, CatalogError, CatalogStore, CatalogStoreError, Catalogs, Deprecation,
    LoadOptions, LoadedPlugin, Manifest, Pin, Revision, RevisionState,
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

/// Built catalogs, and the served revisions they had to leave out.
pub struct Built {
    /// What to serve, per tenant.
    pub catalogs: Catalogs,
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

    /// The catalogs the store says are served now: everyone's, and one
    /// per tenant an audience names or a pin holds.
    pub async fn build(&self) -> Result<Built, CatalogStoreError> {
        let state = self.store.catalog_state().await?;
        let version: CatalogVersion = state
            .version
            .parse()
            .map_err(|e| CatalogStoreError::Failed(format!("catalog_state.version: {e}")))?;
        let pins = self.store.pins().await?;
        let mut wanted = self.store.served().await?;
        let mut refused: Vec<(String, String)> = Vec::new();
        for id in pins.iter().map(|p| &p.revision).collect::<BTreeSet<_>>() {
            if wanted.iter().any(|r| &r.id == id) {
                continue;
            }
            match self.store.revision(id).await? {
                Some(rev) => wanted.push(rev),
                None => refused.push((id.clone(), "pinned, but not in the store".into())),
            }
        }
        let signers = trusted_signers(&*self.store).await?;
        let mut keep = HashMap::new();
        let mut admitted = Vec::new();
        for rev in wanted {
            let pinned = pins.iter().any(|p| p.revision == rev.id);
            let retired = match retired_tools(&rev, version) {
                Ok(r) => r,
                Err(why) => {
                    refused.push((rev.id.clone(), why));
                    continue;
                }
            };
            let servable = matches!(rev.state, RevisionState::Active | RevisionState::Approved);
            if !servable || (rev.state != RevisionState::Active && retired.is_empty() && !pinned) {
                if pinned {
                    refused.push((rev.id.clone(), format!("pinned, but {}", rev.state)));
                }
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
                    admitted.push(Candidate {
                        rev,
                        loaded,
                        retired,
                    });
                }
                Err(why) => {
                    tracing::error!(revision = %rev.id, plugin = %rev.plugin, %why, "a served revision did not load");
                    refused.push((rev.id.clone(), why));
                }
            }
        }
        let everyone = view(&state, &admitted, None, &mut refused);
        let mut tenants = BTreeMap::new();
        for tenant in tenants_apart(&admitted, &pins) {
            let theirs = View {
                tenant: &tenant,
                pins: (pins.iter().filter(|p| p.tenant == tenant))
                    .map(|p| (p.plugin.as_str(), p.revision.as_str()))
                    .collect(),
            };
            let catalog = view(&state, &admitted, Some(&theirs), &mut refused);
            tenants.insert(tenant.clone(), Arc::new(catalog));
        }
        refused.sort();
        refused.dedup();
        *self
            .loaded
            .lock()
            .expect("the cache lock is never poisoned") = keep;
        Ok(Built {
            catalogs: Catalogs::new(Arc::new(everyone), tenants),
            refused,
        })
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

/// A revision the store serves (or a pin holds), loaded.
struct Candidate {
    rev: Revision,
    loaded: Arc<LoadedPlugin>,
    /// The tools it still lists as deprecated, if it was replaced.
    retired: BTreeMap<String, Deprecation>,
}

/// One tenant's view of the candidates: its pins, by plugin.
struct View<'a> {
    tenant: &'a str,
    pins: BTreeMap<&'a str, &'a str>,
}

/// The tenants with a catalog of their own: those an active revision's
/// audience names, and those a pin holds.
fn tenants_apart(admitted: &[Candidate], pins: &[Pin]) -> BTreeSet<String> {
    let named = (admitted.iter()).filter_map(|c| c.rev.audience.tenants());
    let mut out: BTreeSet<String> = named.flatten().cloned().collect();
    out.extend(pins.iter().map(|p| p.tenant.clone()));
    out
}

/// The catalog of `tenant` (`None`: of every tenant without one of its
/// own) from the candidates: each revision served to it, a pinned
/// revision in place of its plugin's others. Served ones first, in the
/// order they became active, so an incumbent keeps its names against a
/// newcomer whatever the names' order; retired tools after, so they never
/// shadow a live one. What it refuses is added to `refused`.
fn view(
    state: &crate::CatalogState,
    admitted: &[Candidate],
    tenant: Option<&View<'_>>,
    refused: &mut Vec<(String, String)>,
) -> Catalog {
    let mut serve = Vec::new();
    let mut retired = Vec::new();
    for c in admitted {
        let pinned = tenant.and_then(|t| t.pins.get(c.rev.plugin.as_str()));
        let audience = match tenant {
            Some(t) => c.rev.audience.includes(t.tenant),
            None => c.rev.audience == Audience::Everyone,
        };
        match pinned {
            Some(id) if *id == c.rev.id => serve.push(c),
            Some(_) => {}
            None if !audience => {}
            None if c.rev.state == RevisionState::Active => serve.push(c),
            None if !c.retired.is_empty() => retired.push(c),
            None => {}
        }
    }
    serve.sort_by_key(|c| {
        let at = c.rev.activated_at_ms.unwrap_or(i64::MAX);
        (at, c.rev.plugin.clone())
    });
    let withheld = withheld(&serve);
    let none = BTreeSet::new();
    let mut catalog = Catalog::at(&state.version, state.generation);
    for c in serve {
        let mine = withheld.get(&c.rev.plugin).unwrap_or(&none);
        let label = format!("revision {}", c.rev.id);
        if let Err(e) = admit(&mut catalog, c.loaded.clone(), mine, Path::new(&label)) {
            tracing::error!(revision = %c.rev.id, plugin = %c.rev.plugin, error = %e,
                tenant = tenant.map(|t| t.tenant), "a served revision claims what an incumbent serves: not serving it");
            refused.push((c.rev.id.clone(), e.to_string()));
        }
    }
    for c in retired {
        catalog.insert_retired(c.loaded.clone(), &c.retired);
    }
    catalog
}

/// The subjects each plugin no longer serves because a served plugin
/// took them over (`takes_from`), by plugin: every subject of the giver
/// whose claim overlaps what the taker took.
fn withheld(serve: &[&Candidate]) -> HashMap<String, BTreeSet<String>> {
    let mut out: HashMap<String, BTreeSet<String>> = HashMap::new();
    for taker in serve {
        let claims = Claims::of_loaded(&taker.loaded);
        for (subject, from) in takes(&taker.loaded.manifest) {
            let Some(giver) = serve.iter().find(|c| c.rev.plugin == from) else {
                continue;
            };
            let took = claims.clone().only(&subject);
            let given = Claims::of_loaded(&giver.loaded);
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
