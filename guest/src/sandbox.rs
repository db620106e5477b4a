//! The standard library as a script sees it: the sandboxed names, guarded
//! `load`, `string.rep`, `collectgarbage` and `os.exit`, deterministic clock
//! and random, and host modules for `require`. (`print` and `io.stdout` are
//! in `output`, `json` in `jsonlib`.)

use std::ffi::c_int;

use crate::lua::{self, Raise, ffi, lua_State};
use crate::vm::{ErrorKind, Kind, Vm, to_c_int};

/// The names the sandbox removes unless the config allows them back, by
/// library: each is nil in its table, so that feature detection (`if
/// io.popen then`) sees it as absent, and a script that calls one anyway
/// ends with an error that says it is sandboxed (see [`explain`]).
/// docs/security.md gives the reason for each.
const REMOVED: &[(&str, &[&str])] = &[
    ("io", &["popen"]),
    ("os", &["execute"]),
    (
        "debug",
        &[
            "debug",
            "getlocal",
            "getregistry",
            "getuservalue",
            "sethook",
            "setcstacklimit",
            "setlocal",
            "setupvalue",
            "setuservalue",
            "upvalueid",
            "upvaluejoin",
        ],
    ),
    ("string", &["dump"]),
    ("package", &["loadlib"]),
];

/// `debug` functions that every script has in a safe version (see
/// `debuglib`), and that the config can allow back as the originals.
pub const DEBUG_SAFE: &[&str] = &["getinfo", "gethook", "getupvalue", "setmetatable"];

/// Names `allow` accepted before these functions became the library's own
/// for every script: still accepted, and allowing them changes nothing.
const ALWAYS_PRESENT: &[&str] = &[
    "io.close",
    "io.flush",
    "io.input",
    "io.lines",
    "io.open",
    "io.output",
    "io.read",
    "io.tmpfile",
    "io.type",
    "io.write",
    "os.exit",
    "os.getenv",
    "os.remove",
    "os.rename",
    "os.tmpname",
    "dofile",
    "loadfile",
];

/// Names `require` already returns: a host module may not take them.
/// (`json` is not one: a host module or a file named `json` comes before
/// moonbox's own; see [`open_json_searcher`].)
pub const STANDARD_LIBRARIES: &[&str] = &[
    "_G",
    "coroutine",
    "debug",
    "io",
    "math",
    "os",
    "package",
    "string",
    "table",
    "utf8",
];

/// What `require` searches for a Lua file, in the session's files (the
/// working directory is the root of its namespace).
const PACKAGE_PATH: &str = "./?.lua;./?/init.lua";

/// Every name `config.allow` accepts.
pub fn allowable_names() -> Vec<String> {
    let mut names = vec!["io".to_owned(), "os".to_owned(), "debug".to_owned()];
    names.extend(ALWAYS_PRESENT.iter().map(|s| (*s).to_owned()));
    for (lib, funcs) in REMOVED {
        names.extend(funcs.iter().map(|f| format!("{lib}.{f}")));
    }
    names.extend(DEBUG_SAFE.iter().map(|f| format!("debug.{f}")));
    names.push("debug.getmetatable".to_owned());
    names.extend(["package", "binary-chunks"].map(str::to_owned));
    names.sort_by(|a, b| (a.contains('.'), a).cmp(&(b.contains('.'), b)));
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

    /// `lib.func` is allowed by its own name or by its library's name, except
    /// `debug.sethook`, which only its own name allows: a hook runs script
    /// code at every line or call.
    pub fn has_in(&self, lib: &str, func: &str) -> bool {
        let whole = self.has(lib) && !(lib == "debug" && func == "sethook");
        whole || self.has(&format!("{lib}.{func}"))
    }

    /// The names this config leaves removed, as `lib.func`.
    pub fn removed(&self) -> Vec<String> {
        let mut removed = Vec::new();
        for (lib, funcs) in REMOVED {
            if *lib == "package" && self.has("package") {
                continue;
            }
            for f in *funcs {
                if !self.has_in(lib, f) {
                    removed.push(format!("{lib}.{f}"));
                }
            }
        }
        removed
    }
}

/// A host module for `require`.
pub struct Module {
    pub name: String,
    pub source: Vec<u8>,
}

/// The names a session's sandbox removed (see [`Allow::removed`]), kept in
/// the Vm for [`explain`] and `check`.
#[derive(Default)]
pub struct Removed(pub std::cell::RefCell<Vec<String>>);

