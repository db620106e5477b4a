//! The C library's stdio functions the guest calls itself, for the C
//! streams it makes with `fopencookie`: the output stream behind
//! `io.stdout` (`output`) and the session's files (`files`). A C stream is
//! an opaque `FILE *`, here `*mut c_void`.

use std::ffi::{c_char, c_int, c_void};

/// Reads up to `size` bytes into `buf`: how many, 0 at the end, or -1
/// with `errno` set (musl's `cookie_read_function_t`).
pub type CookieRead =
    unsafe extern "C" fn(cookie: *mut c_void, buf: *mut c_char, size: usize) -> isize;
/// Writes `size` bytes from `buf`: how many, or -1 with `errno` set.
pub type CookieWrite =
    unsafe extern "C" fn(cookie: *mut c_void, buf: *const c_char, size: usize) -> isize;
/// Moves to `*offset` from `whence` (0 start, 1 current, 2 end) and writes
/// the new position to `*offset`: 0, or -1 with `errno` set (`off_t` is
/// 64-bit).
pub type CookieSeek =
    unsafe extern "C" fn(cookie: *mut c_void, offset: *mut i64, whence: c_int) -> c_int;
/// Releases the cookie; called once, last, by `fclose`.
pub type CookieClose = unsafe extern "C" fn(cookie: *mut c_void) -> c_int;

/// `cookie_io_functions_t` (stdio.h, `_GNU_SOURCE`); a missing function
/// makes the C library refuse that operation.
#[repr(C)]
pub struct CookieFunctions {
    pub read: Option<CookieRead>,
    pub write: Option<CookieWrite>,
    pub seek: Option<CookieSeek>,
    pub close: Option<CookieClose>,
}

/// `_IONBF` in wasi-libc's stdio.h.
pub const IONBF: c_int = 2;

/// `SEEK_SET`.
pub const SEEK_SET: c_int = 0;

unsafe extern "C" {
    /// A C stream over `cookie` and `funcs`, or null (out of memory, or a
    /// mode that starts with none of `rwa`).
    pub fn fopencookie(
        cookie: *mut c_void,
        mode: *const c_char,
        funcs: CookieFunctions,
    ) -> *mut c_void;
    pub fn setvbuf(f: *mut c_void, buf: *mut c_char, mode: c_int, size: usize) -> c_int;
    pub fn clearerr(f: *mut c_void);
    pub fn fflush(f: *mut c_void) -> c_int;
    pub fn fseeko(f: *mut c_void, offset: i64, whence: c_int) -> c_int;
    pub fn fclose(f: *mut c_void) -> c_int;
}

/// A seek function for a stream that cannot seek, which says so as a
/// pipe does: `io.stdout:seek()` is `nil, "Illegal seek", 29`, as under
/// `lua5.4 | cat`. (Without one, musl fails with its own `ENOTSUP`, in
/// WASI's numbering, which `errno`'s `strerror` does not read.)
///
/// # Safety
/// Callable by the C library for any stream; it touches nothing.
pub unsafe extern "C" fn seek_as_pipe(
    _cookie: *mut c_void,
    _offset: *mut i64,
    _whence: c_int,
) -> c_int {
    crate::errno::set(crate::errno::ESPIPE);
    -1
}
