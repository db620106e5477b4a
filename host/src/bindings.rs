//! The one `bindgen!` over wit/. Generated types never leave the crate: the
//! public API converts at the edge (see `session.rs` and `error.rs`).
//!
//! `host/wit` is a link to the repository's `wit/`, so the contract is read
//! from inside the package and travels with it when the crate is packaged.
//!
//! Capability calls are async on the host (they may await I/O) and may trap
//! (in deterministic mode, when the host's own time runs out; see
//! `host.rs`); writing output is a plain synchronous call, cheap enough to
//! make per `print`.

wasmtime::component::bindgen!({
    world: "guest",
    path: "wit",
    imports: {
        "moonbox:sandbox/capabilities.call": async | trappable,
        "moonbox:sandbox/capabilities.call-many": async | trappable,
    },
    exports: { default: async },
});

pub(crate) use self::moonbox::sandbox::types;
