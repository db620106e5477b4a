//! The coroutine library's entry points that the limits need to see.
//!
//! - `create` and `wrap` charge [`COROUTINE_COST`] (see `limits`).
//! - `wrap`'s function and `close` follow the reference implementation,
//!   except that once a limit has tripped they do not run the dead
//!   coroutine's pending `__close` handlers: the eval is over, and they
//!   would only meet the trip again.

use std::ffi::c_int;

use crate::limits::{self, COROUTINE_COST};
use crate::lua::{self, ffi, lua_State};
use crate::vm::Vm;

/// Replaces `coroutine.create`, `coroutine.wrap` and `coroutine.close`.
///
/// # Safety
/// `l` is a live Vm-owned state in protected mode; `globals` is absolute.
pub unsafe fn install(l: *mut lua_State, globals: c_int) {
    // SAFETY: The caller passes a live Vm-owned state in protected mode, where
    // pushes and raw sets may raise with nothing owned on this frame. `globals`
    // is an absolute index of `_G`, whose `coroutine` field is the library's
    // table; at most four values are pushed above it (the table, `create`, its
    // copy and a key), and `lua_settop` drops the table again.
    unsafe {
        lua::get_field(l, globals, "coroutine");
        let co = ffi::lua_gettop(l);
        // Both wrappers hold the original `create`: `wrap` must not call the
        // wrapped `create`, which would charge twice and, when that inner
        // charge tripped, report a position one frame too deep.
        lua::get_field(l, co, "create");
        ffi::lua_pushvalue(l, -1);
        ffi::lua_pushcclosure(l, create_entry, 1);
        lua::set_field(l, co, "create");
        ffi::lua_pushcclosure(l, wrap_entry, 1);
        lua::set_field(l, co, "wrap");
        ffi::lua_pushcfunction(l, close_entry);
        lua::set_field(l, co, "close");
        ffi::lua_settop(l, co - 1);
    }
}

/// Raises the tripped limit's message if one has tripped.
///
/// # Safety
/// `l` is a live thread of a Vm-owned state inside a C function.
unsafe fn raise_if_tripped(l: *mut lua_State) {
    // SAFETY: The callers are C functions running on a live thread of a
    // Vm-owned state, so `Vm::from_state` is valid and `push_trip` has a free
    // slot. `lua_error` raises the message just pushed; this frame owns
    // nothing.
    unsafe {
        if Vm::from_state(l).push_trip(l) {
            ffi::lua_error(l);
        }
    }
}

/// Calls the original `create` (upvalue 1) on this call's arguments, after
/// checking them (here, so that the message names the function the script
/// called) and charging for it. Leaves the thread on top.
///
/// # Safety
/// `l` runs a C closure whose first upvalue is the original `coroutine.create`,
/// in protected mode.
unsafe fn create_thread(l: *mut lua_State) -> *mut lua_State {
    // SAFETY: The callers are C closures whose first upvalue is the original
    // `coroutine.create` (see `install`), running on a live thread of a
    // Vm-owned state in protected mode. `luaL_checktype`, `charge` and the
    // original may raise, and this frame owns nothing. The original leaves the
    // new thread on top, so `lua_tothread` returns it (or null), and the stack
    // keeps it alive.
    unsafe {
        ffi::luaL_checktype(l, 1, ffi::LUA_TFUNCTION);
        if limits::charge(l, COROUTINE_COST) {
            ffi::lua_error(l);
        }
        lua::call_original(l, 1);
        ffi::lua_tothread(l, -1)
    }
}

/// `coroutine.create`, charged.
///
/// # Safety
/// Called by Lua only, as the closure `install` makes.
unsafe extern "C-unwind" fn create_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls the closure that `install` made (upvalue 1: the
    // original `create`) on a live thread of a Vm-owned state inside a
    // protected call, as `create_thread` needs; it leaves the new thread on
    // top, which is the one result.
    unsafe {
        create_thread(l);
        1
    }
}

/// `coroutine.wrap`, charged likewise; its function is [`wrapped_call`].
///
/// # Safety
/// Called by Lua only, as the closure `install` makes.
unsafe extern "C-unwind" fn wrap_entry(l: *mut lua_State) -> c_int {
    // SAFETY: As in `create_entry`; `lua_pushcclosure` then replaces the new
    // thread on top with a closure that holds it as upvalue 1, as
    // `wrapped_call` expects.
    unsafe {
        create_thread(l);
        ffi::lua_pushcclosure(l, wrapped_call, 1);
        1
    }
}

