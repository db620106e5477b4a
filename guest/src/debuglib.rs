//! `debug` as scripts see it: the functions that only read positions and
//! names, in versions that cannot reach past the script's own values.
//!
//! Widely used Lua probes `debug` before it uses it (`local getmetatable =
//! debug and debug.getmetatable or getmetatable`; `debug.getinfo(2, "Sl")`
//! for a caller's position). So every script has:
//! - `debug.traceback` and `debug.getmetatable`, the reference's: the
//!   sandbox protects none of its own objects with `__metatable`, so the
//!   metatables it reaches are the ones `getmetatable` reaches, or the
//!   script's own;
//! - `debug.setmetatable` for tables, where it is `setmetatable` without the
//!   `__metatable` check: a table is the script's own. For any other type it
//!   raises a sandboxed error: the metatable of a type (strings, numbers,
//!   functions, nil) changes what the sandbox's own code meets, and a
//!   userdata's is what closes its C stream;
//! - `debug.getinfo`, the reference's, except that the `func` field of a
//!   stack level running a C function is left out: the sandbox's own C
//!   functions (wrappers that hold the originals they guard) stay out of
//!   reach; a function the script passes in is its own already;
//! - `debug.getupvalue`, the reference's for Lua functions, and nothing for
//!   C functions, whose upvalues are the sandbox's internals (the original
//!   `load` behind the guarded one, for instance);
//! - `debug.gethook`, which reports no hook: `sethook` is removed, and the
//!   hook the limits set after a trip is not the script's.
//!
//! The rest (`sethook`, `getlocal`, `setlocal`, `setupvalue`,
//! `upvaluejoin`, `getregistry`, ...) are removed: nil, so feature
//! detection sees them absent (see `sandbox::REMOVED`). Allowing `debug` or
//! `debug.NAME` gives the original back (`sethook` only by its own name).
//! docs/security.md explains each choice.

use std::ffi::c_int;

use crate::limits::raise_tagged;
use crate::lua::{self, Raise, ffi, lua_State};
use crate::sandbox::{self, Allow, DEBUG_SAFE};
use crate::vm::ErrorKind;

/// Rebuilds `debug` in place: removes what [`sandbox::remove_names`]
/// removes and puts the safe versions in for the [`DEBUG_SAFE`] names the
/// config does not allow back.
///
/// # Safety
/// `l` is a live Vm-owned state in protected mode and `globals` the absolute
/// index of `_G`, whose `debug` is the library's own.
/// Leaves the stack as it found it.
pub unsafe fn install(l: *mut lua_State, globals: c_int, allow: &Allow) {
    // SAFETY: `remove_names` has the caller's contract. `debug` is then pushed
    // at an absolute index; each safe version is pushed (a closure over the
    // original read from that table, or a C function) and stored
    // with a raw set, which may raise a memory error with nothing owned here.
    // The table is popped at the end.
    unsafe {
        sandbox::remove_names(l, globals, "debug", allow);
        lua::get_field(l, globals, "debug");
        let debug = ffi::lua_gettop(l);
        for f in DEBUG_SAFE {
            if allow.has_in("debug", f) {
                continue;
            }
            match *f {
                "setmetatable" => {
                    lua::get_field(l, debug, "setmetatable");
                    ffi::lua_pushcclosure(l, setmetatable_entry, 1);
                }
                "gethook" => ffi::lua_pushcfunction(l, gethook_entry),
                "getinfo" => {
                    lua::get_field(l, debug, "getinfo");
                    ffi::lua_pushcclosure(l, getinfo_entry, 1);
                }
                _ => {
                    lua::get_field(l, debug, "getupvalue");
                    ffi::lua_pushcclosure(l, getupvalue_entry, 1);
                }
            }
            lua::set_field(l, debug, f);
        }
        ffi::lua_pop(l, 1);
    }
}

/// `debug.gethook([thread])`: no hook, as the reference reports it (`fail`).
///
/// # Safety
/// Called by Lua only, as `debug.gethook`.
unsafe extern "C-unwind" fn gethook_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Pushing nil takes one of the free slots Lua gives a C function.
    unsafe {
        ffi::lua_pushnil(l);
        1
    }
}

