//! The `t-flood-imports` fixture's contract, shared by the runtime's
//! hostile-plugin tests and the end-to-end attack tests
//! (`tests/e2e_attacks.rs` includes this file by its path).

/// The values of `flood`'s `import` argument: every host import of the
/// plugin world, by its WIT interface (and function, for `client`).
pub const IMPORTS: &[&str] = &[
    "log",
    "progress",
    "resolver",
    "backend",
    "checkpoint",
    "artifacts",
    "client-supports",
    "client-ask",
    "notify",
];
