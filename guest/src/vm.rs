//! One Lua state and everything the guest tracks about it: the allocator
//! (heap and string limits), per-eval counters, the output stream's count
//! and the first limit that tripped.
//!
//! The `Vm` is the allocator's user data, so every C function reaches it from
//! its `lua_State` with [`Vm::from_state`]. All mutable fields are `Cell` or
//! `RefCell` borrowed only briefly: Lua may re-enter the allocator from almost
//! any API call, so no `&mut Vm` ever exists.

use std::alloc::{Layout, alloc, dealloc, realloc};
use std::borrow::Cow;
use std::cell::{Cell, RefCell, UnsafeCell};
use std::ffi::{c_int, c_void};
use std::ptr::{self, NonNull};

use crate::json::Received;
use crate::lua::{ffi, lua_State};

/// Alignment of every block handed to Lua (`LUAI_MAXALIGN` on wasm32).
const ALIGN: usize = 8;

/// Bytes a long-string object needs beyond its characters (header and the
/// terminating NUL), so that the string limit counts characters.
const STRING_OVERHEAD: usize = 32;

pub use crate::wit::{ErrorKind, Limits};

/// Why an eval or check stopped: an error of a WIT `error-kind`, or an
/// allowed `os.exit`, which ends the eval like a limit but is a success.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Error(ErrorKind),
    /// `os.exit(code)`, when allowed.
    Exit(i32),
}

/// A capability as the guest knows it.
#[derive(Clone, Debug)]
pub struct Capability {
    pub name: String,
    pub min_args: u32,
    pub max_args: u32,
}

/// Why [`Vm::new`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewError {
    /// `max_memory_bytes` is too small for an empty Lua state.
    State,
    /// The C library could not open the output stream.
    Stdout,
}

/// A limit that tripped during the current eval. The first one wins.
#[derive(Clone, Debug)]
pub struct Trip {
    pub kind: Kind,
    pub message: Cow<'static, str>,
}

/// The state behind one `lua_State`.
pub struct Vm {
    state: Cell<*mut lua_State>,
    /// The session's limits (see [`Vm::limits`]).
    limits: Cell<Limits>,
    /// The session's capabilities, set once (see [`Vm::capabilities`]).
    capabilities: std::cell::OnceCell<Vec<Capability>>,
    /// The fixed `os.time()` of deterministic mode.
    clock: Cell<Option<i64>>,
    /// When the session started, for `os.clock`; set by
    /// [`Vm::start_clock`], since a snapshot's Vm is built where no clock
    /// may be read.
    started: Cell<Option<std::time::Instant>>,
    used: Cell<usize>,
    peak: Cell<usize>,
    pub output_bytes: Cell<u64>,
    /// What this eval's log events have been charged (see `output::log`),
    /// which shares `max-output-bytes` with `output_bytes`.
    pub log_bytes: Cell<u64>,
    pub capability_calls: Cell<u32>,
    trip: RefCell<Option<Trip>>,
    /// The last error message raised by the guest's own functions, with the
    /// kind it stands for (sandboxed, capability). If the eval ends with this
    /// exact message, that is its kind.
    tagged: RefCell<Option<(Vec<u8>, ErrorKind)>>,
    /// Traceback captured by the message handler for the current error.
    pub traceback: RefCell<Option<String>>,
    /// Owned bytes that are being pushed onto the Lua stack. A push can raise
    /// a memory error, which unwinds without running Rust destructors, so
    /// anything that owns heap memory while Lua may raise lives here: the
    /// next [`Vm::push_owned`] or eval frees it.
    scratch: UnsafeCell<Vec<u8>>,
    /// Capability replies while they are converted to Lua values, innermost
    /// last, for the same reason: each is boxed and freed by
    /// [`Vm::release_reply`], or by the next eval if a push raised. One slot
    /// would not do: the pushes can run finalizers, which can call a
    /// capability while an outer reply is still being read.
    replies: RefCell<Vec<NonNull<Received>>>,
    /// The C stream behind `io.stdout` (see `output`), opened once the Vm
    /// has its address; closed after the state.
    pub stdout: std::cell::OnceCell<crate::output::Stdout>,
    /// The coroutine `parallel` is resuming right now (its address), or 0.
    /// A capability called directly on that thread yields its call to
    /// `parallel` instead of making it (see `parallel`).
    pub resuming: Cell<usize>,
    /// The coroutine `parallel` is resuming with a capability's reply right
    /// now (its address), or 0: the capability's continuation takes the
    /// reply only when this names its own thread, and clears it. Held here,
    /// out of Lua's reach, so that no script can forge a reply.
    pub delivering: Cell<usize>,
    /// Capability calls yielded to `parallel`, in the order they were made.
    pub pending: RefCell<Vec<PendingCall>>,
    /// Replies of the batches `parallel` is handing out, innermost last:
    /// owned here while they become Lua values, for the same reason as
    /// `replies`. Each `parallel` truncates the list back to its own depth.
    pub batches: RefCell<Vec<Vec<Option<Delivery>>>>,
}

