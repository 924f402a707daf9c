//! A plugin subject (`plugin:NAME`): a proposal is a candidate revision,
//! its component, manifest and (optional while drafting) signature named
//! by upload handles. The host checks it as the catalog's intake would,
//! diffs its capabilities against the active revision (the review's own
//! diff), and promotion submits it for review, signed: only a reviewer's
//! approval activates it.

use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_catalog::intake::{self, Checked, Submission};
use toolhost_catalog::{LiveCatalog, RevisionState};
use toolhost_runtime::Payer;
use toolhost_types::{Digest, Principal, canonical_json};
use toolhost_workspace::{Session, SessionId, Subject, UploadHandle, UploadKind};

use super::bind::NO_ACTIVE_REVISION;
use crate::Work;
use crate::WorkspaceError;
use toolhost_invoke::InvokeError;

/// A candidate revision, as a proposal names it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RevisionDraft {
    /// The component's upload.
    pub component: UploadHandle,
    /// The manifest's upload.
    pub manifest: UploadHandle,
    /// The signature's upload, once the author signed.
    #[serde(default)]
    pub signature: Option<UploadHandle>,
}

impl RevisionDraft {
    /// The handles, for the store to keep.
    pub(crate) fn handles(&self) -> Vec<UploadHandle> {
        let mut h = vec![self.component.clone(), self.manifest.clone()];
        h.extend(self.signature.clone());
        h
    }
}

/// What a candidate came to: checked, with its digest and diff.
pub(crate) struct Candidate {
    pub checked: Checked,
    pub digest: String,
    pub validation: Value,
    pub diff: Value,
}

