//! Thin helpers over the raw Lua C API.
//!
//! The guest talks to Lua through the raw bindings of `mlua-sys` (the FFI
//! crate under mlua) rather than a safe layer, because it needs what such a
//! layer hides: a custom allocator (for the heap and string limits), a budget
//! function that raises errors, and errors raised as plain Lua strings so scripts
//! see exactly what the reference interpreter would show.
//!
//! # How a Lua error crosses Rust frames
//!
//! Lua raises an error (`lua_error`, `luaL_error`, a failed `luaL_check*`,
//! a memory error in any API call that allocates, and `lua_yieldk`'s yield)
//! with `longjmp` to the `setjmp` in the nearest `luaD_rawrunprotected`:
//! the one under every `lua_pcall`, `lua_resume`, finalizer call and
//! [`protected`]. On wasm32-wasip2 the C compiler lowers that pair to the
//! exception-handling proposal: `longjmp` (`__wasm_longjmp` in
//! `c/setjmp.c`) throws the `__c_longjmp` tag, and only the C function
//! that called `setjmp` catches it (in a `try_table`, rethrowing a jump
//! meant for an outer one). The guest's Rust code is built without the
//! exception-handling feature and with `panic = "abort"`, so it contains no
//! `try_table` and no landing pads: the exception passes through every
//! Rust frame between the raise and the catch, and no code of those frames
//! runs again. No destructor runs, no `RefCell` borrow is released, nothing
//! owned is freed. (A Rust panic never takes that path: `panic = "abort"`
//! turns it into a trap that ends the instance.)
//!
//! That is sound only while each Rust frame a raise may pass owns nothing:
//! no heap value, no `RefCell` guard, no value whose drop matters. (Rust
//! asks the same of any frame a `longjmp` skips: it must be a "plain old
//! frame", with nothing to drop.) The guest keeps it so with one pattern:
//! - Every C function Lua calls (library functions, the budget function,
//!   hooks, continuations) is an `extern "C-unwind"` entry point, the ABI
//!   through which an unwind from C may enter Rust code. Its body returns
//!   `Result<c_int, Raise>` with every owned value dropped, and the entry
//!   point calls `lua_error` (or `lua_yieldk`). The few helpers that raise
//!   themselves (a capability's name collision, the coroutine wrappers,
//!   loading the host's modules, setting the inputs, the budget function
//!   and its hook) hold only borrows and plain values when they do.
//! - Where a body must call something that may raise while it has an owned
//!   value, the value first moves into the Vm: bytes through
//!   `Vm::push_owned`, received values through `json::hold`, a tripped
//!   limit's message through `Vm::trip`, replies of a batch into
//!   `parallel`'s state. The Vm frees them at the next use or eval.
//! - `RefCell`s in the Vm and in the features' states are borrowed only
//!   within one statement or block that calls no Lua function, and the
//!   references that outlive a call into Lua (`Vm::extension`,
//!   `Vm::capabilities`) hold no guard.
//! - The functions C code calls that are not Lua C functions (the
//!   allocator, the output stream's write function, the C library's `time`
//!   and `getenv`) are plain `extern "C"` and never call anything that
//!   raises; the first two report failure by their return value and record
//!   a trip.
//!
//! Natively (the unit tests), Lua uses the C library's `_setjmp` and
//! `_longjmp`, which skip the same frames in the same way.
//!
//! # Safety conventions
//!
//! The `// SAFETY:` comments in the guest rest on these facts:
//! - **Live states.** Every `lua_State` the guest touches is a thread of a
//!   state that `Vm::open` created and has not closed. The guest registers its
//!   C functions and its budget function only on such states, so the `l` they
//!   receive is one, and `Vm::from_state(l)` is the owning Vm.
//! - **Stack room.** Lua runs a C function, a hook or the budget function with at least
//!   `LUA_MINSTACK` (20) free slots, and a state's base frame has as many.
//!   The guest pushes a handful of values at a time and pops them again;
//!   code that pushes a number of values chosen by a script (the JSON
//!   conversions, `resume`) calls `lua_checkstack` first.
//! - **Protected mode.** Scripts run inside `lua_pcall`, and the guest's own
//!   work that may raise (setup, setting inputs, collecting) inside
//!   [`protected`], so every raise is caught. Outside those calls the guest
//!   calls only functions that cannot raise: ones that neither allocate nor
//!   run Lua code (`lua_settop`, which closes no to-be-closed variable since
//!   the guest marks none, `lua_sethook`, pushing light values, reading
//!   strings), `lua_checkstack`, which reports failure instead of raising,
//!   and `luaL_loadbufferx`, which protects itself.

pub use mlua_sys as ffi;
pub use mlua_sys::lua_State;
use std::ffi::{c_char, c_int};

// Declared by mlua-sys only for the Lua it builds itself; the guest's Lua
// (5.4.9, built by build.rs) has it.
unsafe extern "C-unwind" {
    /// Resets a thread, closing its pending to-be-closed variables.
    pub fn lua_closethread(l: *mut lua_State, from: *mut lua_State) -> c_int;
}

