//! Host capabilities as Lua functions: `records.get(id)` checks its argument
//! count, converts its arguments to JSON, calls the host through the
//! `capabilities.call` import, and converts the reply back.
//!
//! Called directly on a coroutine that `parallel` is resuming (and where the
//! coroutine can yield), a capability instead yields its call to `parallel`,
//! which makes it together with its siblings' (`capabilities.call-many`) and
//! resumes the coroutine with the reply; the continuation
//! [`resumed_entry`] then returns it, or raises its error, exactly as the
//! direct path would.

use std::cell::{Cell, RefCell};
use std::ffi::c_int;

use crate::bindings::Value as WitValue;
use crate::bindings::capabilities;
use crate::json;
use crate::limits::raise_tagged;
use crate::lua::{self, Raise, ffi, lua_State};
use crate::vm::{Capability, ErrorKind, Extension, Vm};

/// What the host answered to one capability call.
pub type CallReply = Result<WitValue, String>;

/// One capability call a coroutine of `parallel` has yielded.
pub struct PendingCall {
    /// The address of the coroutine that made it.
    pub thread: usize,
    /// The item of `parallel` whose coroutine made it (filled in by
    /// `parallel`).
    pub item: usize,
    /// The capability's index in `Vm::capabilities`.
    pub capability: usize,
    pub args: Vec<WitValue>,
}

/// What this module keeps in the Vm: the eval's count of calls, and what it
/// shares with `parallel`, which reaches it through [`calls`] and its
/// methods only.
#[derive(Default)]
pub struct Calls {
    /// Capability calls made this eval.
    made: Cell<u32>,
    /// The coroutine `parallel` is resuming right now (its address), or 0.
    /// A capability called directly on that thread yields its call to
    /// `parallel` instead of making it.
    resuming: Cell<usize>,
    /// The coroutine `parallel` is resuming with a capability's reply right
    /// now (its address), or 0: the capability's continuation takes the
    /// reply only when this names its own thread, and clears it. Held here,
    /// out of Lua's reach, so that no script can forge a reply.
    delivering: Cell<usize>,
    /// Capability calls yielded to `parallel`, in the order they were made.
    pending: RefCell<Vec<PendingCall>>,
}

impl Extension for Calls {
    fn begin_eval(&self) {
        self.made.set(0);
        self.resuming.set(0);
        self.delivering.set(0);
        self.pending.take();
    }
}

/// The capability calls of `vm`'s eval.
pub fn calls(vm: &Vm) -> &Calls {
    vm.extension::<Calls>()
}

impl Calls {
    /// Capability calls made this eval.
    pub fn made(&self) -> u32 {
        self.made.get()
    }

    /// Marks `co` as the coroutine `parallel` is resuming; returns the one
    /// it replaces, for [`Calls::end_resume`].
    pub fn begin_resume(&self, co: usize) -> usize {
        self.resuming.replace(co)
    }

    /// Restores the coroutine [`Calls::begin_resume`] replaced.
    pub fn end_resume(&self, saved: usize) {
        self.resuming.set(saved);
    }

    /// Names the coroutine whose capability continuation may take the reply
    /// `parallel` resumes it with (0 for none).
    pub fn deliver_to(&self, co: usize) {
        self.delivering.set(co);
    }

    /// Calls pending now.
    pub fn pending_len(&self) -> usize {
        self.pending.borrow().len()
    }

    /// Takes the calls pending past the first `mark`.
    pub fn take_pending(&self, mark: usize) -> Vec<PendingCall> {
        let mut pending = self.pending.borrow_mut();
        let mark = mark.min(pending.len());
        pending.split_off(mark)
    }

    /// Forgets the calls pending past the first `len`.
    pub fn truncate_pending(&self, len: usize) {
        self.pending.borrow_mut().truncate(len);
    }

    /// After coroutine `co` of item `item` yielded: keeps the last call it
    /// made since `before` calls were pending, marked with its item, and
    /// forgets any other call made since. Returns whether it had one.
    pub fn refile(&self, before: usize, co: usize, item: usize) -> bool {
        let mut pending = self.pending.borrow_mut();
        let own = pending[before.min(pending.len())..]
            .iter()
            .rposition(|call| call.thread == co)
            .map(|k| pending.remove(before + k));
        pending.truncate(before);
        own.map(|mut call| {
            call.item = item;
            pending.push(call);
        })
        .is_some()
    }
}

const KEYWORDS: &[&str] = &[
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
    "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
];

/// Whether `s` is a Lua name: an identifier that is not a keyword.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !KEYWORDS.contains(&s)
}