/// One capability call a coroutine of `parallel` has yielded.
pub struct PendingCall {
    /// The address of the coroutine that made it.
    pub thread: usize,
    /// The item of `parallel` whose coroutine made it (filled in by
    /// `parallel`).
    pub item: usize,
    /// The capability's index in [`Vm::capabilities`].
    pub capability: usize,
    pub args: Vec<crate::wit::Value>,
}

/// A reply on its way back to the coroutine of `parallel` that waits for it.
pub struct Delivery {
    pub item: usize,
    pub capability: usize,
    pub reply: CallReply,
}

/// What the host answered to one capability call.
pub type CallReply = Result<crate::wit::Value, String>;

impl Vm {
    /// Creates the Lua state and its output stream, for a session.
    pub fn new(
        limits: Limits,
        capabilities: Vec<Capability>,
        clock: Option<i64>,
    ) -> Result<Box<Vm>, NewError> {
        Vm::create(limits, std::cell::OnceCell::from(capabilities), clock)
    }

    /// A Vm built ahead of time, for the snapshot: its capabilities are
    /// unset until [`Vm::configure`] gives it a session's.
    pub fn new_unconfigured(limits: Limits) -> Result<Box<Vm>, NewError> {
        Vm::create(limits, std::cell::OnceCell::new(), None)
    }

    fn create(
        limits: Limits,
        capabilities: std::cell::OnceCell<Vec<Capability>>,
        clock: Option<i64>,
    ) -> Result<Box<Vm>, NewError> {
        let vm = Box::new(Vm {
            state: Cell::new(ptr::null_mut()),
            limits: Cell::new(limits),
            capabilities,
            clock: Cell::new(clock),
            started: Cell::new(None),
            used: Cell::new(0),
            peak: Cell::new(0),
            output_bytes: Cell::new(0),
            log_bytes: Cell::new(0),
            capability_calls: Cell::new(0),
            trip: RefCell::new(None),
            tagged: RefCell::new(None),
            traceback: RefCell::new(None),
            scratch: UnsafeCell::new(Vec::new()),
            replies: RefCell::new(Vec::new()),
            stdout: std::cell::OnceCell::new(),
            resuming: Cell::new(0),
            delivering: Cell::new(0),
            pending: RefCell::new(Vec::new()),
            batches: RefCell::new(Vec::new()),
        });
        // SAFETY: the Box gives the Vm a stable address that outlives the
        // state: `Drop` closes the state before the Box is freed.
        let state =
            unsafe { ffi::lua_newstate(allocate, (&*vm as *const Vm).cast_mut().cast::<c_void>()) };
        if state.is_null() {
            return Err(NewError::State);
        }
        vm.state.set(state);
        let stdout = crate::output::Stdout::open(&vm).ok_or(NewError::Stdout)?;
        let _ = vm.stdout.set(stdout);
        Ok(vm)
    }

    /// Gives a Vm built ahead of time (see `snapshot`), which has no
    /// capabilities yet, the session's limits, capabilities and clock,
    /// before any script runs.
    pub fn configure(&self, limits: Limits, capabilities: Vec<Capability>, clock: Option<i64>) {
        self.limits.set(limits);
        let fresh = self.capabilities.set(capabilities).is_ok();
        // A second configure would keep the first capabilities: trap rather
        // than run a session with the wrong ones.
        assert!(fresh, "configure runs once, on a Vm from new_unconfigured");
        self.clock.set(clock);
    }

    /// The session's limits.
    pub fn limits(&self) -> Limits {
        self.limits.get()
    }

