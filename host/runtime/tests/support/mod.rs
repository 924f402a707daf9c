//! What the runtime's integration tests share: a runtime, a loaded
//! plugin, and the testbench backend served in-process with a grant
//! reaching it.

use std::collections::BTreeSet;
use std::sync::Arc;

use toolhost_backend::{BackendConfig, Backends, Secret};
use toolhost_runtime::{BackendGrant, Plugin, Runtime, RuntimeConfig};

const TOKEN: &str = "tb-runtime-token";

/// A runtime with the default configuration.
pub fn runtime() -> Runtime {
    Runtime::new(RuntimeConfig::default()).expect("runtime builds")
}

/// `bytes` loaded as plugin `name`.
pub async fn load_bytes(rt: &Runtime, name: &str, bytes: &[u8]) -> Plugin {
    rt.load(name.parse().expect("a plugin name"), bytes)
        .await
        .unwrap_or_else(|e| panic!("{name} loads: {e}"))
        .0
}

/// The testbench backend on 127.0.0.1:0 and a grant reaching it.
pub async fn backend() -> (testbench::Running, BackendGrant) {
    let addr = "127.0.0.1:0".parse().expect("an address");
    let running = testbench::start(addr, testbench::Config::new(TOKEN))
        .await
        .expect("the backend starts");
    let url = url::Url::parse(&running.url()).expect("a URL");
    let mut config = BackendConfig::new("testbench", url);
    config.credential = Some(Secret::new(TOKEN.to_owned()));
    let grant = BackendGrant {
        backends: Backends::new(vec![config]).expect("valid"),
        declared: Arc::new(BTreeSet::from(["testbench".to_owned()])),
    };
    (running, grant)
}