impl crate::vm::Extension for Removed {}

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
        open_io(l, globals, allow);
        crate::debuglib::install(l, globals, allow);
        open_os(l, globals, allow);
        open_base(l, globals, allow);
        crate::coroutines::install(l, globals);
        open_string(l, globals, allow);
        open_package(l, globals, allow);
        crate::jsonlib::install(l, globals, loaded);
        open_json_searcher(l, globals, loaded);
        ffi::lua_settop(l, 0);
    }
}

/// Sets `_G[lib][f]` to nil for each of `lib`'s [`REMOVED`] names that
/// `allow` does not allow back. The library table is the one in
/// `package.loaded` too, so `require(lib)` sees the same.
///
/// # Safety
/// `l` is a live Vm-owned state in protected mode, `globals` the absolute
/// index of `_G`, and `_G[lib]` a table. Leaves the stack as it found it.
pub unsafe fn remove_names(l: *mut lua_State, globals: c_int, lib: &str, allow: &Allow) {
    // SAFETY: `_G[lib]` is a table (caller), pushed at an absolute index; each
    // raw set of nil stores into it (a key that exists needs no allocation; one
    // that does not may raise a memory error, with nothing owned here), and the
    // table is popped at the end.
    unsafe {
        lua::get_field(l, globals, lib);
        let table = ffi::lua_gettop(l);
        for (_, funcs) in REMOVED.iter().filter(|(name, _)| *name == lib) {
            for f in *funcs {
                if !allow.has_in(lib, f) {
                    ffi::lua_pushnil(l);
                    lua::set_field(l, table, f);
                }
            }
        }
        ffi::lua_pop(l, 1);
    }
}

/// `io`: the reference library, whose files are the session's own (see
/// `files`), with `io.stdout` and `io.stderr` writing to the host's stream
/// and an empty `io.stdin` (see `output`). Only `io.popen` is removed.
///
/// # Safety
/// As for the other `open_*`: `l` is a live Vm-owned state in protected
/// mode, and `globals` is the absolute index of `_G`. Leaves the stack as it
/// found it.
unsafe fn open_io(l: *mut lua_State, globals: c_int, allow: &Allow) {
    // SAFETY: The caller's contract (a live Vm-owned state in protected mode,
    // the absolute index of `_G`) is what `output::install` and `remove_names`
    // need; `io` is pushed at an absolute index for `install` and popped
    // before `remove_names` reads `_G.io` again.
    unsafe {
        lua::get_field(l, globals, "io");
        crate::output::install(l, globals, ffi::lua_gettop(l));
        ffi::lua_pop(l, 1);
        if !allow.has("io") {
            remove_names(l, globals, "io", allow);
        }
    }
}

