//! The base layer: one Lua state and what every feature shares about it,
//! the allocator (heap and string limits), the session's limits and
//! capabilities, the first limit that tripped, the error the guest itself
//! raised last, and a slot for owned bytes while Lua may raise.
//!
//! This module imports no feature module: only the Lua bindings (`lua`) and
//! std. Each feature keeps its own state in its own module, in a private
//! type the Vm holds without knowing it (an [`Extension`], found by its
//! type with [`Vm::extension`]), so no feature can write another's state.
//!
//! # Ownership
//!
//! A Vm is allocated once and owned through a [`Handle`], a raw pointer
//! from `Box::into_raw`. Lua keeps that pointer as its allocator's user
//! data (and the output stream as its cookie), so the Vm never moves, and
//! every C function reaches it from its `lua_State` with
//! [`Vm::from_state`]. No `&mut Vm` ever exists: every mutable field is a
//! `Cell`, `RefCell` (borrowed only briefly, never across a call into Lua)
//! or `UnsafeCell`, because Lua may re-enter the allocator, and through
//! finalizers any C function, from almost any API call. Dropping the handle
//! closes the state through a shared reference (finalizers and the
//! allocator run meanwhile and reach the Vm through Lua's pointer), and
//! only once `lua_close` has returned frees the extensions and then the Vm.

use std::alloc::{Layout, alloc, dealloc, realloc};
use std::any::Any;
use std::borrow::Cow;
use std::cell::{Cell, OnceCell, RefCell, UnsafeCell};
use std::ffi::{c_int, c_void};
use std::ptr::{self, NonNull};

use crate::lua::{self, ffi, lua_State};

/// Alignment of every block handed to Lua (`LUAI_MAXALIGN` on wasm32).
const ALIGN: usize = 8;

/// Bytes a long-string object needs beyond its characters (header and the
/// terminating NUL), so that the string limit counts characters.
const STRING_OVERHEAD: usize = 32;

/// The kinds of error an eval or check ends with; the WIT `error-kind`,
/// which `wit` converts it to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Syntax,
    Runtime,
    Sandboxed,
    Capability,
    InstructionLimit,
    CallDepth,
    MemoryLimit,
    StringSize,
    OutputLimit,
    InvalidValue,
}

/// A session's limits; the WIT `limits`, which `wit` converts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_instructions: u64,
    pub max_call_depth: u32,
    pub max_string_bytes: u64,
    pub max_memory_bytes: u64,
    pub max_output_bytes: u64,
    pub max_value_depth: u32,
}

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

/// Why [`Vm::open`] failed: `max_memory_bytes` is too small for an empty
/// Lua state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewError;

/// A limit that tripped during the current eval. The first one wins.
#[derive(Clone, Debug)]
pub struct Trip {
    pub kind: Kind,
    pub message: Cow<'static, str>,
}

/// What the Vm calls when a limit trips, with its main thread, so that the
/// script stops at its next instruction (`limits::arm_tripped`). It must
/// neither allocate nor raise: the allocator trips too.
pub type OnTrip = unsafe fn(*mut lua_State);

/// A feature's own state, held by the Vm for the feature's module (see
/// [`Vm::extension`]). The type is the feature's, usually private to its
/// module, so only that module reads or writes it.
pub trait Extension: Any {
    /// Clears what the feature keeps per eval. Runs between evals (from
    /// [`Vm::begin_eval`]), never while Lua runs, and must not call Lua.
    fn begin_eval(&self) {}
}

