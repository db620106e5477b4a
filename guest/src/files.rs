//! The session's files: a filesystem inside the guest, owned by the
//! session, which the reference `io`, `os` and base libraries and
//! `require` reach through the C library, and which no host path is part
//! of (WASI grants the guest no directory anyway).
//!
//! # The C functions
//!
//! The guest defines `fopen`, `freopen`, `remove`, `rename` and `tmpfile`
//! itself, linked ahead of the C library's (as `environ` does for
//! `getenv`), so the stock `liolib`, `loslib` and `lauxlib` code runs
//! unchanged over the session's files: `io.open`, `io.lines`, `io.input`,
//! `io.output`, `os.remove`, `os.rename`, `loadfile`, `dofile` and
//! `require`'s searcher behave as under `lua5.4`, with the same messages
//! (see `errno` for the numbers). Lua 5.4.9's WASI build compiles
//! `io.tmpfile` and `os.tmpname` as "not supported on WASI", so
//! [`install`] puts this module's versions in their place:
//! [`tmpname_entry`] and an `io.tmpfile` over `tmpfile`.
//!
//! A file the script opens is a C stream made with `fopencookie`, whose
//! cookie ([`Cookie`]) holds everything the stream needs: the file's
//! shared bytes, the mode, the position and the Vm charged for it. Reading
//! formats, `lines`, `seek`, `setvbuf` and buffering are the reference
//! library's and musl's over it. Natively (the unit tests) the C library's
//! own functions stay: overriding them would take over the test harness's
//! files; the logic below them is in [`namespace`], tested natively.
//!
//! # Names
//!
//! A flat map from resolved path to file (see [`namespace::resolve`]): the
//! working directory is the root, so `a.txt`, `./a.txt` and `/a.txt` are
//! one file; `..` stops at the root, so `../../etc/passwd` is
//! `/etc/passwd`, which is whatever the script put there. There are no
//! directories to create; a name may contain `/`. A name ending in `/`
//! (or `.`, `..`) names a directory that is not there: opening it is
//! `EISDIR` or `ENOENT`/`ENOTDIR` as on Linux. Over 4096 bytes is
//! `ENAMETOOLONG`. A file removed while open keeps its bytes until its
//! last stream closes, as in POSIX.
//!
//! # Whose files
//!
//! Each session (`Vm`) has its own, as a Vm extension ([`Files`]): they
//! persist from one eval to the next and are gone with the session. The C
//! functions receive no Lua state, so the session sets the active Vm
//! ([`activate`]) whenever it starts work, as it sets `clock`, and the
//! guard clears it after. Only opening (and removing, renaming) reads it:
//! a stream's cookie holds its own Vm, so writing, reading and closing a
//! stream later, by the garbage collector or while the state closes, never
//! depends on the active Vm. No stream outlives its Vm: `lua_close`
//! finalizes every file object, and any stream left open (one whose
//! finalizer a script removed) is closed when the Vm frees its
//! extensions, still before the Vm itself. Nothing opens a file while the
//! state closes (a finalizer's `io.open` then fails with `EACCES`).
//!
//! # What files cost
//!
//! Files count against the session's `max-memory-bytes` together with the
//! Lua heap, through the Vm's external count (`Vm::charge_external`), which
//! the allocator adds to the heap before it grants a block and which
//! `stats.peak-memory-bytes` includes: each file is charged its bytes, its
//! name and [`namespace::FILE_OVERHEAD`], and each open stream
//! [`namespace::STREAM_BYTES`] for musl's `FILE` and its buffer, which live
//! outside the Lua heap. A write, a new file or a new stream that would
//! pass the limit trips the memory limit (an inner-wall limit `pcall`
//! cannot catch), with a message naming the file and the limit, and
//! fails (`ENOSPC`); output written before it stays with the host.
//! Truncating, removing and closing give the bytes back.

mod journal;
mod namespace;

