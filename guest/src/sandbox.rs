//! The standard library as a script sees it: the sandboxed names, guarded
//! `load`, `string.rep`, `collectgarbage` and `os.exit`, deterministic clock
//! and random, and host modules for `require`. (`print` and `io.stdout` are
//! in `output`, `json` in `jsonlib`.)

use std::ffi::c_int;

use crate::limits::raise_tagged;
use crate::lua::{self, Raise, ffi, lua_State};
use crate::vm::{ErrorKind, Kind, Vm, to_c_int};

/// `io` functions that may be named in `allow`. All but [`IO_DEFAULT`] are
/// sandboxed unless `io` or `io.NAME` is allowed.
const IO: &[&str] = &[
    "close", "flush", "input", "lines", "open", "output", "popen", "read", "tmpfile", "type",
    "write",
];
/// `io` names every script has: writing to the output stream.
const IO_DEFAULT: &[&str] = &["write", "flush", "type", "stdout"];

/// Names `require` already returns: a host module may not take them.
pub const STANDARD_LIBRARIES: &[&str] = &[
    "_G",
    "coroutine",
    "debug",
    "io",
    "json",
    "math",
    "os",
    "package",
    "string",
    "table",
    "utf8",
];

/// `os` functions that are sandboxed unless `os` or `os.NAME` is allowed.
const OS: &[&str] = &["execute", "exit", "getenv", "remove", "rename", "tmpname"];
/// `debug` functions; all but `traceback` are sandboxed unless `debug` or
/// `debug.NAME` is allowed.
const DEBUG: &[&str] = &[
    "debug",
    "gethook",
    "getinfo",
    "getlocal",
    "getmetatable",
    "getregistry",
    "getupvalue",
    "getuservalue",
    "sethook",
    "setcstacklimit",
    "setlocal",
    "setmetatable",
    "setupvalue",
    "setuservalue",
    "upvalueid",
    "upvaluejoin",
];
/// Stand-alone names that may be allowed.
const OTHERS: &[&str] = &[
    "package",
    "dofile",
    "loadfile",
    "string.dump",
    "binary-chunks",
];

/// Every name `config.allow` accepts.
pub fn allowable_names() -> Vec<String> {
    let mut names = vec!["io".to_owned(), "os".to_owned(), "debug".to_owned()];
    names.extend(IO.iter().map(|f| format!("io.{f}")));
    names.extend(OS.iter().map(|f| format!("os.{f}")));
    names.extend(DEBUG.iter().map(|f| format!("debug.{f}")));
    names.extend(OTHERS.iter().map(|s| (*s).to_owned()));
    names
}

/// What the sandbox lets back in.
pub struct Allow(Vec<String>);

impl Allow {
    /// Validates the names against [`allowable_names`].
    pub fn new(names: &[String]) -> Result<Allow, String> {
        let valid = allowable_names();
        for name in names {
            if !valid.contains(name) {
                return Err(format!(
                    "unknown sandboxed name '{name}' in allow; the names that can be allowed are: {}",
                    valid.join(", ")
                ));
            }
        }
        Ok(Allow(names.to_vec()))
    }

    /// Nothing allowed: the default sandbox.
    pub fn none() -> Allow {
        Allow(Vec::new())
    }

    /// Whether nothing is allowed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn has(&self, name: &str) -> bool {
        self.0.iter().any(|n| n == name)
    }

    /// `lib.func` is allowed by its own name or by its library's name.
    fn has_in(&self, lib: &str, func: &str) -> bool {
        self.has(lib) || self.has(&format!("{lib}.{func}"))
    }
}

/// A host module for `require`.
pub struct Module {
    pub name: String,
    pub source: Vec<u8>,
}

/// Opens the standard libraries and applies the sandbox, one library at a
/// time: everything that depends on `allow` alone, so that a state built
/// with no names allowed can be built ahead of time (see `snapshot`).
/// [`personalise`] then adds the session's modules and seeds `math.random`.
/// Runs in protected mode. (`table` and `utf8` are opened as they are.)
///
/// # Safety
/// `l` is a live Vm-owned state; the stack is empty.
pub unsafe fn open(l: *mut lua_State, allow: &Allow) {
    // SAFETY: The caller passes a live Vm-owned state in protected mode with an
    // empty stack, so opening the libraries and every step below may raise.
    // `globals` and `loaded` are absolute indices, and each `open_*` (and
    // `coroutines::install`) leaves the stack as it found it, so they stay
    // valid; `lua_settop` then empties the stack, closing nothing.
    unsafe {
        ffi::luaL_openlibs(l);
        ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, ffi::LUA_RIDX_GLOBALS);
        let globals = ffi::lua_gettop(l);
        ffi::luaL_getsubtable(l, ffi::LUA_REGISTRYINDEX, c"_LOADED".as_ptr());
        let loaded = ffi::lua_gettop(l);
        open_io(l, globals, loaded, allow);
        open_debug(l, globals, loaded, allow);
        open_os(l, globals, allow);
        open_base(l, globals, allow);
        crate::coroutines::install(l, globals);
        open_string(l, globals, allow);
        open_package(l, globals, allow);
        crate::jsonlib::install(l, globals, loaded);
        ffi::lua_settop(l, 0);
    }
}