/// The state behind one `lua_State`.
pub struct Vm {
    state: Cell<*mut lua_State>,
    /// The session's limits (see [`Vm::limits`]).
    limits: Cell<Limits>,
    /// The session's capabilities, set once (see [`Vm::capabilities`]).
    capabilities: OnceCell<Vec<Capability>>,
    /// The fixed `os.time()` of deterministic mode.
    clock: Cell<Option<i64>>,
    /// When the session started, for `os.clock`; set by
    /// [`Vm::start_clock`], since a snapshot's Vm is built where no clock
    /// may be read.
    started: Cell<Option<std::time::Instant>>,
    used: Cell<usize>,
    /// Bytes held outside the Lua heap that count against
    /// `max-memory-bytes` together with it: the session's files (see
    /// [`Vm::charge_external`]).
    external: Cell<usize>,
    /// The most `used + external` has been since the peak was restarted.
    peak: Cell<usize>,
    trip: RefCell<Option<Trip>>,
    /// Arms the budget after a trip (see [`OnTrip`]).
    on_trip: OnTrip,
    /// The last error message raised by the guest's own functions, with the
    /// kind it stands for (sandboxed, capability). If the eval ends with this
    /// exact message, that is its kind.
    tagged: RefCell<Option<(Vec<u8>, ErrorKind)>>,
    /// Owned bytes that are being pushed onto the Lua stack. A push can raise
    /// a memory error, which unwinds without running Rust destructors, so
    /// anything that owns heap memory while Lua may raise lives here: the
    /// next [`Vm::push_owned`] or eval frees it.
    scratch: UnsafeCell<Vec<u8>>,
    /// The features' states, each from `Box::into_raw`, in the order they
    /// were first asked for. Only appended to while the Vm lives; freed by
    /// [`Handle`]'s drop once the state is closed.
    extensions: RefCell<Vec<NonNull<dyn Extension>>>,
}

/// The owner of a [`Vm`]: allocated once, never moved, closed and freed
/// when the handle is dropped.
pub struct Handle(NonNull<Vm>);

impl std::ops::Deref for Handle {
    type Target = Vm;

