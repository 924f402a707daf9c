//! The WIT package the host serves (`toolhost:plugin`), embedded so that a
//! project made anywhere builds against the contract of the binary that
//! made it. A test keeps the list equal to the repository's `wit/`.

/// Each file of `wit/`: its name and text.
pub(crate) const FILES: &[(&str, &str)] = &[
    (
        "artifacts.wit",
        include_str!("../../../../wit/artifacts.wit"),
    ),
    (
        "authoring.wit",
        include_str!("../../../../wit/authoring.wit"),
    ),
    ("backend.wit", include_str!("../../../../wit/backend.wit")),
    (
        "checkpoint.wit",
        include_str!("../../../../wit/checkpoint.wit"),
    ),
    ("client.wit", include_str!("../../../../wit/client.wit")),
    ("entities.wit", include_str!("../../../../wit/entities.wit")),
    ("log.wit", include_str!("../../../../wit/log.wit")),
    ("notify.wit", include_str!("../../../../wit/notify.wit")),
    ("progress.wit", include_str!("../../../../wit/progress.wit")),
    ("prompts.wit", include_str!("../../../../wit/prompts.wit")),
    ("protocol.wit", include_str!("../../../../wit/protocol.wit")),
    ("resolver.wit", include_str!("../../../../wit/resolver.wit")),
    (
        "resources.wit",
        include_str!("../../../../wit/resources.wit"),
    ),
    ("tool.wit", include_str!("../../../../wit/tool.wit")),
    ("types.wit", include_str!("../../../../wit/types.wit")),
    ("world.wit", include_str!("../../../../wit/world.wit")),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_the_repository_wit_is_embedded_as_it_is() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../wit");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .expect("wit/")
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        let embedded: Vec<&str> = FILES.iter().map(|(name, _)| *name).collect();
        assert_eq!(embedded, names, "scaffold/wit.rs lists every file of wit/");
        for (name, text) in FILES {
            let on_disk = std::fs::read_to_string(dir.join(name)).expect("readable");
            assert_eq!(*text, on_disk, "{name}");
        }
    }

    #[test]
    fn the_sdk_version_is_the_contracts() {
        let package = format!("package toolhost:plugin@{};", super::super::SDK_VERSION);
        for (name, text) in FILES {
            assert!(text.starts_with(&package), "{name} starts with {package}");
        }
    }
}
