//! The one `bindgen!` over wit/. Generated types never leave the crate: the
//! public API converts at the edge (see `session.rs` and `error.rs`).

wasmtime::component::bindgen!({
    world: "guest",
    path: "../wit",
    imports: { default: async },
    exports: { default: async },
});

pub(crate) use self::moonbox::sandbox::types;
