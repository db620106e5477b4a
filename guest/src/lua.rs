//! Thin helpers over the raw Lua C API.
//!
//! The guest talks to Lua through the raw bindings of `mlua-sys` (the FFI
//! crate under mlua) rather than a safe layer, because it needs what such a
//! layer hides: a custom allocator (for the heap and string limits), a count
//! hook that raises errors, and errors raised as plain Lua strings so scripts
//! see exactly what the reference interpreter would show.
//!
//! Every function that raises a Lua error (`lua_error`) unwinds through the
//! Rust frames between it and the enclosing `lua_pcall` without running their
//! destructors. C functions in this crate therefore follow one pattern: a
//! body returns `Result<c_int, Raise>` with every owned Rust value dropped,
//! and only the thin `extern "C-unwind"` entry point calls `lua_error`.

pub use mlua_sys as ffi;
pub use mlua_sys::lua_State;
use std::ffi::{c_char, c_int};

/// Marker returned by a C function body when it has pushed an error value
/// and wants the entry point to raise it.
pub struct Raise;

/// Pushes a Rust string (any bytes) onto the stack.
///
/// # Safety
/// `l` is a valid state with one free stack slot. May raise a memory error.
pub unsafe fn push_bytes(l: *mut lua_State, bytes: &[u8]) {
    unsafe {
        ffi::lua_pushlstring(l, bytes.as_ptr().cast::<c_char>(), bytes.len());
    }
}

/// Reads the string (or number, converted in place) at `idx` as bytes.
///
/// The slice borrows Lua memory; it is valid while the value stays on the
/// stack.
///
/// # Safety
/// `l` is a valid state and `idx` an acceptable index.
pub unsafe fn to_bytes<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
    unsafe {
        let mut len = 0usize;
        let p = ffi::lua_tolstring(l, idx, &mut len);
        if p.is_null() {
            None
        } else {
            Some(std::slice::from_raw_parts(p.cast::<u8>(), len))
        }
    }
}

/// Reads the *string* at `idx` without converting numbers (no allocation).
///
/// # Safety
/// `l` is a valid state and `idx` an acceptable index.
pub unsafe fn string_bytes<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
    unsafe {
        if ffi::lua_type(l, idx) != ffi::LUA_TSTRING {
            return None;
        }
        to_bytes(l, idx)
    }
}

/// Sets `t[name] = v` where `t` is at `table` and `v` is on top (popped).
///
/// # Safety
/// `l` is valid, `table` is an absolute index of a table. May raise.
pub unsafe fn set_field(l: *mut lua_State, table: c_int, name: &str) {
    debug_assert!(table > 0, "set_field needs an absolute index");
    unsafe {
        push_bytes(l, name.as_bytes());
        ffi::lua_insert(l, -2);
        ffi::lua_rawset(l, table);
    }
}

/// Pushes `t[name]` (raw access) where `t` is at `table`; returns its type.
///
/// # Safety
/// `l` is valid, `table` is an absolute index of a table. May raise.
pub unsafe fn get_field(l: *mut lua_State, table: c_int, name: &str) -> c_int {
    debug_assert!(table > 0, "get_field needs an absolute index");
    unsafe {
        push_bytes(l, name.as_bytes());
        ffi::lua_rawget(l, table)
    }
}

/// Pushes `"chunk:line: "` for the function at `level` (as `luaL_where`)
/// followed by `msg`, concatenated into one string.
///
/// # Safety
/// `l` is valid with two free stack slots. May raise a memory error.
pub unsafe fn push_error(l: *mut lua_State, level: c_int, msg: &str) {
    unsafe {
        ffi::luaL_where(l, level);
        push_bytes(l, msg.as_bytes());
        ffi::lua_concat(l, 2);
    }
}

/// The `short_src:currentline: ` position of the function running at stack
/// `level`, or an empty string for C functions and missing levels.
///
/// # Safety
/// `l` is a valid state.
pub unsafe fn position(l: *mut lua_State, level: c_int) -> String {
    unsafe {
        let mut ar: ffi::lua_Debug = std::mem::zeroed();
        if ffi::lua_getstack(l, level, &mut ar) == 0 {
            return String::new();
        }
        ffi::lua_getinfo(l, c"Sl".as_ptr(), &mut ar);
        if ar.currentline <= 0 {
            return String::new();
        }
        let src = std::ffi::CStr::from_ptr(ar.short_src.as_ptr());
        format!("{}:{}: ", src.to_string_lossy(), ar.currentline)
    }
}

/// Calls the function in upvalue 1 (the original that a wrapper stands in
/// for) with every value on the stack as arguments, keeping `nresults`
/// results (`LUA_MULTRET` for all). Returns the stack size afterwards.
///
/// # Safety
/// `l` is running a C closure whose first upvalue is a function. May raise.
pub unsafe fn call_original(l: *mut lua_State, nresults: c_int) -> c_int {
    unsafe {
        let args = ffi::lua_gettop(l);
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
        ffi::lua_insert(l, 1);
        ffi::lua_call(l, args, nresults);
        ffi::lua_gettop(l)
    }
}

/// Calls `f` in protected mode with one light-userdata argument, returning
/// Lua's status code. The error value (if any) is left on the stack.
///
/// # Safety
/// `l` is a valid state; `f` follows the crate's C-function pattern.
pub unsafe fn protected(
    l: *mut lua_State,
    f: ffi::lua_CFunction,
    arg: *mut std::ffi::c_void,
) -> c_int {
    unsafe {
        ffi::lua_pushcfunction(l, f);
        ffi::lua_pushlightuserdata(l, arg);
        ffi::lua_pcall(l, 1, 0, 0)
    }
}

/// A null-terminated copy of `s` for C APIs that want one.
pub fn cstring(s: &str) -> std::ffi::CString {
    std::ffi::CString::new(s.replace('\0', "\u{FFFD}")).unwrap_or_default()
}
