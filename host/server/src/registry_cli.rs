//! `toolhost plugin push DIR oci://…` and `toolhost plugin submit oci://…`:
//! release directories to and from OCI registries. The moving and the
//! digest checks are `toolhost_registry`'s; what is pulled goes to the same
//! intake as a directory, which verifies the signature and decides.

use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use toolhost_catalog::intake::Submission;
use toolhost_registry::{Reference, RegistryError, Release};

use crate::catalog_sync::submissions;

/// Whether a submission's source is a registry reference, not a directory.
pub fn is_oci(source: &str) -> bool {
    source.starts_with(toolhost_registry::SCHEME)
}

/// `toolhost plugin push DIR oci://HOST:PORT/REPO:TAG`: the release in DIR
/// (one manifest, its component, its signature if any) as one OCI
/// artifact; prints the pinned reference to submit.
pub async fn push(dir: &Path, reference: &str) -> anyhow::Result<ExitCode> {
    let at = Reference::parse(reference).map_err(refused)?;
    // Read as a submission would be, so a push sends exactly what a
    // directory submission would hand intake (the submitter is unused).
    let mut found = submissions(dir, "push")?;
    let sub = match (found.pop(), found.len()) {
        (Some(sub), 0) => sub,
        (None, _) => bail!("{} holds no *.toml manifest", dir.display()),
        (Some(_), n) => bail!(
            "{} holds {} manifests; a push sends one release",
            dir.display(),
            n + 1
        ),
    };
    let signed = sub.envelope.is_some();
    let release = Release {
        manifest: sub.manifest,
        component: sub.component,
        envelope: sub.envelope,
    };
    let pushed = toolhost_registry::push(&at, &release)
        .await
        .map_err(refused)?;
    if !signed {
        eprintln!(
            "note: {} has no signature; intake will refuse it UNSIGNED",
            dir.display()
        );
    }
    println!("{}", pushed.pinned);
    Ok(ExitCode::SUCCESS)
}

/// The submission the release at `reference` makes: pulled by digest
/// (a tag is resolved once), every layer checked against its digest, with
/// the pinned reference as its source.
pub async fn fetch(reference: &str, submitted_by: &str) -> anyhow::Result<Vec<Submission>> {
    let at = Reference::parse(reference).map_err(refused)?;
    let pulled = toolhost_registry::pull(&at).await.map_err(refused)?;
    Ok(vec![Submission {
        manifest: pulled.release.manifest,
        component: pulled.release.component,
        envelope: pulled.release.envelope,
        source: pulled.pinned.to_string(),
        submitted_by: submitted_by.to_owned(),
    }])
}

/// A registry refusal, shown like intake's: `refused [CODE]: why`.
fn refused(e: RegistryError) -> anyhow::Error {
    anyhow::anyhow!("refused [{}]: {e}", e.code())
}
