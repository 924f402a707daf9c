//! The `bindgen!` of the plugin worlds. Generated types stay inside this
//! room: `spec` converts them to the host's own types.
//!
//! It binds `mcp-plugin`, the widest world, of the current contract
//! (`toolhost:plugin@0.2.0`, `wit/`), but the sandbox loads each export's
//! indices on its own: `tool` is required, `entities`, `authoring` and
//! `prompts` optional, so a component built against `plugin` or `catalog-plugin`
//! still loads. Components built against 0.1.0 are bound by
//! [`crate::v0_1`], from the frozen copy of that contract.

wasmtime::component::bindgen!({
    world: "mcp-plugin",
    path: "../../wit",
    // Imports may trap (budget breaches end the call); exports run async so
    // epoch ticks can yield and a dropped call future stops the guest. The
    // backend import awaits the network without holding a thread.
    imports: {
        "toolhost:plugin/backend.send": async | trappable,
        "toolhost:plugin/checkpoint.open": async | trappable,
        "toolhost:plugin/client.ask": async | trappable,
        default: trappable,
    },
    exports: { default: async },
});
