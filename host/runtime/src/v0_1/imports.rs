//! The 0.1.0 imports: each forwards to the current implementation of the
//! same interface, so a 0.1.0 component gets exactly the same capability,
//! budget and refusals as a current one.

use wasmtime::component::{HasData, Linker};

use super::bindings::toolhost::plugin as old;
use super::convert::Convert;
use crate::bindings::toolhost::plugin as new;
use crate::host::artifacts::ArtifactsCapability;
use crate::host::backend::BackendCapability;
use crate::host::checkpoint::CheckpointCapability;
use crate::host::log::LogCapability;
use crate::host::progress::ProgressCapability;
use crate::host::resolver::ResolverCapability;
use crate::state::HostState;

impl old::types::Host for HostState {}

impl old::log::Host for LogCapability {
    fn log(&mut self, level: old::log::Level, message: String) -> wasmtime::Result<()> {
        new::log::Host::log(self, level.convert(), message)
    }
}

impl old::progress::Host for ProgressCapability {
    fn report(
        &mut self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> wasmtime::Result<()> {
        new::progress::Host::report(self, progress, total, message)
    }
}

impl old::resolver::Host for ResolverCapability {
    fn resolve(
        &mut self,
        q: old::resolver::Query,
    ) -> wasmtime::Result<Result<old::resolver::Resolved, old::resolver::Clarification>> {
        new::resolver::Host::resolve(self, q.convert()).map(Convert::convert)
    }
}

impl old::backend::Host for BackendCapability {
    async fn send(
        &mut self,
        req: old::backend::Request,
    ) -> wasmtime::Result<Result<old::backend::Response, old::backend::Error>> {
        let sent = new::backend::Host::send(self, req.convert()).await;
        sent.map(Convert::convert)
    }
}

impl old::checkpoint::Host for CheckpointCapability {
    async fn open(
        &mut self,
        subject: String,
        title: String,
        evidence: String,
    ) -> wasmtime::Result<Result<old::checkpoint::CheckpointInfo, String>> {
        let opened = new::checkpoint::Host::open(self, subject, title, evidence).await;
        opened.map(Convert::convert)
    }
}

impl old::artifacts::Host for ArtifactsCapability {
    fn put(
        &mut self,
        name: String,
        mime_type: String,
        body: Vec<u8>,
    ) -> wasmtime::Result<Result<old::artifacts::ArtifactInfo, String>> {
        new::artifacts::Host::put(self, name, mime_type, body).map(Convert::convert)
    }
}

struct Types;
impl HasData for Types {
    type Data<'a> = &'a mut HostState;
}
struct Log;
impl HasData for Log {
    type Data<'a> = &'a mut LogCapability;
}
struct Progress;
impl HasData for Progress {
    type Data<'a> = &'a mut ProgressCapability;
}
struct Resolver;
impl HasData for Resolver {
    type Data<'a> = &'a mut ResolverCapability;
}
struct Backend;
impl HasData for Backend {
    type Data<'a> = &'a mut BackendCapability;
}
struct Checkpoint;
impl HasData for Checkpoint {
    type Data<'a> = &'a mut CheckpointCapability;
}
struct Artifacts;
impl HasData for Artifacts {
    type Data<'a> = &'a mut ArtifactsCapability;
}

/// Links the 0.1.0 imports into `l`, beside the current ones.
pub(crate) fn add_to_linker(l: &mut Linker<HostState>) -> wasmtime::Result<()> {
    old::types::add_to_linker::<HostState, Types>(l, |s| s)?;
    old::log::add_to_linker::<HostState, Log>(l, |s| &mut s.log)?;
    old::progress::add_to_linker::<HostState, Progress>(l, |s| &mut s.progress)?;
    old::resolver::add_to_linker::<HostState, Resolver>(l, |s| &mut s.resolver)?;
    old::backend::add_to_linker::<HostState, Backend>(l, |s| &mut s.backend)?;
    old::checkpoint::add_to_linker::<HostState, Checkpoint>(l, |s| &mut s.checkpoint)?;
    old::artifacts::add_to_linker::<HostState, Artifacts>(l, |s| &mut s.artifacts)?;
    Ok(())
}
