//! The one `bindgen!` of the plugin world. Generated types stay inside this
//! room: `spec` converts them to the host's own types.

wasmtime::component::bindgen!({
    world: "plugin",
    path: "../../wit",
    // Imports may trap (budget breaches end the call); exports run async so
    // epoch ticks can yield and a dropped call future stops the guest.
    imports: { default: trappable },
    exports: { default: async },
});
