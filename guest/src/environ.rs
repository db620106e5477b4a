//! The C library's `getenv`, replaced: a sandbox has no environment
//! variables, so every lookup finds none without asking the host.
//!
//! `luaopen_package` looks up `LUA_PATH` and `LUA_CPATH` whenever a state is
//! built. Answered here, building a state calls nothing outside the
//! instance, which lets the build snapshot one (see `snapshot`), and saves a
//! host call per session. The guest links this definition ahead of the C
//! library's, as it does `time()` (see `clock`).

use std::ffi::c_char;

/// `char *getenv(const char *name)`: always null, "not set".
///
/// # Safety
/// `name` is a C string, as C requires; it is not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn getenv(_name: *const c_char) -> *mut c_char {
    std::ptr::null_mut()
}
