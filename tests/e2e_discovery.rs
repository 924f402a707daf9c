//! Progressive discovery end to end: the real `toolhost serve` with
//! catalog-300 (300 tools), driven by the Python MCP SDK
//! (tests/e2e/python_discovery.py) with a token allowed all of them. At
//! the default threshold `tools/list` is the small set, under a stated
//! size, and `find_tools` leads the client to a tool it did not list,
//! which it calls at once; above the catalog's size the list is whole.

mod support;

use std::time::Duration;

use support::catalog_300::{CATALOG_300, SCOPES};
use support::{Server, Tools};

#[test]
fn python_sdk_finds_and_calls_a_tool_it_did_not_list_in_a_catalog_of_300() {
    let tools = Tools::require();
    let server = Server::start(&CATALOG_300);
    let token = server.service_token(SCOPES);
    let cmd = tools.python("python_discovery.py", &[&server.url, "discovery"]);
    server.run_client_as("python discovery", cmd, Duration::from_secs(120), &token);
    // The search and the call each wrote their row, as every call does.
    let out = server.admin(&["audit", "search", "--tool", "billing_create_refund"]);
    let rows = String::from_utf8_lossy(&out.stdout);
    assert!(rows.contains("billing_create_refund"), "{rows}");
}

#[test]
fn above_the_catalogs_size_the_list_is_whole_and_names_no_discovery_tool() {
    let tools = Tools::require();
    let server = Server::start_with(&CATALOG_300, &["--discovery-threshold", "1000"]);
    let token = server.service_token(SCOPES);
    let cmd = tools.python("python_discovery.py", &[&server.url, "full"]);
    server.run_client_as("python full list", cmd, Duration::from_secs(120), &token);
}