    /// The session's capabilities, in the host's order.
    pub fn capabilities(&self) -> &[Capability] {
        self.capabilities.get().map_or(&[], Vec::as_slice)
    }

    /// Starts `os.clock`'s count: the session's work begins now.
    pub fn start_clock(&self) {
        self.started.set(Some(std::time::Instant::now()));
    }

    /// The raw state.
    pub fn state(&self) -> *mut lua_State {
        self.state.get()
    }

    /// The `Vm` that owns `l` (or any coroutine of it).
    ///
    /// # Safety
    /// `l` belongs to a state created by [`Vm::new`] that is still open.
    pub unsafe fn from_state<'a>(l: *mut lua_State) -> &'a Vm {
        // SAFETY: Every thread of a state shares its allocator, and the caller
        // passes a thread of an open state from `Vm::new`, whose allocator's
        // user data is that boxed Vm. The Box keeps the Vm at one address until
        // it is dropped, and `Drop` closes the state before freeing anything,
        // so the Vm outlives every `l` and the reference. All the Vm's mutable
        // fields are `Cell`s, `RefCell`s or `UnsafeCell`s, so shared references
        // to it may coexist.
        unsafe {
            let mut ud: *mut c_void = ptr::null_mut();
            ffi::lua_getallocf(l, &mut ud);
            &*(ud as *const Vm)
        }
    }

    /// Clears the per-eval counters before an eval.
    pub fn begin_eval(&self) {
        crate::clock::set(self.clock.get());
        let state = self.state.get();
        if !state.is_null() {
            // SAFETY: The state is live (not yet closed); setting the count
            // writes one field, without allocating or raising.
            unsafe { crate::limits::set_count(state, 0) };
        }
        self.output_bytes.set(0);
        self.log_bytes.set(0);
        self.capability_calls.set(0);
        self.trip.replace(None);
        self.tagged.replace(None);
        self.traceback.replace(None);
        self.peak.set(self.used.get());
        if let Some(stdout) = self.stdout.get() {
            stdout.reset();
        }
        // SAFETY: `begin_eval` runs from the session between evals, never from
        // inside a Lua call, so no `push_owned` is using the slot while it is
        // replaced.
        unsafe {
            *self.scratch.get() = Vec::new();
        }
        self.free_replies();
        self.resuming.set(0);
        self.delivering.set(0);
        self.pending.take();
        self.batches.take();
    }

    /// Pushes `bytes` as a Lua string, keeping them owned by the Vm while Lua
    /// may raise (see `scratch`).
    ///
    /// # Safety
    /// `l` is a live thread of this Vm's state with a free stack slot. May
    /// raise a memory error.
    pub unsafe fn push_owned(&self, l: *mut lua_State, bytes: impl Into<Vec<u8>>) {
        // SAFETY: The bytes stay in the Vm until `lua_pushlstring` has copied
        // them, so if the push raises a memory error nothing owned is left on
        // this frame, and the next push or eval frees them. No reference into
        // `scratch` is held across the call: the copy happens before the push
        // may run a garbage-collector step, whose finalizers can call a guest
        // function that pushes through this slot again. Such a nested push
        // replaces the bytes only after they have been copied, and `begin_eval`
        // never runs while Lua does.
        unsafe {
            let slot = self.scratch.get();
            *slot = bytes.into();
            let (ptr, len) = ((*slot).as_ptr(), (*slot).len());
            ffi::lua_pushlstring(l, ptr.cast(), len);
            *slot = Vec::new();
        }
    }

    /// Moves a capability's reply into the Vm while it becomes Lua values.
    /// The reply stays where the pointer says until [`Vm::release_reply`]
    /// or the next eval, whichever comes first.
    pub fn hold_reply(&self, reply: Received) -> NonNull<Received> {
        let reply = NonNull::from(Box::leak(Box::new(reply)));
        self.replies.borrow_mut().push(reply);
        reply
    }

    /// Frees a reply that [`Vm::hold_reply`] returned, unless the next eval
    /// already has.
    ///
    /// # Safety
    /// No reference to the reply is used afterwards.
    pub unsafe fn release_reply(&self, reply: NonNull<Received>) {
        let held = {
            let mut replies = self.replies.borrow_mut();
            let at = replies.iter().rposition(|&r| r == reply);
            at.map(|i| replies.remove(i))
        };
        if let Some(reply) = held {
            // SAFETY: the pointer was still listed, so it came from
            // `Box::leak` in `hold_reply` and has not been freed; it is
            // unlisted now, so it is freed once, and the caller uses no
            // reference to it any more.
            drop(unsafe { Box::from_raw(reply.as_ptr()) });
        }
    }