/// `io`: `io.stdout` (and `print`) write to the host's stream; unless `io`
/// is allowed, only [`IO_DEFAULT`] and the allowed functions are left.
///
/// # Safety
/// As for the other `open_*`: `l` is a live Vm-owned state in protected
/// mode, and `globals` and `loaded` are the absolute indices of `_G` and
/// `package.loaded`. Leaves the stack as it found it.
unsafe fn open_io(l: *mut lua_State, globals: c_int, loaded: c_int, allow: &Allow) {
    // SAFETY: The caller's contract (a live Vm-owned state in protected mode,
    // the absolute indices of `_G` and `package.loaded`) is what
    // `output::install` and `replace_library` need; `io` is pushed at an
    // absolute index for `install` and popped before `replace_library` reads
    // `_G.io` again.
    unsafe {
        lua::get_field(l, globals, "io");
        crate::output::install(l, globals, ffi::lua_gettop(l));
        ffi::lua_pop(l, 1);
        if !allow.has("io") {
            replace_library(l, globals, loaded, "io", IO, allow, IO_DEFAULT);
        }
    }
}

/// `debug`: always rebuilt, since even when `debug` is allowed, `sethook`
/// (a hook runs script code at every line or call) must be allowed by name.
/// The limits do not use hooks, so a script's hook cannot turn them off.
///
/// # Safety
/// As for [`open_io`].
unsafe fn open_debug(l: *mut lua_State, globals: c_int, loaded: c_int, allow: &Allow) {
    // SAFETY: As in `open_io`.
    unsafe {
        replace_library(l, globals, loaded, "debug", DEBUG, allow, &["traceback"]);
    }
}

/// `os`: stubs for the [`OS`] functions not allowed, an allowed `exit` that
/// ends the eval, `setlocale` limited to the C locale and a `clock` that
/// works on WASI.
///
/// # Safety
/// As for [`open_io`].
unsafe fn open_os(l: *mut lua_State, globals: c_int, allow: &Allow) {
    // SAFETY: As in `open_io`. The `os` table stays at its absolute index while
    // the stubs, closures and functions are stored into it with raw sets, and
    // is popped at the end; the original `setlocale` becomes upvalue 1 of
    // `setlocale_entry`, as it expects, and the stub names move into the Vm as
    // they are pushed.
    unsafe {
        lua::get_field(l, globals, "os");
        let os = ffi::lua_gettop(l);
        crate::files::install(l, os);
        for f in OS {
            if !allow.has_in("os", f) {
                push_stub(l, format!("os.{f}"));
                lua::set_field(l, os, f);
            }
        }
        if allow.has_in("os", "exit") {
            // Ends the eval, not the instance: see `exit_body`.
            ffi::lua_pushcfunction(l, exit_entry);
            lua::set_field(l, os, "exit");
        }
        // The sandbox has only the C locale; wasi-libc accepts any name
        // without changing anything, so report other locales as unavailable.
        lua::get_field(l, os, "setlocale");
        ffi::lua_pushcclosure(l, setlocale_entry, 1);
        lua::set_field(l, os, "setlocale");
        // `clock()` does not exist on WASI: os.clock reports time since the
        // session started (or, in deterministic mode, virtual time).
        ffi::lua_pushcfunction(l, clock_entry);
        lua::set_field(l, os, "clock");
        ffi::lua_pop(l, 1);
    }
}