#[cfg(target_family = "wasm")]
mod libc;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void};
use std::marker::PhantomData;
use std::ptr::{self, NonNull};
use std::rc::Rc;

use crate::errno;
use crate::lua::{self, Raise, ffi, lua_State};
use crate::stdio::{CookieFunctions, SEEK_SET, clearerr, fclose, fflush, fopencookie, fseeko};
use crate::vm::{ErrorKind, Extension, Kind, Vm};
use namespace::{Data, Error, MAX_FILES, MAX_NAME_BYTES, Mode, Namespace, Open, STREAM_BYTES};

thread_local! {
    /// The Vm whose files the C functions work on; see [`activate`].
    static ACTIVE: Cell<Option<NonNull<Vm>>> = const { Cell::new(None) };
}

/// While it lives, the C library's file functions work on one session's
/// files (see [`activate`]); dropping it restores the Vm active before.
pub struct Active<'a> {
    previous: Option<NonNull<Vm>>,
    vm: PhantomData<&'a Vm>,
}

/// Makes `vm`'s files the ones `fopen`, `remove`... work on, until the
/// guard is dropped. The session calls it whenever it starts work
/// (creating, eval, check), since sessions share the instance.
///
/// # Safety
/// The guard is dropped, not leaked (`mem::forget`), before `vm` is freed:
/// the C functions dereference the active Vm.
pub unsafe fn activate(vm: &Vm) -> Active<'_> {
    let previous = ACTIVE.with(|active| active.replace(Some(NonNull::from(vm))));
    Active {
        previous,
        vm: PhantomData,
    }
}

impl Drop for Active<'_> {
    fn drop(&mut self) {
        ACTIVE.with(|active| active.set(self.previous));
    }
}

/// The active session's Vm, while its state is open; else `EACCES`.
fn session<'a>() -> Result<&'a Vm, c_int> {
    let vm = ACTIVE.with(Cell::get).ok_or(errno::EACCES)?;
    // SAFETY: `ACTIVE` holds a Vm only while an `Active` guard borrowing it
    // lives, and each guard is dropped before its Vm is freed (`activate`'s
    // contract), restoring the previous one, whose own guard outlives it. So
    // the Vm is live, and only shared references to a Vm are made. The C
    // functions that call this run inside that session's work, and use the
    // reference only during the call.
    let vm = unsafe { vm.as_ref() };
    if vm.state().is_null() {
        // The state is closing: no new files.
        return Err(errno::EACCES);
    }
    Ok(vm)
}

/// The open streams of one Vm, by their C stream's address.
type Streams = Rc<RefCell<BTreeMap<usize, NonNull<Cookie>>>>;

/// What this module keeps in the Vm: the session's files and its open
/// streams.
#[derive(Default)]
struct Files {
    names: Namespace,
    streams: Streams,
}

impl Extension for Files {
    fn begin_eval(&self) {
        self.names.begin_eval();
    }
}

/// Mounts the host's files for an eval, read-only, in `vm`'s namespace.
/// A name given twice (once resolved) or that cannot be a file is an
/// [`ErrorKind::InvalidValue`] error; one that does not fit is a
/// [`ErrorKind::MemoryLimit`] error. The message says which.
pub fn mount(vm: &Vm, files: &[(String, Vec<u8>)]) -> Result<(), (ErrorKind, String)> {
    let names = &vm.extension::<Files>().names;
    let mut seen = std::collections::BTreeSet::new();
    for (name, bytes) in files {
        let invalid = |why: &str| (ErrorKind::InvalidValue, format!("file name '{name}' {why}"));
        if name.contains('\0') {
            return Err(invalid("contains NUL"));
        }
        match namespace::resolve(name.as_bytes()) {
            Ok(namespace::Name::File(path)) => {
                if !seen.insert(path) {
                    return Err(invalid("is given twice"));
                }
            }
            Ok(namespace::Name::Directory(_)) => return Err(invalid("names a directory")),
            Err(Error::NameTooLong) => {
                return Err(invalid(&format!("is longer than {MAX_NAME_BYTES} bytes")));
            }
            Err(_) => return Err(invalid("is empty")),
        }
        // SAFETY: The namespace is `vm`'s own.
        let mounted = unsafe { names.mount(vm, name.as_bytes(), bytes) };
        if let Err(error) = mounted {
            let max = vm.limits().max_memory_bytes;
            let message = match error {
                Error::TooMany => format!(
                    "file '{name}' would be more than the {MAX_FILES} files a session holds"
                ),
                _ => format!(
                    "file '{name}' ({} bytes) does not fit beside the Lua heap and the session's other files in max-memory-bytes ({max})",
                    bytes.len()
                ),
            };
            return Err((ErrorKind::MemoryLimit, message));
        }
    }
    Ok(())
}

