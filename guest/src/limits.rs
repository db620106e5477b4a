//! The instruction budget: instruction and call-depth limits, and the rule
//! that a tripped limit cannot be caught.
//!
//! The VM counts the instructions it runs in one counter per state, shared
//! by every coroutine (a small change to Lua, `lua/budget.diff`), and calls
//! [`budget`] at a loop back-edge or function entry once the count reaches
//! the check point. The check point is the next [`STEP`] instructions or the
//! limit, whichever comes first, so the call depth is checked every `STEP`
//! instructions and the instruction limit trips at the first check once the
//! count passes `max-instructions` (within one loop iteration or straight
//! stretch of code). Once any limit has tripped, the check point is 0
//! and a count hook runs on every instruction ([`arm_tripped`]): the next
//! instruction raises the limit's error again, so a script that catches the
//! error with `pcall` cannot make progress and the eval still ends with the
//! limit's kind.
//!
//! The guest's own errors are raised through the helpers at the end:
//! [`raise_trip`] for a limit (or an allowed `os.exit`), [`raise_tagged`]
//! for a catchable error whose kind (sandboxed, capability) the eval reports
//! if the script lets it through.

use std::ffi::c_int;

use crate::lua::{self, Raise, ffi, lua_State};
use crate::vm::{ErrorKind, Kind, Vm};

/// Instructions between two checks of the call depth.
pub const STEP: u64 = 1000;

/// Sets the check point for the count: the next [`STEP`] instructions, or
/// just past the limit.
///
/// # Safety
/// `l` is a live state owned by a [`Vm`]. Neither allocates nor raises.
pub unsafe fn arm(l: *mut lua_State) {
    // SAFETY: `Vm::from_state` is valid for a Vm-owned state (caller).
    // `set_budget` only stores the function and the check point in the
    // state's global part, without allocating or raising, so this is sound
    // outside a protected call. `budget` is sound on any thread of a
    // Vm-owned state, which is the only kind it is installed on.
    unsafe {
        let vm = Vm::from_state(l);
        let check = lua::count(l)
            .saturating_add(STEP)
            .min(vm.limits().max_instructions.saturating_add(1));
        lua::set_budget(l, budget, check);
    }
}

/// Makes the script stop at once after a trip: the VM calls [`budget`] at
/// its next back-edge or call, and a count hook on `l` and on the main
/// thread runs before every instruction, so that even straight-line code
/// runs no further. Both raise the trip again.
///
/// # Safety
/// `l` is a live thread of a state owned by a [`Vm`]. Neither allocates nor
/// raises.
pub unsafe fn arm_tripped(l: *mut lua_State) {
    // SAFETY: `Vm::from_state` only reads the state's allocator data (the
    // caller says it is a Vm's). `set_budget` and `lua_sethook` only write
    // fields of the live state and its threads, without allocating or
    // raising, which is why `Vm::trip` may call this from inside the
    // allocator. `tripped_hook` is sound on any thread of a Vm-owned state.
    unsafe {
        lua::set_budget(l, budget, 0);
        ffi::lua_sethook(l, Some(tripped_hook), ffi::LUA_MASKCOUNT, 1);
        let main = Vm::from_state(l).state();
        if !main.is_null() && main != l {
            ffi::lua_sethook(main, Some(tripped_hook), ffi::LUA_MASKCOUNT, 1);
        }
    }
}

/// The hook [`arm_tripped`] sets: raises the trip again, or, in a later eval
/// where nothing has tripped, removes itself.
///
/// # Safety
/// Called by Lua only, on threads of Vm-owned states.
unsafe extern "C-unwind" fn tripped_hook(l: *mut lua_State, _ar: *mut ffi::lua_Debug) {
    // SAFETY: Lua runs hooks on live threads with `LUA_MINSTACK` free slots,
    // inside a protected call, and `arm_tripped` sets this one only on
    // threads of Vm-owned states. `push_trip` moves nothing owned onto this
    // frame before it may raise, so `lua_error` unwinds nothing with a
    // destructor; `lua_sethook` only writes the thread's hook fields.
    unsafe {
        if Vm::from_state(l).push_trip(l) {
            ffi::lua_error(l);
        }
        ffi::lua_sethook(l, None, 0, 0);
    }
}

/// Instructions charged for creating a coroutine: the thread's creation is
/// work in C that the count does not see.
pub const COROUTINE_COST: u64 = 100;

/// Instructions charged for each capability call, so a script cannot spend
/// unbounded host time inside a loop of a few instructions.
pub const CAPABILITY_COST: u64 = 100;

