//! The reference checks: the official Lua 5.4 test suite inside the sandbox
//! (`compat`) and error messages against Debian's `lua5.4` (`fidelity`).
//!
//! They need `../shared/lua-5.4-tests` and a `lua5.4` binary, so they sit
//! behind the `suite` feature: `just compat`, or
//! `cargo test -p moonbox-tests --features suite --test suite`. `.ci/run`
//! runs them; without what they need they fail and say what is missing.

mod compat;
mod fidelity;

/// A sandbox with default limits and nothing allowed.
pub fn sandbox() -> moonbox::Sandbox {
    moonbox::Sandbox::builder()
        .build()
        .expect("the default sandbox builds")
}
