//! Components built against the previous contract, `toolhost:plugin@0.1.0`,
//! keep loading and answering, unchanged.
//!
//! The component model links by versioned name, and 0.1 and 0.2 are not
//! semver-compatible, so the host binds 0.1.0 on its own, from a frozen
//! copy of that contract (`host/runtime/wit-0.1.0`, never edited): its
//! imports are linked beside the current ones ([`imports`]), each
//! forwarding to the current implementation, and a component that exports
//! `toolhost:plugin/tool@0.1.0` is called through its 0.1.0 exports
//! ([`exports`]), its answers converted to the current types. 0.2.0 only
//! added to 0.1.0, so every conversion is total: a 0.1.0 answer is a
//! 0.2.0 answer without content blocks.

mod convert;
pub(crate) mod exports;
pub(crate) mod imports;

/// The generated bindings of the frozen 0.1.0 contract.
pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        world: "authoring-plugin",
        path: "wit-0.1.0",
        imports: {
            "toolhost:plugin/backend.send": async | trappable,
            "toolhost:plugin/checkpoint.open": async | trappable,
            default: trappable,
        },
        exports: { default: async },
    });
}
