//! The precompiled-component cache: used on the second start, rebuilt when
//! the engine configuration changes.

use toolhost_fixtures::HELLO;
use toolhost_limits::{ByteSize, CallBudget};
use toolhost_runtime::{CacheOutcome, CallContext, LoadReport, Plugin, Runtime, RuntimeConfig};

fn config(dir: &std::path::Path) -> RuntimeConfig {
    RuntimeConfig {
        cache_dir: Some(dir.to_path_buf()),
        ..RuntimeConfig::default()
    }
}

/// Loads `bytes` into `runtime` as `hello`.
async fn load_hello(runtime: &Runtime, bytes: &[u8]) -> (Plugin, LoadReport) {
    let name = "hello".parse().expect("name");
    runtime.load(name, bytes).await.expect("loads")
}

fn cached_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .expect("cache dir")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
        })
        .count()
}

#[tokio::test]
async fn the_second_start_maps_the_precompiled_component_and_it_still_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bytes = HELLO.bytes();

    let first = Runtime::new(config(dir.path())).expect("runtime");
    let (_, cold) = load_hello(&first, &bytes).await;
    assert_eq!(cold.cache, CacheOutcome::Compiled);
    assert_eq!(cached_files(dir.path()), 1);
    drop(first);

    let second = Runtime::new(config(dir.path())).expect("runtime");
    let (plugin, warm) = load_hello(&second, &bytes).await;
    assert_eq!(warm.cache, CacheOutcome::Hit);
    // Measured, not asserted (timings are for `make bench`).
    eprintln!("compile {:?}, cached load {:?}", cold.compile, warm.compile);
    let ctx = CallContext::new("t", "p");
    let out = second
        .call(
            &plugin,
            &ctx,
            "greet",
            r#"{"name":"Ada"}"#,
            &CallBudget::DEFAULT,
        )
        .await
        .expect("the cached component runs")
        .into_output()
        .expect("an answer");
    assert!(
        out.structured.to_string().contains("Ada"),
        "{}",
        out.structured
    );
}

#[tokio::test]
async fn a_changed_engine_configuration_rebuilds_the_cache() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bytes = HELLO.bytes();
    let a = Runtime::new(config(dir.path())).expect("runtime");
    load_hello(&a, &bytes).await;

    // A different memory ceiling changes the engine's memory reservation,
    // and with it the code the compiler emits.
    let ceiling = CallBudget {
        memory: ByteSize::mib(128),
        ..CallBudget::CEILING
    };
    let b = Runtime::new(RuntimeConfig {
        ceiling,
        ..config(dir.path())
    })
    .expect("runtime");
    let (_, report) = load_hello(&b, &bytes).await;
    assert_eq!(report.cache, CacheOutcome::Compiled);
    assert_eq!(cached_files(dir.path()), 2);
}

#[tokio::test]
async fn a_corrupt_cache_file_is_recompiled_not_trusted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bytes = HELLO.bytes();
    let a = Runtime::new(config(dir.path())).expect("runtime");
    load_hello(&a, &bytes).await;
    for e in std::fs::read_dir(dir.path()).expect("dir") {
        std::fs::write(e.expect("entry").path(), b"not a precompiled component")
            .expect("overwrite");
    }
    let b = Runtime::new(config(dir.path())).expect("runtime");
    let (_, report) = load_hello(&b, &bytes).await;
    assert_eq!(report.cache, CacheOutcome::Compiled);
}