/// The base library: a guarded `collectgarbage` and `xpcall`, stubs for
/// `dofile` and `loadfile` unless allowed, and `load` without binary chunks
/// unless `binary-chunks` is allowed. (`print` is set with `io.stdout`.)
///
/// # Safety
/// As for [`open_io`].
unsafe fn open_base(l: *mut lua_State, globals: c_int, allow: &Allow) {
    // SAFETY: As in `open_io`. Each wrapper is stored into `_G` as soon as it
    // is made: `collectgarbage_entry` and `load_entry` take the original from
    // `_G` as upvalue 1, as they expect, and `xpcall_entry` takes none.
    unsafe {
        lua::get_field(l, globals, "collectgarbage");
        ffi::lua_pushcclosure(l, collectgarbage_entry, 1);
        lua::set_field(l, globals, "collectgarbage");
        ffi::lua_pushcfunction(l, xpcall_entry);
        lua::set_field(l, globals, "xpcall");
        for name in ["dofile", "loadfile"] {
            if !allow.has(name) {
                push_stub(l, name);
                lua::set_field(l, globals, name);
            }
        }
        if !allow.has("binary-chunks") {
            lua::get_field(l, globals, "load");
            ffi::lua_pushcclosure(l, load_entry, 1);
            lua::set_field(l, globals, "load");
        }
    }
}

/// `string`: a stub for `dump` unless allowed, and a `rep` that refuses a
/// result over the string limit before allocating it.
///
/// # Safety
/// As for [`open_io`].
unsafe fn open_string(l: *mut lua_State, globals: c_int, allow: &Allow) {
    // SAFETY: As in `open_io`. The original `string.rep` becomes upvalue 1 of
    // `rep_entry`, as it expects, and the `string` table is popped at the end.
    unsafe {
        lua::get_field(l, globals, "string");
        let string = ffi::lua_gettop(l);
        if !allow.has("string.dump") {
            push_stub(l, "string.dump");
            lua::set_field(l, string, "dump");
        }
        lua::get_field(l, string, "rep");
        ffi::lua_pushcclosure(l, rep_entry, 1);
        lua::set_field(l, string, "rep");
        ffi::lua_pop(l, 1);
    }
}

/// `package`: unless allowed, no `loadlib`, `searchpath`, paths or
/// filesystem searchers. (The host's modules go into `package.preload` in
/// [`personalise`].)
///
/// # Safety
/// As for [`open_io`].
unsafe fn open_package(l: *mut lua_State, globals: c_int, allow: &Allow) {
    if allow.has("package") {
        return;
    }
    // SAFETY: As in `open_io`. The searchers past the first are cleared from
    // the end with raw sets on the table at `searchers`; `package` is popped
    // at the end.
    unsafe {
        lua::get_field(l, globals, "package");
        let package = ffi::lua_gettop(l);
        for f in ["loadlib", "searchpath"] {
            push_stub(l, format!("package.{f}"));
            lua::set_field(l, package, f);
        }
        for field in ["path", "cpath"] {
            ffi::lua_pushnil(l);
            lua::set_field(l, package, field);
        }
        // Keep only the preload searcher: `require` finds host modules
        // and never looks at a filesystem.
        lua::get_field(l, package, "searchers");
        let searchers = ffi::lua_gettop(l);
        let n = ffi::lua_rawlen(l, searchers) as i64;
        for i in (2..=n).rev() {
            ffi::lua_pushnil(l);
            ffi::lua_rawseti(l, searchers, i);
        }
        ffi::lua_pop(l, 2);
    }
}

/// What makes a state from [`open`] one session's: the host's modules go
/// into `package.preload`, and `math.random` is seeded (see
/// [`seed_random`]). Runs in protected mode before any script; raises a Lua
/// error (a string) when a module does not compile.
///
/// # Safety
/// `l` is a live Vm-owned state on which [`open`] has run and no script has;
/// the stack is empty.
pub unsafe fn personalise(l: *mut lua_State, modules: &[Module], seed: Option<i64>) {
    // SAFETY: The caller passes a live Vm-owned state in protected mode with
    // an empty stack. `package.loaded.package` is the library table `open`
    // left (no script has run), and its `preload` a table. Each module is
    // compiled by `luaL_loadbufferx`, which protects itself; its chunk name is
    // dropped before anything may raise, and the message for a module that
    // does not compile moves into the Vm (`push_owned`) before it is joined
    // with Lua's message and raised. `seed_random` leaves the stack as it
    // found it, and `lua_settop` then empties it, closing nothing.
    unsafe {
        ffi::luaL_getsubtable(l, ffi::LUA_REGISTRYINDEX, c"_LOADED".as_ptr());
        lua::get_field(l, ffi::lua_gettop(l), "package");
        lua::get_field(l, ffi::lua_gettop(l), "preload");
        let preload = ffi::lua_gettop(l);
        for module in modules {
            let chunk = lua::cstring(&format!("@{}", module.name));
            let status = ffi::luaL_loadbufferx(
                l,
                module.source.as_ptr().cast(),
                module.source.len(),
                chunk.as_ptr(),
                c"t".as_ptr(),
            );
            drop(chunk);
            if status != ffi::LUA_OK {
                let vm = Vm::from_state(l);
                vm.push_owned(l, format!("module '{}' does not compile: ", module.name));
                ffi::lua_insert(l, -2);
                ffi::lua_concat(l, 2);
                ffi::lua_error(l);
            }
            lua::set_field(l, preload, &module.name);
        }
        ffi::lua_settop(l, 0);
        seed_random(l, seed);
        ffi::lua_settop(l, 0);
    }
}