/// Whether charging `cost` would trip a limit (or one has tripped already):
/// then [`charge`] pushes an error, which may raise a memory error, so a
/// caller that owns Rust values frees them before it charges.
///
/// # Safety
/// `l` is a live thread of a Vm-owned state.
pub unsafe fn would_trip(l: *mut lua_State, cost: u64) -> bool {
    // SAFETY: `Vm::from_state` is valid on a Vm-owned state (caller), and
    // `lua::count` reads one field.
    unsafe {
        let vm = Vm::from_state(l);
        vm.has_tripped() || lua::count(l).saturating_add(cost) > vm.limits().max_instructions
    }
}

/// Adds `cost` instructions to the eval's count from inside a C function.
/// Returns `true` with the error pushed when that passes the limit (or a
/// limit has already tripped); the caller then raises it.
///
/// # Safety
/// `l` is a live thread of a Vm-owned state, inside a C function.
pub unsafe fn charge(l: *mut lua_State, cost: u64) -> bool {
    // SAFETY: The caller is a C function on a live thread of a Vm-owned state,
    // so `Vm::from_state` is valid and Lua has given it free slots for the one
    // message `push_trip` or `raise_trip` pushes. That push may raise a memory
    // error; by then the message has moved into the Vm, so nothing owned is
    // left on this frame.
    unsafe {
        let vm = Vm::from_state(l);
        if vm.has_tripped() {
            arm_tripped(l);
            vm.push_trip(l);
            return true;
        }
        let total = lua::count(l).saturating_add(cost);
        lua::set_count(l, total);
        if total > vm.limits().max_instructions {
            return raise_instruction_limit(l, vm, 1);
        }
        false
    }
}

/// The budget function: checks the limits and raises a trip.
///
/// # Safety
/// Called by the VM only, as the function `arm` and `arm_tripped` install.
unsafe extern "C-unwind" fn budget(l: *mut lua_State) {
    // SAFETY: The VM calls this only on threads of live Vm-owned states (the
    // only ones `arm` installs it on), with the running function's `pc`
    // saved and `LUA_MINSTACK` free slots (`luaG_budget`), and only while Lua
    // code runs, which is always inside a protected call (an eval's, or the
    // one Lua puts around each finalizer). When `check` returns `true` it has
    // pushed the error and holds nothing owned, so `lua_error` unwinds only
    // frames without destructors.
    unsafe {
        if check(l) {
            ffi::lua_error(l);
        }
    }
}

/// Checks the limits and sets the next check point. Returns `true` with the
/// error message pushed when the VM must raise.
///
/// # Safety
/// `l` is a live thread of a Vm-owned state, inside [`budget`].
unsafe fn check(l: *mut lua_State) -> bool {
    // SAFETY: `budget` runs on a live thread of a Vm-owned state with
    // `LUA_MINSTACK` free slots, so `Vm::from_state` is valid and the one
    // message pushed on a trip fits. All-zero is a valid `lua_Debug`, which
    // `lua_getstack` only fills. Each message moves into the Vm before the
    // push that may raise a memory error.
    unsafe {
        let vm = Vm::from_state(l);
        if vm.has_tripped() {
            arm_tripped(l);
            vm.push_trip(l);
            return true;
        }
        let limits = vm.limits();
        if lua::count(l) > limits.max_instructions {
            return raise_instruction_limit(l, vm, 0);
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
        arm(l);
        false
    }
}

/// Trips the instruction limit, naming the position of the function at
/// stack `level` (0 from the budget function, 1 from a C function).
///
/// # Safety
/// As for [`raise_trip`].
unsafe fn raise_instruction_limit(l: *mut lua_State, vm: &Vm, level: c_int) -> bool {
    // SAFETY: The caller's contract is `raise_trip`'s; `position` only reads
    // the stack, and the message is owned until `raise_trip` moves it.
    unsafe {
        let message = format!(
            "{}instruction limit exceeded (max-instructions is {})",
            lua::position(l, level),
            vm.limits().max_instructions
        );
        raise_trip(l, vm, Kind::Error(ErrorKind::InstructionLimit), message)
    }
}

/// Records a trip (the message moves into the Vm), sets the check point to
/// 0 and pushes the message. Always returns `true`: the caller raises.
///
/// # Safety
/// `l` is a live thread of the Vm's state with a free stack slot.
pub unsafe fn raise_trip(l: *mut lua_State, vm: &Vm, kind: Kind, message: String) -> bool {
    // SAFETY: `vm.trip` moves the message into the Vm before anything can
    // raise; `arm_tripped` only writes budget and hook fields, without allocating;
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
