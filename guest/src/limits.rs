//! The count hook: instruction and call-depth limits, and the rule that a
//! tripped limit cannot be caught.
//!
//! The hook runs every [`STEP`] VM instructions on the main thread and every
//! [`COROUTINE_STEP`] in coroutines. Each thread counts on its own, and what
//! a thread runs after its last hook is never counted, so coroutines use a
//! finer step: a script cannot hide much work in many short coroutines.
//! Once any limit
//! has tripped, the hook re-arms itself to run on *every* instruction and
//! raises the limit's error again, so a script that catches the error with
//! `pcall` cannot make progress: the eval still ends with the limit's kind.
//!
//! The guest's own errors are raised through the helpers at the end:
//! [`raise_trip`] for a limit (or an allowed `os.exit`), [`raise_tagged`]
//! for a catchable error whose kind (sandboxed, capability) the eval reports
//! if the script lets it through.

use std::ffi::c_int;

use crate::lua::{self, Raise, ffi, lua_State};
use crate::vm::{ErrorKind, Kind, Vm};

/// Instructions between two runs of the hook.
pub const STEP: c_int = 1000;

/// Instructions between two runs of the hook in a coroutine.
pub const COROUTINE_STEP: c_int = 100;

/// Installs the count hook on `l` with the normal step.
///
/// # Safety
/// `l` is a live state owned by a [`Vm`].
pub unsafe fn arm(l: *mut lua_State) {
    // SAFETY: `lua_sethook` only stores the hook, its mask and its count in the
    // thread `l`, which the caller says is live; it neither allocates nor
    // raises, so it is sound outside a protected call. `count_hook` is sound on
    // any thread of a Vm-owned state, which is the only kind it is installed
    // on.
    unsafe { ffi::lua_sethook(l, Some(count_hook), ffi::LUA_MASKCOUNT, STEP) };
}

/// Makes the count hook run on every instruction of `l`, so that it raises
/// a tripped limit again at once.
///
/// # Safety
/// `l` is a live state owned by a [`Vm`]. Neither allocates nor raises.
pub unsafe fn arm_tripped(l: *mut lua_State) {
    // SAFETY: As in `arm`: `lua_sethook` only writes fields of the live thread
    // `l`, without allocating or raising, which is why `Vm::trip` may call this
    // from inside the allocator.
    unsafe { ffi::lua_sethook(l, Some(count_hook), ffi::LUA_MASKCOUNT, 1) };
}

/// Installs the count hook on a new coroutine.
///
/// # Safety
/// `co` is a live thread of a Vm-owned state.
pub unsafe fn arm_coroutine(co: *mut lua_State) {
    // SAFETY: As in `arm`: `co` is a live thread of a Vm-owned state (caller),
    // and `lua_sethook` only writes its hook fields, without allocating or
    // raising.
    unsafe { ffi::lua_sethook(co, Some(count_hook), ffi::LUA_MASKCOUNT, COROUTINE_STEP) };
}

/// Instructions charged for creating a coroutine: paid up front for what
/// the new thread may run after its last hook. Without it, a tree of
/// coroutines that each start children within their first 99 instructions
/// would run uncounted.
pub const COROUTINE_COST: u64 = COROUTINE_STEP as u64;

/// Instructions charged for each capability call, so a script cannot spend
/// unbounded host time inside a loop of a few instructions.
pub const CAPABILITY_COST: u64 = 100;

/// Adds `cost` instructions to the eval's count from inside a C function.
/// Returns `true` with the error pushed when that passes the limit (or a
/// limit has already tripped); the caller then raises it.
///
/// # Safety
/// `l` is a live thread of a Vm-owned state, inside a C function.
pub unsafe fn charge(l: *mut lua_State, cost: u64) -> bool {
    // SAFETY: The caller is a C function on a live thread of a Vm-owned state,
    // so `Vm::from_state` is valid and Lua has given it free slots for the one
    // message `hook_body` or `raise_trip` pushes. That push may raise a memory
    // error; by then the message has moved into the Vm, so nothing owned is
    // left on this frame.
    unsafe {
        let vm = Vm::from_state(l);
        if vm.has_tripped() {
            return hook_body(l);
        }
        let count = vm.instructions.get() + cost;
        vm.instructions.set(count);
        if count > vm.limits().max_instructions {
            let message = format!(
                "{}instruction limit exceeded (max-instructions is {})",
                lua::position(l, 1),
                vm.limits().max_instructions
            );
            return raise_trip(l, vm, Kind::Error(ErrorKind::InstructionLimit), message);
        }
        false
    }
}

/// The step a thread should count with.
///
/// # Safety
/// `l` is a live thread with a free slot (a hook has `LUA_MINSTACK`).
unsafe fn step_for(l: *mut lua_State) -> c_int {
    // SAFETY: `l` is a live thread inside a hook, which Lua runs with
    // `LUA_MINSTACK` free slots; `lua_pushthread` pushes `l` itself without
    // allocating, and the value is popped at once.
    unsafe {
        let main = ffi::lua_pushthread(l) == 1;
        ffi::lua_pop(l, 1);
        if main { STEP } else { COROUTINE_STEP }
    }
}

