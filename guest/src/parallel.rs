//! `parallel(items, fn)`: runs `fn(item)` for every item in a coroutine of
//! its own, makes the capability calls those coroutines wait on together,
//! and returns a table of the first value each call returned, in item order.
//!
//! The schedule depends on the script alone. `parallel` starts the
//! coroutines in item order; each runs until it finishes or calls a
//! capability. The calls waiting then go to the host as one batch
//! (`capabilities.call-many`, or `call` when there is one), which the host
//! may run concurrently, and the replies go back to their coroutines in item
//! order, which run on until they finish or call again: the next batch.
//! Which call the host finishes first changes nothing a script can see.
//!
//! A capability yields its call only when it is called directly on the
//! coroutine `parallel` is resuming, where that coroutine can yield (see
//! `capability`). Elsewhere (a `table.sort` comparator, a `string.gsub`
//! callback, a metamethod called from C, a coroutine the function creates
//! itself) the call runs in place, as it would outside `parallel`.
//!
//! The first error, in the order the coroutines run, ends `parallel` and
//! propagates unchanged, as if `fn` had been called directly: the failed
//! coroutine's to-be-closed variables are closed, and so are those of every
//! coroutine still waiting. Calls of the batch being delivered have run on
//! the host; the calls those coroutines would have made next never are. Limits are the
//! eval's: each coroutine is charged as `coroutine.create` is, each call as a
//! direct call is, and a trip in any coroutine ends the eval.

use std::cell::RefCell;
use std::ffi::c_int;

use crate::bindings::capabilities;
use crate::capability::{self, CallReply, PendingCall, push_reply};
use crate::limits::{self, COROUTINE_COST, raise_tagged};
use crate::lua::{self, Raise, ffi, lua_State};
use crate::vm::{ErrorKind, Extension, Vm};

/// A reply on its way back to the coroutine of `parallel` that waits for it.
struct Delivery {
    item: usize,
    capability: usize,
    reply: CallReply,
}

/// What this module keeps in the Vm: the replies of the batches `parallel`
/// is handing out, innermost last, owned here while they become Lua values
/// (a push can raise a memory error, which unwinds without running Rust
/// destructors). Each `parallel` truncates the list back to its own depth.
#[derive(Default)]
struct Batches(RefCell<Vec<Vec<Option<Delivery>>>>);

impl Extension for Batches {
    fn begin_eval(&self) {
        self.0.take();
    }
}

/// Stack slots of `parallel`'s frame.
const ITEMS: c_int = 1;
const FUNC: c_int = 2;
/// The coroutines still running, by item index.
const TASKS: c_int = 3;
const RESULTS: c_int = 4;

/// Installs the global `parallel`.
///
/// # Safety
/// `l` is a live Vm-owned state in protected mode.
pub unsafe fn install(l: *mut lua_State) {
    // SAFETY: The caller passes a live Vm-owned state in protected mode, where
    // the push and the global set may raise with nothing owned on this frame.
    unsafe {
        ffi::lua_pushcfunction(l, parallel_entry);
        ffi::lua_setglobal(l, c"parallel".as_ptr());
    }
}

/// The function `parallel`; see [`parallel_body`].
///
/// # Safety
/// Called by Lua only, as the global `parallel`.
unsafe extern "C-unwind" fn parallel_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls `parallel` as a C function on a live thread of a
    // Vm-owned state inside a protected call. `parallel_body` returns `Err`
    // only with the error on top and nothing owned on its frame, so
    // `lua_error` unwinds only frames without destructors.
    unsafe {
        match parallel_body(l) {
            Ok(n) => n,
            Err(Raise) => ffi::lua_error(l),
        }
    }
}