/// The files `vm`'s eval created or wrote that are still named, by name,
/// with what the script wrote to streams it left open: each is flushed
/// first, as `lua5.4` flushes them when it exits.
pub fn written(vm: &Vm) -> Vec<(String, Vec<u8>)> {
    let files = vm.extension::<Files>();
    let open: Vec<usize> = files.streams.borrow().keys().copied().collect();
    for stream in open {
        // SAFETY: Each key is a stream `make_stream` opened whose close
        // callback has not run (it removes the key), so it is open; flushing
        // writes through the cookie's callbacks, which reach only the live Vm
        // and its files, and calls no Lua. No script runs between an eval's
        // end and this.
        unsafe { fflush(stream as *mut c_void) };
    }
    files.names.written()
}

impl Drop for Files {
    /// Closes the streams still open: ones the state did not finalize
    /// (the Vm frees its extensions after closing the state, and before
    /// itself, so their cookies' Vm is still there).
    fn drop(&mut self) {
        let open = std::mem::take(&mut *self.streams.borrow_mut());
        for stream in open.into_keys() {
            // SAFETY: Each key is a stream `make_stream` opened and whose
            // close callback has not run (it removes the key), so it is
            // open; the state is closed, so no file object refers to it any
            // more. Closing flushes through the cookie's callbacks, which
            // only reach the live Vm, and frees the cookie.
            unsafe { fclose(stream as *mut c_void) };
        }
    }
}

/// A stream's state, the cookie of its C stream: made by [`make_stream`]
/// (a leaked `Box`) and freed by [`cookie_close`].
struct Cookie {
    open: Open,
    /// The Vm charged for the stream and its file; it outlives the stream
    /// (see [`Files`]'s drop).
    vm: NonNull<Vm>,
    /// Its Vm's open streams, which it leaves when closed.
    streams: Streams,
    /// The C stream, its key in `streams`.
    stream: *mut c_void,
    /// The C stream was made read-only (musl's `r`), so that a write fails
    /// at once; every other stream is made `r+` and its mode is enforced
    /// here, so that a read of a write-only stream fails with `EBADF` as
    /// under glibc.
    read_only: bool,
}

impl Cookie {
    fn vm(&self) -> &Vm {
        // SAFETY: The Vm outlives every stream charged to it (see the field),
        // and only shared references to a Vm are made.
        unsafe { self.vm.as_ref() }
    }
}

/// `short_src:line: ` of the script's function that is running on the main
/// thread, or nothing while the state closes.
fn position(vm: &Vm) -> String {
    let state = vm.state();
    if state.is_null() {
        return String::new();
    }
    // SAFETY: A non-null state pointer means an open state (the Vm clears it
    // before closing it). File operations reach here only from Lua code
    // running on it, and `position` only reads its call frames.
    unsafe { lua::position(state, 1) }
}

