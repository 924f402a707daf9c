//! The public listener's guards as `toolhost serve` runs them, named for
//! those who build a server from the router themselves (the HTTP bench):
//! the listener with its connection caps and body deadline, and the
//! session table `/mcp`'s layers look for in a request's extensions.
//! `serve` itself wires them from its configuration.

pub use crate::connections::{ConnectionCaps, Connections};
pub use crate::forwarded::TrustedProxies;
pub use crate::listen::{ConnectionLimits, serve};
pub use crate::mcp_sessions::{SessionCaps, SessionOwners};