/// `os`: `os.execute` removed unless allowed; `os.exit` that ends the eval
/// (not the instance); `os.remove`, `os.rename` and `os.tmpname` on the
/// session's files; `os.getenv` over an empty environment (see `environ`);
/// `setlocale` limited to the C locale and a `clock` that works on WASI.
///
/// # Safety
/// As for [`open_io`].
unsafe fn open_os(l: *mut lua_State, globals: c_int, allow: &Allow) {
    // SAFETY: As in `open_io`. The `os` table stays at its absolute index while
    // the closures and functions are stored into it with raw sets, and is
    // popped at the end; the original `setlocale` becomes upvalue 1 of
    // `setlocale_entry`, as it expects.
    unsafe {
        remove_names(l, globals, "os", allow);
        lua::get_field(l, globals, "os");
        let os = ffi::lua_gettop(l);
        // `os.tmpname` and `io.tmpfile` on the session's files.
        crate::files::install(l, os);
        // Ends the eval, not the instance: see `exit_body`.
        ffi::lua_pushcfunction(l, exit_entry);
        lua::set_field(l, os, "exit");
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

/// The base library: a guarded `collectgarbage` and `xpcall`; `loadfile`
/// and `dofile` on the session's files, reading an empty standard input
/// when given no name; and `load`, `loadfile` and `dofile` without binary
/// chunks unless `binary-chunks` is allowed. (`print` is set with
/// `io.stdout`.)
///
/// # Safety
/// As for [`open_io`].
unsafe fn open_base(l: *mut lua_State, globals: c_int, allow: &Allow) {
    // SAFETY: As in `open_io`. Each wrapper is stored into `_G` as soon as it
    // is made: `collectgarbage_entry` and `load_entry` take the original from
    // `_G` as upvalue 1, as they expect; `loadfile_entry` takes the original
    // `loadfile` and `load` as upvalues 1 and 2, and a boolean (binary chunks
    // allowed) as upvalue 3; `xpcall_entry` and `dofile_entry` take none but
    // the boolean.
    unsafe {
        lua::get_field(l, globals, "collectgarbage");
        ffi::lua_pushcclosure(l, collectgarbage_entry, 1);
        lua::set_field(l, globals, "collectgarbage");
        ffi::lua_pushcfunction(l, xpcall_entry);
        lua::set_field(l, globals, "xpcall");
        let binary = allow.has("binary-chunks");
        lua::get_field(l, globals, "loadfile");
        lua::get_field(l, globals, "load");
        ffi::lua_pushboolean(l, c_int::from(binary));
        ffi::lua_pushcclosure(l, loadfile_entry, 3);
        lua::set_field(l, globals, "loadfile");
        ffi::lua_pushboolean(l, c_int::from(binary));
        ffi::lua_pushcclosure(l, dofile_entry, 1);
        lua::set_field(l, globals, "dofile");
        if !binary {
            lua::get_field(l, globals, "load");
            ffi::lua_pushcclosure(l, load_entry, 1);
            lua::set_field(l, globals, "load");
        }
    }
}

/// `string`: `dump` removed unless allowed, and a `rep` that refuses a
/// result over the string limit before allocating it.
///
/// # Safety
/// As for [`open_io`].
unsafe fn open_string(l: *mut lua_State, globals: c_int, allow: &Allow) {
    // SAFETY: As in `open_io`. The original `string.rep` becomes upvalue 1 of
    // `rep_entry`, as it expects, and the `string` table is popped at the end.
    unsafe {
        remove_names(l, globals, "string", allow);
        lua::get_field(l, globals, "string");
        let string = ffi::lua_gettop(l);
        lua::get_field(l, string, "rep");
        ffi::lua_pushcclosure(l, rep_entry, 1);
        lua::set_field(l, string, "rep");
        ffi::lua_pop(l, 1);
    }
}

/// `package`: `require` searches the host's modules (`package.preload`,
/// filled in [`personalise`]), then Lua files on [`PACKAGE_PATH`] in the
/// session's files. Unless `package` is allowed, `loadlib` is removed and
/// no searcher looks for C libraries (`package.cpath` is empty).
///
/// # Safety
/// As for [`open_io`].
unsafe fn open_package(l: *mut lua_State, globals: c_int, allow: &Allow) {
    // SAFETY: As in `open_io`. The paths are pushed and stored with raw sets
    // on the table at `package`; the searchers past the second are cleared
    // from the end with raw sets on the table at `searchers`; both are popped
    // at the end.
    unsafe {
        lua::get_field(l, globals, "package");
        let package = ffi::lua_gettop(l);
        // `luaopen_package` found no `LUA_PATH` (see `environ`) and set the
        // paths of an installed interpreter; the session's are its files.
        lua::push_bytes(l, PACKAGE_PATH.as_bytes());
        lua::set_field(l, package, "path");
        if allow.has("package") {
            ffi::lua_pop(l, 1);
            return;
        }
        lua::push_bytes(l, b"");
        lua::set_field(l, package, "cpath");
        ffi::lua_pop(l, 1);
        remove_names(l, globals, "package", allow);
        lua::get_field(l, globals, "package");
        let package = ffi::lua_gettop(l);
        lua::get_field(l, package, "searchers");
        let searchers = ffi::lua_gettop(l);
        let n = ffi::lua_rawlen(l, searchers) as i64;
        for i in (3..=n).rev() {
            ffi::lua_pushnil(l);
            ffi::lua_rawseti(l, searchers, i);
        }
        ffi::lua_pop(l, 2);
    }
}

/// `require("json")`: a host module or a Lua file named `json` comes first;
/// moonbox's own `json` (the global every script has) is found last, by a
/// searcher at the end of `package.searchers`. `jsonlib` put it in
/// `package.loaded`, where it would hide the others, so it is taken out.
///
/// # Safety
/// As for [`open_io`], with `loaded` the absolute index of `package.loaded`.
unsafe fn open_json_searcher(l: *mut lua_State, globals: c_int, loaded: c_int) {
    // SAFETY: As in `open_io`. `_G.json` is the table `jsonlib::install` just
    // set; it becomes upvalue 1 of the searcher, as `json_searcher` expects.
    // `package.searchers` is a sequence (see `open_package`), appended to with
    // a raw set; the two tables pushed are popped at the end.
    unsafe {
        ffi::lua_pushnil(l);
        lua::set_field(l, loaded, "json");
        lua::get_field(l, globals, "package");
        lua::get_field(l, ffi::lua_gettop(l), "searchers");
        let searchers = ffi::lua_gettop(l);
        lua::get_field(l, globals, "json");
        ffi::lua_pushcclosure(l, json_searcher, 1);
        let n = ffi::lua_rawlen(l, searchers) as i64;
        ffi::lua_rawseti(l, searchers, n + 1);
        ffi::lua_pop(l, 2);
    }
}

/// The searcher [`open_json_searcher`] appends: for `json`, a loader that
/// returns moonbox's library; for any other name, nothing.
///
/// # Safety
/// Called by Lua only, as `require` calls a searcher (upvalue 1: the
/// library).
unsafe extern "C-unwind" fn json_searcher(l: *mut lua_State) -> c_int {
    // SAFETY: `require` calls a searcher with the name as argument 1, a
    // string; `string_bytes` reads it without converting. The loader is a
    // closure over upvalue 1 (a push and a closure, which may raise a memory
    // error with nothing owned here).
    unsafe {
        if lua::string_bytes(l, 1) != Some(b"json") {
            // Nothing to add to `require`'s "module not found" message.
            return 0;
        }
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
        ffi::lua_pushcclosure(l, json_loader, 1);
        lua::push_bytes(l, b":built-in:");
        2
    }
}

/// The loader [`json_searcher`] returns: moonbox's `json` library.
///
/// # Safety
/// Called by Lua only, as `require` calls a loader (upvalue 1: the library).
unsafe extern "C-unwind" fn json_loader(l: *mut lua_State) -> c_int {
    // SAFETY: Pushing an upvalue takes a free slot without allocating.
    unsafe {
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
        1
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

/// The message for a script that called a name the sandbox removed: when
/// `message` is Lua's own `attempt to call a nil value (field 'NAME')`
/// (or `method`, `local`, `upvalue`), raised by the Lua function at `level`
/// (the position in front of the message is that function's, so the error
/// comes from the call itself, not from `error`), and `NAME` is the last
/// part of a name in `removed`, the message that names it as sandboxed and
/// says how to allow it; else `None`. A script that catches the error sees
/// Lua's own message, as under `lua5.4` for a name that is absent.
///
/// # Safety
/// `l` is a live state. Neither allocates on the Lua heap nor raises.
pub unsafe fn explain(
    l: *mut lua_State,
    level: c_int,
    message: &str,
    removed: &[String],
) -> Option<String> {
    // SAFETY: `position` only reads call frames of the live state.
    let position = unsafe { lua::position(l, level) };
    let rest = message.strip_prefix(position.as_str())?;
    if position.is_empty() {
        return None;
    }
    let what = rest.strip_prefix("attempt to call a nil value (")?;
    let (_, quoted) = ["field ", "method ", "local ", "upvalue "]
        .iter()
        .find_map(|kind| what.strip_prefix(kind).map(|q| (kind, q)))?;
    let name = quoted.strip_prefix('\'')?.strip_suffix("')")?;
    let full = removed
        .iter()
        .find(|r| r.rsplit_once('.').is_some_and(|(_, f)| f == name))?;
    Some(format!(
        "{position}{full} is sandboxed: it is absent (nil) in this session; do without it, or have the host allow \"{full}\""
    ))
}

/// `loadfile`; see [`loadfile_body`].
///
/// # Safety
/// Called by Lua only, as the closure `open_base` makes (upvalues: the
/// original `loadfile`, the original `load`, and whether binary chunks are
/// allowed).
unsafe extern "C-unwind" fn loadfile_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls this closure on a live thread of a Vm-owned state
    // inside a protected call; `loadfile_body` owns nothing that a raise
    // would skip.
    unsafe { loadfile_body(l) }
}

/// `loadfile([filename [, mode [, env]]])` as the reference's, on the
/// session's files (see `files`), except that with no file name it reads
/// the standard input, which is empty (a chunk named `=stdin` that does
/// nothing), and that binary chunks are refused through the mode unless
/// `binary-chunks` is allowed.
///
/// # Safety
/// As for [`loadfile_entry`], from it.
unsafe fn loadfile_body(l: *mut lua_State) -> c_int {
    // SAFETY: `luaL_optlstring` checks the mode as the original does (it may
    // raise, with nothing owned); `to_bytes` then reads it while it is on the
    // stack, and the new mode moves into the Vm through `push_owned` before
    // its push may raise. `lua_settop` only adds nils below an absent `env`,
    // which stays absent. With no name, the original `load` (upvalue 2) is
    // called with the empty chunk and the caller's mode and `env`, as many
    // arguments as the caller passed; otherwise `call_original` calls the
    // original `loadfile` (upvalue 1) with the arguments. Both calls may
    // raise, with nothing owned here.
    unsafe {
        let binary = ffi::lua_toboolean(l, ffi::lua_upvalueindex(3)) != 0;
        ffi::luaL_optlstring(l, 2, c"bt".as_ptr(), std::ptr::null_mut());
        let n = ffi::lua_gettop(l);
        if !binary {
            let mode = lua::to_bytes(l, 2).unwrap_or(b"bt");
            let text: Vec<u8> = mode.iter().copied().filter(|&c| c != b'b').collect();
            if n < 2 {
                ffi::lua_settop(l, 2);
            }
            Vm::from_state(l).push_owned(l, text);
            ffi::lua_replace(l, 2);
        }
        if ffi::lua_isnoneornil(l, 1) != 0 {
            let args = ffi::lua_gettop(l).max(2);
            ffi::lua_settop(l, args);
            ffi::lua_pushvalue(l, ffi::lua_upvalueindex(2));
            ffi::lua_replace(l, 1);
            lua::push_bytes(l, b"");
            lua::push_bytes(l, b"=stdin");
            // Now: load, mode, [env], "", "=stdin": move the chunk and its
            // name in front of the mode.
            ffi::lua_rotate(l, 2, 2);
            ffi::lua_call(l, args + 1, ffi::LUA_MULTRET);
            return ffi::lua_gettop(l);
        }
        lua::call_original(l, ffi::LUA_MULTRET)
    }
}

/// `dofile`; see [`dofile_body`].
///
/// # Safety
/// Called by Lua only, as the closure `open_base` makes (upvalue 1: whether
/// binary chunks are allowed).
unsafe extern "C-unwind" fn dofile_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls this closure on a live thread of a Vm-owned state
    // inside a protected call; `dofile_body` owns nothing that a raise would
    // skip.
    unsafe { dofile_body(l) }
}

/// `dofile([filename])` as the reference's, on the session's files, with
/// the same two differences as [`loadfile_body`]: no name runs the empty
/// standard input, and binary chunks are refused unless allowed.
///
/// # Safety
/// As for [`dofile_entry`], from it.
unsafe fn dofile_body(l: *mut lua_State) -> c_int {
    // SAFETY: `luaL_optlstring` checks the name as the original does (it may
    // raise, with nothing owned) and returns null or a pointer into the string
    // at index 1, which stays on the stack while `luaL_loadfilex` reads it.
    // Loading pushes the chunk or the error message; the error is raised with
    // nothing owned. `lua_callk` runs the chunk with `dofile_continue` as the
    // continuation, so the chunk may yield, as in the reference.
    unsafe {
        let binary = ffi::lua_toboolean(l, ffi::lua_upvalueindex(1)) != 0;
        let name = ffi::luaL_optlstring(l, 1, std::ptr::null(), std::ptr::null_mut());
        ffi::lua_settop(l, 1);
        let mode = if binary { c"bt" } else { c"t" };
        let status = if name.is_null() {
            ffi::luaL_loadbufferx(l, c"".as_ptr(), 0, c"=stdin".as_ptr(), mode.as_ptr())
        } else {
            ffi::luaL_loadfilex(l, name, mode.as_ptr())
        };
        if status != ffi::LUA_OK {
            ffi::lua_error(l);
        }
        ffi::lua_callk(l, 0, ffi::LUA_MULTRET, 0, Some(dofile_continue));
        dofile_continue(l, ffi::LUA_OK, 0)
    }
}

/// `dofile`'s results: everything above the file name.
///
/// # Safety
/// Called by `dofile_body` or by Lua as its continuation.
unsafe extern "C-unwind" fn dofile_continue(
    l: *mut lua_State,
    _status: c_int,
    _ctx: ffi::lua_KContext,
) -> c_int {
    // SAFETY: Only reads the stack size of the live thread.
    unsafe { ffi::lua_gettop(l) - 1 }
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
