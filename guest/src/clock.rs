//! The C library's `time()`, replaced so that deterministic mode fixes the
//! clock beneath Lua instead of wrapping `os.time` and `os.date`.
//!
//! Wrappers around those functions call the originals from C, which costs
//! their errors the function's name and the caller's `chunk:line:`
//! (`bad argument #1 to '?'`). With the clock fixed at its source, both run
//! unwrapped and fail exactly as in `lua5.4`. The guest links this
//! definition ahead of the C library's, so every `time(NULL)` in Lua
//! (`os.time()`, `os.date()` without a time, `math.randomseed()` without a
//! seed) reads it.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Whether the running session is deterministic, and its clock.
static FIXED: AtomicBool = AtomicBool::new(false);
static CLOCK: AtomicI64 = AtomicI64::new(0);

/// Sets the clock the next `time()` calls read: the session's fixed
/// instant, or the real clock. Called whenever a session starts work, since
/// sessions with different modes can share one instance.
pub fn set(fixed: Option<i64>) {
    FIXED.store(fixed.is_some(), Ordering::Relaxed);
    CLOCK.store(fixed.unwrap_or(0), Ordering::Relaxed);
}

/// `time_t time(time_t *)`: seconds since the Unix epoch (`time_t` is 64-bit
/// on wasm32-wasi).
///
/// # Safety
/// `out` is null or points to a writable `time_t`, as C requires.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn time(out: *mut i64) -> i64 {
    let now = if FIXED.load(Ordering::Relaxed) {
        CLOCK.load(Ordering::Relaxed)
    } else {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
    };
    if !out.is_null() {
        // SAFETY: the caller passes a valid `time_t` pointer or null.
        unsafe { *out = now };
    }
    now
}
