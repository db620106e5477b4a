//! The reference checks: the official Lua 5.4 test suite inside the sandbox
//! (`compat`) and error messages against Debian's `lua5.4` (`fidelity`).
//!
//! They need `../shared/lua-5.4-tests` and a `lua5.4` binary, so they are
//! ignored by a plain `cargo test` and run on request: `just compat`, which
//! is `cargo test --test all -- --ignored suite::`, and
//! fails unless all four ran. `.ci/run` runs them; without what they need
//! they fail and say what is missing.

mod compat;
mod fidelity;