/// The count hook: counts instructions, checks the limits and raises a trip.
///
/// # Safety
/// Called by Lua only, as the hook `arm`, `arm_tripped` and `arm_coroutine`
/// install.
unsafe extern "C-unwind" fn count_hook(l: *mut lua_State, _ar: *mut ffi::lua_Debug) {
    // SAFETY: Lua runs this hook only on threads where `arm`, `arm_tripped` or
    // `arm_coroutine` installed it, all threads of live Vm-owned states, and
    // only while Lua code runs, which is always inside a protected call (an
    // eval's, or the one Lua puts around each finalizer). When `hook_body`
    // returns `true` it has pushed the error and holds nothing owned, so
    // `lua_error` unwinds only frames without destructors.
    unsafe {
        if hook_body(l) {
            ffi::lua_error(l);
        }
    }
}

/// Counts instructions and checks the limits. Returns `true` with the error
/// message pushed when the hook must raise.
///
/// # Safety
/// `l` is a live thread of a Vm-owned state, inside the count hook.
unsafe fn hook_body(l: *mut lua_State) -> bool {
    // SAFETY: The hook runs on a live thread of a Vm-owned state with
    // `LUA_MINSTACK` free slots (see `count_hook`), so `Vm::from_state` is
    // valid and the one message pushed on a trip fits. `lua_gethookcount` and
    // `lua_sethook` read and write fields of `l`; all-zero is a valid
    // `lua_Debug`, which `lua_getstack` only fills. Each message moves into the
    // Vm before the push that may raise a memory error.
    unsafe {
        let vm = Vm::from_state(l);
        if vm.has_tripped() {
            arm_tripped(l);
            vm.push_trip(l);
            return true;
        }
        let step = ffi::lua_gethookcount(l);
        let expected = step_for(l);
        if step != expected {
            // The thread was re-armed by a trip in an earlier eval.
            ffi::lua_sethook(l, Some(count_hook), ffi::LUA_MASKCOUNT, expected);
        }
        let count = vm.instructions.get() + u64::try_from(step).unwrap_or(0);
        vm.instructions.set(count);
        let limits = vm.limits();
        if count > limits.max_instructions {
            let message = format!(
                "{}instruction limit exceeded (max-instructions is {})",
                lua::position(l, 0),
                limits.max_instructions
            );
            return raise_trip(l, vm, Kind::Error(ErrorKind::InstructionLimit), message);
        }
        let depth = c_int::try_from(limits.max_call_depth).unwrap_or(c_int::MAX);
        let mut ar: ffi::lua_Debug = std::mem::zeroed();
        if ffi::lua_getstack(l, depth, &mut ar) != 0 {
            let message = format!(
                "{}call depth limit exceeded (max-call-depth is {})",
                lua::position(l, 0),
                limits.max_call_depth
            );
            return raise_trip(l, vm, Kind::Error(ErrorKind::CallDepth), message);
        }
        false
    }
}

/// Records a trip (the message moves into the Vm), arms the hook on `l` and
/// pushes the message. Always returns `true`: the caller raises.
///
/// # Safety
/// `l` is a live thread of the Vm's state with a free stack slot.
pub unsafe fn raise_trip(l: *mut lua_State, vm: &Vm, kind: Kind, message: String) -> bool {
    // SAFETY: `vm.trip` moves the message into the Vm before anything can
    // raise; `arm_tripped` only writes hook fields of the live thread `l`;
    // `push_trip` pushes the recorded message into the free slot the caller
    // guarantees and may raise a memory error, with nothing owned left on this
    // frame.
    unsafe {
        vm.trip(kind, message);
        arm_tripped(l);
        vm.push_trip(l);
        true
    }
}

/// Pushes `chunk:line: msg`, tags it with `kind` and returns the marker that
/// makes the entry point raise it.
///
/// # Safety
/// `l` is a live Vm-owned state inside a C function.
pub unsafe fn raise_tagged(l: *mut lua_State, kind: ErrorKind, msg: impl Into<Vec<u8>>) -> Raise {
    // SAFETY: The caller is a C function on a live thread of a Vm-owned state,
    // so `Vm::from_state` is valid and there are free slots for the position
    // and the message that `lua_concat` then joins. The message moves into the
    // Vm (`push_owned`) before anything else can raise (`lua_insert` only
    // moves stack slots), and the joined string stays on the stack while
    // `tag` copies it, so the borrowed slice is live.
    unsafe {
        let vm = Vm::from_state(l);
        vm.push_owned(l, msg);
        ffi::luaL_where(l, 1);
        ffi::lua_insert(l, -2);
        ffi::lua_concat(l, 2);
        vm.tag(lua::to_bytes(l, -1).unwrap_or_default(), kind);
        Raise
    }
}
