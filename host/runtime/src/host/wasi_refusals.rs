//! What a run's sandbox refuses inside WASI, written down for its receipt.
//!
//! WASI p2 is linked granting nothing (`state::sandbox_wasi`), so a guest
//! asking for the environment, a file or a socket gets nothing and the
//! host would never know it asked. Inside an exploration run the receipt
//! must list every refused attempt, so three imports are shadowed with
//! versions that answer exactly as the empty grant does and note the
//! attempt: the environment (empty), the preopened directories (none: the
//! guest's first path lookup asks for them), and TCP sockets (refused;
//! connecting through any socket is refused by the address check too).

use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::p2::bindings::sockets::network::{ErrorCode, IpAddressFamily};

use crate::state::HostState;

/// The WASI package version the linker defines (wasmtime-wasi 48); guests
/// built against any earlier 0.2 release resolve to it.
const WASI: &str = "0.2.12";

/// Shadows the three imports in `l` (after WASI itself was linked).
pub(crate) fn add_to_linker(l: &mut Linker<HostState>) -> wasmtime::Result<()> {
    l.allow_shadowing(true);
    l.instance(&format!("wasi:cli/environment@{WASI}"))?
        .func_wrap("get-environment", |mut store, (): ()| {
            store.data_mut().refused(
                "environment",
                "read the environment: the sandbox has no environment variables".into(),
            );
            Ok((Vec::<(String, String)>::new(),))
        })?;
    l.instance(&format!("wasi:filesystem/preopens@{WASI}"))?
        .func_wrap("get-directories", |mut store, (): ()| {
            store.data_mut().refused(
                "filesystem",
                "open a file: the sandbox grants no directories".into(),
            );
            Ok((Vec::<(
                Resource<wasmtime_wasi::filesystem::Descriptor>,
                String,
            )>::new(),))
        })?;
    l.instance(&format!("wasi:sockets/tcp-create-socket@{WASI}"))?
        .func_wrap(
            "create-tcp-socket",
            |mut store, (family,): (IpAddressFamily,)| {
                store.data_mut().refused(
                    "socket",
                    format!("open a TCP socket ({family:?}): the sandbox grants no network"),
                );
                Ok((Err::<Resource<wasmtime_wasi::p2::TcpSocket>, _>(
                    ErrorCode::AccessDenied,
                ),))
            },
        )?;
    l.allow_shadowing(false);
    Ok(())
}
