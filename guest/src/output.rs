//! The script's output: `print`, `io.write` and `io.stdout` all write to the
//! host's `output` stream, unbuffered and in order, as the script runs, so
//! whatever later stops the eval, the host already holds every byte written
//! before it.
//!
//! `io.stdout` stays the reference library's file object; only the C stream
//! behind it is replaced by one (`fopencookie`) whose writes come here. Its
//! methods (`write`, `flush`, `setvbuf`, `close`...) therefore behave exactly
//! as in `lua5.4`, and `io.write` and `print` interleave as they would there.
//! `io.stderr` writes to the same stream, as a terminal shows both: one
//! ordered stream is what a model reads back, with one bound, and a
//! message written to `io.stderr` before an error stays beside the output it
//! explains. `io.stdin` reads the eval's standard input, which the host
//! gives with the request (empty unless it does).
//!
//! `log(level, message, fields)` sends a structured event through the
//! `output.log` import instead, charged against the same `max-output-bytes`.

use std::cell::{Cell, OnceCell, RefCell};
use std::ffi::{c_char, c_int, c_void};

use crate::bindings::{LogLevel, Value as WitValue, output};
use crate::json;
use crate::limits::raise_tagged;
use crate::lua::{self, Raise, ffi, lua_State};
use crate::stdio::{CookieFunctions, IONBF, clearerr, fclose, fopencookie, seek_as_pipe, setvbuf};
use crate::vm::{ErrorKind, Extension, Kind, Vm};

/// What this module keeps in the Vm: the eval's output and log charges,
/// and the C streams behind `io.stdout` (and `io.stderr`) and `io.stdin`.
#[derive(Default)]
struct Output {
    /// Bytes written this eval.
    bytes: Cell<u64>,
    /// What this eval's log events have been charged (see [`log_body`]),
    /// which shares `max-output-bytes` with `bytes`.
    log_bytes: Cell<u64>,
    /// Opened by [`install`] once the Vm is in place; closed when the Vm
    /// frees its extensions, after the state.
    stdout: OnceCell<CStream>,
    /// Opened with `stdout`; reads `stdin_bytes`.
    stdin: OnceCell<CStream>,
    /// What this eval's `io.stdin` reads, and how far it has read.
    stdin_bytes: RefCell<Vec<u8>>,
    stdin_read: Cell<usize>,
}

impl Extension for Output {
    fn begin_eval(&self) {
        self.bytes.set(0);
        self.log_bytes.set(0);
        for stream in [&self.stdout, &self.stdin] {
            if let Some(stream) = stream.get() {
                stream.reset();
            }
        }
        self.stdin_bytes.replace(Vec::new());
        self.stdin_read.set(0);
    }
}

/// Gives this eval's `io.stdin` the bytes it reads, from the start.
pub fn set_stdin(vm: &Vm, bytes: Vec<u8>) {
    let out = vm.extension::<Output>();
    out.stdin_bytes.replace(bytes);
    out.stdin_read.set(0);
}

/// Bytes the script has written to the output stream this eval.
pub fn written(vm: &Vm) -> u64 {
    vm.extension::<Output>().bytes.get()
}

/// Writes `bytes` to the host's stream, counting them against
/// `max-output-bytes`. What fits is written; past the limit the limit trips
/// (with `position` in front of its message) and `false` is returned. After
/// any trip nothing more is written.
pub fn write(vm: &Vm, bytes: &[u8], position: impl FnOnce() -> String) -> bool {
    if vm.has_tripped() {
        return false;
    }
    let out = vm.extension::<Output>();
    let used = out.bytes.get();
    let max = vm.limits().max_output_bytes;
    // Log events share the budget (see `log_body`).
    let spent = used.saturating_add(out.log_bytes.get());
    let room = usize::try_from(max.saturating_sub(spent)).unwrap_or(usize::MAX);
    if bytes.len() > room {
        if room > 0 {
            output::write(&bytes[..room]);
        }
        out.bytes.set(used + room as u64);
        vm.trip(
            Kind::Error(ErrorKind::OutputLimit),
            format!(
                "{}output limit exceeded (max-output-bytes is {max})",
                position()
            ),
        );
        return false;
    }
    if !bytes.is_empty() {
        output::write(bytes);
        out.bytes.set(used + bytes.len() as u64);
    }
    true
}

