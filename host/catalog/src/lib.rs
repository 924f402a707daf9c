//! The catalog: plugin manifests, their validation, and the index of tools
//! the host serves.
//!
//! A plugin is a component plus a TOML manifest pinned by the component's
//! SHA-256. The manifest is what an admin reviewed: the tools and their
//! permissions, and any budget overrides. At load the catalog checks the
//! digest, asks the `runtime` to compile the component and describe its
//! tools, and refuses the plugin if what it describes differs from what was
//! reviewed. One bad plugin never stops the others from loading.
//!
//! It does not decide who sees a tool (`policy`) or run anything itself
//! (`runtime`), nor define what a revision's record holds: `review` does
//! ([`Revision`], [`NewRevision`], [`RevisionState`], re-exported here),
//! and the catalog stores and serves such records ([`CatalogStore`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use toolhost_catalog::{Catalog, LoadOptions};
//! use toolhost_runtime::{Runtime, RuntimeConfig};
//! let runtime = Runtime::new(RuntimeConfig::default())?;
//! let loaded = Catalog::load_dir("plugins.d".as_ref(), &runtime, &LoadOptions::default()).await;
//! for e in &loaded.errors { eprintln!("{e}"); }
//! for tool in loaded.catalog.tools() { println!("{}", tool.spec().name); }
//! # Ok(()) }
//! ```

mod capabilities;
pub mod claims;
pub mod decide;
mod definition;
mod error;
mod index;
pub mod intake;
mod live;
mod load;
mod manifest;
mod memory;
mod pin;
mod store;
mod views;

pub use capabilities::capabilities;
pub use claims::{Claim, ClaimError, Claims, NameTaken, RESERVED_SCHEMES};
pub use definition::definition_digest;
pub use error::CatalogError;
pub use index::{Catalog, Deprecation, INITIAL_VERSION, LoadedPlugin, ToolRef};
pub use live::{Built, LiveCatalog};
pub use load::{LoadOptions, Loaded, run_budget};
pub use manifest::{BackendSection, Manifest, PluginSection, RiskSection, ToolSection};
pub use memory::MemoryStore;
pub use pin::pin;
pub use store::{
    Audience, CatalogFuture, CatalogState, CatalogStore, CatalogStoreError, NewRevision, Pin,
    Revision, RevisionState, SignerIdentity, SignerRecord, Submitted, revision_id,
};
pub use views::Catalogs;
