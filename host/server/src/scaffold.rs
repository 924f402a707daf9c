//! `toolhost new NAME --lang rust|python|ts`: a plugin project that builds with one
//! command and passes its own test out of the box: a manifest, one tool
//! with its test, a README, and `build.sh` (in every language: the tests,
//! then the component, written beside the manifest). The project depends on this repository's SDK
//! (`plugins/sdk`, or `--sdk`) and starts from the plugin workspace's
//! lock, so it resolves the versions the reference plugins build with.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use toolhost_types::PluginName;

/// The languages a project can be scaffolded in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Lang {
    /// Rust with `toolhost-sdk`.
    Rust,
    /// Python with `toolhost_sdk`, built by componentize-py.
    Python,
    /// TypeScript with `@toolhost/sdk`, built by jco on QuickJS.
    Ts,
}

/// What `toolhost new` writes.
#[derive(clap::Args)]
pub(crate) struct NewArgs {
    /// The plugin's name (lower case, digits and `-`): the project's
    /// directory, its crate and its manifest's `plugin.name`.
    name: String,
    /// The language.
    #[arg(long, value_enum, default_value = "rust")]
    lang: Lang,
    /// Where to create the project directory (default: here).
    #[arg(long, default_value = ".")]
    dir: PathBuf,
    /// The SDK crate the project depends on (default: this build's
    /// repository's `plugins/sdk`).
    #[arg(long)]
    sdk: Option<PathBuf>,
    /// The plugin's one-line description.
    #[arg(long, default_value = "A tool plugin.")]
    description: String,
}

const CARGO_TOML: &str = include_str!("scaffold/cargo.toml.tpl");
const LIB_RS: &str = include_str!("scaffold/lib.rs.tpl");
const MANIFEST: &str = include_str!("scaffold/toolhost.toml.tpl");
const README: &str = include_str!("scaffold/readme.md.tpl");
const APP_PY: &str = include_str!("scaffold/app.py.tpl");
const TEST_APP_PY: &str = include_str!("scaffold/test_app.py.tpl");
const BUILD_RUST_SH: &str = include_str!("scaffold/build-rust.sh.tpl");
const BUILD_SH: &str = include_str!("scaffold/build.sh.tpl");
const README_PYTHON: &str = include_str!("scaffold/readme-python.md.tpl");
const APP_TS: &str = include_str!("scaffold/app.ts.tpl");
const APP_TEST_TS: &str = include_str!("scaffold/app.test.ts.tpl");
const BUILD_TS_SH: &str = include_str!("scaffold/build-ts.sh.tpl");
const README_TS: &str = include_str!("scaffold/readme-ts.md.tpl");
/// This build's repository (its Python SDK, WIT and pinned componentize-py).
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
/// The plugin workspace's lock: the versions the reference plugins build.
const CARGO_LOCK: &str = include_str!("../../../plugins/Cargo.lock");
/// This build's repository's SDK.
const SDK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../plugins/sdk");

/// `toolhost new`: writes the project and prints its path and how to build
/// it. Refuses a name that is not a plugin name, and a directory that
/// exists.
pub(crate) fn new(args: NewArgs) -> anyhow::Result<ExitCode> {
    let name: PluginName = args
        .name
        .parse()
        .with_context(|| format!("{:?} is not a plugin name", args.name))?;
    if !name.as_str().starts_with(|c: char| c.is_ascii_lowercase()) {
        anyhow::bail!("{name}: a plugin name for a crate starts with a letter");
    }
    let sdk = args.sdk.unwrap_or_else(|| PathBuf::from(SDK));
    let sdk = sdk
        .canonicalize()
        .with_context(|| format!("the SDK at {}", sdk.display()))?;
    let repo = PathBuf::from(REPO)
        .canonicalize()
        .with_context(|| format!("the repository at {REPO}"))?;
    let root = args.dir.join(name.as_str());
    if root.exists() {
        anyhow::bail!("{} exists already", root.display());
    }
    let crate_name = name.as_str().replace('-', "_");
    let fill = |template: &str| {
        template
            .replace("{{name}}", name.as_str())
            .replace("{{crate}}", &crate_name)
            .replace("{{component}}", &format!("{crate_name}.wasm"))
            .replace("{{description}}", &args.description.replace('"', "'"))
            .replace("{{sdk}}", &sdk.to_string_lossy())
            .replace("{{repo}}", &repo.to_string_lossy())
    };
    // What each language adds to the manifest, `build.sh`, README and
    // `.gitignore` every project has.
    let (own, build, readme, ignored): (&[(&str, &str)], &str, &str, &str) = match args.lang {
        Lang::Rust => (
            &[
                ("Cargo.toml", CARGO_TOML),
                ("Cargo.lock", CARGO_LOCK),
                ("src/lib.rs", LIB_RS),
            ],
            BUILD_RUST_SH,
            README,
            "/target\n/*.wasm\n/catalog\n/.toolhost\n",
        ),
        Lang::Python => (
            &[("app.py", APP_PY), ("test_app.py", TEST_APP_PY)],
            BUILD_SH,
            README_PYTHON,
            "/*.wasm\n/catalog\n/cache\n/.toolhost\n__pycache__/\n",
        ),
        Lang::Ts => (
            &[("app.ts", APP_TS), ("app.test.ts", APP_TEST_TS)],
            BUILD_TS_SH,
            README_TS,
            "/*.wasm\n/catalog\n/cache\n/.toolhost\n/node_modules\n",
        ),
    };
    for (file, template) in own {
        write(&root.join(file), &fill(template))?;
    }
    write(&root.join("toolhost.toml"), &fill(MANIFEST))?;
    write(&root.join("build.sh"), &fill(build))?;
    executable(&root.join("build.sh"))?;
    write(&root.join("README.md"), &fill(readme))?;
    write(&root.join(".gitignore"), ignored)?;
    println!("{}", root.display());
    println!("next: cd {} && ./build.sh", root.display());
    Ok(ExitCode::SUCCESS)
}

/// Makes `path` executable by its owner (and readable by all).
fn executable(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("making {} executable", path.display()))
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}
