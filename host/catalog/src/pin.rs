//! Pinning: turn a manifest template and a built component into a loadable
//! plugin (the manifest with the component's SHA-256, next to a copy of the
//! component).

use std::path::{Path, PathBuf};

use toolhost_types::Digest;

use crate::{CatalogError, Manifest};

/// Writes `out_dir/<component file name>` (a copy of `component`) and
/// `out_dir/<plugin name>.toml` (the template with `plugin.sha256` set to the
/// component's digest). Returns the written manifest's path.
///
/// Pinning is the reviewer's act: the digest binds the manifest to exactly
/// the bytes that were reviewed.
pub fn pin(template: &Path, component: &Path, out_dir: &Path) -> Result<PathBuf, CatalogError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CatalogError::Io { path, source }
    };
    let text = std::fs::read_to_string(template).map_err(io(template))?;
    let manifest = Manifest::parse(&text, template)?;
    let bytes = std::fs::read(component).map_err(io(component))?;
    let digest = Digest::of(&bytes);

    let mut table: toml::Table = toml::from_str(&text).map_err(|e| CatalogError::Manifest {
        path: template.into(),
        detail: e.message().to_owned(),
    })?;
    let plugin = table
        .get_mut("plugin")
        .and_then(toml::Value::as_table_mut)
        .expect("Manifest::parse proved [plugin] is a table");
    plugin.insert("sha256".into(), toml::Value::String(digest.to_string()));

    std::fs::create_dir_all(out_dir).map_err(io(out_dir))?;
    let copy = out_dir.join(&manifest.plugin.component);
    std::fs::write(&copy, &bytes).map_err(io(&copy))?;
    let out = out_dir.join(format!("{}.toml", manifest.plugin.name));
    let rendered = toml::to_string(&table).expect("a parsed TOML table always renders");
    std::fs::write(&out, rendered).map_err(io(&out))?;
    Ok(out)
}