/// The `errno` for `error`, tripping the memory limit first when the
/// error is one: `what` says what did not fit ("to open the file 'x'").
fn failure(vm: &Vm, error: Error, what: impl FnOnce() -> String) -> c_int {
    match error {
        Error::NoRoom => {
            let max = vm.limits().max_memory_bytes;
            let message = format!(
                "{}not enough memory {} (the Lua heap and the session's files are limited to {max} bytes by max-memory-bytes)",
                position(vm),
                what()
            );
            vm.trip(Kind::Error(ErrorKind::MemoryLimit), message);
        }
        Error::Exhausted => vm.trip(
            Kind::Error(ErrorKind::MemoryLimit),
            "not enough memory (the sandbox's linear memory is exhausted)",
        ),
        Error::TooMany => {
            let message = format!(
                "{}a session holds at most {MAX_FILES} files, so there is no room {}",
                position(vm),
                what()
            );
            vm.trip(Kind::Error(ErrorKind::MemoryLimit), message);
        }
        _ => {}
    }
    error.errno()
}

/// How a message names a file: its path, or what an anonymous one is.
fn describe(path: Option<&[u8]>) -> String {
    match path {
        Some(path) => format!("the file '{}'", String::from_utf8_lossy(path)),
        None => "an anonymous file (io.tmpfile)".to_owned(),
    }
}

/// The C stream's read function.
///
/// # Safety
/// Called by the C library only, for a stream [`make_stream`] made:
/// `cookie` is its [`Cookie`], and `buf` has room for `len` bytes.
unsafe extern "C" fn cookie_read(cookie: *mut c_void, buf: *mut c_char, len: usize) -> isize {
    // SAFETY: The cookie is the live `Cookie` of this stream (freed only by
    // `cookie_close`, after every other callback), and the C library runs
    // one callback at a time, so this is the only reference to it.
    let cookie = unsafe { &mut *cookie.cast::<Cookie>() };
    if len == 0 {
        return 0;
    }
    // SAFETY: stdio hands over `len` writable bytes.
    let buf = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), len) };
    match cookie.open.read(buf) {
        Ok(n) => isize::try_from(n).unwrap_or(isize::MAX),
        Err(error) => {
            errno::set(error.errno());
            -1
        }
    }
}

/// The C stream's write function.
///
/// # Safety
/// As for [`cookie_read`], with `buf` holding `len` bytes.
unsafe extern "C" fn cookie_write(cookie: *mut c_void, buf: *const c_char, len: usize) -> isize {
    // SAFETY: As in `cookie_read`.
    let cookie = unsafe { &mut *cookie.cast::<Cookie>() };
    if len == 0 {
        return 0;
    }
    // SAFETY: stdio hands over `len` readable bytes.
    let bytes = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) };
    match cookie.open.write(bytes) {
        Ok(n) => isize::try_from(n).unwrap_or(isize::MAX),
        Err(error) => {
            let what = || {
                format!(
                    "to write {len} bytes to {}",
                    describe(cookie.open.path.as_deref())
                )
            };
            errno::set(failure(cookie.vm(), error, what));
            // A failed write: `file:write` (or the flush, or the close) returns
            // `nil, message`, and a trip stops the script at its next
            // instruction.
            -1
        }
    }
}

/// The C stream's seek function.
///
/// # Safety
/// As for [`cookie_read`], with `offset` the C library's `off_t`.
unsafe extern "C" fn cookie_seek(cookie: *mut c_void, offset: *mut i64, whence: c_int) -> c_int {
    // SAFETY: As in `cookie_read`.
    let cookie = unsafe { &mut *cookie.cast::<Cookie>() };
    // SAFETY: musl passes its own `off_t`, to read and to write back.
    let wanted = unsafe { *offset };
    match cookie.open.seek(wanted, whence) {
        Ok(pos) => {
            // SAFETY: As above. `seek` returns positions that fit in `i64`.
            unsafe { *offset = i64::try_from(pos).unwrap_or(i64::MAX) };
            0
        }
        Err(error) => {
            errno::set(error.errno());
            -1
        }
    }
}

