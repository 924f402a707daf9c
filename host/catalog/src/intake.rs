//! Intake: a submitted revision (component, manifest, signature) checked
//! and stored pending review. Every source (a directory, an OCI registry,
//! an upload over HTTP) ends here, so every revision meets the same checks
//! in the same order: bounds, manifest, signature against the pinned
//! signers, the component against its manifest in the sandbox, then its
//! names against every other active plugin's (`claims`).

use std::path::Path;
use std::sync::Arc;

use toolhost_runtime::Runtime;
use toolhost_signing::{
    Envelope, Identity, PluginPattern, Presented, PublicKey, TrustRoot, TrustedSigner, Verified,
};
use toolhost_types::Digest;

use crate::claims::{ClaimError, check_against_active};
use crate::load::check_plugin;
use crate::{
    CatalogError, CatalogStore, CatalogStoreError, LoadOptions, Manifest, NewRevision, Revision,
    RevisionState, SignerIdentity, Submitted, capabilities, revision_id,
};

/// Largest component accepted. Rust tools are ~0.1–2 MiB and JavaScript
/// components carry their engine (~10 MiB); 32 MiB bounds what an upload
/// can make the host store and compile.
pub const MAX_COMPONENT_BYTES: usize = 32 * 1024 * 1024;

/// Largest manifest accepted: a manifest is a page of TOML.
pub const MAX_MANIFEST_BYTES: usize = 256 * 1024;

/// One revision as submitted.
#[derive(Debug, Clone)]
pub struct Submission {
    /// The manifest's text (what the signature's digest covers).
    pub manifest: String,
    /// The component's bytes.
    pub component: Vec<u8>,
    /// The DSSE envelope's JSON, if signed.
    pub envelope: Option<Vec<u8>>,
    /// Where it came from, for the reviewer (`dir:…`, `oci://…@sha256:…`).
    pub source: String,
    /// Who submits it.
    pub submitted_by: String,
}

/// How intake treats what it cannot verify.
#[derive(Debug, Clone)]
pub struct IntakeOptions {
    /// Budgets the manifest's limits are checked against.
    pub load: LoadOptions,
    /// Accept unsigned revisions (the loopback-only dev mode; the caller
    /// enforces where it may be set, logs and labels it).
    pub allow_unsigned: bool,
    /// The Sigstore trust root keyless bundles are verified against
    /// (default: the public-good root embedded in the host, offline).
    pub trust_root: Arc<TrustRoot>,
}

impl Default for IntakeOptions {
    fn default() -> Self {
        Self {
            load: LoadOptions::default(),
            allow_unsigned: false,
            trust_root: Arc::new(TrustRoot::public_good()),
        }
    }
}