    /// Frees the replies left by pushes that raised.
    fn free_replies(&self) {
        for reply in self.replies.take() {
            // SAFETY: every listed pointer came from `Box::leak` in
            // `hold_reply` and is freed once, after leaving the list. This
            // runs between evals or once the state is closed, when no push
            // is reading a reply.
            drop(unsafe { Box::from_raw(reply.as_ptr()) });
        }
    }

    /// Pushes the tripped limit's message. Returns `false` (pushing nothing)
    /// when no limit has tripped.
    ///
    /// # Safety
    /// `l` is a live thread of this Vm's state with a free stack slot. May
    /// raise a memory error.
    pub unsafe fn push_trip(&self, l: *mut lua_State) -> bool {
        // The message is read through a pointer so that no borrow of the
        // `RefCell` is held while Lua may raise; a trip is set once per eval
        // and not changed until the next one.
        let (ptr, len) = match &*self.trip.borrow() {
            Some(trip) => (trip.message.as_ptr(), trip.message.len()),
            None => return false,
        };
        // SAFETY: `ptr` and `len` describe the message of the trip recorded in
        // the Vm, which stays in place until the next eval (a trip is set at
        // most once per eval), so it is still live while `lua_pushlstring`
        // copies it. The caller guarantees a free slot on a live thread of this
        // Vm's state.
        unsafe { ffi::lua_pushlstring(l, ptr.cast(), len) };
        true
    }

    /// The instructions this eval has run so far (see `limits`).
    pub fn instructions(&self) -> u64 {
        let state = self.state.get();
        if state.is_null() {
            return 0;
        }
        // SAFETY: The state is live (not yet closed); reading the count reads
        // one field, without allocating or raising.
        unsafe { crate::limits::count(state) }
    }

    /// Bytes the Lua heap holds now.
    pub fn used_bytes(&self) -> usize {
        self.used.get()
    }

    /// Starts the peak over from the heap in use now.
    pub fn restart_peak(&self) {
        self.peak.set(self.used.get());
    }

    /// The most bytes the heap held since [`Vm::begin_eval`] (or
    /// [`Vm::restart_peak`]).
    pub fn peak_bytes(&self) -> usize {
        self.peak.get()
    }

    /// Records a tripped limit unless one already tripped, sets the budget's
    /// check point to 0 and a count hook of 1 on the main thread
    /// ([`crate::limits::arm_tripped`]), so that the script stops wherever
    /// the trip was caught.
    pub fn trip(&self, kind: Kind, message: impl Into<Cow<'static, str>>) {
        {
            let mut trip = self.trip.borrow_mut();
            if trip.is_some() {
                return;
            }
            *trip = Some(Trip {
                kind,
                message: message.into(),
            });
        }
        let state = self.state.get();
        if !state.is_null() {
            // SAFETY: `arm_tripped` only writes budget and hook fields of the
            // live state and its main thread; it neither allocates nor raises,
            // so it is safe in the middle of any Lua operation, the allocator
            // included.
            unsafe { crate::limits::arm_tripped(state) };
        }
    }

    /// Whether a limit (or an allowed `os.exit`) has ended this eval.
    pub fn has_tripped(&self) -> bool {
        self.trip.borrow().is_some()
    }

    /// Clears a trip recorded outside an eval (by `check`).
    pub fn clear_trip(&self) {
        self.trip.replace(None);
    }

    /// The limit that tripped in this eval, if any.
    pub fn tripped(&self) -> Option<Trip> {
        self.trip.borrow().clone()
    }

    /// Remembers that the guest itself is raising `message` for `kind`.
    pub fn tag(&self, message: &[u8], kind: ErrorKind) {
        self.tagged.replace(Some((message.to_vec(), kind)));
    }

    /// The kind the guest tagged `message` with: the message is the tagged
    /// one, possibly re-raised with a `chunk:line: ` position in front (as
    /// `assert` and `error` do).
    pub fn tagged_kind(&self, message: &[u8]) -> Option<ErrorKind> {
        match &*self.tagged.borrow() {
            Some((tagged, kind)) if message.ends_with(tagged) => {
                let prefix = &message[..message.len() - tagged.len()];
                (prefix.is_empty() || prefix.ends_with(b": ")).then_some(*kind)
            }
            _ => None,
        }
    }

