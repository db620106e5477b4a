//! The one `bindgen!` over wit/. Generated types never leave the crate: the
//! public API converts at the edge (see `session.rs` and `error.rs`).
//!
//! `host/wit` is a link to the repository's `wit/`, so the contract is read
//! from inside the package and travels with it when the crate is packaged.
//!
//! Capability calls are async on the host (they may await I/O); writing
//! output is a plain synchronous call, cheap enough to make per `print`.

wasmtime::component::bindgen!({
    world: "guest",
    path: "wit",
    imports: {
        "moonbox:sandbox/capabilities.call": async,
        "moonbox:sandbox/capabilities.call-many": async,
    },
    exports: { default: async },
});

pub(crate) use self::moonbox::sandbox::types;
