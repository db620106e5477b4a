//! A session: one sandboxed Lua state that runs evals, and the syntax check.

use std::ffi::{c_int, c_void};

use crate::lua::{self, ffi, lua_State};
use crate::sandbox::{self, Allow, Module};
use crate::vm::{Capability, Kind, Limits, Vm};
use crate::{capability, json, limits};

/// A structured error, before it becomes the WIT record.
#[derive(Debug)]
pub struct Error {
    pub kind: Kind,
    pub message: String,
    pub chunk: String,
    pub line: Option<u32>,
    pub traceback: Option<String>,
}

/// What an eval cost.
#[derive(Debug, Clone, Copy)]
pub struct Stats {
    pub instructions: u64,
    pub peak_memory_bytes: u64,
    pub capability_calls: u32,
}

/// The outcome of an eval, with the output captured either way.
pub struct Outcome {
    pub result: Result<String, Error>,
    pub output: Vec<String>,
    pub stats: Stats,
}

/// Everything a session is created with.
pub struct Config {
    pub limits: Limits,
    pub allow: Vec<String>,
    pub modules: Vec<Module>,
    pub capabilities: Vec<Capability>,
    pub deterministic: Option<(i64, i64)>,
}

pub struct Session {
    vm: Box<Vm>,
}

struct Setup<'a> {
    allow: &'a Allow,
    modules: &'a [Module],
    seed: Option<i64>,
}

impl Session {
    pub fn create(config: Config) -> Result<Session, String> {
        let l = &config.limits;
        for (name, value) in [
            ("max-instructions", l.max_instructions),
            ("max-call-depth", u64::from(l.max_call_depth)),
            ("max-string-bytes", l.max_string_bytes),
            ("max-memory-bytes", l.max_memory_bytes),
            ("max-output-bytes", l.max_output_bytes),
            ("max-value-depth", u64::from(l.max_value_depth)),
        ] {
            if value == 0 {
                return Err(format!("limit {name} must be greater than zero"));
            }
        }
        let allow = Allow::new(&config.allow)?;
        for (i, module) in config.modules.iter().enumerate() {
            if module.name.is_empty() || module.name.contains('\0') {
                return Err(format!(
                    "module name '{}' is empty or contains NUL",
                    module.name
                ));
            }
            if config.modules[..i].iter().any(|m| m.name == module.name) {
                return Err(format!("module '{}' is registered twice", module.name));
            }
        }
        capability::validate(&config.capabilities)?;
        let clock = config.deterministic.map(|(clock, _)| clock);
        let vm = Vm::new(config.limits, config.capabilities, clock).ok_or_else(|| {
            format!(
                "max-memory-bytes ({}) is too small to create a Lua state",
                config.limits.max_memory_bytes
            )
        })?;
        let state = vm.state();
        let setup = Setup {
            allow: &allow,
            modules: &config.modules,
            seed: config.deterministic.map(|(_, s)| s),
        };
        // SAFETY: the state is fresh and `setup` outlives the protected call.
        let status = unsafe {
            lua::protected(
                state,
                setup_entry,
                (&setup as *const Setup).cast_mut().cast::<c_void>(),
            )
        };
        if status != ffi::LUA_OK {
            // SAFETY: the error value is on top of the live state.
            let msg =
                unsafe { lua::to_bytes(state, -1) }.unwrap_or(b"error while creating the session");
            if status == ffi::LUA_ERRMEM {
                return Err(format!(
                    "max-memory-bytes ({}) is too small to open the Lua libraries",
                    config.limits.max_memory_bytes
                ));
            }
            return Err(String::from_utf8_lossy(msg).into_owned());
        }
        // SAFETY: the state is live; the hook is installed once setup is done
        // so that library loading is not counted.
        unsafe { limits::arm(state) };
        Ok(Session { vm })
    }