/// Checks names, argument counts and uniqueness before any Lua runs.
pub fn validate(capabilities: &[Capability]) -> Result<(), String> {
    for (i, cap) in capabilities.iter().enumerate() {
        let ok = !cap.name.is_empty() && cap.name.split('.').all(is_identifier);
        if !ok {
            return Err(format!(
                "capability name '{}' is not a dotted path of Lua identifiers (like records.get)",
                cap.name
            ));
        }
        if cap.min_args > cap.max_args {
            return Err(format!(
                "capability '{}' accepts at least {} but at most {} arguments",
                cap.name, cap.min_args, cap.max_args
            ));
        }
        if capabilities[..i].iter().any(|c| c.name == cap.name) {
            return Err(format!("capability '{}' is registered twice", cap.name));
        }
    }
    Ok(())
}

/// Installs every capability of the Vm under its dotted name, creating the
/// namespace tables on the way. Raises a Lua error (a string) when a name
/// collides with an existing value.
///
/// # Safety
/// `l` is a live Vm-owned state in protected mode.
pub unsafe fn install(l: *mut lua_State) {
    // SAFETY: The caller passes a live Vm-owned state in protected mode, so
    // `Vm::from_state` is valid and the pushes and raw sets may raise. Each
    // capability's loop pushes at most four values (the globals, a namespace
    // table, its copy and a key) and leaves only the parent table, which is
    // popped at the end. Nothing owned is alive across a call that may raise:
    // the name is split by a borrowing iterator, and `collision` drops its
    // message before raising.
    unsafe {
        let vm = Vm::from_state(l);
        for (index, cap) in vm.capabilities().iter().enumerate() {
            ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, ffi::LUA_RIDX_GLOBALS);
            // Split without collecting: nothing owned may be alive while
            // Lua may raise. `validate` has checked that no segment is empty.
            let (tables, last) = cap.name.rsplit_once('.').unwrap_or(("", &cap.name));
            for seg in tables.split('.').filter(|seg| !seg.is_empty()) {
                let parent = ffi::lua_gettop(l);
                match lua::get_field(l, parent, seg) {
                    ffi::LUA_TTABLE => {}
                    ffi::LUA_TNIL => {
                        ffi::lua_pop(l, 1);
                        ffi::lua_createtable(l, 0, 4);
                        ffi::lua_pushvalue(l, -1);
                        lua::set_field(l, parent, seg);
                    }
                    _ => collision(l, &cap.name),
                }
                ffi::lua_remove(l, parent);
            }
            let parent = ffi::lua_gettop(l);
            if lua::get_field(l, parent, last) != ffi::LUA_TNIL {
                collision(l, &cap.name);
            }
            ffi::lua_pop(l, 1);
            ffi::lua_pushinteger(l, index as i64);
            ffi::lua_pushcclosure(l, call_entry, 1);
            lua::set_field(l, parent, last);
            ffi::lua_pop(l, 1);
        }
    }
}

/// Raises the error for a capability whose name is already taken.
///
/// # Safety
/// `l` is a live state in protected mode with a free slot.
unsafe fn collision(l: *mut lua_State, name: &str) -> ! {
    // SAFETY: The caller is `install`, on a live state in protected mode with a
    // free slot. The message is copied into Lua and dropped before `lua_error`,
    // so the raise unwinds no frame that owns memory.
    unsafe {
        let msg = format!("capability '{name}' would replace an existing value of the same name");
        lua::push_bytes(l, msg.as_bytes());
        drop(msg);
        ffi::lua_error(l)
    }
}

/// The Lua function behind each capability; see [`call_body`].
///
/// # Safety
/// Called by Lua only, as the C closure `install` makes (upvalue 1: the
/// capability's index).
unsafe extern "C-unwind" fn call_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls a capability's function as a C closure on a live thread
    // of a Vm-owned state, inside a protected call, with its capability index
    // as upvalue 1. `call_body` returns `Err` only with the error pushed and
    // nothing owned left on its frame, so `lua_error` unwinds only frames
    // without destructors; it returns `YIELD` only on a coroutine that can
    // yield, with the call's arguments moved into the Vm, and `lua_yieldk`
    // unwinds likewise, to continue in `resumed_entry`.
    unsafe {
        match call_body(l) {
            Ok(YIELD) => ffi::lua_yieldk(l, 0, 0, Some(resumed_entry)),
            Ok(n) => n,
            Err(Raise) => ffi::lua_error(l),
        }
    }
}

fn arity(min: u32, max: u32) -> String {
    let plural = |n: u32| if n == 1 { "argument" } else { "arguments" };
    if min == max {
        format!("{min} {}", plural(min))
    } else {
        format!("{min} to {max} {}", plural(max))
    }
}

