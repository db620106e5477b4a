//! The Lua state built ahead of time: at build time, `guest/build.sh` runs
//! [`initialize`] once under wasmtime's pre-initialiser (wizer) and writes
//! the instance's memory back into the component as its initial data. Every
//! instance of the committed component therefore starts with one state that
//! has the standard libraries opened and the sandbox applied for the
//! default `allow` (none), and the first session created in the instance
//! with nothing allowed takes it instead of building its own (a session
//! that allows names builds its own and leaves it), adding only what is its
//! own:
//! limits, capabilities, modules, clock, and a fresh `math.random` seed.
//!
//! What the snapshot holds is the same in every instance and public (it is
//! the committed component): no secret, no session's data, and no seed that
//! matters for isolation. Lua's string-hash seed is fixed in it (Lua picks it
//! once, when the state is created); docs/security.md says what that
//! exposes. `initialize` calls no import: the clock reads a fixed instant,
//! and nothing touches WASI, so the snapshot holds no handle of the instance
//! that ran it.

use std::cell::{Cell, RefCell};

use crate::clock;
use crate::lua::{self, ffi, lua_State};
use crate::sandbox::{self, Allow};
use crate::vm::{self, Limits, Vm};

thread_local! {
    /// The state built by [`initialize`], until a session takes it. Its
    /// capabilities are unset: `Vm::configure` sets them once.
    static TEMPLATE: RefCell<Option<vm::Handle>> = const { RefCell::new(None) };
    /// Whether [`initialize`] has run: true in every instance of the
    /// snapshot.
    static INITIALIZED: Cell<bool> = const { Cell::new(false) };
}

/// Limits while the template is built: room for the libraries and nothing
/// more. A session replaces them before any script runs.
const BUILD_LIMITS: Limits = Limits {
    max_instructions: 1,
    max_call_depth: 200,
    max_string_bytes: 1 << 10,
    max_memory_bytes: 1 << 20,
    max_output_bytes: 1,
    max_value_depth: 1,
};

/// Builds the template. Called once, by the pre-initialiser, before the
/// snapshot is taken. A failure panics, which traps and fails the build: a
/// component without its template would still work, each session building
/// its own state, so nothing else would notice.
///
/// The component keeps the `wizer-initialize` export (the pre-initialiser
/// of wasmtime 48 writes an invalid component when asked to remove it), so
/// a host could call it again: every call after the first does nothing.
pub fn initialize() {
    if INITIALIZED.with(|done| done.replace(true)) {
        return;
    }
    // The clock is read by `lua_newstate` (the string-hash seed) and
    // `luaopen_math` (its first seed): fix it, so that no import is called
    // and the snapshot is the same on every build.
    clock::set(Some(0));
    let Ok(vm) = Vm::open_unconfigured(BUILD_LIMITS, crate::limits::arm_tripped) else {
        panic!("the snapshot's Lua state cannot be created");
    };
    // SAFETY: The state is fresh, so its stack is empty and has room for
    // `protected`'s two values; `build_entry` takes no argument.
    let status = unsafe { lua::protected(vm.state(), build_entry, std::ptr::null_mut()) };
    clock::set(None);
    assert_eq!(status, ffi::LUA_OK, "the snapshot's sandbox did not open");
    TEMPLATE.with(|t| *t.borrow_mut() = Some(vm));
}

/// The template, if this instance still has it: only the first session of
/// an instance gets it.
pub fn take() -> Option<vm::Handle> {
    TEMPLATE.with(|t| t.borrow_mut().take())
}

/// Builds the template's sandbox, with nothing allowed (see [`build`]).
///
/// # Safety
/// Called by `lua::protected` on the template's state, with an empty stack
/// apart from its argument.
unsafe extern "C-unwind" fn build_entry(l: *mut lua_State) -> std::ffi::c_int {
    // SAFETY: `protected` runs this on the live template state in protected
    // mode; `lua_settop` leaves the stack empty, as `build` requires.
    unsafe {
        ffi::lua_settop(l, 0);
        build(l, &Allow::none());
        0
    }
}

/// Builds the sandboxed state both ways start from, the snapshot's and a
/// session's own: opens the sandbox with `allow` (which opens the Vm's
/// output stream), installs `parallel`, then collects the garbage the build
/// left, so that either way a session starts with the same live objects
/// (and the same `peak_memory_bytes`). Raises if the stream cannot be
/// opened.
///
/// # Safety
/// `l` is a live Vm-owned state in protected mode with an empty stack. No
/// object with a finalizer exists yet, so the collection runs none.
pub unsafe fn build(l: *mut lua_State, allow: &Allow) {
    // SAFETY: The caller's contract is what `sandbox::open` and
    // `parallel::install` need; each leaves the stack empty, and this frame
    // owns nothing.
    unsafe {
        sandbox::open(l, allow);
        crate::parallel::install(l);
        ffi::lua_gc(l, ffi::LUA_GCCOLLECT, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::TEMPLATE;
    use crate::session::{Config, Finished, Session};
    use crate::vm::Limits;

    fn config(allow: &[&str]) -> Config {
        Config {
            limits: Limits {
                max_instructions: 1_000_000,
                max_call_depth: 200,
                max_string_bytes: 1 << 20,
                max_memory_bytes: 8 << 20,
                max_output_bytes: 1 << 10,
                max_value_depth: 32,
            },
            allow: allow.iter().map(|s| (*s).to_owned()).collect(),
            modules: Vec::new(),
            capabilities: vec![crate::vm::Capability {
                name: "records.get".to_owned(),
                min_args: 1,
                max_args: 1,
            }],
            deterministic: None,
        }
    }

    fn has_template() -> bool {
        TEMPLATE.with(|t| t.borrow().is_some())
    }

    fn two(session: &Session) -> String {
        match session
            .eval(crate::session::Request::new(b"return 1 + 1, math.pi", "t"))
            .result
        {
            Ok(Finished::Returned(values)) => values,
            _ => panic!("the eval failed"),
        }
    }

    #[test]
    fn only_the_first_session_with_nothing_allowed_takes_the_template() {
        assert!(!has_template(), "no template before initialize");
        super::initialize();
        assert!(has_template());
        // A session that allows names builds its own state and leaves it.
        let own = Session::create(config(&["os.execute"])).unwrap();
        assert!(has_template());
        let first = Session::create(config(&[])).unwrap();
        assert!(!has_template(), "the first default session took it");
        // A second initialize does nothing; later sessions build their own.
        super::initialize();
        assert!(!has_template());
        let later = Session::create(config(&[])).unwrap();
        for session in [&own, &first, &later] {
            assert_eq!(two(session), "[2,3.141592653589793]");
            // The session's own limits and capabilities, not the template's
            // build limits (one instruction, 1 KiB strings, none), are the
            // ones in force.
            let work = session.eval(crate::session::Request::new(
                b"local n = 0 for i = 1, 5000 do n = n + i end \
                  return n, #string.rep('x', 4096), type(records.get), type(records)",
                "t",
            ));
            match work.result {
                Ok(Finished::Returned(values)) => {
                    assert_eq!(values, r#"[12502500,4096,"function","table"]"#)
                }
                _ => panic!("the eval failed"),
            }
            assert!(work.stats.instructions > 5000);
        }
    }
}