/// Checks the arguments, runs the rounds and returns the results table.
///
/// # Safety
/// As for [`parallel_entry`], from it.
unsafe fn parallel_body(l: *mut lua_State) -> Result<c_int, Raise> {
    // SAFETY: `l` is a live thread of a Vm-owned state inside a C function in
    // protected mode (see `parallel_entry`). The argument checks may raise
    // with nothing owned. The frame holds the items, the function, the
    // coroutines and the results at fixed slots, and every round leaves it as
    // it found it. Owned values exist only between Lua calls that cannot
    // raise: the batch taken from the Vm becomes the host's replies, which
    // move back into the Vm ([`Batches`]) before anything is pushed, and each
    // reply moves into `push_reply`, which holds it in the Vm while it is
    // pushed. `abort` clears what this call left in the Vm before any error
    // leaves it.
    unsafe {
        ffi::luaL_checktype(l, ITEMS, ffi::LUA_TTABLE);
        ffi::luaL_checktype(l, FUNC, ffi::LUA_TFUNCTION);
        ffi::lua_settop(l, FUNC);
        if ffi::lua_checkstack(l, 8) == 0 {
            lua::push_bytes(l, b"parallel: no room on the Lua stack");
            return Err(Raise);
        }
        let n = ffi::lua_rawlen(l, ITEMS);
        let size = crate::vm::to_c_int(n);
        ffi::lua_createtable(l, size, 0);
        ffi::lua_createtable(l, size, 0);
        let vm = Vm::from_state(l);
        let calls = capability::calls(vm);
        let batches = &vm.extension::<Batches>().0;
        let mark = calls.pending_len();
        let depth = batches.borrow().len();
        for item in 1..=n {
            if limits::charge(l, COROUTINE_COST) {
                return Err(abort(l, vm, mark, depth));
            }
            let co = ffi::lua_newthread(l);
            ffi::lua_rawseti(l, TASKS, item as i64);
            ffi::lua_pushvalue(l, FUNC);
            ffi::lua_rawgeti(l, ITEMS, item as i64);
            if ffi::lua_checkstack(co, 2) == 0 {
                lua::push_bytes(l, b"parallel: no room on a coroutine's stack");
                return Err(abort(l, vm, mark, depth));
            }
            ffi::lua_xmove(l, co, 2);
            step(l, vm, co, item, 1, mark, depth)?;
        }
        loop {
            let batch = calls.take_pending(mark);
            if batch.is_empty() {
                break;
            }
            let deliveries = call_host(vm, batch);
            let count = deliveries.len();
            // The replies are charged as a direct call's are, before any
            // is pushed.
            let cost = deliveries
                .iter()
                .flatten()
                .map(|d| capability::reply_cost(&d.reply))
                .fold(0u64, u64::saturating_add);
            batches.borrow_mut().push(deliveries);
            if limits::charge(l, cost) {
                return Err(abort(l, vm, mark, depth));
            }
            for j in 0..count {
                let delivery = batches
                    .borrow_mut()
                    .get_mut(depth)
                    .and_then(|batch| batch.get_mut(j))
                    .and_then(Option::take);
                let Some(Delivery {
                    item,
                    capability,
                    reply,
                }) = delivery
                else {
                    continue;
                };
                ffi::lua_rawgeti(l, TASKS, item as i64);
                let co = ffi::lua_tothread(l, -1);
                ffi::lua_pop(l, 1);
                if co.is_null() {
                    continue;
                }
                let name = vm.capabilities().get(capability).map_or("", |c| &c.name);
                let top = ffi::lua_gettop(l);
                ffi::lua_pushboolean(l, 1);
                if let Err(msg) = push_reply(l, name, reply) {
                    ffi::lua_settop(l, top);
                    ffi::lua_pushboolean(l, 0);
                    vm.push_owned(l, msg);
                }
                if ffi::lua_checkstack(co, 2) == 0 {
                    lua::push_bytes(l, b"parallel: no room on a coroutine's stack");
                    return Err(abort(l, vm, mark, depth));
                }
                ffi::lua_xmove(l, co, 2);
                // The capability's continuation takes the reply only from
                // this resume (see `capability::Calls::deliver_to`).
                calls.deliver_to(co as usize);
                let stepped = step(l, vm, co, item, 2, mark, depth);
                calls.deliver_to(0);
                stepped?;
            }
            batches.borrow_mut().truncate(depth);
        }
        ffi::lua_settop(l, RESULTS);
        Ok(1)
    }
}

/// Sends one batch to the host and pairs each reply with its call. Runs no
/// Lua.
fn call_host(vm: &Vm, batch: Vec<PendingCall>) -> Vec<Option<Delivery>> {
    let name = |index: usize| vm.capabilities().get(index).map_or("", |c| c.name.as_str());
    let mut targets = Vec::with_capacity(batch.len());
    let mut requests = Vec::with_capacity(batch.len());
    for call in batch {
        targets.push((call.item, call.capability));
        requests.push(capabilities::CallRequest {
            name: name(call.capability).to_owned(),
            args: call.args,
        });
    }
    let mut replies = if let [one] = requests.as_slice() {
        vec![capabilities::call(&one.name, &one.args)]
    } else {
        capabilities::call_many(&requests)
    };
    let answered = replies.len();
    if answered != requests.len() {
        let msg = format!(
            "the host answered {answered} of a batch of {} capability calls",
            requests.len()
        );
        replies.truncate(requests.len());
        replies.resize(requests.len(), Err(msg));
    }
    targets
        .into_iter()
        .zip(replies)
        .map(|((item, capability), reply)| {
            Some(Delivery {
                item,
                capability,
                reply,
            })
        })
        .collect()
}

