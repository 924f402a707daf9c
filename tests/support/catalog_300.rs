//! catalog-300: a business suite of 300 tools in two plugins (one plugin
//! serves at most 256), generated for progressive discovery
//! (`plugins/catalog-300/generate.py`), and the scopes that permit every
//! one of its tools. Shared by the discovery end-to-end test and the
//! served bench, which measure the same catalog for the same caller.

use toolhost_fixtures::Fixture;

/// The two plugins of catalog-300.
pub const CATALOG_300: [Fixture; 2] = [
    toolhost_fixtures::CATALOG_300_A,
    toolhost_fixtures::CATALOG_300_B,
];

/// Every domain of catalog-300, read and write.
pub const SCOPES: &str = "mcp crm:* billing:* helpdesk:* hr:* inventory:* shipping:* calendar:* \
                          docs:* devops:* analytics:* marketing:* security:* finance:* legal:* projects:*";
