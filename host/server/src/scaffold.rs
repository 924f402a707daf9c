//! `toolhost new NAME --lang rust|python|ts`: a plugin project that builds
//! with one command and passes its own test out of the box, in any
//! directory, from an installed binary: a manifest, one tool with its test,
//! a README, the WIT the component is built against (embedded in this
//! binary), and `build.sh` (in every language: the tests, then the
//! component, written beside the manifest). The project depends on the SDK
//! package by name and version ([`SDK_VERSION`]), from the public registry
//! or from a local copy (`--sdk-path`, by default the `sdk/` of the release
//! this binary belongs to); Python and TypeScript projects install their
//! pinned build tools into their own environment on the first build.

mod sdk_source;
mod wit;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use toolhost_types::PluginName;

use sdk_source::{SDK_VERSION, SdkSource};

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
    /// Where the SDK package comes from instead of the public registry: a
    /// release's `sdk/` directory (or the release itself), or the package
    /// itself (the `toolhost-sdk` crate's directory, a directory holding
    /// the `toolhost_sdk` wheel or the wheel, the `@toolhost/sdk` tarball).
    /// Default: the `sdk/` directory of the release this binary is in, when
    /// there is one; otherwise the registry.
    #[arg(long, value_name = "PATH")]
    sdk_path: Option<PathBuf>,
    /// Depend on the SDK from the public registry even where a release's
    /// `sdk/` directory is beside this binary.
    #[arg(long, conflicts_with = "sdk_path")]
    sdk_registry: bool,
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
/// The plugin workspace's lock: the versions the reference plugins build.
const CARGO_LOCK: &str = include_str!("../../../plugins/Cargo.lock");
/// componentize-py, pinned with its hashes, as the reference plugins build.
const PYTHON_REQUIREMENTS: &str = include_str!("../../../plugins/python/requirements.txt");
/// The bundler's configuration jco is given (the WIT imports stay imports).
const TS_BUNDLE_CONFIG: &str = include_str!("../../../plugins/ts/bundle.config.js");
/// The TypeScript build tools, pinned as the reference plugins build
/// (`plugins/ts/package.json`; a test keeps the two equal): jco, the
/// componentize-js it runs, and the preview2-shim it needs.
const JCO: &str = "1.35.0";
const COMPONENTIZE_JS: &str = "0.23.0";
const PREVIEW2_SHIM: &str = "0.26.0";

/// `toolhost new`: writes the project and prints its path, where its SDK
/// comes from and how to build it. Refuses a name that is not a plugin
/// name, a directory that exists, and an `--sdk-path` without the package.
pub(crate) fn new(args: NewArgs) -> anyhow::Result<ExitCode> {
    let name: PluginName = args
        .name
        .parse()
        .with_context(|| format!("{:?} is not a plugin name", args.name))?;
    if !name.as_str().starts_with(|c: char| c.is_ascii_lowercase()) {
        anyhow::bail!("{name}: a plugin name for a crate starts with a letter");
    }
    let sdk = match (&args.sdk_path, args.sdk_registry) {
        (Some(path), _) => sdk_source::local(args.lang, path)?,
        (None, true) => SdkSource::Registry,
        (None, false) => sdk_source::default_for(args.lang),
    };
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
            .replace("{{sdk_version}}", SDK_VERSION)
            .replace("{{rust_sdk}}", &sdk.cargo_dependency())
            .replace("{{pip_source}}", &sdk.pip_source())
    };
    // What each language adds to the manifest, WIT, `build.sh`, README and
    // `.gitignore` every project has.
    let package_json = ts_package_json(name.as_str(), &args.description, &sdk);
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
            &[
                ("app.py", APP_PY),
                ("test_app.py", TEST_APP_PY),
                ("requirements.txt", PYTHON_REQUIREMENTS),
            ],
            BUILD_SH,
            README_PYTHON,
            "/*.wasm\n/*.wasm.tmp\n/catalog\n/cache\n/.toolhost\n/.venv\n__pycache__/\n",
        ),
        Lang::Ts => (
            &[
                ("app.ts", APP_TS),
                ("app.test.ts", APP_TEST_TS),
                ("package.json", &package_json),
                ("bundle.config.js", TS_BUNDLE_CONFIG),
            ],
            BUILD_TS_SH,
            README_TS,
            "/*.wasm\n/*.wasm.tmp\n/catalog\n/cache\n/.toolhost\n/node_modules\n",
        ),
    };
    for (file, template) in own {
        write(&root.join(file), &fill(template))?;
    }
    for (file, text) in wit::FILES {
        write(&root.join("wit").join(file), text)?;
    }
    write(&root.join("toolhost.toml"), &fill(MANIFEST))?;
    write(&root.join("build.sh"), &fill(build))?;
    executable(&root.join("build.sh"))?;
    write(&root.join("README.md"), &fill(readme))?;
    write(&root.join(".gitignore"), ignored)?;
    println!("{}", root.display());
    println!("sdk: {SDK_VERSION} from {}", sdk.describe());
    println!("next: cd {} && ./build.sh", root.display());
    Ok(ExitCode::SUCCESS)
}

/// A TypeScript project's `package.json`: the SDK, and the build tools
/// pinned exactly (their own dependencies as the reference plugins'
/// overrides set them).
fn ts_package_json(name: &str, description: &str, sdk: &SdkSource) -> String {
    let json = serde_json::json!({
        "name": name,
        "version": "0.1.0",
        "private": true,
        "description": description,
        "type": "module",
        "engines": { "node": ">=22.18" },
        "dependencies": { "@toolhost/sdk": sdk.npm_dependency() },
        "devDependencies": {
            "@bytecodealliance/componentize-js": COMPONENTIZE_JS,
            "@bytecodealliance/jco": JCO,
        },
        "overrides": {
            "@bytecodealliance/componentize-js": COMPONENTIZE_JS,
            "@bytecodealliance/preview2-shim": PREVIEW2_SHIM,
        },
    });
    let mut text = serde_json::to_string_pretty(&json).unwrap_or_default();
    text.push('\n');
    // `fill` must leave it as it is: no template markers can be in JSON
    // that a plugin name and description made, but escape them anyway.
    text.replace("{{", "{\\u007b")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_typescript_build_tools_are_pinned_as_the_reference_plugins_build() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let text = std::fs::read_to_string(repo.join("plugins/ts/package.json")).expect("read");
        let pins: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(pins["devDependencies"]["@bytecodealliance/jco"], JCO);
        assert_eq!(
            pins["overrides"]["@bytecodealliance/componentize-js"],
            COMPONENTIZE_JS
        );
        assert_eq!(
            pins["overrides"]["@bytecodealliance/preview2-shim"],
            PREVIEW2_SHIM
        );
    }

    #[test]
    fn a_typescript_package_json_is_json_whatever_the_description() {
        let sdk = SdkSource::Local(PathBuf::from("/x/\"y\"/toolhost-sdk-0.2.0.tgz"));
        let text = ts_package_json("p", "say \"{{name}}\"\n", &sdk);
        let json: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(json["description"], "say \"{{name}}\"\n");
        assert_eq!(
            json["dependencies"]["@toolhost/sdk"],
            "file:/x/\"y\"/toolhost-sdk-0.2.0.tgz"
        );
    }
}
