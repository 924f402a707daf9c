//! Loading plugin directories: good plugins load, each bad manifest is
//! refused with an error naming the value, and the rest of the catalog loads.

use std::path::{Path, PathBuf};

use toolhost_catalog::{Catalog, CatalogError, LoadOptions, pin};
use toolhost_fixtures::{ACME_GREETER, Fixture, HELLO, T_LIMITS_SPIN, T_TRAP_PANIC};
use toolhost_runtime::{Runtime, RuntimeConfig};

fn runtime() -> Runtime {
    Runtime::new(RuntimeConfig::default()).expect("runtime builds")
}

fn pin_into(dir: &Path, f: &Fixture) -> PathBuf {
    pin(Path::new(f.manifest), Path::new(f.component), dir).expect("pins")
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).expect("read");
    assert!(text.contains(from), "{from:?} in {text}");
    std::fs::write(path, text.replacen(from, to, 1)).expect("write");
}

/// Pins `f` under another manifest file name in `dir`.
fn pin_as(dir: &Path, f: &Fixture, file: &str) -> PathBuf {
    let tmp = tempfile::tempdir().expect("temp");
    let pinned = pin_into(tmp.path(), f);
    let target = dir.join(file);
    std::fs::copy(&pinned, &target).expect("copy manifest");
    let wasm = std::fs::read_dir(tmp.path())
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "wasm"))
        .expect("component copied");
    std::fs::copy(&wasm, dir.join(wasm.file_name().expect("name"))).expect("copy component");
    target
}

async fn load(dir: &Path) -> toolhost_catalog::Loaded {
    Catalog::load_dir(dir, &runtime(), &LoadOptions::default()).await
}