/// Resumes the coroutine of `item` with the `nargs` values on top of it,
/// then files its outcome: a finished coroutine's first value goes into the
/// results, a capability call it yielded stays pending for the next batch,
/// and an error ends `parallel` (see [`abort`]).
///
/// # Safety
/// `l` runs `parallel` (see [`parallel_body`]'s frame); `co` is the live
/// coroutine stored at `item` in its tasks, with `nargs` values on top.
unsafe fn step(
    l: *mut lua_State,
    vm: &Vm,
    co: *mut lua_State,
    item: usize,
    nargs: c_int,
    mark: usize,
    depth: usize,
) -> Result<(), Raise> {
    // SAFETY: `co` is a live thread of the same state as `l`, kept alive by
    // the tasks table, so `lua_resume` may run it from `l` and `lua_xmove`
    // may move values between them; the resume runs under Lua's own
    // protection and reports an error as a status. `parallel_body` made room
    // on `l` for the value moved over. The raw sets store into the frame's
    // tables. The pending list is borrowed only while no Lua code runs, and
    // every raise happens with nothing owned on this frame.
    unsafe {
        let calls = capability::calls(vm);
        let before = calls.pending_len();
        let saved = calls.begin_resume(co as usize);
        let mut nres: c_int = 0;
        let status = ffi::lua_resume(co, l, nargs, &mut nres);
        calls.end_resume(saved);
        match status {
            ffi::LUA_OK => {
                calls.truncate_pending(before);
                if nres > 0 {
                    ffi::lua_pop(co, nres - 1);
                    ffi::lua_xmove(co, l, 1);
                    ffi::lua_rawseti(l, RESULTS, item as i64);
                }
                ffi::lua_pushnil(l);
                ffi::lua_rawseti(l, TASKS, item as i64);
                Ok(())
            }
            ffi::LUA_YIELD => {
                ffi::lua_pop(co, nres);
                let yielded = calls.refile(before, co as usize, item);
                if yielded {
                    return Ok(());
                }
                let msg = format!(
                    "parallel: the function yielded for item #{item}; a function run by \
                     parallel may call capabilities but not coroutine.yield"
                );
                let _ = raise_tagged(l, ErrorKind::Runtime, msg);
                Err(abort(l, vm, mark, depth))
            }
            _ => {
                if ffi::lua_status(co) != ffi::LUA_OK && !vm.has_tripped() {
                    // As `coroutine.wrap` does: close the failed coroutine's
                    // to-be-closed variables; a `__close` error replaces the
                    // error.
                    lua::lua_closethread(co, l);
                }
                ffi::lua_xmove(co, l, 1);
                ffi::lua_pushnil(l);
                ffi::lua_rawseti(l, TASKS, item as i64);
                Err(abort(l, vm, mark, depth))
            }
        }
    }
}

/// Ends `parallel` with the error on top of `l`: forgets the calls and
/// replies this `parallel` left in the Vm, closes the coroutines still
/// waiting (unless a limit has tripped, which replaces the error), and
/// returns the marker that makes the entry point raise.
///
/// # Safety
/// `l` runs `parallel` (see [`parallel_body`]'s frame) with the error on
/// top.
unsafe fn abort(l: *mut lua_State, vm: &Vm, mark: usize, depth: usize) -> Raise {
    // SAFETY: The truncations drop owned values outside any Lua call. Each
    // waiting coroutine is read from the frame's tasks table and closed under
    // Lua's own protection (`lua_closethread` reports errors as a status and
    // leaves the coroutine's error on its own stack, which is discarded). The
    // error stays on top of `l` throughout: `lua_next` and the pops keep the
    // stack balanced around it. A trip's message may be pushed instead, with
    // nothing owned on this frame.
    unsafe {
        capability::calls(vm).truncate_pending(mark);
        vm.extension::<Batches>().0.borrow_mut().truncate(depth);
        if vm.push_trip(l) {
            limits::arm_tripped(l);
            return Raise;
        }
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, TASKS) != 0 {
            let co = ffi::lua_tothread(l, -1);
            if !co.is_null() && ffi::lua_status(co) == ffi::LUA_YIELD {
                lua::lua_closethread(co, l);
            }
            ffi::lua_pop(l, 1);
        }
        if vm.push_trip(l) {
            limits::arm_tripped(l);
        }
        Raise
    }
}