/// Why a submission was refused. Nothing was stored.
#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    /// Over a size bound.
    #[error("{what} is {size} bytes, over the {limit}-byte limit")]
    TooLarge {
        /// `component` or `manifest`.
        what: &'static str,
        /// Its size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The signature check refused it; the refusal names which check.
    #[error("{0}")]
    Refused(#[from] toolhost_signing::Refusal),
    /// The manifest or the component did not pass the catalog's checks.
    #[error("{0}")]
    Invalid(#[from] CatalogError),
    /// It claims a name, prompt or URI another active plugin serves.
    #[error("{0}")]
    Claimed(#[from] ClaimError),
    /// The store failed.
    #[error("{0}")]
    Store(#[from] CatalogStoreError),
}

impl IntakeError {
    /// A stable code for clients and tests.
    pub fn code(&self) -> &'static str {
        match self {
            IntakeError::TooLarge { .. } => "LIMIT_EXCEEDED",
            IntakeError::Refused(r) => r.code(),
            IntakeError::Invalid(e) if e.is_busy() => "RATE_LIMITED",
            IntakeError::Invalid(CatalogError::ReservedScheme { .. }) => "RESERVED_URI",
            IntakeError::Invalid(_) => "INVALID_PLUGIN",
            IntakeError::Claimed(e) => e.code(),
            IntakeError::Store(_) => "INTERNAL",
        }
    }
}

/// What intake stored.
#[derive(Debug, Clone)]
pub struct Intake {
    /// The revision, as stored.
    pub revision: Revision,
    /// False when the same plugin, component and manifest were submitted
    /// before: nothing new was stored.
    pub new: bool,
}

/// A submission that passed every check, not stored yet.
pub struct Checked {
    /// The revision as intake would store it.
    pub revision: NewRevision,
    /// Its plugin, loaded (not served).
    pub loaded: crate::LoadedPlugin,
    /// Whether a trusted signer vouches for it (false only when the
    /// options allow unsigned revisions and none was given).
    pub signed: bool,
}

/// Checks `sub` and stores it as a revision pending review.
pub async fn submit(
    store: &dyn CatalogStore,
    runtime: &Runtime,
    sub: Submission,
    opts: &IntakeOptions,
    now_ms: i64,
) -> Result<Intake, IntakeError> {
    let checked = check(store, runtime, sub, opts, now_ms).await?;
    let id = checked.revision.id.clone();
    let new = match store.submit(checked.revision).await? {
        Submitted::New => true,
        Submitted::Existing(_) => false,
    };
    let revision = store
        .revision(&id)
        .await?
        .ok_or_else(|| CatalogStoreError::Failed(format!("revision {id} vanished after intake")))?;
    Ok(Intake { revision, new })
}

/// Checks `sub` as [`submit`] does (bounds, manifest, signature against
/// the signers trusted now, the component in the sandbox) and stores
/// nothing: what the workspace validates a draft with, and promotes.
pub async fn check(
    store: &dyn CatalogStore,
    runtime: &Runtime,
    sub: Submission,
    opts: &IntakeOptions,
    now_ms: i64,
) -> Result<Checked, IntakeError> {
    bounded("component", sub.component.len(), MAX_COMPONENT_BYTES)?;
    bounded("manifest", sub.manifest.len(), MAX_MANIFEST_BYTES)?;
    let source = Path::new(&sub.source);
    let manifest = Manifest::parse(&sub.manifest, source)?;
    let component_digest = Digest::of(&sub.component);
    let manifest_digest = Digest::of(sub.manifest.as_bytes());
    // The signature first: its statement pins both digests, so a changed
    // component or manifest is refused as tampered, by name.
    let signer = verify_signature(
        store,
        &manifest,
        &sub,
        &component_digest,
        &manifest_digest,
        opts,
    )
    .await?;
    if let Some(pinned) = manifest.plugin.sha256
        && pinned != component_digest
    {
        return Err(CatalogError::DigestMismatch {
            path: source.into(),
            component: manifest.plugin.component.clone().into(),
            expected: pinned,
            actual: component_digest,
        }
        .into());
    }
    let (loaded, _) = check_plugin(manifest, &sub.component, source, runtime, &opts.load).await?;
    let label = signer.as_ref().map(|(name, key)| format!("{name} ({key})"));
    let caps = capabilities(&loaded, label);
    check_against_active(store, &caps).await??;
    let plugin = loaded.manifest.plugin.name.to_string();
    let id = revision_id(&plugin, &component_digest, &manifest_digest);
    let revision = Revision {
        id,
        version: loaded.manifest.plugin.version.clone(),
        plugin,
        component_digest,
        manifest: sub.manifest,
        manifest_digest,
        envelope: sub
            .envelope
            .map(|e| String::from_utf8_lossy(&e).into_owned()),
        signer: signer.as_ref().map(|(name, _)| name.clone()),
        source: sub.source,
        capabilities: serde_json::to_string(&caps).expect("capabilities always serialize"),
        state: RevisionState::PendingReview,
        submitted_by: sub.submitted_by,
        submitted_at_ms: now_ms,
        reviewed_by: None,
        reviewed_at_ms: None,
        review_reason: None,
        activated_at_ms: None,
        retired: None,
        audience: crate::Audience::Everyone,
    };
    let revision = NewRevision::new(revision, sub.component);
    Ok(Checked {
        signed: signer.is_some(),
        revision,
        loaded,
    })
}

fn bounded(what: &'static str, size: usize, limit: usize) -> Result<(), IntakeError> {
    if size > limit {
        return Err(IntakeError::TooLarge { what, size, limit });
    }
    Ok(())
}

/// The signer that vouches for this release, or `None` for an unsigned
/// revision the options allow: `(signer, identity)`.
async fn verify_signature(
    store: &dyn CatalogStore,
    manifest: &Manifest,
    sub: &Submission,
    component: &Digest,
    manifest_digest: &Digest,
    opts: &IntakeOptions,
) -> Result<Option<(String, String)>, IntakeError> {
    if sub.envelope.is_none() && opts.allow_unsigned {
        return Ok(None);
    }
    let signers = trusted_signers(store).await?;
    let presented = Presented {
        plugin: manifest.plugin.name.as_str(),
        version: &manifest.plugin.version,
        component,
        manifest: manifest_digest,
        envelope: None,
    };
    let verified = verify_signed(
        &presented,
        sub.envelope.as_deref(),
        &signers,
        &opts.trust_root,
    )?;
    Ok(Some((verified.signer, verified.identity)))
}

/// Whether `signature` is a Sigstore bundle (its `mediaType` says so)
/// rather than a bare DSSE envelope.
pub fn is_sigstore_bundle(signature: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(rename = "mediaType")]
        media_type: Option<String>,
    }
    serde_json::from_slice::<Probe>(signature)
        .ok()
        .and_then(|p| p.media_type)
        .is_some_and(|m| m.starts_with("application/vnd.dev.sigstore.bundle"))
}

/// Verifies `signature` (a DSSE envelope or a Sigstore bundle; `None`:
/// unsigned) for the release `presented` names, against `signers`.
pub(crate) fn verify_signed(
    presented: &Presented<'_>,
    signature: Option<&[u8]>,
    signers: &[TrustedSigner],
    root: &TrustRoot,
) -> Result<Verified, toolhost_signing::Refusal> {
    match signature {
        Some(bytes) if is_sigstore_bundle(bytes) => {
            toolhost_signing::verify_bundle(presented, bytes, signers, root)
        }
        Some(bytes) => {
            let envelope = Envelope::from_json(bytes)?;
            let presented = Presented {
                envelope: Some(&envelope),
                ..*presented
            };
            toolhost_signing::verify(&presented, signers)
        }
        None => toolhost_signing::verify(presented, signers),
    }
}

/// The store's signers in the signing room's words. A record that no
/// longer parses is left out (and logged): it can vouch for nothing.
pub async fn trusted_signers(
    store: &dyn CatalogStore,
) -> Result<Vec<TrustedSigner>, CatalogStoreError> {
    let mut out = Vec::new();
    for record in store.signers().await? {
        let identity = match &record.identity {
            SignerIdentity::Key { public_key } => match PublicKey::from_pem(public_key) {
                Ok(k) => Identity::Key(k),
                Err(e) => {
                    tracing::error!(signer = %record.name, error = %e, "a stored signer key does not parse; it vouches for nothing");
                    continue;
                }
            },
            SignerIdentity::Keyless { issuer, subject } => Identity::Keyless {
                issuer: issuer.clone(),
                subject: subject.clone(),
            },
        };
        let plugins: Result<Vec<PluginPattern>, _> =
            record.plugins.iter().map(|p| p.parse()).collect();
        let Ok(plugins) = plugins else {
            tracing::error!(signer = %record.name, "a stored signer's plugin patterns do not parse; it vouches for nothing");
            continue;
        };
        out.push(TrustedSigner {
            name: record.name,
            identity,
            plugins,
            revoked: record.revoked.is_some(),
        });
    }
    Ok(out)
}