/// `debug.getinfo([thread,] f [, what])`: the original (upvalue 1), with the
/// `func` field dropped when `f` is a stack level whose function is a C
/// function. Levels on the running thread are counted as the script counts
/// them, without this wrapper's frame.
///
/// # Safety
/// Called by Lua only, as the closure [`install`] makes.
unsafe extern "C-unwind" fn getinfo_entry(l: *mut lua_State) -> c_int {
    // SAFETY: `lua_type` and `lua_tothread` only read the arguments, and
    // `luaL_checkinteger` reads a number (raising, with nothing owned, for one
    // that is not an integer, as the original would); the level replaced takes
    // a free slot without allocating. `call_original` calls the
    // original in upvalue 1 with the script's arguments (its errors, as the
    // original's, unwind with nothing owned here) and leaves its one result at
    // index 1. A table result's `func` is read and cleared with raw accesses
    // (the table is the one the original just made, with no metatable); the
    // field exists, so clearing it allocates nothing.
    unsafe {
        let on_thread = ffi::lua_type(l, 1) == ffi::LUA_TTHREAD;
        let arg = if on_thread { 2 } else { 1 };
        let level = ffi::lua_type(l, arg) == ffi::LUA_TNUMBER;
        let this_thread = !on_thread || ffi::lua_tothread(l, 1) == l;
        if level && this_thread {
            // The original runs one frame further down, below this wrapper:
            // level 1 (the caller) is its level 2.
            let n = ffi::luaL_checkinteger(l, arg);
            if n >= 1 {
                ffi::lua_pushinteger(l, n.saturating_add(1));
                ffi::lua_replace(l, arg);
            }
        }
        lua::call_original(l, 1);
        if level && ffi::lua_type(l, 1) == ffi::LUA_TTABLE {
            ffi::lua_pushstring(l, c"func".as_ptr());
            ffi::lua_rawget(l, 1);
            let c_function = ffi::lua_iscfunction(l, -1) != 0;
            ffi::lua_pop(l, 1);
            if c_function {
                ffi::lua_pushstring(l, c"func".as_ptr());
                ffi::lua_pushnil(l);
                ffi::lua_rawset(l, 1);
            }
        }
        1
    }
}

/// `debug.getupvalue(f, up)`: the original (upvalue 1) for a Lua function;
/// for a C function, nothing, as for an index past its upvalues.
///
/// # Safety
/// Called by Lua only, as the closure [`install`] makes.
unsafe extern "C-unwind" fn getupvalue_entry(l: *mut lua_State) -> c_int {
    // SAFETY: `luaL_checktype` and `luaL_checkinteger` check the arguments as
    // the original does and may raise with nothing owned. `call_original`
    // calls the original in upvalue 1 with them.
    unsafe {
        ffi::luaL_checkinteger(l, 2);
        ffi::luaL_checktype(l, 1, ffi::LUA_TFUNCTION);
        if ffi::lua_iscfunction(l, 1) != 0 {
            return 0;
        }
        lua::call_original(l, ffi::LUA_MULTRET)
    }
}

/// `debug.setmetatable(value, table)`; see [`setmetatable_body`].
///
/// # Safety
/// Called by Lua only, as the closure [`install`] makes.
unsafe extern "C-unwind" fn setmetatable_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls this closure on a live thread of a Vm-owned state
    // inside a protected call. `setmetatable_body` returns `Err` only with the
    // error pushed and nothing owned left on its frame, so `lua_error` unwinds
    // only frames without destructors.
    unsafe {
        match setmetatable_body(l) {
            Ok(n) => n,
            Err(Raise) => ffi::lua_error(l),
        }
    }
}

/// The original `debug.setmetatable` (upvalue 1) for a table; for any other
/// value a sandboxed error that names the type.
///
/// # Safety
/// As for [`setmetatable_entry`], from it.
unsafe fn setmetatable_body(l: *mut lua_State) -> Result<c_int, Raise> {
    // SAFETY: `lua_type` and `luaL_typename` only read the arguments; the
    // refusal's message is built before anything is pushed and moves into the
    // Vm through `raise_tagged`, which puts the position in front. `call_original` calls the original in
    // upvalue 1 with the script's arguments, which checks argument 2 itself.
    unsafe {
        if ffi::lua_type(l, 1) != ffi::LUA_TTABLE {
            let kind = std::ffi::CStr::from_ptr(ffi::luaL_typename(l, 1)).to_string_lossy();
            let message = format!(
                "debug.setmetatable of a {kind} value is sandboxed (tables only); have the host allow \"debug.setmetatable\" for the original"
            );
            return Err(raise_tagged(l, ErrorKind::Sandboxed, message));
        }
        Ok(lua::call_original(l, 1))
    }
}