/// `print`; see [`print_body`].
///
/// # Safety
/// Called by Lua only, as `print`.
unsafe extern "C-unwind" fn print_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls `print` as a C function on a live thread of a Vm-owned
    // state, inside a protected call. `print_body` returns `Err` only with the
    // error pushed and nothing owned left on its frame, so `lua_error` unwinds
    // only frames without destructors.
    unsafe {
        match print_body(l) {
            Ok(n) => n,
            Err(Raise) => ffi::lua_error(l),
        }
    }
}

/// `print`, as the reference writes it: each argument through
/// `luaL_tolstring` (so `__tostring` and `__name` apply), tabs between them,
/// a newline at the end, each piece written as soon as it is ready.
///
/// # Safety
/// As for [`print_entry`], from it.
unsafe fn print_body(l: *mut lua_State) -> Result<c_int, Raise> {
    // SAFETY: `l` is a live thread of a Vm-owned state running `print`
    // (caller), so `Vm::from_state` is valid. Each `luaL_tolstring` pushes one
    // string into the free slots Lua gave the function (popped again before the
    // next); `s` and `len` describe that string, which stays on the stack while
    // `piece` is used. `luaL_tolstring` may run a `__tostring` metamethod and
    // raise, at which point this frame owns nothing: `position` borrows `l`,
    // and `write` consumes the strings it builds.
    unsafe {
        let vm = Vm::from_state(l);
        let n = ffi::lua_gettop(l);
        let position = || lua::position(l, 1);
        for i in 1..=n {
            let mut len = 0usize;
            let s = ffi::luaL_tolstring(l, i, &mut len);
            let piece = std::slice::from_raw_parts(s.cast::<u8>(), len);
            if (i > 1 && !write(vm, b"\t", position)) || !write(vm, piece, position) {
                return Err(raise_trip(l, vm));
            }
            ffi::lua_pop(l, 1);
        }
        if !write(vm, b"\n", position) {
            return Err(raise_trip(l, vm));
        }
        Ok(0)
    }
}

/// Pushes the tripped limit's message and sets the budget's check point to 0.
///
/// # Safety
/// `l` is a live thread of `vm`'s state with a free slot, and a trip is
/// recorded.
unsafe fn raise_trip(l: *mut lua_State, vm: &Vm) -> Raise {
    // SAFETY: `print_body` calls this only after `write` refused, which it does
    // only once a trip is recorded, so `push_trip` pushes that message into the
    // free slot `print` has; `arm_tripped` only writes budget and hook fields of the live
    // thread `l`. A memory error from the push leaves nothing owned behind.
    unsafe {
        crate::limits::arm_tripped(l);
        vm.push_trip(l);
        Raise
    }
}

/// Bytes charged for every log event on top of its message and fields, so
/// that a flood of empty events is bounded by `max-output-bytes` too.
pub const LOG_EVENT_BYTES: u64 = crate::contract::LOG_EVENT_BYTES;

/// The level names `log` accepts, in the order of the WIT `log-level`.
const LEVELS: [(&[u8], LogLevel); 4] = [
    (b"debug", LogLevel::Debug),
    (b"info", LogLevel::Info),
    (b"warn", LogLevel::Warn),
    (b"error", LogLevel::Error),
];

/// `log`; see [`log_body`].
///
/// # Safety
/// Called by Lua only, as `log`.
unsafe extern "C-unwind" fn log_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls `log` as a C function on a live thread of a Vm-owned
    // state, inside a protected call. `log_body` returns `Err` only with the
    // error pushed and nothing owned left on its frame, so `lua_error` unwinds
    // only frames without destructors.
    unsafe {
        match log_body(l) {
            Ok(n) => n,
            Err(Raise) => ffi::lua_error(l),
        }
    }
}

