//! Components compiled once and kept precompiled on disk, keyed by the
//! component's digest and the engine's compatibility hash, so a host restart
//! maps native code instead of compiling, and a changed engine configuration
//! never loads code compiled for another.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use toolhost_types::Digest;
use wasmtime::Engine;
use wasmtime::component::Component;

/// Where a loaded component's native code came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Mapped from the precompiled cache.
    Hit,
    /// Compiled now and written to the cache.
    Compiled,
    /// Compiled now; no cache is configured (or writing it failed, logged).
    Uncached,
}

/// The precompiled-component cache of one engine.
pub(crate) struct ComponentCache {
    dir: Option<PathBuf>,
    engine_key: u64,
}

impl ComponentCache {
    pub(crate) fn new(engine: &Engine, dir: Option<PathBuf>) -> std::io::Result<Self> {
        if let Some(dir) = &dir {
            create_private_dir(dir)?;
        }
        let mut h = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut h);
        Ok(Self {
            dir,
            engine_key: h.finish(),
        })
    }

    /// The file a component with `digest` is cached in.
    pub(crate) fn path(&self, digest: &Digest) -> Option<PathBuf> {
        let name = format!("{digest}-{:016x}.cwasm", self.engine_key);
        self.dir.as_ref().map(|d| d.join(name))
    }

    /// The component with `digest`, mapped from the cache if it is there
    /// and usable (an unusable file is logged and compiled again).
    pub(crate) fn mapped(&self, engine: &Engine, digest: &Digest) -> Option<Component> {
        let path = self.path(digest)?;
        if !path.exists() {
            return None;
        }
        match deserialize(engine, &path) {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "precompiled component unusable; recompiling");
                None
            }
        }
    }

    /// The component for `bytes`, from the cache when possible, else
    /// compiled (CPU-seconds for a large one: call it off the async
    /// threads, as the compile queue does).
    pub(crate) fn load(
        &self,
        engine: &Engine,
        digest: &Digest,
        bytes: &[u8],
    ) -> wasmtime::Result<(Component, CacheOutcome)> {
        let Some(path) = self.path(digest) else {
            return Ok((Component::new(engine, bytes)?, CacheOutcome::Uncached));
        };
        if let Some(c) = self.mapped(engine, digest) {
            return Ok((c, CacheOutcome::Hit));
        }
        let component = Component::new(engine, bytes)?;
        match write_atomically(&path, &component.serialize()?) {
            Ok(()) => Ok((component, CacheOutcome::Compiled)),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "could not write the precompiled cache");
                Ok((component, CacheOutcome::Uncached))
            }
        }
    }
}

/// Maps a precompiled component.
///
/// SAFETY: `Component::deserialize_file` trusts the file to be the output
/// of `Component::serialize` by a compatible engine; a forged file would run
/// as native code. The file is ours: we wrote it under a name that binds the
/// component's SHA-256 and this engine's compatibility hash, into a
/// directory created with mode 0700, and wasmtime re-checks the engine
/// compatibility header on load.
#[allow(unsafe_code)]
fn deserialize(engine: &Engine, path: &Path) -> wasmtime::Result<Component> {
    unsafe { Component::deserialize_file(engine, path) }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}
