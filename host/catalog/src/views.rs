//! [`Catalogs`]: what a host serves, per tenant. Most tenants share one
//! catalog (every revision served to every tenant); a tenant that an
//! audience names or a pin holds gets a catalog of its own, built from the
//! same compiled plugins, so a tenant never sees, calls or reads a plugin
//! served only to another.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::Catalog;

/// The catalogs served: one for every tenant without one of its own, and
/// one per tenant an audience names or a pin holds. All are built from
/// one store generation and carry its catalog version.
#[derive(Clone)]
pub struct Catalogs {
    everyone: Arc<Catalog>,
    tenants: BTreeMap<String, Arc<Catalog>>,
    refused: Arc<[(String, String)]>,
}

impl Catalogs {
    /// `catalog`, for every tenant.
    pub fn single(catalog: Arc<Catalog>) -> Self {
        Self::new(catalog, BTreeMap::new())
    }

    /// `everyone`'s catalog for tenants without one in `tenants`.
    pub fn new(everyone: Arc<Catalog>, tenants: BTreeMap<String, Arc<Catalog>>) -> Self {
        Self {
            everyone,
            tenants,
            refused: Arc::new([]),
        }
    }

    /// The same catalogs, noting the served revisions their build left
    /// out, each with why (for the operators' pages).
    pub fn with_refused(self, refused: Vec<(String, String)>) -> Self {
        Self {
            refused: refused.into(),
            ..self
        }
    }

    /// `(revision, why)` of each served revision their build left out.
    pub fn refused(&self) -> &[(String, String)] {
        &self.refused
    }

    /// The catalog `tenant` is served.
    pub fn for_tenant(&self, tenant: &str) -> &Arc<Catalog> {
        self.tenants.get(tenant).unwrap_or(&self.everyone)
    }

    /// The catalog of every tenant without one of its own.
    pub fn everyone(&self) -> &Arc<Catalog> {
        &self.everyone
    }

    /// The tenants with a catalog of their own, and theirs.
    pub fn tenants(&self) -> impl Iterator<Item = (&str, &Arc<Catalog>)> {
        self.tenants.iter().map(|(t, c)| (t.as_str(), c))
    }

    /// Every catalog: everyone's first, then the tenants' by tenant.
    pub fn all(&self) -> impl Iterator<Item = &Arc<Catalog>> {
        std::iter::once(&self.everyone).chain(self.tenants.values())
    }

    /// The store generation they were built from.
    pub fn generation(&self) -> i64 {
        self.everyone.generation()
    }

    /// The catalog version they carry.
    pub fn version(&self) -> &str {
        self.everyone.version()
    }
}
