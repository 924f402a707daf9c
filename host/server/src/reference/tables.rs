//! `docs/reference/config.md` and `docs/reference/manifest.md`: every key
//! of the TOML tables the host reads, from the structs that read them. A
//! key is a field (or its serde `rename`); its value is said in words from
//! the field's type; what it does is the field's `///` doc or, for the
//! configuration, the help of the `toolhost serve` flag of the same name,
//! which also gives the key's flag and environment variable.

use std::collections::BTreeMap;

use clap::CommandFactory;

use super::{cell, doc, source};

/// A TOML table: its heading, and the struct that reads it.
struct Table {
    heading: &'static str,
    file: &'static str,
    name: &'static str,
}

/// The configuration file, top level first.
const CONFIG: &[Table] = &[
    table("The top level", "host/server/src/config.rs", "ConfigFile"),
    table("[limits]", "host/limits/src/request.rs", "RequestLimits"),
    table(
        "[backends.NAME]",
        "host/server/src/config.rs",
        "BackendFile",
    ),
    table("[sso.NAME]", "host/server/src/sso_config.rs", "SsoFile"),
    table(
        "[sso.NAME.provision]",
        "host/server/src/sso_config.rs",
        "ProvisionFile",
    ),
];

/// The plugin manifest, `toolhost.toml`.
const MANIFEST: &[Table] = &[
    table("The top level", "host/catalog/src/manifest.rs", "Manifest"),
    table("[plugin]", "host/catalog/src/manifest.rs", "PluginSection"),
    table("[limits]", "host/limits/src/budget.rs", "BudgetOverride"),
    table(
        "[backends.NAME]",
        "host/catalog/src/manifest.rs",
        "BackendSection",
    ),
    table("[risk]", "host/catalog/src/manifest.rs", "RiskSection"),
    table(
        "[tools.NAME]",
        "host/catalog/src/manifest.rs",
        "ToolSection",
    ),
    table("[tools.NAME.run]", "host/limits/src/run.rs", "RunOverride"),
    table(
        "[sampling]",
        "host/catalog/src/manifest.rs",
        "SamplingSection",
    ),
    table(
        "[prompts.NAME], [resources.NAME]",
        "host/catalog/src/manifest.rs",
        "PromptSection",
    ),
];

const fn table(heading: &'static str, file: &'static str, name: &'static str) -> Table {
    Table {
        heading,
        file,
        name,
    }
}

/// Configuration keys whose flag has another name than the key (a table
/// key set by a `NAME=VALUE` flag, a switch that turns a default off).
const OTHER_FLAGS: &[(&str, &str, &str)] = &[
    ("The top level", "password_login", "no_password_login"),
    ("[backends.NAME]", "url", "backends"),
    ("[backends.NAME]", "token_file", "backend_token_files"),
    ("[backends.NAME]", "exploration", "exploration_backends"),
    ("[backends.NAME]", "auth", "backend_assertions"),
];

/// One key of a table.
struct Key {
    name: String,
    value: String,
    doc: String,
}

/// The keys of `table`'s struct, in the order it declares them.
fn keys(table: &Table, tables: &[Table]) -> Vec<Key> {
    let file = source(table.file);
    let item = file
        .items
        .iter()
        .find_map(|i| match i {
            syn::Item::Struct(s) if s.ident == table.name => Some(s),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{}: no struct {}", table.file, table.name));
    item.fields
        .iter()
        .map(|f| {
            let ident = f.ident.as_ref().expect("a table's struct has named fields");
            Key {
                name: serde_name(&f.attrs).unwrap_or_else(|| ident.to_string()),
                value: value(&f.ty, tables),
                doc: doc(&f.attrs),
            }
        })
        .collect()
}

/// The key a field's `#[serde(rename = "…")]` gives it, if any; a field
/// serde flattens or skips would need a word here, so it fails the test.
fn serde_name(attrs: &[syn::Attribute]) -> Option<String> {
    let mut name = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(|i| i.to_string());
            assert!(
                !matches!(key.as_deref(), Some("flatten" | "skip")),
                "a serde {key:?} field: teach reference::tables about it"
            );
            if meta.input.peek(syn::Token![=]) {
                let value: syn::LitStr = meta.value()?.parse()?;
                if key.as_deref() == Some("rename") {
                    name = Some(value.value());
                }
            }
            Ok(())
        })
        .expect("a serde attribute of key = \"value\" items");
    }
    name
}