    /// Runs one chunk.
    pub fn eval(&self, code: &str, chunk: &str) -> Outcome {
        let vm = &*self.vm;
        let l = vm.state();
        // The heap limit counts garbage not yet collected, so an eval must not
        // inherit a heap filled by the one before it: past half the limit,
        // collect first.
        if vm.used_bytes() as u64 > vm.limits.max_memory_bytes / 2 {
            // SAFETY: a live state with an empty stack; the collection runs
            // in protected mode.
            unsafe { lua::protected(l, collect_entry, std::ptr::null_mut()) };
        }
        vm.begin_eval();
        // SAFETY: the state is live and owned by this session; all stack work
        // below stays within the slots Lua guarantees (LUA_MINSTACK).
        let result = unsafe {
            ffi::lua_settop(l, 0);
            limits::arm(l);
            ffi::lua_pushcfunction(l, message_handler);
            let name = lua::cstring(&format!("@{chunk}"));
            let status = ffi::luaL_loadbufferx(
                l,
                code.as_ptr().cast(),
                code.len(),
                name.as_ptr(),
                c"t".as_ptr(),
            );
            let result = if status != ffi::LUA_OK {
                Err(self.error(l, status, chunk))
            } else {
                let status = ffi::lua_pcall(l, 0, ffi::LUA_MULTRET, 1);
                if status != ffi::LUA_OK {
                    Err(self.error(l, status, chunk))
                } else if let Some(trip) = vm.tripped() {
                    // The script caught the limit's error and returned before
                    // the hook could raise it again.
                    Err(self.error_from(trip.kind, trip.message.into_owned(), None, chunk))
                } else {
                    let top = ffi::lua_gettop(l);
                    json::encode_values(l, 2, top, "result", &vm.limits).map_err(|msg| Error {
                        kind: Kind::InvalidValue,
                        message: msg,
                        chunk: chunk.to_owned(),
                        line: None,
                        traceback: None,
                    })
                }
            };
            ffi::lua_settop(l, 0);
            result
        };
        Outcome {
            result,
            output: std::mem::take(&mut *vm.output.borrow_mut()),
            stats: Stats {
                instructions: vm.instructions.get(),
                peak_memory_bytes: vm.peak_bytes() as u64,
                capability_calls: vm.capability_calls.get(),
            },
        }
    }

    /// Classifies the error on top of the stack after `status`.
    unsafe fn error(&self, l: *mut lua_State, status: c_int, chunk: &str) -> Error {
        let vm = &*self.vm;
        let message = unsafe { lua::to_bytes(l, -1) }
            .map(|m| String::from_utf8_lossy(m).into_owned())
            .unwrap_or_else(|| unsafe { describe_error_object(l) });
        let traceback = vm.traceback.take();
        if let Some(trip) = vm.tripped() {
            return self.error_from(trip.kind, trip.message.into_owned(), traceback, chunk);
        }
        let kind = match status {
            ffi::LUA_ERRSYNTAX => Kind::Syntax,
            ffi::LUA_ERRMEM => Kind::MemoryLimit,
            _ => match vm.tagged_kind(message.as_bytes()) {
                Some(kind) => kind,
                None if message.ends_with("stack overflow") => Kind::CallDepth,
                None => Kind::Runtime,
            },
        };
        let traceback = if kind == Kind::Syntax {
            None
        } else {
            traceback
        };
        self.error_from(kind, message, traceback, chunk)
    }

    fn error_from(
        &self,
        kind: Kind,
        message: String,
        traceback: Option<String>,
        chunk: &str,
    ) -> Error {
        located(kind, message, traceback, chunk)
    }
}

/// Builds an error, reading `chunk:line:` from the front of the message.
fn located(kind: Kind, message: String, traceback: Option<String>, chunk: &str) -> Error {
    let (at_chunk, line) = match split_position(&message, chunk) {
        Some((c, line)) => (c, Some(line)),
        None => (chunk.to_owned(), None),
    };
    Error {
        kind,
        message,
        chunk: at_chunk,
        line,
        traceback,
    }
}

/// `("chunk", 3)` for a message starting `chunk:3: `. The evaluated chunk's
/// name is tried first, since a chunk name may itself contain colons.
fn split_position(message: &str, chunk: &str) -> Option<(String, u32)> {
    let line_after = |rest: &str| -> Option<u32> {
        let end = rest.find(':')?;
        rest[..end].parse().ok()
    };
    let own = message
        .strip_prefix(chunk)
        .and_then(|r| r.strip_prefix(':'));
    if let Some(line) = own.and_then(line_after) {
        return Some((chunk.to_owned(), line));
    }
    let mut search = 0;
    while let Some(off) = message[search..].find(':') {
        let colon = search + off;
        match line_after(&message[colon + 1..]) {
            Some(line) if colon > 0 => return Some((message[..colon].to_owned(), line)),
            _ => search = colon + 1,
        }
    }
    None
}

