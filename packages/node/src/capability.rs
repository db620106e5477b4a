//! JavaScript functions as [`moonbox::Capability`]s.
//!
//! JavaScript runs on Node's main thread only, and an eval runs on another
//! thread, so every capability call is two hand-offs: the call to the main
//! thread, the reply back. Waking a parked thread costs 10-20 µs on a VM
//! (an interrupt), so a script calling a capability in a loop paid that
//! twice per call. Here each sandbox has a [`Mailbox`] of calls:
//!
//! - The eval's side queues a call, and wakes the main thread (through a
//!   threadsafe function, the drain) only when no drain is scheduled or
//!   running already; it then waits for the reply awake for `SPIN` before
//!   it parks ([`Reply`]).
//! - The drain (the package's JavaScript) takes calls one by one with
//!   [`Mailbox::next_call`] and answers each with [`Mailbox::reply`].
//!   After a synchronous function's reply, `next_call` waits awake for at
//!   most `SPIN` for the same sandbox's next call, and only while one of
//!   its evals is running; a drain returns to the event loop once it has
//!   run for `SLICE`, so timers and I/O still run while a script calls
//!   capabilities in a loop.
//!
//! In such a loop both sides are still awake at the next hand-off, and a
//! call costs a few microseconds. The crate's async handler
//! ([`Capability::new_async`]) awaits the reply, so the eval's deadline and a
//! cancel cover a JavaScript function that never answers.
//!
//! Calls cross as text both ways: the arguments as one JSON array, the
//! reply as the result's JSON text, or `!` and the message when the
//! function threw or its promise rejected (JSON text never starts with
//! `!`).

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use moonbox::{Capability, CapabilityError};
use napi::Status;
use napi::threadsafe_function::{
    ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue,
};
use napi_derive::napi;
use serde_json::Value;
use serde_json::value::RawValue;

/// How long the main thread waits awake for a sandbox's next call after a
/// synchronous reply, and the eval's side for a reply before it parks.
const SPIN: Duration = Duration::from_micros(50);

/// The longest a drain keeps Node's main thread before it returns to the
/// event loop (it is scheduled again if calls are waiting).
const SLICE: Duration = Duration::from_millis(1);

/// The package's drain function, called on the main thread with the
/// sandbox's mailbox when calls are waiting. Weak: a sandbox that is no
/// longer used does not keep Node's event loop alive. (The drain gets the
/// mailbox as its argument, rather than holding it, so that the mailbox,
/// which holds the drain, is not kept alive by it.)
pub(crate) type Drain =
    ThreadsafeFunction<NativeMailbox, UnknownReturnValue, NativeMailbox, Status, false, true>;

/// A sandbox's mailbox as the drain sees it.
#[napi]
pub struct NativeMailbox {
    inner: Arc<Mailbox>,
}

#[napi]
impl NativeMailbox {
    /// The next capability call as one text, `ID CAPABILITY ARGS` (the
    /// call's id, its capability's index, the arguments' JSON array; one
    /// string is cheaper to hand over than an object), or `null` when the
    /// drain should return (see [`Mailbox::next_call`]).
    #[napi]
    pub fn next_call(&self, first: bool, spin: bool) -> Option<String> {
        let call = self.inner.next_call(first, spin)?;
        Some(format!("{} {} {}", call.id, call.capability, call.args))
    }

    /// Answers capability call `id` with its reply text.
    #[napi]
    pub fn reply(&self, id: i64, text: String) {
        self.inner.reply(id, text);
    }
}

/// One call for the drain: the id its reply names, the capability's index
/// in the sandbox's list, the arguments as JSON array text.
struct CallOut {
    id: i64,
    capability: u32,
    args: String,
}

/// A sandbox's capability calls between the eval threads and the main
/// thread.
pub(crate) struct Mailbox {
    state: Mutex<State>,
    /// Calls queued, read without the lock by a spinning drain.
    queued: AtomicUsize,
    /// Evals of this sandbox running: a drain waits for a next call only
    /// while one is.
    running: AtomicUsize,
    drain: Drain,
}

struct State {
    calls: VecDeque<CallOut>,
    /// Whether a drain is scheduled or running, and will see a new call.
    scheduled: bool,
    /// When the running drain started.
    drain_started: Instant,
    next_id: i64,
    /// The calls not yet answered.
    waiting: HashMap<i64, Arc<Slot>>,
}

