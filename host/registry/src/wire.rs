//! The registry on the wire: oci-client, with every manifest and blob read
//! bounded and checked against the digest it was asked for. Push and pull
//! say what to move; this file says how.

use std::time::Duration;

use futures_util::StreamExt;
use http::HeaderValue;
use oci_client::Client;
use oci_client::client::{ClientConfig, ClientProtocol, LayerDescriptor};
use oci_client::errors::DigestError;
use oci_client::manifest::OciImageIndex;
use oci_client::secrets::RegistryAuth;
use toolhost_types::Digest;

use crate::check::{self, Layer};
use crate::error::from_oci;
use crate::layout::{self, Blob, MAX_OCI_MANIFEST_BYTES};
use crate::reference::parse_digest;
use crate::{Reference, RegistryError, Target};

/// Time to open a connection: a registry that does not answer in 10 s is
/// down, and the command should say so rather than hang.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait for the next bytes of an answer: generous for a slow
/// registry on a large component, still bounded.
pub const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// The user `$TOOLHOST_REGISTRY_USER` and password
/// `$TOOLHOST_REGISTRY_PASSWORD` log in with HTTP Basic; both unset, the
/// registry is read anonymously.
pub const USER_ENV: &str = "TOOLHOST_REGISTRY_USER";
/// See [`USER_ENV`].
pub const PASSWORD_ENV: &str = "TOOLHOST_REGISTRY_PASSWORD";

/// One registry, spoken to over HTTPS unless it is on this machine.
pub(crate) struct Wire {
    client: Client,
    auth: RegistryAuth,
    registry: String,
}

impl Wire {
    /// A client for `at`'s registry.
    pub fn connect(at: &Reference) -> Wire {
        let protocol = if at.is_loopback() {
            ClientProtocol::HttpsExcept(vec![at.registry().to_owned()])
        } else {
            ClientProtocol::Https
        };
        let client = Client::new(ClientConfig {
            protocol,
            connect_timeout: Some(CONNECT_TIMEOUT),
            read_timeout: Some(READ_TIMEOUT),
            // One-shot commands: no platform to resolve; an index is refused.
            platform_resolver: None,
            ..ClientConfig::default()
        });
        let auth = match (std::env::var(USER_ENV), std::env::var(PASSWORD_ENV)) {
            (Ok(user), Ok(password)) => RegistryAuth::Basic(user, password),
            _ => RegistryAuth::Anonymous,
        };
        Wire {
            client,
            auth,
            registry: at.registry().to_owned(),
        }
    }

    /// The manifest digest `at` names: a tag is looked up (once, here), a
    /// digest is itself.
    pub async fn resolve(&self, at: &Reference) -> Result<Digest, RegistryError> {
        if let Target::Digest(d) = at.target() {
            return Ok(*d);
        }
        let text = self
            .client
            .fetch_manifest_digest(&at.to_oci(), &self.auth)
            .await
            .map_err(|e| self.oci(e, at, "manifest"))?;
        parse_digest(&text).ok_or_else(|| RegistryError::Unreachable {
            registry: self.registry.clone(),
            why: format!("{at} resolved to {text:?}, not a sha256 digest"),
        })
    }

    /// The manifest `digest` of `at`'s repository, at most
    /// [`MAX_OCI_MANIFEST_BYTES`], its bytes checked against the digest.
    /// oci-client reads a manifest whole, so the bound holds on what is
    /// accepted; a caller that has a descriptor checks its size first.
    pub async fn manifest(
        &self,
        at: &Reference,
        digest: Digest,
        what: &str,
    ) -> Result<Vec<u8>, RegistryError> {
        let pinned = at.pinned(digest);
        let (body, _) = self
            .client
            .pull_manifest_raw(&pinned.to_oci(), &self.auth, &[layout::MANIFEST_MEDIA_TYPE])
            .await
            .map_err(|e| self.oci(e, &pinned, what))?;
        check::within(&pinned, what, body.len() as u64, MAX_OCI_MANIFEST_BYTES)?;
        check::digest_matches(&pinned, what, &body, &digest)?;
        Ok(body.to_vec())
    }