/// The budget function the VM calls once the instruction count reaches the
/// check point (see `limits`).
pub type Budget = unsafe extern "C-unwind" fn(l: *mut lua_State);

// The instruction budget that `lua/budget.diff` adds to Lua's API.
unsafe extern "C-unwind" {
    fn lua_setbudget(l: *mut lua_State, f: Option<Budget>, check: u64);
    fn lua_getcount(l: *mut lua_State) -> u64;
    fn lua_setcount(l: *mut lua_State, count: u64);
}

/// The instructions counted since the count was last set.
///
/// # Safety
/// `l` is a live state (any of its threads).
pub unsafe fn count(l: *mut lua_State) -> u64 {
    // SAFETY: `lua_getcount` reads one field of the live state's global
    // part; it neither allocates nor raises.
    unsafe { lua_getcount(l) }
}

/// Sets the count (0 before each eval; more when a C function charges).
///
/// # Safety
/// `l` is a live state (any of its threads).
pub unsafe fn set_count(l: *mut lua_State, count: u64) {
    // SAFETY: As in `count`: one field written, no allocation, no raise.
    unsafe { lua_setcount(l, count) }
}

/// Installs `f` as the budget function, called once the count reaches
/// `check`.
///
/// # Safety
/// `l` is a live state (any of its threads), and `f` is sound to call on
/// any of its threads whenever Lua code runs. Neither allocates nor raises.
pub unsafe fn set_budget(l: *mut lua_State, f: Budget, check: u64) {
    // SAFETY: `lua_setbudget` only stores the function and the check point
    // in the live state's global part, without allocating or raising; the
    // caller vouches for `f`.
    unsafe { lua_setbudget(l, Some(f), check) }
}

/// Marker returned by a C function body when it has pushed an error value
/// and wants the entry point to raise it.
pub struct Raise;

/// Pushes a Rust string (any bytes) onto the stack.
///
/// # Safety
/// `l` is a valid state with one free stack slot. May raise a memory error.
pub unsafe fn push_bytes(l: *mut lua_State, bytes: &[u8]) {
    // SAFETY: The caller passes a valid state with a free slot.
    // `lua_pushlstring` copies exactly `bytes.len()` bytes from a live slice,
    // so the pointer needs no terminating NUL; a memory error is the caller's
    // to allow, and nothing here owns memory.
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
/// `l` is a valid state and `idx` an acceptable index. The slice is not used
/// after the value leaves the stack. Converting a number allocates, so it may
/// raise a memory error.
pub unsafe fn to_bytes<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
    // SAFETY: `lua_tolstring` returns null or a pointer to `len` bytes of the
    // Lua string now at `idx` (converting a number there first, which is why
    // this may raise). The slice is built only from a non-null pointer, and the
    // caller keeps the value on the stack for as long as it uses the slice.
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
/// `l` is a valid state and `idx` an acceptable index. The slice is not used
/// after the value leaves the stack.
pub unsafe fn string_bytes<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
    // SAFETY: Only a value `lua_type` reports as a string reaches `to_bytes`,
    // which then reads it without converting or allocating; `l`, `idx` and the
    // slice's lifetime are the caller's promises, passed on unchanged.
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
    // SAFETY: `table` is an absolute index of a table (caller), so pushing the
    // key and moving it under the value leaves `table` where it was;
    // `lua_rawset` then pops both, invoking no metamethod. Pushing the key and
    // growing the table may raise a memory error, which the caller allows.
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
    // SAFETY: `table` is an absolute index of a table (caller); the key takes
    // one slot and `lua_rawget` replaces it with the value, invoking no
    // metamethod. Pushing the key may raise, which the caller allows.
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
    // SAFETY: The caller guarantees two free slots, one for `luaL_where`'s
    // position and one for `msg`; `lua_concat` replaces them with one string.
    // `msg` is only borrowed, so a memory error while pushing leaks nothing.
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
    // SAFETY: All-zero is a valid `lua_Debug` (a plain C struct). `lua_getinfo`
    // runs only on the activation record that `lua_getstack` has just filled,
    // with options it knows ("Sl"); neither call allocates or raises, and
    // `short_src` is the NUL-terminated buffer `lua_getinfo` filled for "S".
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
    // SAFETY: The caller runs a C closure whose first upvalue is a function, so
    // `lua_call` calls a function with the `args` values above it. Lua gave the
    // C function `LUA_MINSTACK` free slots above its arguments, and the upvalue
    // takes one. What the call raises unwinds to the caller's protected call;
    // no Rust value here owns memory.
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
/// `l` is a valid state with room for two values (an empty stack has it);
/// `f` follows the crate's C-function pattern and expects `arg`.
pub unsafe fn protected(
    l: *mut lua_State,
    f: ffi::lua_CFunction,
    arg: *mut std::ffi::c_void,
) -> c_int {
    // SAFETY: The two pushes fit in the room the caller guarantees and neither
    // allocates (a light C function and a light userdata), so nothing can raise
    // before `lua_pcall`, which catches whatever `f` raises and leaves its
    // error value on the stack.
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