/// Seeds `math.random`: from `seed` in deterministic mode, else from the
/// system's entropy source, so that no two sessions (and no two instances
/// started from the same snapshot) draw the same sequence. (`os.time` and
/// `os.date` read the fixed clock through `clock`, unwrapped; `os.clock`
/// checks the mode itself.)
///
/// # Safety
/// `l` is a live Vm-owned state in protected mode on which no script has
/// run. Leaves the stack as it found it.
unsafe fn seed_random(l: *mut lua_State, seed: Option<i64>) {
    let seeds = match seed {
        Some(seed) => [seed, 0],
        None => entropy(),
    };
    // SAFETY: As in `open_io`. No script has run, so `math.randomseed` is the
    // library's own C function (`package.loaded.math` is the table `open`
    // left); `lua_call` runs it with two integers, in the caller's protected
    // mode. The registry's `_LOADED` and `math` are popped at the end.
    unsafe {
        ffi::luaL_getsubtable(l, ffi::LUA_REGISTRYINDEX, c"_LOADED".as_ptr());
        lua::get_field(l, ffi::lua_gettop(l), "math");
        lua::get_field(l, ffi::lua_gettop(l), "randomseed");
        let args: usize = if seed.is_some() { 1 } else { 2 };
        for n in &seeds[..args] {
            ffi::lua_pushinteger(l, *n);
        }
        ffi::lua_call(l, to_c_int(args), 0);
        ffi::lua_pop(l, 2);
    }
}

/// Two random integers from the C library's `getentropy` (WASI's random
/// source). Should it fail, the time and an address stand in, which is
/// what Lua's own `math.randomseed()` uses.
fn entropy() -> [i64; 2] {
    unsafe extern "C" {
        fn getentropy(buffer: *mut std::ffi::c_void, len: usize) -> c_int;
    }
    let mut bytes = [0u8; 16];
    // SAFETY: `bytes` is a writable buffer of the length passed, within
    // `getentropy`'s 256-byte maximum.
    let status = unsafe { getentropy(bytes.as_mut_ptr().cast(), bytes.len()) };
    if status != 0 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64);
        return [now, std::ptr::addr_of!(bytes) as i64];
    }
    let (a, b) = bytes.split_at(8);
    let word = |half: &[u8]| i64::from_le_bytes(half.try_into().unwrap_or([0; 8]));
    [word(a), word(b)]
}

/// Replaces `lib` with a table of stubs (and allowed originals), in both
/// `_G` and `package.loaded`.
///
/// # Safety
/// `l` is a live Vm-owned state in protected mode; `globals` and `loaded` are
/// the absolute indices of `_G` and `package.loaded`, and `_G[lib]` is a table.
unsafe fn replace_library(
    l: *mut lua_State,
    globals: c_int,
    loaded: c_int,
    lib: &str,
    funcs: &[&str],
    allow: &Allow,
    keep: &[&str],
) {
    // SAFETY: `original` and `table` are absolute indices of the tables this
    // function pushed. Each name is read from `original` with a raw get, or
    // replaced by a stub whose name moves into the Vm as it is pushed, and
    // stored with a raw set; the new table then goes into `_G` and
    // `package.loaded`, and `original` is popped. Pushes may raise a memory
    // error inside the caller's protected call, with nothing owned on this
    // frame: the `format!` that `allow.has` reads is dropped with the
    // condition.
    unsafe {
        lua::get_field(l, globals, lib);
        let original = ffi::lua_gettop(l);
        ffi::lua_createtable(l, 0, c_int::try_from(funcs.len() + keep.len()).unwrap_or(0));
        let table = ffi::lua_gettop(l);
        for f in funcs {
            let whole = allow.has(lib) && !(lib == "debug" && *f == "sethook");
            if whole || allow.has(&format!("{lib}.{f}")) {
                lua::get_field(l, original, f);
            } else {
                push_stub(l, format!("{lib}.{f}"));
            }
            lua::set_field(l, table, f);
        }
        for f in keep {
            lua::get_field(l, original, f);
            lua::set_field(l, table, f);
        }
        ffi::lua_pushvalue(l, table);
        lua::set_field(l, globals, lib);
        lua::set_field(l, loaded, lib);
        ffi::lua_pop(l, 1);
    }
}