    /// The blob `layer` of `pinned`'s repository: its declared size within
    /// `limit` before the download, the bytes within it while they arrive,
    /// and their SHA-256 equal to the layer's digest after.
    pub async fn blob(
        &self,
        pinned: &Reference,
        layer: &Layer,
        what: &str,
        limit: usize,
    ) -> Result<Vec<u8>, RegistryError> {
        check::within(pinned, what, layer.size, limit)?;
        let digest = layout::oci_digest(&layer.digest);
        // Never the descriptor's `urls`: a blob comes from this registry.
        let descriptor = LayerDescriptor {
            digest: &digest,
            urls: &None,
        };
        let mut stream = self
            .client
            .pull_blob_stream(&pinned.to_oci(), &descriptor)
            .await
            .map_err(|e| self.oci(e, pinned, what))?;
        if let Some(length) = stream.content_length {
            check::within(pinned, what, length, limit)?;
        }
        let mut bytes = Vec::with_capacity(usize::try_from(layer.size).unwrap_or(0));
        while let Some(chunk) = stream.next().await {
            let chunk = match chunk {
                Ok(chunk) => chunk,
                // oci-client's own check at the end of the stream: ours,
                // below, names the layer and both digests.
                Err(e) if is_digest_error(&e) => break,
                Err(e) => return Err(self.unreachable(pinned, what, &e)),
            };
            check::within(pinned, what, (bytes.len() + chunk.len()) as u64, limit)?;
            bytes.extend_from_slice(&chunk);
        }
        check::digest_matches(pinned, what, &bytes, &layer.digest)?;
        Ok(bytes)
    }

    /// The referrers of `pinned` of the envelope's type: the referrers API,
    /// or on a 404 the `sha256-<hex>` tag (oci-client's fallback).
    pub async fn referrers(&self, pinned: &Reference) -> Result<OciImageIndex, RegistryError> {
        self.client
            .pull_referrers(&pinned.to_oci(), Some(layout::ENVELOPE_MEDIA_TYPE))
            .await
            .map_err(|e| self.oci(e, pinned, "referrers"))
    }

    /// Uploads `blob` into `at`'s repository.
    pub async fn put_blob(&self, at: &Reference, blob: &Blob) -> Result<(), RegistryError> {
        let oci = at.to_oci();
        self.client
            .store_auth_if_needed(oci.resolve_registry(), &self.auth)
            .await;
        self.client
            .push_blob(&oci, blob.bytes.clone(), &blob.descriptor.digest)
            .await
            .map(drop)
            .map_err(|e| self.oci(e, at, &format!("blob {}", blob.descriptor.digest)))
    }

    /// Writes a manifest or index (`media_type`) at `at` (a tag or its digest).
    pub async fn put_manifest(
        &self,
        at: &Reference,
        bytes: &[u8],
        media_type: &'static str,
    ) -> Result<(), RegistryError> {
        let oci = at.to_oci();
        self.client
            .store_auth_if_needed(oci.resolve_registry(), &self.auth)
            .await;
        self.client
            .push_manifest_raw(&oci, bytes.to_vec(), HeaderValue::from_static(media_type))
            .await
            .map(drop)
            .map_err(|e| self.oci(e, at, "manifest"))
    }

    /// The index at tag `at`, if there is one (bounded like a manifest).
    pub async fn index(&self, at: &Reference) -> Result<Option<Vec<u8>>, RegistryError> {
        match self
            .client
            .pull_manifest_raw(&at.to_oci(), &self.auth, &[layout::INDEX_MEDIA_TYPE])
            .await
            .map_err(|e| self.oci(e, at, "referrers index"))
        {
            Ok((body, _)) => {
                check::within(
                    at,
                    "referrers index",
                    body.len() as u64,
                    MAX_OCI_MANIFEST_BYTES,
                )?;
                Ok(Some(body.to_vec()))
            }
            Err(RegistryError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn oci(
        &self,
        e: oci_client::errors::OciDistributionError,
        at: &Reference,
        what: &str,
    ) -> RegistryError {
        from_oci(e, &self.registry, &at.to_string(), what)
    }

    fn unreachable(&self, at: &Reference, what: &str, e: &std::io::Error) -> RegistryError {
        RegistryError::Unreachable {
            registry: self.registry.clone(),
            why: format!("{what} of {at}: {e}"),
        }
    }
}

/// Whether a stream error is oci-client's digest check.
fn is_digest_error(e: &std::io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.downcast_ref::<DigestError>().is_some())
}