    /// What `os.clock` reports: seconds since the session started, or in
    /// deterministic mode ten nanoseconds per instruction of this eval.
    pub fn cpu_seconds(&self) -> f64 {
        if self.clock.get().is_some() {
            self.instructions() as f64 * 1e-8
        } else {
            self.started
                .get()
                .map_or(0.0, |started| started.elapsed().as_secs_f64())
        }
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        let state = self.state.replace(ptr::null_mut());
        if !state.is_null() {
            // SAFETY: The state was created by `Vm::new` and is closed once,
            // here. The Vm is still in place while `lua_close` frees the
            // state's objects through the allocator and runs pending
            // finalizers, which reach the Vm through the allocator's user data.
            unsafe { ffi::lua_close(state) };
        }
        // After the state: closing it runs finalizers, which may call
        // capabilities.
        self.free_replies();
    }
}

fn layout(size: usize) -> Layout {
    // `size` is never zero here, and ALIGN is a power of two.
    Layout::from_size_align(size, ALIGN).unwrap_or(Layout::new::<u64>())
}

/// Lua's allocator: enforces the heap limit and the string-size limit.
///
/// For a new object Lua passes its type tag in `osize`, which is how string
/// objects are told apart and refused before they are allocated.
///
/// # Safety
/// Called by Lua only, as the allocator of a state [`Vm::new`] made: `ud` is
/// the Vm, and `block` is null or a block of `osize` bytes that this allocator
/// returned.
unsafe extern "C" fn allocate(
    ud: *mut c_void,
    block: *mut c_void,
    osize: usize,
    nsize: usize,
) -> *mut c_void {
    // SAFETY: `ud` is the `Vm` registered in `Vm::new`.
    let vm = unsafe { &*(ud as *const Vm) };
    let old = if block.is_null() { 0 } else { osize };
    if nsize == 0 {
        if !block.is_null() {
            // SAFETY: Lua frees blocks it got from this allocator with their size.
            unsafe { dealloc(block.cast::<u8>(), layout(osize)) };
            vm.used.set(vm.used.get().saturating_sub(osize));
        }
        return ptr::null_mut();
    }
    if block.is_null() && osize == ffi::LUA_TSTRING as usize {
        let max = vm.limits().max_string_bytes;
        if nsize.saturating_sub(STRING_OVERHEAD) as u64 > max {
            vm.trip(
                Kind::Error(ErrorKind::StringSize),
                format!("string length exceeds the limit of {max} bytes (max-string-bytes)"),
            );
            return ptr::null_mut();
        }
    }
    if nsize > old {
        let wanted = vm.used.get().saturating_sub(old).saturating_add(nsize);
        if wanted as u64 > vm.limits().max_memory_bytes {
            // The first refusal trips the limit. Lua would retry some requests
            // after an emergency collection, but others (string buffers)
            // raise a catchable error at once; tripping here keeps every path
            // uncatchable. The limit therefore also counts garbage that a
            // collection would have freed.
            vm.trip(
                Kind::Error(ErrorKind::MemoryLimit),
                format!(
                    "not enough memory (the Lua heap is limited to {} bytes by max-memory-bytes)",
                    vm.limits().max_memory_bytes
                ),
            );
            return ptr::null_mut();
        }
    }
    // SAFETY: `block` is null or a live block of `osize` bytes from here.
    let fresh = unsafe {
        if block.is_null() {
            alloc(layout(nsize))
        } else {
            realloc(block.cast::<u8>(), layout(osize), nsize)
        }
    };
    if fresh.is_null() {
        // The linear memory itself is exhausted (the host's cap): that is a
        // memory limit too, and it must not be catchable.
        // A static message: nothing more can be allocated now.
        vm.trip(
            Kind::Error(ErrorKind::MemoryLimit),
            "not enough memory (the sandbox's linear memory is exhausted)",
        );
        return ptr::null_mut();
    }
    let used = vm.used.get() - old + nsize;
    vm.used.set(used);
    if used > vm.peak.get() {
        vm.peak.set(used);
    }
    fresh.cast::<c_void>()
}

/// Lua `int` for a stack index count.
pub fn to_c_int(n: usize) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}