/// The C stream's close function: frees the cookie, which lets go of its
/// file, and gives the stream's charge back.
///
/// # Safety
/// Called by the C library only, once, as the last callback of a stream
/// [`make_stream`] made.
unsafe extern "C" fn cookie_close(cookie: *mut c_void) -> c_int {
    // SAFETY: The cookie came from `Box::into_raw` in `make_stream`, and
    // `fclose` calls this once, after every other callback; nothing uses it
    // after.
    let cookie = unsafe { Box::from_raw(cookie.cast::<Cookie>()) };
    cookie
        .streams
        .borrow_mut()
        .remove(&(cookie.stream as usize));
    cookie.vm().release_external(STREAM_BYTES);
    drop(cookie);
    0
}

/// Makes the C stream for `open`, whose [`STREAM_BYTES`] the caller has
/// charged to `vm` (given back here if the C library cannot make it).
///
/// # Safety
/// `open`'s file is charged to `vm`, and `streams` is `vm`'s [`Files`]'
/// (which closes the stream if nothing else has when the Vm is freed).
unsafe fn make_stream(vm: &Vm, streams: &Streams, open: Open) -> Result<*mut c_void, c_int> {
    let read_only = !open.mode.write;
    let cookie = NonNull::from(Box::leak(Box::new(Cookie {
        open,
        vm: NonNull::from(vm),
        streams: Rc::clone(streams),
        stream: ptr::null_mut(),
        read_only,
    })));
    let funcs = CookieFunctions {
        read: Some(cookie_read),
        write: Some(cookie_write),
        seek: Some(cookie_seek),
        close: Some(cookie_close),
    };
    let mode = if read_only { c"r" } else { c"r+" };
    // SAFETY: The cookie is a live, leaked `Cookie` that only the callbacks
    // above use, and `cookie_close` frees; the mode is a C string.
    let stream = unsafe { fopencookie(cookie.as_ptr().cast::<c_void>(), mode.as_ptr(), funcs) };
    if stream.is_null() {
        // SAFETY: The cookie came from `Box::leak` above, and the C library
        // kept nothing: it is still only ours.
        drop(unsafe { Box::from_raw(cookie.as_ptr()) });
        vm.release_external(STREAM_BYTES);
        return Err(failure(vm, Error::Exhausted, String::new));
    }
    // SAFETY: No callback has run yet; this is the only use of the cookie.
    unsafe { (*cookie.as_ptr()).stream = stream };
    streams.borrow_mut().insert(stream as usize, cookie);
    Ok(stream)
}

/// `fopen`: a stream on the file `name` of the active session, as `mode`
/// says; `Err(errno)` otherwise.
#[cfg_attr(
    not(target_family = "wasm"),
    expect(dead_code, reason = "only the C library's `fopen` calls it")
)]
fn open_named(name: &[u8], mode: &[u8]) -> Result<*mut c_void, c_int> {
    let mode = Mode::parse(mode).ok_or(errno::EINVAL)?;
    let vm = session()?;
    let what = |verb: &str| format!("to {verb} the file '{}'", String::from_utf8_lossy(name));
    if !vm.charge_external(STREAM_BYTES) {
        return Err(failure(vm, Error::NoRoom, || what("open")));
    }
    let files = vm.extension::<Files>();
    // SAFETY: The namespace is `vm`'s.
    let opened = unsafe { files.names.open(vm, name, mode) };
    match opened {
        // SAFETY: The file is `vm`'s, charged to it, and the streams its
        // `Files`'.
        Ok((path, data)) => unsafe {
            make_stream(vm, &files.streams, Open::new(data, Some(path), mode))
        },
        Err(error) => {
            vm.release_external(STREAM_BYTES);
            Err(failure(vm, error, || what("create")))
        }
    }
}