/// What a key takes, in a reader's words, from the field's type.
fn value(ty: &syn::Type, tables: &[Table]) -> String {
    let syn::Type::Path(path) = ty else {
        return "value".into();
    };
    let last = path.path.segments.last().expect("a type has a name");
    let args: Vec<&syn::Type> = match &last.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let name = last.ident.to_string();
    if let Some(t) = tables.iter().find(|t| t.name == name) {
        return format!("table {}", link(t.heading));
    }
    match (name.as_str(), args.as_slice()) {
        ("Option", [inner]) => value(inner, tables),
        ("Vec", [inner]) => match value(inner, tables).as_str() {
            "string" => "list of strings".into(),
            other => format!("list of {other}"),
        },
        ("BTreeMap", [_, inner]) => match value(inner, tables) {
            table if table.starts_with("table ") => format!("tables {}, by name", &table[6..]),
            other => format!("table of `NAME = {other}`"),
        },
        ("String", _) => "string".into(),
        ("PathBuf", _) => "path".into(),
        ("bool", _) => "boolean".into(),
        ("u32" | "u64" | "usize", _) => "integer".into(),
        ("Duration", _) => "duration (`500ms`, `30s`, `10m`)".into(),
        ("ByteSize", _) => "size (`64 KiB`, `4 MiB`)".into(),
        ("SocketAddr", _) => "address (`127.0.0.1:8080`)".into(),
        ("Permission", _) => "permission (`resource:action`)".into(),
        ("PluginName" | "ToolName", _) => "name".into(),
        ("Risk", _) => "`\"low\"`, `\"medium\"` or `\"high\"`".into(),
        ("Digest", _) => "SHA-256, 64 hex characters".into(),
        ("Roles", _) => "role, or list of roles".into(),
        (other, _) => format!("`{other}`"),
    }
}

/// A table's heading as the page shows it: TOML headers in code.
fn heading(table: &str) -> String {
    if table.starts_with('[') {
        format!("`{table}`")
    } else {
        table.to_owned()
    }
}

/// A link to a table's section of its page.
fn link(table: &str) -> String {
    format!("[{}](#{})", heading(table), anchor(table))
}