/// Checks and converts the arguments, calls the host, and pushes the reply.
///
/// # Safety
/// As for [`call_entry`], from it.
unsafe fn call_body(l: *mut lua_State) -> Result<c_int, Raise> {
    // SAFETY: `l` is a live thread of a Vm-owned state inside a capability's C
    // closure (see `call_entry`), so `Vm::from_state` is valid and Lua has
    // given the function free slots. The argument conversions cannot raise
    // (they read the stack and grow it only with `lua_checkstack`, which
    // reports failure instead of raising), so `args` is alive only where
    // nothing raises, and it is dropped (or moved into the Vm's pending calls)
    // before anything that can. Every message moves into the Vm through
    // `raise_tagged`; `push_reply` keeps the reply in the Vm while it is
    // pushed, and a reply that would pass the instruction budget is dropped
    // before the charge that trips it. The yield itself happens in
    // `call_entry`, once this frame is gone.
    unsafe {
        let vm = Vm::from_state(l);
        // After a trip nothing reaches the host.
        if vm.push_trip(l) {
            crate::limits::arm_tripped(l);
            return Err(Raise);
        }
        let index = ffi::lua_tointegerx(l, ffi::lua_upvalueindex(1), std::ptr::null_mut());
        let index = usize::try_from(index).unwrap_or(usize::MAX);
        let Some(cap) = vm.capabilities().get(index) else {
            return Err(raise_tagged(l, ErrorKind::Capability, "unknown capability"));
        };
        let n = ffi::lua_gettop(l);
        let got = u32::try_from(n).unwrap_or(0);
        if got < cap.min_args || got > cap.max_args {
            let msg = format!(
                "{}: expected {}, got {got}",
                cap.name,
                arity(cap.min_args, cap.max_args)
            );
            return Err(raise_tagged(l, ErrorKind::Capability, msg));
        }
        // Charged before anything is built, so that no owned value is alive
        // if the charge raises.
        if crate::limits::charge(l, crate::limits::CAPABILITY_COST) {
            return Err(Raise);
        }
        let mut args = Vec::with_capacity(n as usize);
        for idx in 1..=n {
            let converted = json::to_value(
                l,
                idx,
                || format!("{}: argument #{idx}", cap.name),
                &vm.limits(),
            );
            // Each conversion is charged as `json.encode` is, failed or not
            // (a trip raises over the error).
            let cost = crate::jsonlib::cost(json::last_encoded_bytes());
            match converted {
                Ok(value) => args.push(value),
                Err(msg) => {
                    drop(args);
                    let raise = raise_tagged(l, ErrorKind::Capability, msg);
                    crate::limits::charge(l, cost);
                    return Err(raise);
                }
            }
            // A charge that trips pushes its message, which may raise: the
            // arguments are freed first.
            if crate::limits::would_trip(l, cost) {
                drop(args);
                crate::limits::charge(l, cost);
                return Err(Raise);
            }
            crate::limits::charge(l, cost);
        }
        let calls = calls(vm);
        calls.made.set(calls.made.get().saturating_add(1));
        if l as usize == calls.resuming.get() && ffi::lua_isyieldable(l) != 0 {
            // A coroutine of `parallel`: hand the call to it, which makes it
            // with its siblings' and resumes this one with the reply.
            calls.pending.borrow_mut().push(PendingCall {
                thread: l as usize,
                item: 0,
                capability: index,
                args,
            });
            return Ok(YIELD);
        }
        let reply = capabilities::call(&cap.name, &args);
        drop(args);
        ffi::lua_settop(l, 0);
        // The reply is charged as `json.decode` is, failed or not (a trip
        // raises over the error): its size is the host's, but how often it
        // is asked for is the script's.
        let cost = reply_cost(&reply);
        if crate::limits::would_trip(l, cost) {
            // The reply would pass the budget: the limit trips before any
            // of the work of building it is done, with nothing owned left.
            drop(reply);
            crate::limits::charge(l, cost);
            return Err(Raise);
        }
        match push_reply(l, &cap.name, reply) {
            Ok(()) if crate::limits::charge(l, cost) => Err(Raise),
            Ok(()) => Ok(1),
            Err(msg) => {
                let raise = raise_tagged(l, ErrorKind::Capability, msg);
                crate::limits::charge(l, cost);
                Err(raise)
            }
        }
    }
}