/// `tmpfile`: a stream on a new anonymous file, read and written (`w+`),
/// in no namespace: it is gone when the stream closes.
fn open_anonymous(vm: &Vm) -> Result<*mut c_void, c_int> {
    if vm.state().is_null() {
        return Err(errno::EACCES);
    }
    let what = || "to create an anonymous file (io.tmpfile)".to_owned();
    if !vm.charge_external(STREAM_BYTES) {
        return Err(failure(vm, Error::NoRoom, what));
    }
    // SAFETY: The file is held only by the stream made below, which its
    // Vm's `Files` closes at the latest.
    let data = match unsafe { Data::create(vm, 0) } {
        Ok(data) => data,
        Err(error) => {
            vm.release_external(STREAM_BYTES);
            return Err(failure(vm, error, what));
        }
    };
    let files = vm.extension::<Files>();
    // SAFETY: The file is charged to `vm`, and the streams are its `Files`'.
    unsafe {
        make_stream(
            vm,
            &files.streams,
            Open::new(data, None, Mode::READ_WRITE_NEW),
        )
    }
}

/// `freopen`: for a stream of the active session's, the stream reopened on
/// the file `name` (the same file when `None`) as `mode` says, from its
/// start and with its flags cleared. As in C, a stream that cannot be
/// reopened is closed (any stream not the session's: `EBADF`), and a read-
/// only stream cannot become writable (`EINVAL`). `luaL_loadfilex` uses it
/// to reread a binary chunk.
///
/// # Safety
/// `stream` is an open C stream.
#[cfg_attr(
    not(target_family = "wasm"),
    expect(dead_code, reason = "only the C library's `freopen` calls it")
)]
unsafe fn reopen(
    name: Option<&[u8]>,
    mode: &[u8],
    stream: *mut c_void,
) -> Result<*mut c_void, c_int> {
    let close = |code: c_int| {
        // SAFETY: The caller's: `stream` is open; C's `freopen` closes it
        // when it fails.
        unsafe { fclose(stream) };
        Err(code)
    };
    let vm = match session() {
        Ok(vm) => vm,
        Err(code) => return close(code),
    };
    let files = vm.extension::<Files>();
    let found = files.streams.borrow().get(&(stream as usize)).copied();
    let Some(cookie) = found else {
        return close(errno::EBADF);
    };
    let Some(mode) = Mode::parse(mode) else {
        return close(errno::EINVAL);
    };
    // SAFETY: A listed cookie is live (it leaves the list when closed), and
    // no callback runs now; the field is copied out.
    let read_only = unsafe { cookie.as_ref() }.read_only;
    if read_only && mode.write {
        return close(errno::EINVAL);
    }
    // C ignores a failure to flush here.
    // SAFETY: `stream` is open; flushing calls only its callbacks.
    unsafe { fflush(stream) };
    let opened = match name {
        // SAFETY: The namespace is `vm`'s.
        Some(name) => unsafe { files.names.open(vm, name, mode) }.map(|(p, d)| (Some(p), d)),
        None => {
            // SAFETY: As above; the fields are read and cloned.
            let open = unsafe { &cookie.as_ref().open };
            if mode.truncate {
                open.data.truncate();
            }
            Ok((open.path.clone(), Rc::clone(&open.data)))
        }
    };
    let (path, data) = match opened {
        Ok(opened) => opened,
        Err(error) => {
            let name = name.map(String::from_utf8_lossy).unwrap_or_default();
            let code = failure(vm, error, || format!("to reopen the file '{name}'"));
            return close(code);
        }
    };
    // Start afresh: no buffered bytes, no end-of-file or error flag.
    // SAFETY: `stream` is open; seeking and clearing call only its callbacks.
    unsafe {
        fseeko(stream, 0, SEEK_SET);
        clearerr(stream);
    }
    // SAFETY: The cookie is live and no callback runs now, so this is the
    // only reference to it.
    unsafe { (*cookie.as_ptr()).open = Open::new(data, path, mode) };
    Ok(stream)
}