/// `log(level, message, fields)`: checks the arguments, converts the fields
/// to a JSON object, charges the event against `max-output-bytes` and sends
/// it through the `output.log` import.
///
/// The level is one of `debug`, `info`, `warn`, `error`; the message a string
/// or a number (converted as `tostring` would), with bytes that are not UTF-8
/// replaced by U+FFFD; the fields nil (`{}`) or a table with string keys,
/// converted by the boundary's rules (the empty table is `{}`). An event
/// costs its message's and its fields' bytes plus [`LOG_EVENT_BYTES`]; one
/// that does not fit is not sent and trips the output limit.
///
/// # Safety
/// As for [`log_entry`], from it.
unsafe fn log_body(l: *mut lua_State) -> Result<c_int, Raise> {
    // SAFETY: `l` is a live thread of a Vm-owned state running `log` (see
    // `log_entry`), so `Vm::from_state` is valid and Lua has given the
    // function free slots. `luaL_checklstring` may raise (a wrong type, or a
    // memory error converting a number in place) before anything owned
    // exists; the slices it returns point into strings that stay on the stack
    // until the function returns. `json::to_value` never raises. The owned
    // message and fields are dropped before every raise below, and every
    // error message moves into the Vm through `raise_tagged` or `raise_trip`;
    // a charge that trips after `raise_tagged` pushes its message over the
    // error, with nothing owned left.
    unsafe {
        let vm = Vm::from_state(l);
        // After a trip nothing reaches the host.
        if vm.push_trip(l) {
            crate::limits::arm_tripped(l);
            return Err(Raise);
        }
        let n = ffi::lua_gettop(l);
        if n > 3 {
            let msg = format!("log expects at most 3 arguments (level, message, fields), got {n}");
            return Err(raise_tagged(l, ErrorKind::Runtime, msg));
        }
        let mut len = 0usize;
        let level = ffi::luaL_checklstring(l, 1, &mut len);
        let level = std::slice::from_raw_parts(level.cast::<u8>(), len);
        let Some(&(_, level)) = LEVELS.iter().find(|(name, _)| *name == level) else {
            let msg = format!(
                "bad argument #1 to 'log' (level must be \"debug\", \"info\", \"warn\" or \"error\", got {:?})",
                String::from_utf8_lossy(level)
            );
            return Err(raise_tagged(l, ErrorKind::Runtime, msg));
        };
        let message = ffi::luaL_checklstring(l, 2, &mut len);
        let message = std::slice::from_raw_parts(message.cast::<u8>(), len);
        let mut work = 0;
        let fields = match ffi::lua_type(l, 3) {
            ffi::LUA_TNONE | ffi::LUA_TNIL => String::from("{}"),
            ffi::LUA_TTABLE => {
                let converted = json::to_value(l, 3, || "log: fields".to_owned(), &vm.limits());
                work = json::last_encoded_bytes();
                let object = match converted {
                    Ok(WitValue::Json(text)) if text == "[]" => Ok(String::from("{}")),
                    Ok(WitValue::Json(text)) if text.starts_with('{') => Ok(text),
                    Ok(other) => {
                        drop(other);
                        Err("log: fields must be a table with string keys (an object), not a sequence".to_owned())
                    }
                    Err(msg) => Err(msg),
                };
                match object {
                    Ok(text) => text,
                    Err(msg) => {
                        let raise = raise_tagged(l, ErrorKind::Runtime, msg);
                        // The conversion is paid for even when it fails; a
                        // trip raises over the error.
                        crate::limits::charge(l, crate::jsonlib::cost(work));
                        return Err(raise);
                    }
                }
            }
            t => {
                let msg = format!(
                    "bad argument #3 to 'log' (table or nil expected, got {})",
                    std::ffi::CStr::from_ptr(ffi::lua_typename(l, t)).to_string_lossy()
                );
                return Err(raise_tagged(l, ErrorKind::Runtime, msg));
            }
        };
        let message = String::from_utf8_lossy(message).into_owned();
        let cost = (message.len() as u64)
            .saturating_add(fields.len() as u64)
            .saturating_add(LOG_EVENT_BYTES);
        let max = vm.limits().max_output_bytes;
        let out = vm.extension::<Output>();
        let spent = out.bytes.get().saturating_add(out.log_bytes.get());
        if cost > max.saturating_sub(spent) {
            drop(message);
            drop(fields);
            let why = format!(
                "{}output limit exceeded (max-output-bytes is {max}; this log event needs {cost} bytes)",
                lua::position(l, 1)
            );
            crate::limits::raise_trip(l, vm, Kind::Error(ErrorKind::OutputLimit), why);
            return Err(Raise);
        }
        out.log_bytes.set(out.log_bytes.get().saturating_add(cost));
        output::log(level, &message, &fields);
        drop(message);
        drop(fields);
        // The fields' conversion, in instructions as `json.encode` pays.
        if crate::limits::charge(l, crate::jsonlib::cost(work)) {
            return Err(Raise);
        }
        Ok(0)
    }
}