/// The id mdBook gives a heading: letters, digits, `-` and `_` kept,
/// spaces as `-`, the rest dropped, lower case.
fn anchor(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

/// A flag of `toolhost serve`: how it is written, its variable, its help.
struct Flag {
    written: String,
    env: String,
    help: String,
}

/// `toolhost serve`'s flags by id (a field of `ServeArgs`).
fn serve_flags() -> BTreeMap<String, Flag> {
    let mut cli = crate::Cli::command();
    cli.build();
    let serve = cli.find_subcommand("serve").expect("toolhost serve");
    serve
        .get_arguments()
        .filter_map(|a| {
            let long = a.get_long()?;
            let value = match a.get_value_names() {
                Some([name, ..]) if a.get_action().takes_values() => format!(" <{name}>"),
                _ => String::new(),
            };
            let help = a.get_long_help().or(a.get_help())?.to_string();
            let env = a.get_env().map(|e| e.to_string_lossy().into_owned());
            let flag = Flag {
                written: format!("`--{long}{value}`"),
                env: env.map(|e| format!("`{e}`")).unwrap_or_default(),
                help,
            };
            Some((a.get_id().to_string(), flag))
        })
        .collect()
}

/// The configuration file's page.
fn render_config() -> String {
    let flags = serve_flags();
    let mut page = String::from(
        "# Configuration file\n\n\
         `toolhost serve` and `toolhost worker` read an optional TOML file (`--config FILE`, \
         `TOOLHOST_CONFIG`), then `TOOLHOST_*` environment variables, then flags, each \
         overriding the one before. Every key is optional; a key the host does not know is \
         refused, naming it. [Configuration](../operator/configuration.md) is an annotated \
         example; the flags that have no key are in the [command line](cli.md).\n",
    );
    for t in CONFIG {
        page.push_str(&format!(
            "\n## {}\n\n| Key | Value | Flag | Environment | What |\n|---|---|---|---|---|\n",
            heading(t.heading)
        ));
        for key in keys(t, CONFIG) {
            let other = OTHER_FLAGS
                .iter()
                .find(|(h, k, _)| *h == t.heading && *k == key.name)
                .map(|(_, _, id)| *id);
            let same = (t.heading == "The top level" || t.heading == "[limits]")
                .then(|| flags.get(&key.name))
                .flatten();
            let flag = same.or_else(|| {
                other.map(|id| {
                    flags
                        .get(id)
                        .unwrap_or_else(|| panic!("no serve flag {id}"))
                })
            });
            let what = match (same, key.doc.is_empty()) {
                (Some(f), _) => f.help.clone(),
                (None, false) => key.doc.clone(),
                (None, true) => panic!("{}.{}: give the field a /// doc", t.heading, key.name),
            };
            page.push_str(&format!(
                "| `{}` | {} | {} | {} | {} |\n",
                key.name,
                key.value,
                flag.map(|f| f.written.as_str()).unwrap_or_default(),
                flag.map(|f| f.env.as_str()).unwrap_or_default(),
                cell(&what)
            ));
        }
    }
    page
}

/// The manifest's page.
fn render_manifest() -> String {
    let mut page = String::from(
        "# Manifest\n\n\
         Every key of a plugin's manifest, `toolhost.toml`: what a reviewer approves \
         ([The manifest](../authors/manifest.md)). A key the host does not know is refused, \
         naming it. Budgets go up to the host's ceilings ([The \
         sandbox](../concepts/sandbox.md)).\n",
    );
    for t in MANIFEST {
        page.push_str(&format!(
            "\n## {}\n\n| Key | Value | What |\n|---|---|---|\n",
            heading(t.heading)
        ));
        for key in keys(t, MANIFEST) {
            assert!(
                !key.doc.is_empty(),
                "{}.{}: give the field a /// doc",
                t.heading,
                key.name
            );
            page.push_str(&format!(
                "| `{}` | {} | {} |\n",
                key.name,
                key.value,
                cell(&key.doc)
            ));
        }
    }
    page
}

#[test]
fn the_configuration_reference_is_every_key_of_the_config_types() {
    super::check("docs/reference/config.md", &render_config());
}

#[test]
fn the_manifest_reference_is_every_key_of_the_manifest_types() {
    super::check("docs/reference/manifest.md", &render_manifest());
}

/// The annotated file in the operator's guide: the first TOML block of
/// `docs/operator/configuration.md`.
fn annotated_example() -> String {
    let page = std::fs::read_to_string(super::repo().join("docs/operator/configuration.md"))
        .expect("docs/operator/configuration.md");
    let start = page.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let end = start + page[start..].find("\n```").expect("the block ends");
    page[start..=end].to_owned()
}

/// The table of `example` that `heading` names (for `NAME`, every one
/// merged).
fn example_table(example: &toml::Table, heading: &str) -> toml::Table {
    // Every `[key.NAME]` merged: one backend may show keys another cannot
    // have (a token-exchange backend's, say).
    let every = |t: &toml::Table, key: &str| -> toml::Table {
        let named = t.get(key).and_then(|v| v.as_table());
        let named = named.unwrap_or_else(|| panic!("the example has no [{key}]"));
        let mut merged = toml::Table::new();
        for each in named.values().filter_map(|v| v.as_table()) {
            merged.extend(each.clone());
        }
        assert!(!merged.is_empty(), "the example has no [{key}.NAME]");
        merged
    };
    let table = |t: &toml::Table, key: &str| -> toml::Table {
        let found = t.get(key).and_then(|v| v.as_table());
        found
            .unwrap_or_else(|| panic!("the example has no [{key}]"))
            .clone()
    };
    match heading {
        "The top level" => example.clone(),
        "[limits]" => table(example, "limits"),
        "[backends.NAME]" => every(example, "backends"),
        "[sso.NAME]" => every(example, "sso"),
        "[sso.NAME.provision]" => table(&every(example, "sso"), "provision"),
        other => panic!("where in the example is {other}?"),
    }
}

#[test]
fn the_annotated_configuration_parses_and_names_every_key() {
    let text = annotated_example();
    toml::from_str::<crate::config::ConfigFile>(&text)
        .unwrap_or_else(|e| panic!("docs/operator/configuration.md's example: {e}"));
    let example: toml::Table = toml::from_str(&text).expect("TOML");
    for t in CONFIG {
        let table = example_table(&example, t.heading);
        let missing: Vec<String> = keys(t, CONFIG)
            .into_iter()
            .map(|k| k.name)
            .filter(|k| !table.contains_key(k))
            .collect();
        assert!(
            missing.is_empty(),
            "docs/operator/configuration.md's example lacks {missing:?} in {}",
            t.heading
        );
    }
}

/// Every TOML block in the book's pages and the README: (page, block).
fn toml_samples() -> Vec<(String, String)> {
    fn pages(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                pages(&path, found);
            } else if path.extension().is_some_and(|e| e == "md") {
                found.push(path);
            }
        }
    }
    let repo = super::repo();
    let mut found = vec![repo.join("README.md")];
    pages(&repo.join("docs"), &mut found);
    found.sort();
    let mut samples = Vec::new();
    for page in found {
        let text = std::fs::read_to_string(&page).expect("a page");
        let name = page
            .strip_prefix(&repo)
            .unwrap_or(&page)
            .display()
            .to_string();
        let mut rest = text.as_str();
        while let Some(start) = rest.find("```toml\n") {
            let block = &rest[start + "```toml\n".len()..];
            let end = block
                .find("\n```")
                .unwrap_or_else(|| panic!("{name}: a block ends"));
            samples.push((name.clone(), block[..=end].to_owned()));
            rest = &block[end..];
        }
    }
    samples
}