/// `remove`: removes the active session's file `name`.
#[cfg_attr(
    not(target_family = "wasm"),
    expect(dead_code, reason = "only the C library's `remove` calls it")
)]
fn remove_named(name: &[u8]) -> Result<(), c_int> {
    let vm = session()?;
    vm.extension::<Files>()
        .names
        .remove(name)
        .map_err(Error::errno)
}

/// `rename`: gives the active session's file `from` the name `to`.
#[cfg_attr(
    not(target_family = "wasm"),
    expect(dead_code, reason = "only the C library's `rename` calls it")
)]
fn rename_named(from: &[u8], to: &[u8]) -> Result<(), c_int> {
    let vm = session()?;
    vm.extension::<Files>()
        .names
        .rename(from, to)
        .map_err(|error| {
            failure(vm, error, || {
                format!("to rename a file to '{}'", String::from_utf8_lossy(to))
            })
        })
}

/// `luaL_Stream`, the userdata behind a Lua file object (lauxlib.h).
#[repr(C)]
struct LuaStream {
    f: *mut c_void,
    closef: Option<ffi::lua_CFunction>,
}

/// `io.tmpfile()`: a file object on a new anonymous file (see `tmpfile`),
/// made as the reference library's own (a `FILE*` userdata), or
/// `nil, message, code`.
///
/// # Safety
/// Called by Lua only, as `io.tmpfile`.
unsafe extern "C-unwind" fn tmpfile_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls this C function on a live thread of a Vm-owned state
    // inside a protected call, with free slots, so `Vm::from_state` is valid.
    // The userdata is made (as closed: no `closef`) and given the `FILE*`
    // metatable before the stream exists; both may raise a memory error with
    // nothing owned on this frame. The stream, once made, belongs to the
    // userdata, whose finalizer closes it; nothing raises in between.
    // `luaL_fileresult` may raise a memory error with nothing owned.
    unsafe {
        let p = ffi::lua_newuserdatauv(l, std::mem::size_of::<LuaStream>(), 0).cast::<LuaStream>();
        p.write(LuaStream {
            f: ptr::null_mut(),
            closef: None,
        });
        ffi::luaL_setmetatable(l, c"FILE*".as_ptr());
        match open_anonymous(Vm::from_state(l)) {
            Ok(stream) => {
                (*p).f = stream;
                (*p).closef = Some(close_entry);
                1
            }
            Err(code) => {
                errno::set(code);
                ffi::luaL_fileresult(l, 0, ptr::null())
            }
        }
    }
}

/// A file object's close function (`closef`) for [`tmpfile_entry`]'s: the
/// reference's `io_fclose`.
///
/// # Safety
/// Called by the io library only, through a file object's `closef`.
unsafe extern "C-unwind" fn close_entry(l: *mut lua_State) -> c_int {
    // SAFETY: The io library calls `closef` with the file object at index 1
    // (a `FILE*` userdata laid out as `LuaStream`, which `luaL_checkudata`
    // confirms), after marking it closed, so its open stream is closed once.
    // `fclose` calls only the cookie's callbacks, which never raise;
    // `luaL_fileresult` may raise a memory error with nothing owned.
    unsafe {
        let p = ffi::luaL_checkudata(l, 1, c"FILE*".as_ptr()).cast::<LuaStream>();
        errno::set(0);
        let closed = fclose((*p).f) == 0;
        ffi::luaL_fileresult(l, c_int::from(closed), ptr::null())
    }
}

/// `os.tmpname()`; see [`tmpname_body`].
///
/// # Safety
/// Called by Lua only, as `os.tmpname`.
pub unsafe extern "C-unwind" fn tmpname_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls `os.tmpname` as a C function on a live thread of a
    // Vm-owned state, inside a protected call. `tmpname_body` returns `Err`
    // only with the error pushed and nothing owned left on its frame, so
    // `lua_error` unwinds only frames without destructors.
    unsafe {
        match tmpname_body(l) {
            Ok(n) => n,
            Err(Raise) => ffi::lua_error(l),
        }
    }
}