/// `os.setlocale`: queries and the C locale go to the original; any other
/// locale fails, as on a system that has none installed.
///
/// # Safety
/// Called by Lua only, as the closure `open_os` makes (upvalue 1: the original
/// `os.setlocale`).
unsafe extern "C-unwind" fn setlocale_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls this closure on a live thread of a Vm-owned state
    // inside a protected call. The argument checks raise as the original's do,
    // with nothing owned: `categories` is an array of pointers to static
    // strings ending with null, as `luaL_checkoption` requires. `string_bytes`
    // reads argument 1 without converting, and `call_original` calls the
    // original in upvalue 1.
    unsafe {
        // The arguments are checked here, as the original checks them, so
        // that a bad one is reported against `setlocale` at the caller's line.
        ffi::luaL_optlstring(l, 1, std::ptr::null(), std::ptr::null_mut());
        let categories = [
            c"all".as_ptr(),
            c"collate".as_ptr(),
            c"ctype".as_ptr(),
            c"monetary".as_ptr(),
            c"numeric".as_ptr(),
            c"time".as_ptr(),
            std::ptr::null(),
        ];
        ffi::luaL_checkoption(l, 2, c"all".as_ptr(), categories.as_ptr());
        if let Some(name) = lua::string_bytes(l, 1)
            && !matches!(name, b"" | b"C" | b"POSIX" | b"C.UTF-8")
        {
            ffi::lua_pushnil(l);
            return 1;
        }
        lua::call_original(l, 1);
        1
    }
}

/// `xpcall`, as the reference implements it, except that the message
/// handler is guarded: once a limit has tripped, the script's handler is not
/// called: the eval is over, and the handler would only meet the trip again.
///
/// # Safety
/// Called by Lua only, as `xpcall`.
unsafe extern "C-unwind" fn xpcall_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls this C function on a live thread of a Vm-owned state
    // inside a protected call. `luaL_checktype` raises, with nothing owned,
    // unless argument 2 is a function. The stack is then arranged as the
    // reference's `luaB_xpcall` arranges it, within the slots Lua gives a C
    // function: the guarded handler (a closure over the script's handler) at 2,
    // then `true` and the function below the arguments. `lua_pcallk` runs the
    // function with `finish_xpcall` as continuation and context 2, the context
    // `finish_xpcall` is called with here.
    unsafe {
        let n = ffi::lua_gettop(l);
        ffi::luaL_checktype(l, 2, ffi::LUA_TFUNCTION);
        ffi::lua_pushvalue(l, 2);
        ffi::lua_pushcclosure(l, guarded_handler, 1);
        ffi::lua_replace(l, 2);
        ffi::lua_pushboolean(l, 1);
        ffi::lua_pushvalue(l, 1);
        ffi::lua_rotate(l, 3, 2);
        let status = ffi::lua_pcallk(l, n - 2, ffi::LUA_MULTRET, 2, 2, Some(finish_xpcall));
        finish_xpcall(l, status, 2)
    }
}

/// `xpcall`'s last step, after the protected call returns or as its
/// continuation after a yield.
///
/// # Safety
/// Called only by `xpcall_entry`, directly or as the continuation it gives
/// `lua_pcallk`, with the context 2.
unsafe extern "C-unwind" fn finish_xpcall(
    l: *mut lua_State,
    status: c_int,
    extra: ffi::lua_KContext,
) -> c_int {
    // SAFETY: This runs on the live thread of an `xpcall` call with `true` at
    // index 3 (see `xpcall_entry`). After an error the error value is on top,
    // and the two pushes take free slots without allocating; otherwise the
    // results sit above the `extra` values below them, as the reference's
    // `finishpcall` counts. Nothing here raises.
    unsafe {
        if status != ffi::LUA_OK && status != ffi::LUA_YIELD {
            ffi::lua_pushboolean(l, 0);
            ffi::lua_pushvalue(l, -2);
            return 2;
        }
        ffi::lua_gettop(l) - extra as c_int
    }
}

/// The message handler `xpcall_entry` installs: the script's handler, unless a
/// limit has tripped.
///
/// # Safety
/// Called by Lua only, as the closure `xpcall_entry` makes (upvalue 1: the
/// script's handler).
unsafe extern "C-unwind" fn guarded_handler(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls the handler on a live thread of a Vm-owned state with
    // the error value as argument 1, so `Vm::from_state` is valid. `lua_settop`
    // only drops values, and `call_original` calls the script's handler in
    // upvalue 1 with the error value; whatever it raises is handled as Lua
    // handles errors in a message handler, with nothing owned on this frame.
    unsafe {
        let vm = Vm::from_state(l);
        if vm.tripped().is_some() {
            ffi::lua_settop(l, 1);
            return 1;
        }
        lua::call_original(l, 1);
        1
    }
}