/// What each load error says, for a failing assertion's message.
fn messages(errors: &[CatalogError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

fn names(c: &Catalog) -> Vec<String> {
    c.tools().map(|t| t.spec().name.to_string()).collect()
}

#[tokio::test]
async fn pinned_plugins_load_with_their_tools_in_name_order() {
    let dir = tempfile::tempdir().expect("temp");
    pin_into(dir.path(), &HELLO);
    pin_into(dir.path(), &T_TRAP_PANIC);
    let loaded = load(dir.path()).await;
    assert!(loaded.errors.is_empty(), "{:?}", messages(&loaded.errors));
    let tools = names(&loaded.catalog);
    let mut sorted = tools.clone();
    sorted.sort();
    assert_eq!(tools, sorted);
    assert!(
        tools.contains(&"greet".to_owned()) && tools.contains(&"panic".to_owned()),
        "{tools:?}"
    );
}

#[tokio::test]
async fn the_manifest_budget_overrides_the_defaults() {
    let dir = tempfile::tempdir().expect("temp");
    pin_into(dir.path(), &T_LIMITS_SPIN);
    let loaded = load(dir.path()).await;
    let spin = loaded.catalog.lookup("spin").expect("spin is listed");
    assert_eq!(
        spin.plugin().budget.timeout,
        std::time::Duration::from_millis(200)
    );
}

async fn refused_alongside_hello(
    break_it: impl FnOnce(&Path, &Path),
) -> (CatalogError, Vec<String>) {
    let dir = tempfile::tempdir().expect("temp");
    pin_into(dir.path(), &HELLO);
    let bad = pin_into(dir.path(), &T_TRAP_PANIC);
    break_it(dir.path(), &bad);
    let mut loaded = load(dir.path()).await;
    assert_eq!(
        loaded.errors.len(),
        1,
        "exactly the broken plugin is refused"
    );
    (loaded.errors.remove(0), names(&loaded.catalog))
}

#[tokio::test]
async fn an_unknown_manifest_key_is_refused_by_name_and_the_rest_loads() {
    let (err, tools) =
        refused_alongside_hello(|_, m| edit(m, "[tools.panic]", "[tools.panic]\nshell = true"))
            .await;
    assert!(err.to_string().contains("shell"), "{err}");
    assert!(tools.contains(&"greet".to_owned()));
}

#[tokio::test]
async fn a_wrong_digest_is_refused_naming_both_digests() {
    let (err, tools) = refused_alongside_hello(|_, m| {
        let text = std::fs::read_to_string(m).expect("read");
        let line = text
            .lines()
            .find(|l| l.starts_with("sha256"))
            .expect("pinned")
            .to_owned();
        edit(m, &line, &format!("sha256 = \"{}\"", "ab".repeat(32)));
    })
    .await;
    assert!(matches!(err, CatalogError::DigestMismatch { .. }), "{err}");
    assert!(err.to_string().contains(&"ab".repeat(32)), "{err}");
    assert!(tools.contains(&"greet".to_owned()));
}

#[tokio::test]
async fn a_tampered_component_is_refused() {
    let (err, _) = refused_alongside_hello(|dir, _| {
        let wasm = dir.join("t_trap_panic.wasm");
        let mut bytes = std::fs::read(&wasm).expect("read");
        bytes.push(0);
        std::fs::write(&wasm, bytes).expect("write");
    })
    .await;
    assert!(matches!(err, CatalogError::DigestMismatch { .. }), "{err}");
}

#[tokio::test]
async fn a_duplicate_tool_name_is_refused_naming_the_tool_and_the_first_provider() {
    // Every hostile fixture exports `ping`: the second to load collides.
    let dir = tempfile::tempdir().expect("temp");
    pin_as(dir.path(), &T_LIMITS_SPIN, "a-spin.toml");
    pin_as(dir.path(), &T_TRAP_PANIC, "b-panic.toml");
    let loaded = load(dir.path()).await;
    assert_eq!(loaded.errors.len(), 1);
    let err = loaded.errors[0].to_string();
    assert!(
        matches!(loaded.errors[0], CatalogError::NameTaken { .. }),
        "{err}"
    );
    assert!(
        err.contains("b-panic.toml") && err.contains("\"ping\"") && err.contains("t-limits-spin"),
        "{err}"
    );
    let tools = names(&loaded.catalog);
    assert!(
        tools.contains(&"spin".to_owned()) && !tools.contains(&"panic".to_owned()),
        "{tools:?}"
    );
}

#[tokio::test]
async fn a_tool_the_manifest_does_not_declare_refuses_the_plugin() {
    let (err, _) = refused_alongside_hello(|_, m| {
        let text = std::fs::read_to_string(m).expect("read");
        let start = text.find("[tools.ping]").expect("ping declared");
        let end = text[start + 1..]
            .find("\n[")
            .map_or(text.len(), |i| start + 1 + i);
        std::fs::write(m, format!("{}{}", &text[..start], &text[end..])).expect("write");
    })
    .await;
    let text = err.to_string();
    assert!(
        text.contains("\"ping\"") && text.contains("does not declare"),
        "{text}"
    );
}

#[tokio::test]
async fn a_permission_that_differs_from_the_review_refuses_the_plugin() {
    let (err, _) = refused_alongside_hello(|_, m| edit(m, "fixture:run", "fixture:admin")).await;
    let text = err.to_string();
    assert!(
        text.contains("fixture:admin") && text.contains("fixture:run"),
        "{text}"
    );
}

#[tokio::test]
async fn a_limit_above_the_ceiling_is_refused_by_value() {
    let (err, _) = refused_alongside_hello(|_, m| {
        let text = std::fs::read_to_string(m).expect("read");
        std::fs::write(
            m,
            text.replacen("[tools.", "[limits]\nmemory = \"4 GiB\"\n\n[tools.", 1),
        )
        .expect("write");
    })
    .await;
    let text = err.to_string();
    assert!(
        text.contains("memory") && text.contains("4.0 GiB"),
        "{text}"
    );
}

#[tokio::test]
async fn a_component_describes_itself_within_its_manifests_limits() {
    // One core instance is fewer than any component needs to instantiate:
    // under the manifest's own budget `describe` cannot run, where under
    // the defaults it would (so a component that needs more than the
    // defaults, a Python one, loads once its manifest asks for it).
    let (err, tools) = refused_alongside_hello(|_, m| {
        let text = std::fs::read_to_string(m).expect("read");
        std::fs::write(
            m,
            text.replacen("[tools.", "[limits]\ninstances = 1\n\n[tools.", 1),
        )
        .expect("write");
    })
    .await;
    let text = err.to_string();
    assert!(
        text.contains("describe") && text.contains("resource limit"),
        "{text}"
    );
    assert!(tools.contains(&"greet".to_owned()), "the others still load");
}

#[tokio::test]
async fn a_run_budget_above_the_run_ceiling_is_refused_by_value() {
    let (err, tools) = refused_alongside_hello(|_, m| {
        edit(
            m,
            "[tools.panic]",
            "[tools.panic]\nrun = { timeout = \"2h\" }",
        )
    })
    .await;
    let text = err.to_string();
    assert!(
        text.contains("tools.panic.run") && text.contains("timeout = 7200s"),
        "{text}"
    );
    assert!(tools.contains(&"greet".to_owned()));
}

#[tokio::test]
async fn a_run_tools_budget_is_among_the_capabilities_a_review_compares() {
    let dir = tempfile::tempdir().expect("temp");
    let manifest = pin_into(dir.path(), &T_TRAP_PANIC);
    edit(
        &manifest,
        "[tools.panic]",
        "[tools.panic]\nrun = { timeout = \"2m\", artifacts = 4 }",
    );
    let loaded = load(dir.path()).await;
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let plugin = loaded.catalog.plugins().next().expect("the plugin");
    let caps = toolhost_catalog::capabilities(plugin, None);
    assert_eq!(caps.limits.get("run.panic.timeout_ms"), Some(&120_000));
    assert_eq!(caps.limits.get("run.panic.artifacts"), Some(&4));
    assert!(
        !caps.limits.contains_key("run.ping.timeout_ms"),
        "ping is no run tool"
    );
}

#[tokio::test]
async fn an_unpinned_manifest_is_refused_with_the_way_to_pin_it() {
    let dir = tempfile::tempdir().expect("temp");
    std::fs::copy(HELLO.manifest, dir.path().join("hello.toml")).expect("copy template");
    std::fs::copy(HELLO.component, dir.path().join("hello.wasm")).expect("copy component");
    let loaded = load(dir.path()).await;
    assert!(matches!(loaded.errors[..], [CatalogError::Unpinned { .. }]));
    assert!(loaded.errors[0].to_string().contains("toolhost plugin pin"));
}

#[tokio::test]
async fn a_resource_in_the_hosts_own_scheme_refuses_the_plugin_naming_it() {
    let dir = tempfile::tempdir().expect("temp");
    pin_into(dir.path(), &HELLO);
    pin_into(dir.path(), &ACME_GREETER);
    let loaded = load(dir.path()).await;
    assert_eq!(loaded.errors.len(), 1, "{:?}", messages(&loaded.errors));
    let err = loaded.errors[0].to_string();
    assert!(
        matches!(&loaded.errors[0], CatalogError::ReservedScheme { scheme, .. } if scheme == "toolhost"),
        "{err}"
    );
    assert!(
        err.contains("resource artifacts") && err.contains("toolhost://artifacts/{artifact}"),
        "{err}"
    );
    assert_eq!(names(&loaded.catalog), ["add", "greet", "word_stats"]);
}
