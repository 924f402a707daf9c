//! The host imports a plugin may use: one module per WIT interface, each
//! seeing only its own state (the log capability cannot read the caller's
//! identity beyond what it needs to tag a line).
//!
//! WASI p2 is linked too, because a Rust guest built with std imports it,
//! but granted nothing: see `state::sandbox_wasi`.

pub(crate) mod artifacts;
pub(crate) mod backend;
pub(crate) mod checkpoint;
pub(crate) mod client;
pub(crate) mod exploration;
pub(crate) mod log;
mod meter;
pub(crate) mod notify;
pub(crate) mod progress;
pub(crate) mod protocol;
pub(crate) mod resolver;
mod wasi_refusals;

pub(crate) use meter::HostCallMeter;

use wasmtime::component::{HasData, Linker};

use crate::bindings::toolhost::plugin as wit;
use crate::state::HostState;

struct HasLog;
impl HasData for HasLog {
    type Data<'a> = &'a mut log::LogCapability;
}

struct HasProgress;
impl HasData for HasProgress {
    type Data<'a> = &'a mut progress::ProgressCapability;
}

struct HasResolver;
impl HasData for HasResolver {
    type Data<'a> = &'a mut resolver::ResolverCapability;
}

struct HasBackend;
impl HasData for HasBackend {
    type Data<'a> = &'a mut backend::BackendCapability;
}

struct HasCheckpoint;
impl HasData for HasCheckpoint {
    type Data<'a> = &'a mut checkpoint::CheckpointCapability;
}

struct HasArtifacts;
impl HasData for HasArtifacts {
    type Data<'a> = &'a mut artifacts::ArtifactsCapability;
}

struct HasClient;
impl HasData for HasClient {
    type Data<'a> = &'a mut client::ClientCapability;
}

struct HasNotify;
impl HasData for HasNotify {
    type Data<'a> = &'a mut notify::NotifyCapability;
}

struct HasProtocol;
impl HasData for HasProtocol {
    type Data<'a> = &'a mut protocol::ProtocolCapability;
}

struct HasTypes;
impl HasData for HasTypes {
    type Data<'a> = &'a mut HostState;
}
impl wit::types::Host for HostState {}

/// Links every host import into `l`.
pub(crate) fn add_to_linker(l: &mut Linker<HostState>) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_async(l)?;
    wasi_refusals::add_to_linker(l)?;
    wit::types::add_to_linker::<HostState, HasTypes>(l, |s| s)?;
    wit::log::add_to_linker::<HostState, HasLog>(l, |s| &mut s.log)?;
    wit::progress::add_to_linker::<HostState, HasProgress>(l, |s| &mut s.progress)?;
    wit::resolver::add_to_linker::<HostState, HasResolver>(l, |s| &mut s.resolver)?;
    wit::backend::add_to_linker::<HostState, HasBackend>(l, |s| &mut s.backend)?;
    wit::checkpoint::add_to_linker::<HostState, HasCheckpoint>(l, |s| &mut s.checkpoint)?;
    wit::artifacts::add_to_linker::<HostState, HasArtifacts>(l, |s| &mut s.artifacts)?;
    wit::client::add_to_linker::<HostState, HasClient>(l, |s| &mut s.client)?;
    wit::notify::add_to_linker::<HostState, HasNotify>(l, |s| &mut s.notify)?;
    wit::protocol::add_to_linker::<HostState, HasProtocol>(l, |s| &mut s.protocol)?;
    crate::v0_1::imports::add_to_linker(l)?;
    Ok(())
}