/// Pushes a function that raises `NAME is sandboxed`. The name moves into
/// the Vm while it is pushed, since the push may raise a memory error.
///
/// # Safety
/// `l` is a live Vm-owned state with a free slot. May raise a memory error.
unsafe fn push_stub(l: *mut lua_State, name: impl Into<Vec<u8>>) {
    // SAFETY: `l` is a live thread of a Vm-owned state with a free slot
    // (caller), so `Vm::from_state` is valid, and `push_owned` keeps the name
    // in the Vm while it is pushed. `lua_pushcclosure` makes it upvalue 1 of
    // `stub_entry`, which expects a string there. A memory error leaves nothing
    // owned on this frame.
    unsafe {
        Vm::from_state(l).push_owned(l, name);
        ffi::lua_pushcclosure(l, stub_entry, 1);
    }
}

/// Whether the value at `idx` is one of the sandbox's stubs (a name the
/// session has sandboxed).
///
/// # Safety
/// `l` is a live state and `idx` an acceptable index. Never raises.
pub unsafe fn is_stub(l: *mut lua_State, idx: c_int) -> bool {
    // SAFETY: `lua_tocfunction` only reads the value at the caller's index.
    let f = unsafe { ffi::lua_tocfunction(l, idx) };
    f.is_some_and(|f| std::ptr::fn_addr_eq(f, stub_entry as ffi::lua_CFunction))
}

/// A sandboxed name's stand-in; see [`stub_body`].
///
/// # Safety
/// Called by Lua only, as the closure `push_stub` makes (upvalue 1: the name).
unsafe extern "C-unwind" fn stub_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls a stub on a live thread of a Vm-owned state inside a
    // protected call; `stub_body` pushes the tagged message and returns with
    // nothing owned on its frame, so `lua_error` unwinds only frames without
    // destructors.
    unsafe {
        let Raise = stub_body(l);
        ffi::lua_error(l)
    }
}

/// Pushes `NAME is sandboxed`, tagged [`ErrorKind::Sandboxed`].
///
/// # Safety
/// As for [`stub_entry`], from it.
unsafe fn stub_body(l: *mut lua_State) -> Raise {
    // SAFETY: Upvalue 1 is the name `push_stub` stored, a string, so `to_bytes`
    // reads it without converting, and the closure keeps it alive while `name`
    // is used. The message is built before anything is pushed and moves into
    // the Vm through `raise_tagged`, which pushes it into the stub's free
    // slots.
    unsafe {
        let name = lua::to_bytes(l, ffi::lua_upvalueindex(1)).unwrap_or_default();
        let msg = format!("{} is sandboxed", String::from_utf8_lossy(name));
        raise_tagged(l, ErrorKind::Sandboxed, msg)
    }
}

/// `string.rep`; see [`rep_body`].
///
/// # Safety
/// Called by Lua only, as the closure `open_string` makes (upvalue 1: the
/// original `string.rep`).
unsafe extern "C-unwind" fn rep_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls this closure on a live thread of a Vm-owned state
    // inside a protected call. `rep_body` returns `Err` only with the error
    // pushed and nothing owned left on its frame, so `lua_error` unwinds only
    // frames without destructors.
    unsafe {
        match rep_body(l) {
            Ok(n) => n,
            Err(Raise) => ffi::lua_error(l),
        }
    }
}

