//! `errno` as scripts see it: the values the guest's own C library
//! functions set (the session's files, see `files`), in Linux's numbering,
//! and the C library's `strerror`, replaced to read them.
//!
//! Lua reports a failed file operation as `nil, message, code`, with the
//! message from `strerror(errno)` and the code `errno` itself
//! (`luaL_fileresult`). wasi-libc numbers its errors as WASI does
//! (`ENOENT` is 44 there), so `io.open("x")` would end with
//! `nil, "x: No such file or directory", 44` where `lua5.4` on Linux gives
//! `2`. The guest therefore sets Linux's numbers, and this `strerror`,
//! linked ahead of the C library's (as `environ` does for `getenv`),
//! answers with glibc's texts for them, so both parts read as under
//! `lua5.4` on Linux.
//!
//! Every errno a script can see comes from the guest's functions: the file
//! functions in `files` and the streams' callbacks set one on every
//! failure, the output stream's seek sets [`ESPIPE`], and Lua clears
//! `errno` before each call it reports. wasi-libc's own values (in WASI's
//! numbering) would be misread here; the paths that set them are not
//! reachable from Lua (`fopencookie`'s, which the guest replaces with its
//! own value on failure, and stdio's checks of arguments Lua has already
//! checked). Rust's `std` formats OS errors through `strerror_r`, which
//! calls this function too; the guest formats none.

use std::ffi::c_int;

/// `EACCES`: Permission denied (no session is running).
pub const EACCES: c_int = 13;
/// `EBADF`: Bad file descriptor (reading a stream opened only for writing).
pub const EBADF: c_int = 9;
/// `EBUSY`: Device or resource busy (removing or renaming the root).
pub const EBUSY: c_int = 16;
/// `EINVAL`: Invalid argument (a bad mode, a negative position).
pub const EINVAL: c_int = 22;
/// `EISDIR`: Is a directory.
pub const EISDIR: c_int = 21;
/// `ENAMETOOLONG`: File name too long.
pub const ENAMETOOLONG: c_int = 36;
/// `ENOENT`: No such file or directory.
pub const ENOENT: c_int = 2;
/// `ENOMEM`: Cannot allocate memory (the linear memory is exhausted).
pub const ENOMEM: c_int = 12;
/// `ENOSPC`: No space left on device (the memory limit tripped).
pub const ENOSPC: c_int = 28;
/// `ENOTDIR`: Not a directory.
pub const ENOTDIR: c_int = 20;
/// `ESPIPE`: Illegal seek (the output stream, like a pipe).
pub const ESPIPE: c_int = 29;

/// glibc's messages for Linux's errno values 0 to 40, by number: the
/// values the guest sets are among them.
const MESSAGES: [&std::ffi::CStr; 41] = [
    c"Success",
    c"Operation not permitted",
    c"No such file or directory",
    c"No such process",
    c"Interrupted system call",
    c"Input/output error",
    c"No such device or address",
    c"Argument list too long",
    c"Exec format error",
    c"Bad file descriptor",
    c"No child processes",
    c"Resource temporarily unavailable",
    c"Cannot allocate memory",
    c"Permission denied",
    c"Bad address",
    c"Block device required",
    c"Device or resource busy",
    c"File exists",
    c"Invalid cross-device link",
    c"No such device",
    c"Not a directory",
    c"Is a directory",
    c"Invalid argument",
    c"Too many open files in system",
    c"Too many open files",
    c"Inappropriate ioctl for device",
    c"Text file busy",
    c"File too large",
    c"No space left on device",
    c"Illegal seek",
    c"Read-only file system",
    c"Too many links",
    c"Broken pipe",
    c"Numerical argument out of domain",
    c"Numerical result out of range",
    c"Resource deadlock avoided",
    c"File name too long",
    c"No locks available",
    c"Function not implemented",
    c"Directory not empty",
    c"Too many levels of symbolic links",
];

unsafe extern "C" {
    /// The C library's `errno` of the running thread.
    fn __errno_location() -> *mut c_int;
}

/// Sets `errno` to `value` (one of the constants above, or 0).
pub fn set(value: c_int) {
    // SAFETY: `__errno_location` returns the address of the calling
    // thread's `errno`, valid for the thread's life; writing an `int` there
    // is what `errno = value` does in C.
    unsafe { *__errno_location() = value };
}

/// `strerror`'s text for `value`: glibc's, or `None` where glibc says
/// `Unknown error N`.
pub fn message(value: c_int) -> Option<&'static std::ffi::CStr> {
    usize::try_from(value)
        .ok()
        .and_then(|i| MESSAGES.get(i))
        .copied()
}

#[cfg(target_family = "wasm")]
thread_local! {
    /// The text `strerror` returns for a number it has no message for,
    /// rewritten by each such call (as C allows).
    static UNKNOWN: std::cell::UnsafeCell<[u8; 32]> = const { std::cell::UnsafeCell::new([0; 32]) };
}

/// `char *strerror(int errnum)`: glibc's message for Linux's `errnum`, or
/// `Unknown error N`. Replaces the C library's (see the module doc).
/// Native builds keep their own C library's, which already speaks Linux's
/// numbers.
///
/// # Safety
/// Callable from C with any value; the result must not be written to, and
/// an `Unknown error` text is valid until the next such call.
#[cfg(target_family = "wasm")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn strerror(errnum: c_int) -> *mut std::ffi::c_char {
    if let Some(text) = message(errnum) {
        return text.as_ptr().cast_mut();
    }
    UNKNOWN.with(|buffer| {
        let text = format!("Unknown error {errnum}");
        let bytes = text.as_bytes();
        // SAFETY: The buffer is this thread's, and the only writer is this
        // function, which C calls on one thread and which does not re-enter
        // itself; the previous text it returned is allowed to change now.
        // At most 31 bytes are copied (`i32` prints in at most 11), leaving
        // the NUL that ends the text.
        unsafe {
            let buffer = &mut *buffer.get();
            let n = bytes.len().min(buffer.len() - 1);
            buffer[..n].copy_from_slice(&bytes[..n]);
            buffer[n] = 0;
            buffer.as_mut_ptr().cast()
        }
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::{CStr, c_char, c_int};

    unsafe extern "C" {
        /// The native C library's (glibc's, on Linux).
        fn strerror(errnum: c_int) -> *const c_char;
    }

    #[test]
    fn the_messages_are_glibcs() {
        for value in 0..=40 {
            // SAFETY: `strerror` accepts any value and returns a C string,
            // read before the next call.
            let native = unsafe { CStr::from_ptr(strerror(value)) };
            assert_eq!(super::message(value), Some(native), "errno {value}");
        }
        assert_eq!(super::message(41), None);
        assert_eq!(super::message(-1), None);
    }

    #[test]
    fn set_writes_errno() {
        super::set(super::ENOENT);
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(super::ENOENT)
        );
        super::set(0);
    }
}