/// `os.tmpname()`: creates an empty file `/tmp/lua_NNNNNN`, numbered per
/// session (so the same script gets the same names), and returns its name,
/// as the reference's `mkstemp` does. Past the memory limit, trips it.
///
/// # Safety
/// As for [`tmpname_entry`], from it.
unsafe fn tmpname_body(l: *mut lua_State) -> Result<c_int, Raise> {
    // SAFETY: `l` is a live thread of a Vm-owned state running `os.tmpname`
    // (caller), with free slots, and the namespace is its Vm's. The name moves into the Vm (`push_owned`)
    // before its push may raise. On failure the trip's message is already in
    // the Vm (`failure` records it) and `push_trip` pushes it, or the
    // reference's static message is pushed; nothing owned is left.
    unsafe {
        let vm = Vm::from_state(l);
        let files = vm.extension::<Files>();
        match files.names.create_temporary(vm) {
            Ok(path) => {
                vm.push_owned(l, path);
                Ok(1)
            }
            Err(error) => {
                failure(vm, error, || {
                    "to create a temporary file (os.tmpname)".to_owned()
                });
                if vm.push_trip(l) {
                    crate::limits::arm_tripped(l);
                } else {
                    lua::push_error(l, 1, "unable to generate a unique filename");
                }
                Err(Raise)
            }
        }
    }
}

/// Whether `table[name]` is a function of the reference library's own: a
/// C function without upvalues (a sandbox's stand-in is a closure).
///
/// # Safety
/// `l` is a live state in protected mode; `table` is the absolute index of
/// a table. May raise a memory error.
unsafe fn is_reference(l: *mut lua_State, table: c_int, name: &str) -> bool {
    // SAFETY: `get_field` pushes one value (raw access, which may raise a
    // memory error pushing the key); `lua_getupvalue` only reads it, pushing
    // its first upvalue if it has one; `lua_settop` drops what was pushed.
    unsafe {
        let top = ffi::lua_gettop(l);
        lua::get_field(l, table, name);
        let reference = ffi::lua_iscfunction(l, -1) != 0 && ffi::lua_getupvalue(l, -1, 1).is_null();
        ffi::lua_settop(l, top);
        reference
    }
}

/// Sets `os.tmpname` to [`tmpname_entry`] and `io.tmpfile` to this
/// module's, where each is still the reference library's own function (a
/// name the sandbox replaced keeps its replacement). Runs in protected mode
/// while the sandbox opens `os`, after `io`.
///
/// # Safety
/// `l` is a live Vm-owned state in protected mode; `os` is the absolute
/// index of the `os` table.
pub unsafe fn install(l: *mut lua_State, os: c_int) {
    // SAFETY: The caller's contract: a live state in protected mode, so every
    // push and raw set may raise, with nothing owned here; `os` and `loaded`
    // (and `io`) are absolute indices of tables this function or the caller
    // pushed, and `lua_settop` drops what this function pushed.
    unsafe {
        if is_reference(l, os, "tmpname") {
            ffi::lua_pushcfunction(l, tmpname_entry);
            lua::set_field(l, os, "tmpname");
        }
        let top = ffi::lua_gettop(l);
        ffi::luaL_getsubtable(l, ffi::LUA_REGISTRYINDEX, ffi::LUA_LOADED_TABLE);
        let loaded = ffi::lua_gettop(l);
        if lua::get_field(l, loaded, "io") == ffi::LUA_TTABLE {
            let io = ffi::lua_gettop(l);
            if is_reference(l, io, "tmpfile") {
                ffi::lua_pushcfunction(l, tmpfile_entry);
                lua::set_field(l, io, "tmpfile");
            }
        }
        ffi::lua_settop(l, top);
    }
}