unsafe fn describe_error_object(l: *mut lua_State) -> String {
    unsafe {
        let t = ffi::lua_type(l, -1);
        let name = std::ffi::CStr::from_ptr(ffi::lua_typename(l, t))
            .to_string_lossy()
            .into_owned();
        format!("(error object is a {name} value)")
    }
}

/// A full collection (finalizers included) in protected mode.
unsafe extern "C-unwind" fn collect_entry(l: *mut lua_State) -> c_int {
    unsafe {
        ffi::lua_gc(l, ffi::LUA_GCCOLLECT, 0);
        0
    }
}

unsafe extern "C-unwind" fn setup_entry(l: *mut lua_State) -> c_int {
    unsafe {
        let setup = &*(ffi::lua_touserdata(l, 1) as *const Setup);
        ffi::lua_settop(l, 0);
        sandbox::open(l, setup.allow, setup.modules, setup.seed);
        capability::install(l);
        0
    }
}

/// The eval's message handler: renders the error object as `lua.c` does and
/// records a traceback.
unsafe extern "C-unwind" fn message_handler(l: *mut lua_State) -> c_int {
    unsafe {
        if ffi::lua_tolstring(l, 1, std::ptr::null_mut()).is_null() {
            if ffi::luaL_callmeta(l, 1, c"__tostring".as_ptr()) == 0
                || ffi::lua_type(l, -1) != ffi::LUA_TSTRING
            {
                let name = ffi::luaL_typename(l, 1);
                ffi::lua_pushfstring(l, c"(error object is a %s value)".as_ptr(), name);
            }
            ffi::lua_replace(l, 1);
        }
        ffi::lua_settop(l, 1);
        ffi::luaL_traceback(l, l, std::ptr::null(), 1);
        let vm = Vm::from_state(l);
        let tb = lua::to_bytes(l, -1).map(|t| String::from_utf8_lossy(t).into_owned());
        vm.traceback.replace(tb);
        ffi::lua_settop(l, 1);
        1
    }
}

/// Parses `code` without running it, in a throw-away state.
pub fn check(code: &str, chunk: &str) -> Result<(), Error> {
    let limits = Limits {
        max_instructions: u64::MAX,
        max_call_depth: u32::MAX,
        max_string_bytes: u64::MAX,
        max_memory_bytes: 256 << 20,
        max_output_bytes: 0,
        max_value_depth: 1,
    };
    let Some(vm) = Vm::new(limits, Vec::new(), None) else {
        return Err(located(
            Kind::MemoryLimit,
            "not enough memory".to_owned(),
            None,
            chunk,
        ));
    };
    let l = vm.state();
    let name = lua::cstring(&format!("@{chunk}"));
    // SAFETY: a fresh state; loading is protected by Lua itself.
    unsafe {
        let status = ffi::luaL_loadbufferx(
            l,
            code.as_ptr().cast(),
            code.len(),
            name.as_ptr(),
            c"t".as_ptr(),
        );
        if status == ffi::LUA_OK {
            return Ok(());
        }
        let message = lua::to_bytes(l, -1)
            .map(|m| String::from_utf8_lossy(m).into_owned())
            .unwrap_or_default();
        let kind = if status == ffi::LUA_ERRMEM {
            Kind::MemoryLimit
        } else {
            Kind::Syntax
        };
        Err(located(kind, message, None, chunk))
    }
}

#[cfg(test)]
mod tests {
    use super::split_position;

    #[test]
    fn position_prefers_the_evaluated_chunk() {
        assert_eq!(
            split_position("a:b.lua:3: oops", "a:b.lua"),
            Some(("a:b.lua".to_owned(), 3))
        );
        assert_eq!(
            split_position("json:12: bad", "main.lua"),
            Some(("json".to_owned(), 12))
        );
        assert_eq!(split_position("not enough memory", "main.lua"), None);
    }
}