    fn deref(&self) -> &Vm {
        // SAFETY: The pointer came from `Box::into_raw` in `Vm::create` and
        // is freed only by this handle's drop, so it is live while `self`
        // is. Only shared references to the Vm are ever made.
        unsafe { self.0.as_ref() }
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // Close through a shared reference: finalizers and the allocator
        // reach the Vm through Lua's pointer while `lua_close` runs, and
        // only shared references to it may coexist with theirs.
        let vm: &Vm = self;
        vm.close();
        // SAFETY: The pointer came from `Box::into_raw` in `Vm::create` and
        // is freed once, here. The state is closed, so Lua holds no pointer
        // to the Vm any more, and the shared reference above is not used
        // again.
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

impl Vm {
    /// Creates the Lua state, for a session.
    pub fn open(
        limits: Limits,
        capabilities: Vec<Capability>,
        clock: Option<i64>,
        on_trip: OnTrip,
    ) -> Result<Handle, NewError> {
        Vm::create(limits, OnceCell::from(capabilities), clock, on_trip)
    }

    /// A Vm built ahead of time, for the snapshot: its capabilities are
    /// unset until [`Vm::configure`] gives it a session's.
    pub fn open_unconfigured(limits: Limits, on_trip: OnTrip) -> Result<Handle, NewError> {
        Vm::create(limits, OnceCell::new(), None, on_trip)
    }

    fn create(
        limits: Limits,
        capabilities: OnceCell<Vec<Capability>>,
        clock: Option<i64>,
        on_trip: OnTrip,
    ) -> Result<Handle, NewError> {
        let vm = Box::new(Vm {
            state: Cell::new(ptr::null_mut()),
            limits: Cell::new(limits),
            capabilities,
            clock: Cell::new(clock),
            started: Cell::new(None),
            used: Cell::new(0),
            external: Cell::new(0),
            peak: Cell::new(0),
            trip: RefCell::new(None),
            on_trip,
            tagged: RefCell::new(None),
            scratch: UnsafeCell::new(Vec::new()),
            extensions: RefCell::new(Vec::new()),
        });
        // The handle owns the Vm from here on, also if the state cannot be
        // created (its drop then closes nothing).
        let handle = Handle(NonNull::from(Box::leak(vm)));
        // SAFETY: The allocator's user data is the handle's pointer, which
        // stays valid and in place until the handle's drop has closed the
        // state.
        let state = unsafe { ffi::lua_newstate(allocate, handle.0.as_ptr().cast::<c_void>()) };
        if state.is_null() {
            return Err(NewError);
        }
        handle.state.set(state);
        Ok(handle)
    }

    /// Gives a Vm built ahead of time (see `snapshot`), which has no
    /// capabilities yet, the session's limits, capabilities and clock,
    /// before any script runs.
    pub fn configure(&self, limits: Limits, capabilities: Vec<Capability>, clock: Option<i64>) {
        self.limits.set(limits);
        let fresh = self.capabilities.set(capabilities).is_ok();
        // A second configure would keep the first capabilities: trap rather
        // than run a session with the wrong ones.
        assert!(fresh, "configure runs once, on a Vm from open_unconfigured");
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

    /// The fixed `os.time()` of deterministic mode, if the session has one.
    pub fn clock(&self) -> Option<i64> {
        self.clock.get()
    }

    /// Starts `os.clock`'s count: the session's work begins now.
    pub fn start_clock(&self) {
        self.started.set(Some(std::time::Instant::now()));
    }

    /// The raw state (its main thread), or null once it is closed.
    pub fn state(&self) -> *mut lua_State {
        self.state.get()
    }

    /// The `Vm` that owns `l` (or any coroutine of it).
    ///
    /// # Safety
    /// `l` belongs to a state created by [`Vm::open`] that is still open.
    pub unsafe fn from_state<'a>(l: *mut lua_State) -> &'a Vm {
        // SAFETY: Every thread of a state shares its allocator, and the caller
        // passes a thread of an open state from `Vm::open`, whose allocator's
        // user data is the Vm's `Handle` pointer. The Vm stays at that address
        // until the handle's drop, which closes the state before freeing it,
        // so the Vm outlives every `l` and the reference. All the Vm's mutable
        // fields are `Cell`s, `RefCell`s or `UnsafeCell`s, and no `&mut Vm`
        // is ever made, so shared references to it may coexist.
        unsafe {
            let mut ud: *mut c_void = ptr::null_mut();
            ffi::lua_getallocf(l, &mut ud);
            &*(ud as *const Vm)
        }
    }

    /// The state of feature `T`, made with `T::default()` the first time it
    /// is asked for. The reference stays valid until the Vm is closed.
    pub fn extension<T: Extension + Default>(&self) -> &T {
        if let Some(found) = self.find::<T>() {
            return found;
        }
        let made: Box<dyn Extension> = Box::new(T::default());
        let made = NonNull::from(Box::leak(made));
        self.extensions.borrow_mut().push(made);
        // SAFETY: `made` came from `Box::leak` and is freed only by `close`,
        // after the state is closed, which ends every use of the Vm's
        // extensions (see `close`). Only shared references to it are made.
        let made = unsafe { made.as_ref() };
        let found: Option<&T> = (made as &dyn Any).downcast_ref::<T>();
        found.unwrap_or_else(|| unreachable!("the extension just made is a T"))
    }

    fn find<T: Extension>(&self) -> Option<&T> {
        let extensions = self.extensions.borrow();
        extensions.iter().find_map(|e| {
            // SAFETY: As in `extension`: every listed pointer is live until
            // `close` frees it after the state is closed.
            let e = unsafe { e.as_ref() };
            (e as &dyn Any).downcast_ref::<T>()
        })
    }

    /// Closes the state, then frees the extensions (the output stream among
    /// them, which finalizers may still write to while the state closes).
    /// Called once, by [`Handle`]'s drop.
    fn close(&self) {
        let state = self.state.replace(ptr::null_mut());
        if !state.is_null() {
            // SAFETY: The state was created by `Vm::create` and is closed once,
            // here: the handle's drop calls this once, and the pointer was
            // cleared above. The Vm stays in place, reached only through
            // shared references, while `lua_close` frees the state's objects
            // through the allocator and runs pending finalizers, which reach
            // the Vm through the allocator's user data.
            unsafe { ffi::lua_close(state) };
        }
        // After the state: closing it runs finalizers, which may use any
        // feature. One at a time, with no borrow of the list held while an
        // extension is dropped.
        loop {
            let next = self.extensions.borrow_mut().pop();
            let Some(extension) = next else { break };
            // SAFETY: Every listed pointer came from `Box::leak` in
            // `extension` and is freed once, after leaving the list. No Lua
            // code runs any more, so no reference to it is in use.
            drop(unsafe { Box::from_raw(extension.as_ptr()) });
        }
    }

    /// Clears the per-eval counters, the trip and every feature's per-eval
    /// state before an eval. Runs between evals, never while Lua runs.
    pub fn begin_eval(&self) {
        self.trip.replace(None);
        self.tagged.replace(None);
        self.restart_peak();
        // SAFETY: `begin_eval` runs from the session between evals, never from
        // inside a Lua call, so no `push_owned` is using the slot while it is
        // replaced.
        unsafe {
            *self.scratch.get() = Vec::new();
        }
        // By index, with no borrow held while a feature clears its state.
        let mut i = 0;
        loop {
            let next = self.extensions.borrow().get(i).copied();
            let Some(extension) = next else { break };
            // SAFETY: As in `extension`: listed pointers are live until the
            // state is closed, and only shared references are made.
            unsafe { extension.as_ref() }.begin_eval();
            i += 1;
        }
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
        unsafe { lua::count(state) }
    }

    /// Bytes the Lua heap holds now.
    pub fn used_bytes(&self) -> usize {
        self.used.get()
    }

    /// Starts the peak over from the bytes counted now (the heap and the
    /// external bytes).
    pub fn restart_peak(&self) {
        self.peak
            .set(self.used.get().saturating_add(self.external.get()));
    }

    /// The most bytes the heap and the external bytes held together since
    /// [`Vm::begin_eval`] (or [`Vm::restart_peak`]).
    pub fn peak_bytes(&self) -> usize {
        self.peak.get()
    }

    /// Bytes held outside the Lua heap that count against
    /// `max-memory-bytes` with it (see [`Vm::charge_external`]).
    pub fn external_bytes(&self) -> usize {
        self.external.get()
    }

    /// Counts `bytes` more held outside the Lua heap (a file's bytes, a C
    /// stream's buffer) against `max-memory-bytes`, which the heap and
    /// these bytes share: the allocator refuses a block that would take
    /// the two past the limit. Returns `false`, counting nothing, when
    /// `bytes` do not fit; tripping the limit is then the caller's, with a
    /// message naming what did not fit. Never allocates.
    pub fn charge_external(&self, bytes: usize) -> bool {
        let total = self
            .used
            .get()
            .saturating_add(self.external.get())
            .saturating_add(bytes);
        if total as u64 > self.limits().max_memory_bytes {
            return false;
        }
        self.external.set(self.external.get() + bytes);
        if total > self.peak.get() {
            self.peak.set(total);
        }
        true
    }

    /// Gives back `bytes` that [`Vm::charge_external`] counted.
    pub fn release_external(&self, bytes: usize) {
        self.external.set(self.external.get().saturating_sub(bytes));
    }

    /// Records a tripped limit unless one already tripped, and arms the
    /// budget through [`OnTrip`] (a check point of 0 and a count hook of 1
    /// on the main thread), so that the script stops wherever the trip was
    /// caught.
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
            // SAFETY: `on_trip` only writes budget and hook fields of the live
            // state and its main thread; it neither allocates nor raises
            // (`OnTrip`'s contract), so it is safe in the middle of any Lua
            // operation, the allocator included.
            unsafe { (self.on_trip)(state) };
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
/// Called by Lua only, as the allocator of a state [`Vm::open`] made: `ud` is
/// the Vm, and `block` is null or a block of `osize` bytes that this allocator
/// returned.
unsafe extern "C" fn allocate(
    ud: *mut c_void,
    block: *mut c_void,
    osize: usize,
    nsize: usize,
) -> *mut c_void {
    // SAFETY: `ud` is the `Vm` registered in `Vm::open`.
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
        // The session's files share the limit (see `Vm::charge_external`).
        let wanted = vm
            .used
            .get()
            .saturating_sub(old)
            .saturating_add(nsize)
            .saturating_add(vm.external.get());
        if wanted as u64 > vm.limits().max_memory_bytes {
            // The first refusal trips the limit. Lua would retry some requests
            // after an emergency collection, but others (string buffers)
            // raise a catchable error at once; tripping here keeps every path
            // uncatchable. The limit therefore also counts garbage that a
            // collection would have freed.
            let max = vm.limits().max_memory_bytes;
            let files = vm.external.get();
            let message = if files == 0 {
                format!(
                    "not enough memory (the Lua heap is limited to {max} bytes by max-memory-bytes)"
                )
            } else {
                format!(
                    "not enough memory (the Lua heap and the session's files, which hold {files} bytes, are limited to {max} bytes by max-memory-bytes)"
                )
            };
            vm.trip(Kind::Error(ErrorKind::MemoryLimit), message);
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
    let counted = used.saturating_add(vm.external.get());
    if counted > vm.peak.get() {
        vm.peak.set(counted);
    }
    fresh.cast::<c_void>()
}

/// Lua `int` for a stack index count.
pub fn to_c_int(n: usize) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::ffi::c_int;

    use super::{Extension, Limits, Vm};
    use crate::lua::{ffi, lua_State};

    thread_local! {
        /// What happened while a Vm closed, in order.
        static EVENTS: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
    }

    fn event(what: &'static str) {
        EVENTS.with(|e| e.borrow_mut().push(what));
    }

    /// A feature's state that counts its evals and reports its drop.
    #[derive(Default)]
    struct Probe {
        evals: Cell<u32>,
        seen_by_finalizer: Cell<bool>,
    }

    impl Extension for Probe {
        fn begin_eval(&self) {
            self.evals.set(self.evals.get() + 1);
        }
    }

    impl Drop for Probe {
        fn drop(&mut self) {
            assert!(self.seen_by_finalizer.get(), "the finalizer ran first");
            event("probe dropped");
        }
    }

    /// A `__gc` metamethod that reaches the Vm while the state closes.
    unsafe extern "C-unwind" fn finalizer(l: *mut lua_State) -> c_int {
        // SAFETY: Lua runs the finalizer on a live thread of the state the
        // test opened with `Vm::open`, during `lua_close`, while the Vm is
        // still in place.
        let vm = unsafe { Vm::from_state(l) };
        vm.extension::<Probe>().seen_by_finalizer.set(true);
        event("finalizer ran");
        0
    }

    /// A trip arms nothing in this test.
    unsafe fn no_arming(_l: *mut lua_State) {}

    const LIMITS: Limits = Limits {
        max_instructions: 1_000,
        max_call_depth: 200,
        max_string_bytes: 1 << 10,
        max_memory_bytes: 1 << 20,
        max_output_bytes: 1,
        max_value_depth: 1,
    };

    #[test]
    fn extensions_outlive_the_state_and_are_found_by_type() {
        let vm = Vm::open(LIMITS, Vec::new(), None, no_arming).unwrap();
        let probe: *const Probe = vm.extension::<Probe>();
        assert!(std::ptr::eq(probe, vm.extension::<Probe>()), "one per type");
        vm.begin_eval();
        vm.begin_eval();
        assert_eq!(vm.extension::<Probe>().evals.get(), 2);
        let l = vm.state();
        // SAFETY: `l` is the live state just opened, with an empty stack;
        // the pushes fit in its base frame's room, and with 1 MiB of heap
        // none of them runs out of memory and raises outside a protected
        // call.
        unsafe {
            ffi::lua_newuserdatauv(l, 0, 0);
            ffi::lua_createtable(l, 0, 1);
            ffi::lua_pushcfunction(l, finalizer);
            ffi::lua_setfield(l, -2, c"__gc".as_ptr());
            ffi::lua_setmetatable(l, -2);
            ffi::lua_settop(l, 0);
        }
        drop(vm);
        let events = EVENTS.with(|e| e.take());
        assert_eq!(events, ["finalizer ran", "probe dropped"]);
    }
}