/// Every TOML sample the book shows loads as written, with what reads it:
/// a plugin's manifest where it declares tools (a fragment gets a
/// `[plugin]` table first), the host's configuration file otherwise.
#[test]
fn every_toml_sample_the_book_shows_loads_as_written() {
    const PLUGIN: &str = "[plugin]\nname = \"sample\"\nversion = \"0.1.0\"\n\
                          description = \"A sample.\"\ncomponent = \"sample.wasm\"\n\n";
    let samples = toml_samples();
    assert!(
        samples.len() >= 5,
        "the book's TOML samples: {}",
        samples.len()
    );
    let (mut manifests, mut configs) = (0, 0);
    for (page, text) in samples {
        let manifest = text.contains("[plugin]") || text.contains("[tools.");
        if manifest {
            let whole = if text.contains("[plugin]") {
                text
            } else {
                format!("{PLUGIN}{text}")
            };
            toolhost_catalog::Manifest::parse(&whole, std::path::Path::new(&page))
                .unwrap_or_else(|e| panic!("{page}'s manifest sample: {e}\n{whole}"));
            manifests += 1;
        } else {
            toml::from_str::<crate::config::ConfigFile>(&text)
                .unwrap_or_else(|e| panic!("{page}'s configuration sample: {e}\n{text}"));
            configs += 1;
        }
    }
    assert!(
        manifests >= 3 && configs >= 2,
        "{manifests} manifests, {configs} configurations"
    );
}