/// `string.rep` that refuses a result over the string limit before
/// allocating anything, answers an empty result itself, then defers to the
/// original.
///
/// # Safety
/// As for [`rep_entry`], from it.
unsafe fn rep_body(l: *mut lua_State) -> Result<c_int, Raise> {
    // SAFETY: The `luaL_check*`/`luaL_opt*` calls check the arguments as the
    // original does (converting numbers in place, which may raise) while this
    // frame owns nothing, and `Vm::from_state` is valid on the live thread. The
    // sizes are computed in `u128`, which these operands cannot overflow. The
    // refusals push a static message (`push_error`) or move theirs into the Vm
    // (`raise_trip`) before anything can raise; otherwise `call_original` calls
    // the original in upvalue 1 with the checked arguments.
    unsafe {
        let mut len = 0usize;
        let mut sep = 0usize;
        ffi::luaL_checklstring(l, 1, &mut len);
        let n = ffi::luaL_checkinteger(l, 2);
        ffi::luaL_optlstring(l, 3, c"".as_ptr(), &mut sep);
        if n > 0 {
            let n = n as u128;
            let total = (len as u128) * n + (sep as u128) * (n - 1);
            // The original refuses some sizes by itself, with its own
            // catchable "resulting string too large", before allocating
            // (its test, with its INT_MAX bound on wasm32).
            let lua_refuses = (len as u128 + sep as u128) > (i32::MAX as u128) / n;
            let vm = Vm::from_state(l);
            let max = vm.limits().max_string_bytes;
            if total == 0 {
                // An empty piece (and separator) repeated: the original
                // would copy nothing n - 1 times, up to 2^63 of them in
                // one C call that no limit interrupts.
                ffi::lua_pushstring(l, c"".as_ptr());
                return Ok(1);
            }
            if lua_refuses {
                // Raised here so the position is the caller's, as when the
                // original is called directly.
                lua::push_error(l, 1, "resulting string too large");
                return Err(Raise);
            }
            if total > u128::from(max) {
                let message = format!(
                    "{}string.rep would make a string of {total} bytes, over the limit of {max} (max-string-bytes)",
                    lua::position(l, 1)
                );
                crate::limits::raise_trip(l, vm, Kind::Error(ErrorKind::StringSize), message);
                return Err(Raise);
            }
        }
        lua::call_original(l, 1);
        Ok(1)
    }
}

/// `load`; see [`load_body`].
///
/// # Safety
/// Called by Lua only, as the closure `open_base` makes (upvalue 1: the
/// original `load`).
unsafe extern "C-unwind" fn load_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls this closure on a live thread of a Vm-owned state
    // inside a protected call. `load_body` returns `Err` only with the error
    // pushed and nothing owned left on its frame, so `lua_error` unwinds only
    // frames without destructors.
    unsafe {
        match load_body(l) {
            Ok(n) => n,
            Err(Raise) => ffi::lua_error(l),
        }
    }
}

/// `load` for text chunks only. Argument checks happen here so their
/// messages name `load`; the original does the rest.
///
/// # Safety
/// As for [`load_entry`], from it.
unsafe fn load_body(l: *mut lua_State) -> Result<c_int, Raise> {
    // SAFETY: `lua_isstring` and the `luaL_opt*`/`luaL_checktype` checks read
    // or convert the arguments, and may raise while this frame owns nothing. A
    // string chunk is read by `to_bytes` (a number is converted first, still
    // owning nothing) while it is on the stack, and refusing it pushes a static
    // message. For a reader function, argument 3 is a string or absent once
    // `luaL_optlstring` has checked it, so `mode` borrows it while the new mode
    // is built; `lua_settop` only adds nils, and the new mode moves into the Vm
    // through `push_owned` before its push may raise. `call_original` calls the
    // original in upvalue 1.
    unsafe {
        // Numbers count as strings here, as in the original `load`.
        let is_string = ffi::lua_isstring(l, 1) != 0;
        ffi::luaL_optlstring(l, 2, c"".as_ptr(), std::ptr::null_mut());
        ffi::luaL_optlstring(l, 3, c"bt".as_ptr(), std::ptr::null_mut());
        if is_string {
            let chunk = lua::to_bytes(l, 1).unwrap_or_default();
            if chunk.first() == Some(&0x1b) {
                // `load` reports every refused chunk as `fail, message`; a
                // script that raises it (`assert(load(...))`) ends sandboxed.
                let message = b"load of binary chunks is sandboxed";
                Vm::from_state(l).tag(message, ErrorKind::Sandboxed);
                ffi::lua_pushnil(l);
                lua::push_bytes(l, message);
                return Ok(2);
            }
        } else {
            ffi::luaL_checktype(l, 1, ffi::LUA_TFUNCTION);
            // A reader function's chunk is only seen by Lua: refuse binary
            // through the mode instead.
            let mode = lua::to_bytes(l, 3).unwrap_or(b"bt");
            let text: Vec<u8> = mode.iter().copied().filter(|&c| c != b'b').collect();
            if ffi::lua_gettop(l) < 3 {
                ffi::lua_settop(l, 3);
            }
            Vm::from_state(l).push_owned(l, text);
            ffi::lua_replace(l, 3);
        }
        Ok(lua::call_original(l, ffi::LUA_MULTRET))
    }
}

/// `os.clock`; see [`Vm::cpu_seconds`].
///
/// # Safety
/// Called by Lua only, as `os.clock`.
unsafe extern "C-unwind" fn clock_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls this C function on a live thread of a Vm-owned state,
    // so `Vm::from_state` is valid; pushing a number takes one of its free
    // slots and neither allocates nor raises.
    unsafe {
        let vm = Vm::from_state(l);
        ffi::lua_pushnumber(l, vm.cpu_seconds());
        1
    }
}

