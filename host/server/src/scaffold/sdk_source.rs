//! Where a new project's SDK package comes from: the public registry by
//! name and version, or a local copy (a release's `sdk/` directory, or the
//! language's package itself) while the packages are not on the registries.

use std::path::{Path, PathBuf};

use super::Lang;

/// The SDK packages' version: the WIT contract's (`toolhost:plugin@0.2.0`).
pub(crate) const SDK_VERSION: &str = "0.2.0";

/// The SDK a project is written to depend on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SdkSource {
    /// The language's public registry (crates.io, PyPI, npm), by name and
    /// version.
    Registry,
    /// The package on this machine: the crate's directory (Rust), a
    /// directory of wheels (Python), the npm tarball (TypeScript).
    Local(PathBuf),
}

/// Why no SDK package was found where one was named.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SdkSourceError {
    #[error("{path}: no {what} there (give a release's sdk/ directory or the package itself)")]
    NotFound { path: PathBuf, what: &'static str },
    #[error("{path}: {source}")]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The file names of the packages a release carries under `sdk/`.
fn release_package(lang: Lang) -> PathBuf {
    match lang {
        Lang::Rust => PathBuf::from(format!("rust/toolhost-sdk-{SDK_VERSION}")),
        Lang::Python => PathBuf::from("python"),
        Lang::Ts => PathBuf::from(format!("ts/toolhost-sdk-{SDK_VERSION}.tgz")),
    }
}

fn what(lang: Lang) -> &'static str {
    match lang {
        Lang::Rust => "toolhost-sdk crate (a directory with its Cargo.toml)",
        Lang::Python => "toolhost-sdk wheel",
        Lang::Ts => "@toolhost/sdk tarball",
    }
}

/// Whether `path` is `lang`'s package itself.
fn is_package(lang: Lang, path: &Path) -> bool {
    match lang {
        Lang::Rust => path.join("Cargo.toml").is_file(),
        Lang::Python => wheel_in(path),
        Lang::Ts => {
            path.is_file() && path.extension().is_some_and(|e| e == "tgz")
                || path.join("package.json").is_file()
        }
    }
}

/// Whether the directory `dir` holds a toolhost-sdk wheel of this version.
fn wheel_in(dir: &Path) -> bool {
    let wanted = format!("toolhost_sdk-{SDK_VERSION}-");
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.filter_map(Result::ok).any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with(&wanted) && name.ends_with(".whl")
        })
    })
}

/// The local package `path` names for `lang`: the package itself, or the
/// language's package inside a release's `sdk/` directory (or the release's
/// root above it). A wheel file names its directory (pip finds it there).
pub(crate) fn local(lang: Lang, path: &Path) -> Result<SdkSource, SdkSourceError> {
    let path = path
        .canonicalize()
        .map_err(|source| SdkSourceError::Unreadable {
            path: path.to_path_buf(),
            source,
        })?;
    let wheel_dir = (lang == Lang::Python && path.is_file())
        .then(|| path.parent().map(Path::to_path_buf))
        .flatten();
    let candidates = [
        wheel_dir,
        Some(path.clone()),
        Some(path.join(release_package(lang))),
        Some(path.join("sdk").join(release_package(lang))),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|p| is_package(lang, p))
        .map(SdkSource::Local)
        .ok_or(SdkSourceError::NotFound {
            path,
            what: what(lang),
        })
}

/// The default: the `sdk/` directory of the release this binary belongs to
/// (`bin/toolhost` beside `sdk/`; in a checkout, `target/sdk` beside
/// `target/debug/toolhost`, which `make sdk` builds) when it has `lang`'s
/// package, else the registry.
pub(crate) fn default_for(lang: Lang) -> SdkSource {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.canonicalize().ok())
        .and_then(|exe| Some(exe.parent()?.parent()?.join("sdk")))
        .filter(|sdk| sdk.is_dir())
        .and_then(|sdk| local(lang, &sdk).ok())
        .unwrap_or(SdkSource::Registry)
}

impl SdkSource {
    /// The Rust dependency line's value in `Cargo.toml`.
    pub(crate) fn cargo_dependency(&self) -> String {
        match self {
            SdkSource::Registry => format!("\"{SDK_VERSION}\""),
            SdkSource::Local(dir) => format!(
                "{{ version = \"{SDK_VERSION}\", path = {} }}",
                toml_string(&dir.to_string_lossy())
            ),
        }
    }

