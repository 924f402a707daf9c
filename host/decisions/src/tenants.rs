//! The host's tenants, as a decision naming some reads them: an approval
//! for chosen tenants and a pin name only tenants that exist, so a typing
//! accident is a clear refusal rather than a revision served to nobody.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use toolhost_catalog::CatalogStoreError;
use toolhost_invoke::{InvokeError, invalid};

/// What [`KnownTenants`] answers: every tenant's id, or why it could not
/// be read.
pub type TenantsFuture = Pin<Box<dyn Future<Output = Result<Vec<String>, String>> + Send>>;

/// Reads the host's tenants (the server passes its store's).
pub type KnownTenants = Arc<dyn Fn() -> TenantsFuture + Send + Sync>;

/// Refuses (`INVALID_ARGUMENTS`, naming it) the first of `named` that is
/// not a tenant of the host.
pub(crate) async fn all_known<'a>(
    known: &KnownTenants,
    named: impl IntoIterator<Item = &'a str>,
) -> Result<(), InvokeError> {
    let mut named = named.into_iter().peekable();
    if named.peek().is_none() {
        return Ok(());
    }
    let unread = |e: String| CatalogStoreError::Failed(format!("reading the tenants: {e}"));
    let tenants = known()
        .await
        .map_err(|e| InvokeError::Catalog(unread(e).into()))?;
    match named.find(|t| !tenants.iter().any(|k| k == t)) {
        Some(unknown) => Err(invalid(format!("no tenant named {unknown:?}"))),
        None => Ok(()),
    }
}

/// Tenants `ids`, for tests.
#[cfg(test)]
pub(crate) fn these(ids: &[&str]) -> KnownTenants {
    let ids: Vec<String> = ids.iter().map(|t| (*t).to_owned()).collect();
    Arc::new(move || {
        let ids = ids.clone();
        Box::pin(async move { Ok(ids) })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_tenant_the_host_does_not_have_is_refused_by_name() {
        let known = these(&["acme", "demo"]);
        assert!(all_known(&known, ["acme", "demo"]).await.is_ok());
        assert!(all_known(&known, []).await.is_ok());
        let err = all_known(&known, ["acme", "acmee"])
            .await
            .expect_err("a typo");
        assert_eq!(err.code(), "INVALID_ARGUMENTS");
        assert!(err.to_string().contains("\"acmee\""), "{err}");
    }
}