/// `luaL_Stream`, the userdata behind a Lua file object (lauxlib.h).
#[repr(C)]
struct Stream {
    f: *mut c_void,
    closef: Option<ffi::lua_CFunction>,
}

/// The read function of `io.stdin`'s stream: the cookie is the Vm, whose
/// [`Output`] holds the eval's standard input.
///
/// # Safety
/// Called by the C library only, for the stream [`CStream::open_stdin`]
/// made: `cookie` is the Vm, and `buf` has room for `len` bytes.
unsafe extern "C" fn cookie_read(cookie: *mut c_void, buf: *mut c_char, len: usize) -> isize {
    // SAFETY: the cookie is the Vm that opened the stream and outlives it, as
    // for `cookie_write`.
    let vm = unsafe { &*(cookie as *const Vm) };
    let out = vm.extension::<Output>();
    let bytes = out.stdin_bytes.borrow();
    let from = out.stdin_read.get().min(bytes.len());
    let n = len.min(bytes.len() - from);
    if n > 0 {
        // SAFETY: `buf` has room for `len >= n` bytes (stdio), and the source
        // range lies within `bytes`; the two do not overlap (one is the C
        // library's buffer, the other a Rust vector).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr().add(from), buf.cast::<u8>(), n) };
    }
    out.stdin_read.set(from + n);
    isize::try_from(n).unwrap_or(isize::MAX)
}

/// The C stream's write function: the cookie is the Vm.
///
/// # Safety
/// Called by the C library only, for the stream [`CStream::open`] made: `cookie`
/// is the Vm, and `buf` holds `len` bytes.
unsafe extern "C" fn cookie_write(cookie: *mut c_void, buf: *const c_char, len: usize) -> isize {
    // SAFETY: the cookie is the Vm that opened the stream and outlives it:
    // the stream is the Vm's extension, which the Vm frees (closing the
    // stream) after the state is closed and before the Vm itself.
    let vm = unsafe { &*(cookie as *const Vm) };
    let bytes = if len == 0 {
        &[][..]
    } else {
        // SAFETY: stdio hands over `len` readable bytes.
        unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) }
    };
    // The running function is a C function (`write`); its caller is the
    // script. The main thread's frames name it, or the `resume` that is
    // running the coroutine which wrote. While the state closes (the Vm has
    // already cleared it), a finalizer's write has no position.
    let position = || {
        let state = vm.state();
        if state.is_null() {
            return String::new();
        }
        // SAFETY: A non-null state pointer means an open state: the Vm
        // clears it before closing the state. Writes reach this function only
        // from Lua code running on that state, and `position` only reads its
        // call frames.
        unsafe { lua::position(state, 1) }
    };
    if write(vm, bytes, position) {
        isize::try_from(len).unwrap_or(isize::MAX)
    } else {
        // A short write: `file:write` returns `nil, message`, and the trip
        // stops the script at its next instruction.
        -1
    }
}

/// A C stream, unbuffered: one whose writes go to the output stream, or
/// the empty one behind `io.stdin`.
struct CStream(*mut c_void);

impl CStream {
    /// Opens the stream behind `io.stdout` (and `io.stderr`) for `vm`, or
    /// `None` if the C library cannot.
    fn open(vm: &Vm) -> Option<CStream> {
        let funcs = CookieFunctions {
            read: None,
            write: Some(cookie_write),
            seek: Some(seek_as_pipe),
            close: None,
        };
        CStream::open_with(vm, c"w", funcs)
    }