/// `os.exit`, when allowed; see [`exit_body`].
///
/// # Safety
/// Called by Lua only, as `os.exit`.
unsafe extern "C-unwind" fn exit_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls this C function on a live thread of a Vm-owned state
    // inside a protected call. `exit_body` pushes the trip's message and
    // returns with nothing owned on its frame, so `lua_error` unwinds only
    // frames without destructors.
    unsafe {
        let Raise = exit_body(l);
        ffi::lua_error(l)
    }
}

/// `os.exit([code])`, when allowed: parses the status as the reference does
/// (`true` or nothing is 0, `false` is 1), then ends the eval like a limit,
/// so `pcall` cannot catch it and nothing runs after it. The eval succeeds
/// with this exit code; the instance and the session go on.
///
/// # Safety
/// As for [`exit_entry`], from it.
unsafe fn exit_body(l: *mut lua_State) -> Raise {
    // SAFETY: `lua_type`, `lua_toboolean` and `luaL_optinteger` read argument 1
    // (the last raises for a bad one, with nothing owned), and `Vm::from_state`
    // is valid on the live thread. The message moves into the Vm through
    // `raise_trip`, which pushes it into a free slot.
    unsafe {
        let status = if ffi::lua_type(l, 1) == ffi::LUA_TBOOLEAN {
            if ffi::lua_toboolean(l, 1) != 0 { 0 } else { 1 }
        } else {
            let code = ffi::luaL_optinteger(l, 1, 0);
            i32::try_from(code).unwrap_or(if code < 0 { i32::MIN } else { i32::MAX })
        };
        let vm = Vm::from_state(l);
        crate::limits::raise_trip(l, vm, Kind::Exit(status), format!("os.exit({status})"));
        Raise
    }
}

/// `collectgarbage`, with its arguments checked first.
///
/// # Safety
/// Called by Lua only, as the closure `open_base` makes (upvalue 1: the
/// original `collectgarbage`).
unsafe extern "C-unwind" fn collectgarbage_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls this closure on a live thread of a Vm-owned state
    // inside a protected call. `check_collector_options` raises only through
    // lauxlib's checks, with nothing owned, and `call_original` calls the
    // original in upvalue 1 with the checked arguments, returning all its
    // results.
    unsafe {
        check_collector_options(l);
        lua::call_original(l, ffi::LUA_MULTRET)
    }
}

/// The largest `stepsize` (log2 of bytes) accepted by
/// `collectgarbage("incremental", ...)`: past it the collector's step
/// arithmetic overflows on wasm32 and every allocation runs a full cycle.
const MAX_GC_STEPSIZE: i64 = 20;

/// Validates `collectgarbage`'s arguments before the original sees them, so
/// that errors name `collectgarbage` and no parameter can make the
/// collector run away: negative parameters (which the reference stores into
/// unsigned bytes) and a step size past [`MAX_GC_STEPSIZE`] are refused.
///
/// # Safety
/// `l` runs `collectgarbage` (see [`collectgarbage_entry`]).
unsafe fn check_collector_options(l: *mut lua_State) {
    // SAFETY: `options` is an array of pointers to static strings ending with
    // null, as `luaL_checkoption` requires, and it owns nothing. The lauxlib
    // calls only read the arguments or raise an argument error, which unwinds
    // this frame without leaking anything.
    unsafe {
        let options = [
            c"stop".as_ptr(),
            c"restart".as_ptr(),
            c"collect".as_ptr(),
            c"count".as_ptr(),
            c"step".as_ptr(),
            c"setpause".as_ptr(),
            c"setstepmul".as_ptr(),
            c"isrunning".as_ptr(),
            c"generational".as_ptr(),
            c"incremental".as_ptr(),
            std::ptr::null(),
        ];
        let option = ffi::luaL_checkoption(l, 1, c"collect".as_ptr(), options.as_ptr());
        if option == 4 {
            // "step": any integer, as the reference reads it.
            ffi::luaL_optinteger(l, 2, 0);
        }
        let params: c_int = match option {
            5 | 6 => 1,
            8 => 2,
            9 => 3,
            _ => 0,
        };
        for arg in 2..2 + params {
            let value = ffi::luaL_optinteger(l, arg, 0);
            if value < 0 {
                ffi::luaL_argerror(l, arg, c"must not be negative".as_ptr());
            }
            if option == 9 && arg == 4 && value > MAX_GC_STEPSIZE {
                ffi::luaL_argerror(l, arg, c"step size must be at most 20".as_ptr());
            }
        }
    }
}