impl Work<'_> {
    fn live(&self) -> Result<std::sync::Arc<LiveCatalog>, InvokeError> {
        self.workspace()?.catalog.clone().ok_or_else(|| {
            WorkspaceError::SubjectInvalid {
                detail: "plugin subjects need the catalog store".into(),
            }
            .into()
        })
    }

    /// Checks the candidate `draft` for `session`: `signed` demands a
    /// signature a trusted signer made (promotion); a draft may go without.
    pub(crate) async fn check_candidate(
        &self,
        who: &Principal,
        session: &Session,
        draft: &RevisionDraft,
        signed: bool,
        source: String,
    ) -> Result<Candidate, InvokeError> {
        let Subject::Plugin { name } = &session.subject else {
            return Err(WorkspaceError::ProposalInvalid {
                problems: vec![problem(
                    "/revision",
                    "this session authors an object, not a plugin revision",
                )],
            }
            .into());
        };
        let sub = self.submission(who, draft, source).await?;
        let ws = self.workspace()?;
        let mut opts = ws.intake.clone();
        opts.allow_unsigned |= !signed && sub.envelope.is_none();
        opts.load.payer = Payer::Tenant(who.tenant.clone());
        let live = self.live()?;
        let now = self.host.now_ms();
        let checked = intake::check(&**live.store(), self.host.runtime(), sub, &opts, now)
            .await
            .map_err(WorkspaceError::Intake)?;
        if checked.revision.plugin != name.as_str() {
            return Err(WorkspaceError::ProposalInvalid {
                problems: vec![problem(
                    "/revision/manifest",
                    &format!(
                        "the manifest is plugin {:?}; this session authors plugin {name}",
                        checked.revision.plugin
                    ),
                )],
            }
            .into());
        }
        let diff = self.capability_diff(&live, name.as_str(), &checked).await?;
        let r = &checked.revision;
        let digest = Digest::of(
            canonical_json(&json!({
                "component": r.component_digest.to_string(),
                "manifest": r.manifest_digest.to_string(),
                "signature": r.envelope.as_deref().map(|e| Digest::of(e.as_bytes()).to_string()),
            }))
            .as_bytes(),
        )
        .to_string();
        let validation = json!({
            "valid": true,
            "signed": checked.signed,
            "signer": r.signer,
            "plugin": r.plugin,
            "version": r.version,
            "component_sha256": r.component_digest.to_string(),
            "manifest_sha256": r.manifest_digest.to_string(),
            "tools": checked.loaded.plugin.tools().iter().map(|t| t.name.to_string()).collect::<Vec<_>>(),
        });
        Ok(Candidate {
            checked,
            digest,
            validation,
            diff,
        })
    }

    /// The uploads `draft` names, as intake takes them: each must be the
    /// caller's own, of the right kind, and not expired.
    async fn submission(
        &self,
        who: &Principal,
        draft: &RevisionDraft,
        source: String,
    ) -> Result<Submission, InvokeError> {
        let component = self
            .own_upload(who, &draft.component, UploadKind::Component)
            .await?;
        let manifest = self
            .own_upload(who, &draft.manifest, UploadKind::Manifest)
            .await?;
        let manifest =
            String::from_utf8(manifest).map_err(|_| WorkspaceError::ProposalInvalid {
                problems: vec![problem(
                    "/revision/manifest",
                    "the manifest is not UTF-8 text",
                )],
            })?;
        let envelope = match &draft.signature {
            Some(h) => Some(self.own_upload(who, h, UploadKind::Signature).await?),
            None => None,
        };
        Ok(Submission {
            manifest,
            component,
            envelope,
            source,
            submitted_by: who.subject.clone(),
        })
    }

    /// Upload `handle`'s bytes, if it is `who`'s own upload of `kind`.
    pub(crate) async fn own_upload(
        &self,
        who: &Principal,
        handle: &UploadHandle,
        kind: UploadKind,
    ) -> Result<Vec<u8>, InvokeError> {
        let now = self.host.now_ms();
        let found = self
            .workspace()?
            .store
            .upload(&who.tenant, handle, now)
            .await
            .map_err(WorkspaceError::Store)?;
        match found {
            Some((u, bytes)) if u.owner == who.subject && u.kind == kind => Ok(bytes),
            _ => Err(WorkspaceError::NotFound {
                what: "upload",
                id: format!("{handle} (a {kind} upload of yours)"),
            }
            .into()),
        }
    }

    /// The capability diff of `checked` against plugin `name`'s active
    /// revision (everything added, for a first revision).
    async fn capability_diff(
        &self,
        live: &LiveCatalog,
        name: &str,
        checked: &Checked,
    ) -> Result<Value, InvokeError> {
        let proposed: toolhost_review::Capabilities =
            serde_json::from_str(&checked.revision.capabilities).map_err(|e| {
                WorkspaceError::Store(toolhost_workspace::WorkspaceStoreError::Failed(format!(
                    "capabilities: {e}"
                )))
            })?;
        let active = toolhost_catalog::decide::active(&**live.store(), name)
            .await
            .map_err(|e| InvokeError::Catalog(e.into()))?;
        let current = match active {
            Some(a) => {
                Some(toolhost_catalog::decide::capabilities_of(&a).map_err(InvokeError::Catalog)?)
            }
            None => None,
        };
        let diff = toolhost_review::diff(current.as_ref(), &proposed);
        let mut shown = serde_json::to_value(&diff).unwrap_or_default();
        shown["widens"] = json!(diff.widens());
        Ok(shown)
    }

    /// The active revision of `session`'s plugin now, as its version.
    pub(crate) async fn plugin_version_now(
        &self,
        session: &Session,
    ) -> Result<String, InvokeError> {
        let live = self.live()?;
        let name = session.subject.plugin().as_str();
        let active = toolhost_catalog::decide::active(&**live.store(), name)
            .await
            .map_err(|e| InvokeError::Catalog(e.into()))?;
        Ok(active.map_or_else(|| NO_ACTIVE_REVISION.to_owned(), |r| r.id))
    }

    /// Refuses to promote the candidate revision `id` if the store holds it
    /// already in a state review is over with (rejected, withdrawn, active).
    pub(crate) async fn promotable(&self, id: &str) -> Result<(), InvokeError> {
        let live = self.live()?;
        let existing = live
            .store()
            .revision(id)
            .await
            .map_err(|e| InvokeError::Catalog(e.into()))?;
        match existing.map(|r| r.state) {
            None | Some(RevisionState::PendingReview) => Ok(()),
            Some(state) => Err(WorkspaceError::ProposalInvalid {
                problems: vec![problem(
                    "/revision",
                    &format!(
                        "this exact revision ({id}) was reviewed already and is {state}: propose a new one"
                    ),
                )],
            }.into()),
        }
    }
}

/// Where a promoted revision came from, for its reviewer.
pub(crate) fn source(session: &SessionId, proposal: &str) -> String {
    format!("workspace:{session}/{proposal}")
}

/// One problem with a proposal.
pub(crate) fn problem(path: &str, message: &str) -> toolhost_runtime::Problem {
    toolhost_runtime::Problem {
        path: path.into(),
        message: message.into(),
    }
}