    /// Opens the stream behind `io.stdin` for `vm`, or `None` if the C
    /// library cannot.
    fn open_stdin(vm: &Vm) -> Option<CStream> {
        let funcs = CookieFunctions {
            read: Some(cookie_read),
            write: None,
            seek: Some(seek_as_pipe),
            close: None,
        };
        CStream::open_with(vm, c"r", funcs)
    }

    /// An unbuffered C stream whose cookie is `vm`, with `funcs`.
    fn open_with(vm: &Vm, mode: &std::ffi::CStr, funcs: CookieFunctions) -> Option<CStream> {
        // SAFETY: the cookie is a stable pointer to the Vm (it never moves:
        // see `vm::Handle`), which holds the stream as this module's
        // extension and closes it before it is freed; the callbacks in
        // `funcs` take it as the Vm.
        let f = unsafe {
            fopencookie(
                (vm as *const Vm).cast_mut().cast::<c_void>(),
                mode.as_ptr(),
                funcs,
            )
        };
        if f.is_null() {
            return None;
        }
        // SAFETY: a stream just opened, before any I/O on it.
        unsafe { setvbuf(f, std::ptr::null_mut(), IONBF, 0) };
        Some(CStream(f))
    }

    /// Clears the error flag a refused write left (or the end-of-file flag
    /// a read left), before the next eval.
    fn reset(&self) {
        // SAFETY: A `CStream` holds a stream from `open` until its drop closes
        // it, so the stream is open; `clearerr` only resets its flags.
        unsafe { clearerr(self.0) };
    }
}

impl Drop for CStream {
    fn drop(&mut self) {
        // SAFETY: opened by `open`, closed once; the Lua state that used it
        // is already closed (the Vm frees its extensions after closing the
        // state). The stream is unbuffered, so closing it writes nothing.
        unsafe { fclose(self.0) };
    }
}

/// Installs `print` and `log`, opens the C streams behind `io.stdout`
/// (and `io.stderr`) and `io.stdin`, and points the `io` library's standard
/// files at them. Runs in protected mode
/// before the sandbox rebuilds `io`; raises if the stream cannot be opened.
///
/// # Safety
/// `l` is a live Vm-owned state in protected mode; `globals` and `io` are
/// absolute indices of the globals table and the original `io` table.
pub unsafe fn install(l: *mut lua_State, globals: c_int, io: c_int) {
    // SAFETY: `globals` and `io` are absolute indices of tables on the live
    // state (caller), which is in protected mode, so the pushes and raw sets
    // may raise; the error for a stream that cannot be opened is a static
    // string, and this frame owns nothing (the stream is the Vm's).
    // `luaL_testudata` returns null or the block of a userdata with the
    // `FILE*` metatable, which the io library creates as a `luaL_Stream`,
    // laid out as `Stream`; only its C stream is replaced, with the one the
    // Vm keeps open until after the state is closed.
    unsafe {
        let vm = Vm::from_state(l);
        let out = vm.extension::<Output>();
        if out.stdout.get().is_none()
            && let Some(stdout) = CStream::open(vm)
        {
            let _ = out.stdout.set(stdout);
        }
        if out.stdin.get().is_none()
            && let Some(stdin) = CStream::open_stdin(vm)
        {
            let _ = out.stdin.set(stdin);
        }
        let (Some(stdout), Some(stdin)) = (out.stdout.get(), out.stdin.get()) else {
            lua::push_bytes(l, b"cannot open the output stream");
            ffi::lua_error(l);
        };
        ffi::lua_pushcfunction(l, print_entry);
        lua::set_field(l, globals, "print");
        ffi::lua_pushcfunction(l, log_entry);
        lua::set_field(l, globals, "log");
        for (name, f) in [
            ("stdout", stdout.0),
            ("stderr", stdout.0),
            ("stdin", stdin.0),
        ] {
            if lua::get_field(l, io, name) == ffi::LUA_TUSERDATA {
                let stream = ffi::luaL_testudata(l, -1, c"FILE*".as_ptr()).cast::<Stream>();
                if !stream.is_null() {
                    (*stream).f = f;
                }
            }
            ffi::lua_pop(l, 1);
        }
    }
}