impl Mailbox {
    pub(crate) fn new(drain: Drain) -> Self {
        Mailbox {
            state: Mutex::new(State {
                calls: VecDeque::new(),
                scheduled: false,
                drain_started: Instant::now(),
                next_id: 0,
                waiting: HashMap::new(),
            }),
            queued: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            drain,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Marks an eval of this sandbox running until the guard drops.
    pub(crate) fn running(self: &Arc<Self>) -> Running {
        self.running.fetch_add(1, Ordering::SeqCst);
        Running(self.clone())
    }

    /// Queues a call of the drain on the main thread.
    fn schedule(self: &Arc<Self>) -> Status {
        let mailbox = NativeMailbox {
            inner: self.clone(),
        };
        self.drain
            .call(mailbox, ThreadsafeFunctionCallMode::NonBlocking)
    }

    /// Queues a call; the reply comes through the returned future.
    fn call(self: &Arc<Self>, capability: u32, args: String) -> Reply {
        let slot = Arc::new(Slot::default());
        let mut state = self.lock();
        let id = state.next_id;
        state.next_id += 1;
        state.waiting.insert(id, slot.clone());
        state.calls.push_back(CallOut {
            id,
            capability,
            args,
        });
        self.queued.fetch_add(1, Ordering::Release);
        let wake = !state.scheduled;
        state.scheduled = true;
        drop(state);
        if wake {
            let status = self.schedule();
            if status != Status::Ok {
                let mut state = self.lock();
                state.scheduled = false;
                state.waiting.remove(&id);
                if let Some(at) = state.calls.iter().position(|c| c.id == id) {
                    state.calls.remove(at);
                    self.queued.fetch_sub(1, Ordering::Release);
                }
                drop(state);
                slot.fill(format!("!the JavaScript function could not run: {status}"));
            }
        }
        Reply {
            slot,
            mailbox: self.clone(),
            id,
            spun: false,
        }
    }

    /// The drain's next call, on the main thread. `first` starts a drain;
    /// `spin` (after a synchronous reply) waits awake for a call for at
    /// most `SPIN` while an eval of the sandbox runs. `None` ends the
    /// drain: no call is waiting, or the drain has had its `SLICE` (it is
    /// then scheduled again).
    fn next_call(self: &Arc<Self>, first: bool, spin: bool) -> Option<CallOut> {
        let now = Instant::now();
        let started = if first {
            self.lock().drain_started = now;
            now
        } else {
            self.lock().drain_started
        };
        if now.duration_since(started) >= SLICE {
            let mut state = self.lock();
            if state.calls.is_empty() {
                state.scheduled = false;
            } else {
                drop(state);
                // Let the event loop turn, then drain again. If the drain
                // cannot be queued, the calls wait for the next one.
                if self.schedule() != Status::Ok {
                    self.lock().scheduled = false;
                }
            }
            return None;
        }
        if spin {
            wait(now, || {
                self.queued.load(Ordering::Acquire) > 0 || self.running.load(Ordering::Acquire) == 0
            });
        }
        let mut state = self.lock();
        match state.calls.pop_front() {
            Some(call) => {
                self.queued.fetch_sub(1, Ordering::Release);
                Some(call)
            }
            None => {
                state.scheduled = false;
                None
            }
        }
    }

    /// Answers call `id` with `text`; a call already abandoned (its eval
    /// past its deadline or cancelled) is ignored.
    fn reply(&self, id: i64, text: String) {
        let slot = self.lock().waiting.remove(&id);
        if let Some(slot) = slot {
            slot.fill(text);
        }
    }
}

/// Waits awake until `ready` or `SPIN` after `from`: spinning at first,
/// then yielding the core between looks, so that on a busy machine the
/// thread that would make `ready` true (the other side of the hand-off)
/// gets to run.
fn wait(from: Instant, ready: impl Fn() -> bool) {
    let yield_after = from + SPIN / 5;
    let until = from + SPIN;
    while !ready() {
        let now = Instant::now();
        if now >= until {
            return;
        }
        if now < yield_after {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// An eval of a sandbox, running while it lives.
pub(crate) struct Running(Arc<Mailbox>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Where a call's reply lands.
#[derive(Default)]
struct Slot {
    done: AtomicBool,
    value: Mutex<(Option<String>, Option<Waker>)>,
}

impl Slot {
    fn fill(&self, text: String) {
        let mut value = self.value.lock().unwrap_or_else(PoisonError::into_inner);
        value.0 = Some(text);
        self.done.store(true, Ordering::Release);
        if let Some(waker) = value.1.take() {
            waker.wake();
        }
    }

    fn take(&self) -> Option<String> {
        self.value
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .take()
    }
}

/// The reply of one call. Dropped unanswered (the eval's deadline, a
/// cancel), it forgets the call: a late reply is ignored.
struct Reply {
    slot: Arc<Slot>,
    mailbox: Arc<Mailbox>,
    id: i64,
    /// Whether the first poll spun already: later polls come from a wake.
    spun: bool,
}

impl Future for Reply {
    type Output = String;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<String> {
        if !self.spun {
            // The eval's thread waits for this reply anyway: awake for a
            // moment before parking, for a reply that comes quickly.
            self.spun = true;
            wait(Instant::now(), || self.slot.done.load(Ordering::Acquire));
        }
        if self.slot.done.load(Ordering::Acquire)
            && let Some(text) = self.slot.take()
        {
            return Poll::Ready(text);
        }
        let mut value = self
            .slot
            .value
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(text) = value.0.take() {
            return Poll::Ready(text);
        }
        value.1 = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if !self.slot.done.load(Ordering::Acquire) {
            self.mailbox.lock().waiting.remove(&self.id);
        }
    }
}

/// The capability `name`, taking `min..=max` arguments (the crate checks
/// the range when the sandbox is built), answered by the function at
/// `index` in the sandbox's list, through `mailbox`.
///
/// The crate pads a call's arguments with `null` up to `max`; trailing
/// `null`s past `min` are dropped again, so that the function sees as many
/// arguments as the script passed (a trailing `nil` counts as absent, as
/// Lua's own functions mostly treat it).
pub(crate) fn js_capability(
    name: String,
    index: u32,
    min: u32,
    max: u32,
    mailbox: Arc<Mailbox>,
) -> Capability<()> {
    let keep = usize::try_from(min).unwrap_or(usize::MAX);
    Capability::new_async(name, move |_ctx: Arc<()>, mut args: Vec<Value>| {
        while args.len() > keep && args.last() == Some(&Value::Null) {
            args.pop();
        }
        let mailbox = mailbox.clone();
        // Queued when first polled: the crate bounds the calls in flight.
        async move { decode(mailbox.call(index, Value::Array(args).to_string()).await) }
    })
    .with_arity(min, max)
}

/// The reply text as a result or a capability error.
fn decode(text: String) -> Result<Box<RawValue>, CapabilityError> {
    if let Some(message) = text.strip_prefix('!') {
        return Err(CapabilityError::new(message));
    }
    RawValue::from_string(text)
        .map_err(|e| CapabilityError::new(format!("the result is not JSON: {e}")))
}
