//! Hostile fixture `t-escape-socket`: `connect` tries
//! `TcpStream::connect(addr)`, `TcpListener::bind` and `UdpSocket::bind` on
//! `127.0.0.1:0`, and reports each outcome. The host grants no network, so all
//! three must fail inside the guest.
//!
//! Every fixture also exports `ping`, so the host can prove the same plugin
//! still answers right after the hostile call. Built into a test constant by
//! `host/fixtures`; never deployed.

use fixture_kit::Attempt;
use std::net::{TcpListener, TcpStream, UdpSocket};
use toolhost_sdk::prelude::*;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "connect",
            "Tries a TCP connect, a TCP listen and a UDP bind; reports each.",
            connect,
        )
        .permission("fixture", "run")
        .read_only(),
        fixture_kit::ping(),
    ]
}

toolhost_sdk::export_plugin!(tools);

/// Arguments of `connect`.
#[derive(Deserialize, JsonSchema)]
struct ConnectArgs {
    /// Where to connect, `IP:PORT` (a listener the test opened).
    addr: String,
}

/// One attempt per kind of socket.
#[derive(Serialize, JsonSchema)]
struct SocketReport {
    connect: Attempt,
    tcp_listen: Attempt,
    udp_bind: Attempt,
}

fn connect(_ctx: &Ctx, args: ConnectArgs) -> Result<SocketReport, ToolError> {
    let addr = |r: std::io::Result<std::net::SocketAddr>| match r {
        Ok(a) => a.to_string(),
        Err(e) => format!("address unknown: {e}"),
    };
    Ok(SocketReport {
        connect: Attempt::of(TcpStream::connect(&args.addr), |s| addr(s.peer_addr())),
        tcp_listen: Attempt::of(TcpListener::bind("127.0.0.1:0"), |l| addr(l.local_addr())),
        udp_bind: Attempt::of(UdpSocket::bind("127.0.0.1:0"), |u| addr(u.local_addr())),
    })
}
