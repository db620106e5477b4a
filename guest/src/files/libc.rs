//! The C library's file functions, replaced: the guest links these ahead of
//! wasi-libc's, so Lua's C code reaches the session's files (see `files`).
//! Each sets `errno` (Linux's numbering, see `errno`) on every failure.
//! Built for wasm only: natively they would replace the test harness's.

use std::ffi::{CStr, c_char, c_int, c_void};

use crate::errno;

/// `FILE *fopen(const char *name, const char *mode)`.
///
/// # Safety
/// `name` and `mode` are C strings, as C requires.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fopen(name: *const c_char, mode: *const c_char) -> *mut c_void {
    // SAFETY: C strings (caller), read here only.
    let (name, mode) = unsafe { (CStr::from_ptr(name), CStr::from_ptr(mode)) };
    match super::open_named(name.to_bytes(), mode.to_bytes()) {
        Ok(stream) => stream,
        Err(code) => {
            errno::set(code);
            std::ptr::null_mut()
        }
    }
}

/// `FILE *freopen(const char *name, const char *mode, FILE *stream)`.
///
/// # Safety
/// `name` is null or a C string, `mode` a C string, `stream` an open
/// stream, as C requires.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn freopen(
    name: *const c_char,
    mode: *const c_char,
    stream: *mut c_void,
) -> *mut c_void {
    // SAFETY: C strings (caller), read here only; `name` may be null.
    let (name, mode) = unsafe {
        let name = (!name.is_null()).then(|| CStr::from_ptr(name).to_bytes());
        (name, CStr::from_ptr(mode).to_bytes())
    };
    // SAFETY: `stream` is open (caller).
    match unsafe { super::reopen(name, mode, stream) } {
        Ok(stream) => stream,
        Err(code) => {
            errno::set(code);
            std::ptr::null_mut()
        }
    }
}

/// `FILE *tmpfile(void)`: an anonymous `w+` file of the active session.
///
/// # Safety
/// Callable from C.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tmpfile() -> *mut c_void {
    match super::session().and_then(super::open_anonymous) {
        Ok(stream) => stream,
        Err(code) => {
            errno::set(code);
            std::ptr::null_mut()
        }
    }
}

/// `int remove(const char *name)`.
///
/// # Safety
/// `name` is a C string, as C requires.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn remove(name: *const c_char) -> c_int {
    // SAFETY: A C string (caller), read here only.
    let name = unsafe { CStr::from_ptr(name) };
    result(super::remove_named(name.to_bytes()))
}

/// `int rename(const char *from, const char *to)`.
///
/// # Safety
/// `from` and `to` are C strings, as C requires.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rename(from: *const c_char, to: *const c_char) -> c_int {
    // SAFETY: C strings (caller), read here only.
    let (from, to) = unsafe { (CStr::from_ptr(from), CStr::from_ptr(to)) };
    result(super::rename_named(from.to_bytes(), to.to_bytes()))
}

/// 0, or -1 with `errno` set.
fn result(outcome: Result<(), c_int>) -> c_int {
    match outcome {
        Ok(()) => 0,
        Err(code) => {
            errno::set(code);
            -1
        }
    }
}