    /// What `pip install` is given (after `toolhost-sdk==VERSION`).
    pub(crate) fn pip_source(&self) -> String {
        match self {
            SdkSource::Registry => String::new(),
            SdkSource::Local(dir) => {
                format!(
                    " --no-index --find-links {}",
                    shell_word(&dir.to_string_lossy())
                )
            }
        }
    }

    /// The npm dependency's value in `package.json`.
    pub(crate) fn npm_dependency(&self) -> String {
        match self {
            SdkSource::Registry => SDK_VERSION.to_owned(),
            SdkSource::Local(path) => format!("file:{}", path.to_string_lossy()),
        }
    }

    /// Where it comes from, for the one line `toolhost new` prints.
    pub(crate) fn describe(&self) -> String {
        match self {
            SdkSource::Registry => "the public registry".to_owned(),
            SdkSource::Local(path) => path.display().to_string(),
        }
    }
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("\"{text}\""))
}

/// `text` as one POSIX shell word.
fn shell_word(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A release's `sdk/` directory with each language's package.
    fn release() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().expect("a temp dir");
        let sdk = tmp.path().join("sdk");
        let krate = sdk.join(format!("rust/toolhost-sdk-{SDK_VERSION}"));
        std::fs::create_dir_all(&krate).expect("mkdir");
        std::fs::write(krate.join("Cargo.toml"), "[package]\n").expect("write");
        std::fs::create_dir_all(sdk.join("python")).expect("mkdir");
        let wheel = format!("python/toolhost_sdk-{SDK_VERSION}-py3-none-any.whl");
        std::fs::write(sdk.join(wheel), "").expect("write");
        std::fs::create_dir_all(sdk.join("ts")).expect("mkdir");
        std::fs::write(sdk.join(format!("ts/toolhost-sdk-{SDK_VERSION}.tgz")), "").expect("write");
        tmp
    }

    #[test]
    fn a_release_or_its_sdk_directory_names_each_languages_package() {
        let tmp = release();
        for root in [tmp.path().to_path_buf(), tmp.path().join("sdk")] {
            let sdk = tmp.path().join("sdk").canonicalize().expect("exists");
            assert_eq!(
                local(Lang::Rust, &root).expect("found"),
                SdkSource::Local(sdk.join(format!("rust/toolhost-sdk-{SDK_VERSION}")))
            );
            assert_eq!(
                local(Lang::Python, &root).expect("found"),
                SdkSource::Local(sdk.join("python"))
            );
            assert_eq!(
                local(Lang::Ts, &root).expect("found"),
                SdkSource::Local(sdk.join(format!("ts/toolhost-sdk-{SDK_VERSION}.tgz")))
            );
        }
    }

    #[test]
    fn a_package_itself_is_taken_and_a_wheel_names_its_directory() {
        let tmp = release();
        let python = tmp
            .path()
            .join("sdk/python")
            .canonicalize()
            .expect("exists");
        let wheel = python.join(format!("toolhost_sdk-{SDK_VERSION}-py3-none-any.whl"));
        assert_eq!(
            local(Lang::Python, &wheel).expect("found"),
            SdkSource::Local(python)
        );
        let tgz = tmp
            .path()
            .join(format!("sdk/ts/toolhost-sdk-{SDK_VERSION}.tgz"));
        assert!(matches!(local(Lang::Ts, &tgz), Ok(SdkSource::Local(_))));
    }

    #[test]
    fn a_path_without_the_package_is_a_typed_error() {
        let tmp = tempfile::tempdir().expect("a temp dir");
        for lang in [Lang::Rust, Lang::Python, Lang::Ts] {
            assert!(matches!(
                local(lang, tmp.path()),
                Err(SdkSourceError::NotFound { .. })
            ));
        }
        assert!(matches!(
            local(Lang::Rust, &tmp.path().join("missing")),
            Err(SdkSourceError::Unreadable { .. })
        ));
    }

    #[test]
    fn dependencies_name_the_package_by_version_and_quote_local_paths() {
        assert_eq!(SdkSource::Registry.cargo_dependency(), "\"0.2.0\"");
        assert_eq!(SdkSource::Registry.pip_source(), "");
        assert_eq!(SdkSource::Registry.npm_dependency(), "0.2.0");
        let odd = SdkSource::Local(PathBuf::from("/o'dd \"dir\""));
        assert_eq!(
            odd.cargo_dependency(),
            r#"{ version = "0.2.0", path = "/o'dd \"dir\"" }"#
        );
        assert_eq!(
            odd.pip_source(),
            r#" --no-index --find-links '/o'\''dd "dir"'"#
        );
    }
}
