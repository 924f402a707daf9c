//! `catalog-300-b`: half of catalog-300, a business suite of 300 tools
//! generated from `plugins/catalog-300/tools.json` (the rows that name this
//! plugin), for progressive discovery's tests (`tests/e2e_discovery.rs`,
//! `host/discovery/tests/`). A host serves at most 256 tools of one
//! plugin, so the suite is two.

#[path = "../../catalog-300/suite.rs"]
mod suite;

toolhost_sdk::export_plugin!(suite::tools);