/// Resumes `co` with `narg` values from `l`; like the library's
/// `auxresume`. Returns the number of results moved to `l`, or `None` with
/// the error value on top of `l`.
///
/// # Safety
/// `l` and `co` are live threads of one Vm-owned state, in protected mode, with
/// `narg` values on top of `l`.
unsafe fn resume(l: *mut lua_State, co: *mut lua_State, narg: c_int) -> Option<c_int> {
    // SAFETY: `co` is a live thread of the same state as `l` (the caller holds
    // it), so `lua_xmove` may move values between them. `lua_checkstack` makes
    // room on `co` for the arguments and on `l` for the results and one more
    // value before each move. `lua_resume` runs `co` inside Lua's own
    // protection and reports an error as a status with the error value on top
    // of `co`; moving that one value into `l` fits in the room the arguments
    // left. Only the message pushes may raise a memory error, and this frame
    // owns nothing.
    unsafe {
        if ffi::lua_checkstack(co, narg) == 0 {
            lua::push_bytes(l, b"too many arguments to resume");
            return None;
        }
        ffi::lua_xmove(l, co, narg);
        let mut nres: c_int = 0;
        let status = ffi::lua_resume(co, l, narg, &mut nres);
        if status == ffi::LUA_OK || status == ffi::LUA_YIELD {
            if ffi::lua_checkstack(l, nres + 1) == 0 {
                ffi::lua_pop(co, nres);
                lua::push_bytes(l, b"too many results to resume");
                return None;
            }
            ffi::lua_xmove(co, l, nres);
            Some(nres)
        } else {
            ffi::lua_xmove(co, l, 1);
            None
        }
    }
}

/// The function `coroutine.wrap` returns.
///
/// # Safety
/// Called by Lua only, as the closure `wrap_entry` makes (upvalue 1: the
/// coroutine).
unsafe extern "C-unwind" fn wrapped_call(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls the closure `wrap_entry` made, whose upvalue 1 is the
    // coroutine it keeps alive, on a live thread of a Vm-owned state inside a
    // protected call. After a failed resume the error value is on top of `l`;
    // `lua_closethread` runs the dead coroutine's `__close` handlers under
    // Lua's own protection and leaves its error on top of `co`, which is moved
    // over. `luaL_where` pushes one value into the room the function still has,
    // and every raise happens with nothing owned on this frame.
    unsafe {
        let co = ffi::lua_tothread(l, ffi::lua_upvalueindex(1));
        let narg = ffi::lua_gettop(l);
        if let Some(n) = resume(l, co, narg) {
            return n;
        }
        raise_if_tripped(l);
        let mut status = ffi::lua_status(co);
        if status != ffi::LUA_OK && status != ffi::LUA_YIELD {
            // The error is in the coroutine: close its to-be-closed variables.
            status = lua::lua_closethread(co, l);
            ffi::lua_xmove(co, l, 1);
            raise_if_tripped(l);
        }
        if status != ffi::LUA_ERRMEM && ffi::lua_type(l, -1) == ffi::LUA_TSTRING {
            ffi::luaL_where(l, 1);
            ffi::lua_insert(l, -2);
            ffi::lua_concat(l, 2);
        }
        ffi::lua_error(l)
    }
}

unsafe extern "C-unwind" {
    /// lauxlib's `luaL_typeerror` (not among the bindings).
    fn luaL_typeerror(l: *mut lua_State, arg: c_int, tname: *const std::ffi::c_char) -> c_int;
}

/// `coroutine.close`, as the reference implements it (so its errors name
/// `close` and the caller's line), except that once a limit has tripped it
/// raises the trip instead of running the coroutine's `__close` handlers.
///
/// # Safety
/// Called by Lua only, as `coroutine.close`.
unsafe extern "C-unwind" fn close_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls `close` as a C function on a live thread of a Vm-owned
    // state inside a protected call. `luaL_typeerror` raises for a non-thread
    // and does not return, so `co` is a live thread held by argument 1.
    // `lua_status`, `lua_getstack` and `lua_gettop` only read it (all-zero is a
    // valid `lua_Debug`); `luaL_error` formats a static C string.
    // `lua_closethread` runs the coroutine's pending `__close` handlers under
    // Lua's own protection and leaves an error value on top of `co`, which
    // `lua_xmove` moves into a free slot of `l`. Every raise happens with
    // nothing owned on this frame.
    unsafe {
        let co = ffi::lua_tothread(l, 1);
        if co.is_null() {
            luaL_typeerror(l, 1, c"thread".as_ptr());
        }
        raise_if_tripped(l);
        let status = if co == l {
            c"running"
        } else {
            match ffi::lua_status(co) {
                ffi::LUA_YIELD => c"suspended",
                ffi::LUA_OK => {
                    let mut ar: ffi::lua_Debug = std::mem::zeroed();
                    if ffi::lua_getstack(co, 0, &mut ar) != 0 {
                        c"normal"
                    } else if ffi::lua_gettop(co) == 0 {
                        c"dead"
                    } else {
                        c"suspended"
                    }
                }
                _ => c"dead",
            }
        };
        if status == c"running" || status == c"normal" {
            return ffi::luaL_error(l, c"cannot close a %s coroutine".as_ptr(), status.as_ptr());
        }
        if lua::lua_closethread(co, l) == ffi::LUA_OK {
            ffi::lua_pushboolean(l, 1);
            1
        } else {
            raise_if_tripped(l);
            ffi::lua_pushboolean(l, 0);
            ffi::lua_xmove(co, l, 1);
            2
        }
    }
}