/// What making Lua values of `reply` costs in instructions: JSON text as
/// `json.decode` is charged, a string as its bytes are, a scalar nothing.
pub fn reply_cost(reply: &CallReply) -> u64 {
    match reply {
        Ok(WitValue::Json(text)) => crate::jsonlib::decode_cost(text.as_bytes()),
        Ok(WitValue::Text(text)) | Err(text) => crate::jsonlib::cost(text.len()),
        Ok(_) => 0,
    }
}

/// What [`call_body`] returns when the call was handed to `parallel`: the
/// entry point yields.
const YIELD: c_int = -1;

/// Pushes the Lua form of a capability's reply, or returns the message of
/// the error the call must raise instead (the host's own, or why the reply
/// cannot become Lua). On an error the stack may hold part of the value.
///
/// # Safety
/// `l` is a live thread of a Vm-owned state in protected mode, with a free
/// slot. May raise a memory error.
pub unsafe fn push_reply(l: *mut lua_State, name: &str, reply: CallReply) -> Result<(), String> {
    // SAFETY: The caller passes a live thread of a Vm-owned state in protected
    // mode. The reply is owned by the Vm while it becomes Lua values: a memory
    // error while pushing unwinds past this frame, which then owns nothing
    // (the parsed reply has moved into the Vm, and `name` is borrowed). A
    // nested capability call from a finalizer holds its own reply, and only
    // this call or the next eval frees this one, so `held.as_ref()` stays
    // valid until `json::release`, after which it is not used.
    unsafe {
        let vm = Vm::from_state(l);
        let received = match reply {
            // A number, boolean or nil owns nothing, so it needs no holding.
            Ok(WitValue::Nil) => {
                ffi::lua_pushnil(l);
                return Ok(());
            }
            Ok(WitValue::Boolean(b)) => {
                ffi::lua_pushboolean(l, c_int::from(b));
                return Ok(());
            }
            Ok(WitValue::Integer(i)) => {
                ffi::lua_pushinteger(l, i);
                return Ok(());
            }
            Ok(WitValue::Float(f)) => {
                ffi::lua_pushnumber(l, f);
                return Ok(());
            }
            Ok(value) => json::Received::parse(value)
                .map_err(|e| format!("{name}: the host returned {e}"))?,
            Err(msg) => return Err(msg),
        };
        let held = json::hold(vm, received);
        let pushed = json::push_received(l, held.as_ref(), vm.limits().max_value_depth);
        json::release(vm, held);
        pushed.map_err(|msg| format!("{name}: result {msg}"))
    }
}

/// Where a capability call that yielded to `parallel` goes on when
/// `parallel` resumes its coroutine; see [`resumed_body`].
///
/// # Safety
/// Called by Lua only, as the continuation of [`call_entry`]'s yield.
unsafe extern "C-unwind" fn resumed_entry(
    l: *mut lua_State,
    _status: c_int,
    _ctx: ffi::lua_KContext,
) -> c_int {
    // SAFETY: Lua calls the continuation on the live coroutine that yielded,
    // in the capability's own frame, inside the protection of the `resume`
    // that restarted it. `resumed_body` returns `Err` only with the error
    // pushed and nothing owned on its frame.
    unsafe {
        match resumed_body(l) {
            Ok(n) => n,
            Err(Raise) => ffi::lua_error(l),
        }
    }
}

/// Returns the reply `parallel` resumed the coroutine with: the values
/// `true, value` or `false, message` on top of the stack. A resume by
/// anything else is refused, so a script cannot forge a reply: only
/// `parallel` sets `Calls::delivering`, which no Lua value can stand for.
///
/// # Safety
/// As for [`resumed_entry`], from it.
unsafe fn resumed_body(l: *mut lua_State) -> Result<c_int, Raise> {
    // SAFETY: `l` is the live coroutine restarted inside a capability's frame
    // (see `resumed_entry`), so `Vm::from_state` is valid and the frame has
    // its free slots. The reads do not raise; the error message is copied
    // into an owned vector that moves into the Vm (`raise_tagged`) before
    // anything can raise.
    unsafe {
        let vm = Vm::from_state(l);
        if vm.push_trip(l) {
            crate::limits::arm_tripped(l);
            return Err(Raise);
        }
        let top = ffi::lua_gettop(l);
        if calls(vm).delivering.replace(0) != l as usize || top < 2 {
            return Err(raise_tagged(
                l,
                ErrorKind::Runtime,
                "this coroutine is waiting for a capability call made inside parallel, \
                 and only parallel may resume it",
            ));
        }
        if ffi::lua_toboolean(l, top - 1) != 0 {
            return Ok(1);
        }
        let msg = lua::to_bytes(l, top).unwrap_or_default().to_vec();
        Err(raise_tagged(l, ErrorKind::Capability, msg))
    }
}
