//! What the call path's in-process tests share: `tests/call.rs`, and the
//! bounds' unit tests in `src/bounds_tests.rs`, which include this file by
//! its path.

use toolhost_types::{Principal, PrincipalKind};

/// Alice, a user of acme, signed in through the `app` client with the `mcp`
/// scope: the caller of every test call.
pub fn alice() -> Principal {
    Principal {
        subject: "alice".into(),
        kind: PrincipalKind::User,
        name: "alice".into(),
        tenant: "acme".into(),
        client_id: "app".into(),
        scopes: vec!["mcp".into()],
        session: "grant".into(),
    }
}
