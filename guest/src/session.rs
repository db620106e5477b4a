//! A session: one sandboxed Lua state that runs evals, and the syntax check.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};

use crate::contract;
use crate::lua::{self, ffi, lua_State};
use crate::sandbox::{self, Allow, Module};
use crate::vm::{self, Capability, ErrorKind, Extension, Kind, Limits, Vm};
use crate::{capability, json, limits, output};

/// A structured error, before it becomes the WIT record.
#[derive(Debug)]
pub struct Error {
    pub kind: Kind,
    pub message: String,
    pub chunk: String,
    pub line: Option<u32>,
    pub traceback: Option<String>,
}

/// How an eval that did not fail ended.
pub enum Finished {
    /// The chunk returned: its values as a JSON array.
    Returned(String),
    /// The script called an allowed `os.exit` with this status.
    Exited(i32),
}

/// What an eval cost; the WIT `stats`, which `wit` converts it to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub instructions: u64,
    pub peak_memory_bytes: u64,
    pub capability_calls: u32,
    pub output_bytes: u64,
}

/// The outcome of an eval. Its output has already reached the host.
pub struct Outcome {
    pub result: Result<Finished, Error>,
    pub stats: Stats,
    /// The files the eval created or wrote that exist at its end, sorted by
    /// name.
    pub files: Vec<(String, Vec<u8>)>,
}

/// One eval: the WIT `eval-request` in the guest's own types.
pub struct Request<'a> {
    pub code: &'a [u8],
    pub chunk: &'a str,
    pub inputs: &'a [Input],
    /// The script's arguments, for `arg` and `...`, when given.
    pub args: Option<&'a [String]>,
    /// Files to mount read-only before the chunk runs.
    pub files: &'a [(String, Vec<u8>)],
    /// What `io.stdin` reads.
    pub stdin: Vec<u8>,
}

#[cfg(test)]
impl<'a> Request<'a> {
    /// A request with only code and a chunk name.
    pub fn new(code: &'a [u8], chunk: &'a str) -> Request<'a> {
        Request {
            code,
            chunk,
            inputs: &[],
            args: None,
            files: &[],
            stdin: Vec::new(),
        }
    }
}

/// A global set before an eval.
pub struct Input {
    pub name: String,
    pub value: crate::bindings::Value,
}

/// Everything a session is created with.
pub struct Config {
    pub limits: Limits,
    pub allow: Vec<String>,
    pub modules: Vec<Module>,
    pub capabilities: Vec<Capability>,
    pub deterministic: Option<(i64, i64)>,
}

pub struct Session {
    vm: vm::Handle,
    /// The host's module names, for `check`'s messages.
    modules: Vec<String>,
}

struct Setup<'a> {
    allow: &'a Allow,
    modules: &'a [Module],
    seed: Option<i64>,
    /// The state is the snapshot's, with the sandbox already open.
    from_snapshot: bool,
}

impl Session {
    pub fn create(config: Config) -> Result<Session, String> {
        check_limits(&config.limits)?;
        let allow = Allow::new(&config.allow)?;
        for (i, module) in config.modules.iter().enumerate() {
            if module.name.is_empty() || module.name.contains('\0') {
                return Err(format!(
                    "module name '{}' is empty or contains NUL",
                    module.name
                ));
            }
            if sandbox::STANDARD_LIBRARIES.contains(&module.name.as_str()) {
                return Err(format!(
                    "module '{}' has the name of a standard library, which require already returns; choose another name",
                    module.name
                ));
            }
            if config.modules[..i].iter().any(|m| m.name == module.name) {
                return Err(format!("module '{}' is registered twice", module.name));
            }
        }
        capability::validate(&config.capabilities)?;
        let clock = config.deterministic.map(|(clock, _)| clock);
        // The first session of an instance with nothing allowed takes the
        // state the snapshot holds (see `snapshot`); any other builds its own.
        let built = match allow.is_empty() {
            true => crate::snapshot::take(),
            false => None,
        };
        let from_snapshot = built.is_some();
        let vm = match built {
            Some(vm) => {
                vm.configure(config.limits, config.capabilities, clock);
                vm
            }
            None => Vm::open(
                config.limits,
                config.capabilities,
                clock,
                limits::arm_tripped,
            )
            .map_err(|vm::NewError| {
                format!(
                    "max-memory-bytes ({}) is too small to create a Lua state",
                    config.limits.max_memory_bytes
                )
            })?,
        };
        vm.start_clock();
        // The clock `time()` reads while the session is set up (the first
        // `math.random` seed of a state built here).
        crate::clock::set(clock);
        // And the files the C library's file functions work on, while the
        // session is set up.
        // SAFETY: The guard is dropped below, before anything can free the Vm.
        let files = unsafe { crate::files::activate(&vm) };
        let state = vm.state();
        let setup = Setup {
            allow: &allow,
            modules: &config.modules,
            seed: config.deterministic.map(|(_, s)| s),
            from_snapshot,
        };
        // SAFETY: The state is fresh or the snapshot's, on which no script has
        // run, so its stack is empty and has room for `protected`'s two values.
        // `setup` lives on this frame, which the protected call always returns
        // to, and `setup_entry` only reads it.
        let status = unsafe {
            lua::protected(
                state,
                setup_entry,
                (&setup as *const Setup).cast_mut().cast::<c_void>(),
            )
        };
        // Setup was the only Lua code to run here.
        drop(files);
        if status != ffi::LUA_OK {
            if let Some(trip) = vm.tripped() {
                // Name the limit that was really too small.
                return Err(match trip.kind {
                    Kind::Error(ErrorKind::StringSize) => format!(
                        "max-string-bytes ({}) is too small to open the Lua libraries and modules",
                        config.limits.max_string_bytes
                    ),
                    _ => format!(
                        "max-memory-bytes ({}) is too small to open the Lua libraries and modules",
                        config.limits.max_memory_bytes
                    ),
                });
            }
            // SAFETY: A failed protected call leaves its error value on top of
            // the live state. Setup raises only strings (its own messages, a
            // module's compile error, Lua's memory error), so `to_bytes`
            // converts nothing and cannot raise here, outside a protected
            // call; the slice is copied before the stack changes.
            let msg =
                unsafe { lua::to_bytes(state, -1) }.unwrap_or(b"error while creating the session");
            return Err(String::from_utf8_lossy(msg).into_owned());
        }
        // SAFETY: The state is live, and `arm` only sets two of its fields.
        // The budget function is installed once setup is done; each eval sets
        // the count to 0 first.
        unsafe { limits::arm(state) };
        vm.extension::<sandbox::Removed>()
            .0
            .replace(allow.removed());
        let modules = config.modules.iter().map(|m| m.name.clone()).collect();
        Ok(Session { vm, modules })
    }

    /// The most bytes an error's message (or traceback) crosses the
    /// boundary with; see [`cut_text`].
    pub fn max_error_bytes(&self) -> usize {
        max_error_bytes(self.vm.limits().max_output_bytes)
    }

    /// Runs one chunk with its inputs set as globals, its files mounted and
    /// its arguments in `arg` and `...`.
    pub fn eval(&self, request: Request) -> Outcome {
        let vm = &*self.vm;
        let l = vm.state();
        let chunk = request.chunk;
        // This session's files, for the C library's file functions, until
        // the eval returns (finalizers in `begin` included).
        // SAFETY: The guard lives on this frame, which `&self` (and so the Vm)
        // outlives.
        let _files = unsafe { crate::files::activate(vm) };
        let result = match self.begin() {
            // A finalizer run by the collection before the chunk tripped a
            // limit: the eval ends with that, charged with what ran.
            Some(trip) => Err(self.error_from(trip.kind, trip.message.into_owned(), None, chunk)),
            None => self
                .prepare(&request)
                .and_then(|()| self.run(l, request.code, chunk, request.inputs, request.args)),
        };
        let result = match result {
            Err(Error {
                kind: Kind::Exit(code),
                ..
            }) => Ok(Finished::Exited(code)),
            other => other,
        };
        Outcome {
            result,
            stats: Stats {
                instructions: vm.instructions(),
                peak_memory_bytes: vm.peak_bytes() as u64,
                capability_calls: capability::calls(vm).made(),
                output_bytes: output::written(vm),
            },
            files: crate::files::written(vm),
        }
    }

    /// What an eval needs before its chunk loads: its standard input, which
    /// may not outgrow the heap limit.
    fn prepare(&self, request: &Request) -> Result<(), Error> {
        let vm = &*self.vm;
        let max = vm.limits().max_memory_bytes;
        if request.stdin.len() as u64 > max {
            return Err(located(
                Kind::Error(ErrorKind::InvalidValue),
                format!(
                    "stdin is {} bytes, more than max-memory-bytes ({max})",
                    request.stdin.len()
                ),
                None,
                request.chunk,
            ));
        }
        output::set_stdin(vm, request.stdin.clone());
        crate::files::mount(vm, request.files)
            .map_err(|(kind, message)| located(Kind::Error(kind), message, None, request.chunk))
    }

    /// Sets `inputs`, loads `code` and calls it: the part of [`Session::eval`]
    /// after [`Session::begin`].
    fn run(
        &self,
        l: *mut lua_State,
        code: &[u8],
        chunk: &str,
        inputs: &[Input],
        args: Option<&[String]>,
    ) -> Result<Finished, Error> {
        let vm = &*self.vm;
        // SAFETY: The state is this session's and live, and no eval is running,
        // so its stack is empty. Outside the protected calls, only calls that
        // cannot raise are made: `lua_settop` (no to-be-closed variables),
        // `arm`, pushing a light C function, `load` (protected by Lua itself),
        // `set_inputs` (protected), `encode_values` (only reads) and `error`,
        // whose value `message_handler` has made a string. `lua_pcall` catches
        // whatever the script raises and leaves its results on the stack,
        // grown as needed, for `encode_values` to read.
        unsafe {
            ffi::lua_settop(l, 0);
            limits::arm(l);
            let result = self.set_inputs(l, inputs, chunk).and_then(|()| {
                let nargs = match args {
                    Some(args) => self.set_args(l, args, chunk)?,
                    None => 0,
                };
                ffi::lua_pushcfunction(l, message_handler);
                let handler = ffi::lua_gettop(l);
                self.load(l, code, chunk)?;
                if nargs > 0 && ffi::lua_checkstack(l, nargs) == 0 {
                    return Err(located(
                        Kind::Error(ErrorKind::MemoryLimit),
                        "not enough memory for the script's arguments".to_owned(),
                        None,
                        chunk,
                    ));
                }
                for i in 1..=nargs {
                    ffi::lua_rawgeti(l, 1, i64::from(i));
                }
                let status = ffi::lua_pcall(l, nargs, ffi::LUA_MULTRET, handler);
                if status != ffi::LUA_OK {
                    return Err(self.error(l, status, chunk));
                }
                if let Some(trip) = vm.tripped() {
                    // The script caught the trip's error and returned before
                    // a back-edge or call could raise it again.
                    return Err(self.error_from(trip.kind, trip.message.into_owned(), None, chunk));
                }
                let top = ffi::lua_gettop(l);
                json::encode_values(l, handler + 1, top, "result", &vm.limits())
                    .map(Finished::Returned)
                    .map_err(|msg| located(Kind::Error(ErrorKind::InvalidValue), msg, None, chunk))
            });
            ffi::lua_settop(l, 0);
            result
        }
    }

    /// Starts an eval: resets the per-eval counters and arms the
    /// instruction budget, then, past half the heap limit, collects garbage
    /// first. The heap limit counts garbage not yet collected, so an eval
    /// must not inherit a heap filled by the one before it. The finalizers
    /// that collection runs are the new eval's work: their instructions,
    /// output, log events and capability calls count against its limits and
    /// appear in its stats, and a limit they trip ends it (returned here).
    fn begin(&self) -> Option<vm::Trip> {
        let vm = &*self.vm;
        let l = vm.state();
        self.reset();
        // SAFETY: The state is live; `arm` only sets two of its fields.
        unsafe { limits::arm(l) };
        // The session's files share the limit and are not garbage: the
        // heap may use half of what they leave.
        let room = vm
            .limits()
            .max_memory_bytes
            .saturating_sub(vm.external_bytes() as u64);
        if vm.used_bytes() as u64 > room / 2 {
            // SAFETY: Between evals the state is live and its stack empty,
            // which leaves room for `protected`'s two values; the collection
            // and the finalizers it runs raise only inside that protected
            // call, whose error (a memory error, at most) is dropped with
            // the stack.
            unsafe {
                lua::protected(l, collect_entry, std::ptr::null_mut());
                ffi::lua_settop(l, 0);
            }
            // The peak starts from the collected heap, not the garbage.
            vm.restart_peak();
        }
        vm.tripped()
    }

    /// Clears what the Vm and every feature count per eval, fixes the
    /// clock `time()` reads and sets the instruction count to 0.
    fn reset(&self) {
        let vm = &*self.vm;
        crate::clock::set(vm.clock());
        let state = vm.state();
        if !state.is_null() {
            // SAFETY: The state is live (not yet closed); setting the count
            // writes one field, without allocating or raising.
            unsafe { lua::set_count(state, 0) };
        }
        vm.begin_eval();
    }

    /// Compiles `code` as `eval` would, without running it, and reports the
    /// references this session will refuse (see `check`).
    pub fn check(&self, code: &[u8], chunk: &str) -> Result<Vec<crate::check::Diagnostic>, Error> {
        let vm = &*self.vm;
        let l = vm.state();
        // SAFETY: As in `eval`.
        let _files = unsafe { crate::files::activate(vm) };
        // Nothing of the script's may run during a check: no collection
        // (which would run finalizers, and through them capabilities, `log`
        // and output) until it is over. An emergency collection at the heap
        // limit runs no finalizers.
        self.reset();
        // SAFETY: The state is live and between evals; reading, stopping and
        // restarting the collector only reads or sets a flag, without
        // allocating or raising.
        let running = unsafe { ffi::lua_gc(l, ffi::LUA_GCISRUNNING, 0) } != 0;
        // SAFETY: As above.
        unsafe { ffi::lua_gc(l, ffi::LUA_GCSTOP, 0) };
        let result = self.check_stopped(code, chunk);
        if running {
            // SAFETY: As above. A collector the script stopped stays
            // stopped.
            unsafe { ffi::lua_gc(l, ffi::LUA_GCRESTART, 0) };
        }
        result
    }

    /// [`Session::check`] with the collector stopped.
    fn check_stopped(
        &self,
        code: &[u8],
        chunk: &str,
    ) -> Result<Vec<crate::check::Diagnostic>, Error> {
        let vm = &*self.vm;
        let l = vm.state();
        // The dump (without names but `_ENV`'s: `strip` 2, see budget.diff)
        // is about the size of the compiled function, which the heap limit
        // bounds. Its cap keeps the dump and the analysis, which takes a
        // few times the dump, within the linear memory beside a full heap
        // (twice the heap and 16 MiB): an eighth of the heap.
        let max_dump = usize::try_from(vm.limits().max_memory_bytes / 8)
            .unwrap_or(usize::MAX)
            .max(1 << 20);
        let mut dump = Dump {
            bytes: Vec::new(),
            max: max_dump,
            no_room: false,
        };
        // SAFETY: The state is this session's and live, and its stack is empty
        // between evals. `lua_settop` closes no to-be-closed variable, and
        // `load` raises nothing: Lua runs the parser in its own protected call.
        // `lua_dump` only reads the function on top and calls `dump_writer`,
        // which appends to `dump` (alive on this frame, used by nothing else
        // meanwhile); neither allocates in Lua nor raises.
        let loaded = unsafe {
            ffi::lua_settop(l, 0);
            let loaded = self.load(l, code, chunk);
            let status = match loaded {
                Ok(()) => {
                    ffi::lua_dump(l, dump_writer, (&mut dump as *mut Dump).cast::<c_void>(), 2)
                }
                Err(_) => 0,
            };
            ffi::lua_settop(l, 0);
            loaded.map(|()| status)
        };
        let result = loaded.and_then(|status| {
            if status != 0 {
                let why = if dump.no_room {
                    "the memory left beside the heap cannot hold its analysis".to_owned()
                } else {
                    format!("over {max_dump} bytes")
                };
                return Err(located(
                    Kind::Error(ErrorKind::MemoryLimit),
                    format!(
                        "{chunk}: the compiled chunk is too large to analyse ({why}); split it into smaller chunks"
                    ),
                    None,
                    chunk,
                ));
            }
            let Some(analysis) = crate::check::analyse(&dump.bytes) else {
                return Ok(Vec::new());
            };
            drop(dump);
            self.findings(l, &analysis, chunk)
        });
        vm.clear_trip();
        result
    }

    /// Decides which references of `analysis` are findings, reading the
    /// live state (in a protected call: the lookups push strings).
    fn findings(
        &self,
        l: *mut lua_State,
        analysis: &crate::check::Analysis,
        chunk: &str,
    ) -> Result<Vec<crate::check::Diagnostic>, Error> {
        let vm = &*self.vm;
        let mut job = Lookup {
            analysis,
            capabilities: vm.capabilities(),
            removed: vm.extension::<sandbox::Removed>().0.borrow().clone(),
            verdicts: Vec::with_capacity(analysis.references.len()),
        };
        // SAFETY: `job` lives on this frame, which the protected call always
        // returns to, and nothing else touches it until then; `lookup_entry`
        // only borrows it. The stack is empty between evals, with room for
        // `protected`'s two values; `lua_settop` closes nothing.
        let status =
            unsafe { lua::protected(l, lookup_entry, (&mut job as *mut Lookup).cast::<c_void>()) };
        if status != ffi::LUA_OK {
            // SAFETY: The failed protected call holds a memory error, Lua's
            // own string, which `error_text` reads without converting.
            let message = unsafe { error_text(l) };
            // SAFETY: As above; `lua_settop` only drops values.
            unsafe { ffi::lua_settop(l, 0) };
            return Err(match vm.tripped() {
                Some(trip) => self.error_from(trip.kind, trip.message.into_owned(), None, chunk),
                None => located(Kind::Error(ErrorKind::MemoryLimit), message, None, chunk),
            });
        }
        // SAFETY: As above; `lua_settop` only drops values.
        unsafe { ffi::lua_settop(l, 0) };
        let allowable = sandbox::allowable_names();
        let capabilities: Vec<&str> = vm.capabilities().iter().map(|c| c.name.as_str()).collect();
        let cx = crate::check::Context {
            allowable: &allowable,
            modules: &self.modules,
            capabilities: &capabilities,
        };
        Ok(crate::check::findings(
            &analysis.references,
            &job.verdicts,
            &cx,
            analysis.truncated,
        ))
    }

    /// Loads `code` as a text chunk, leaving the function on the stack.
    /// A leading UTF-8 byte-order mark is skipped, and a first line that
    /// starts with `#` is blanked (its newline kept, so lines keep their
    /// numbers), as `lua` does for script files.
    ///
    /// # Safety
    /// `l` is this session's state, with a free slot. Never raises.
    unsafe fn load(&self, l: *mut lua_State, code: &[u8], chunk: &str) -> Result<(), Error> {
        let code = code.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(code);
        let code = if code.first() == Some(&b'#') {
            &code[code.iter().position(|&b| b == b'\n').unwrap_or(code.len())..]
        } else {
            code
        };
        let name = lua::cstring(&format!("@{chunk}"));
        // SAFETY: `luaL_loadbufferx` runs the parser inside Lua's own protected
        // call and reports errors as a status, so it raises nothing here.
        // `code` and the NUL-terminated `name` outlive the call, and the mode
        // "t" refuses binary chunks.
        let status = unsafe {
            ffi::luaL_loadbufferx(
                l,
                code.as_ptr().cast(),
                code.len(),
                name.as_ptr(),
                c"t".as_ptr(),
            )
        };
        if status == ffi::LUA_OK {
            return Ok(());
        }
        // A failed load is a syntax error (Lua's parser limits included),
        // unless one of the guest's limits refused memory or a string.
        let vm = &*self.vm;
        // SAFETY: A failed load leaves its error message on top: the parser's
        // message or Lua's memory error, both strings, which `error_text` reads
        // without converting.
        let message = unsafe { error_text(l) };
        Err(match vm.tripped() {
            Some(trip) => self.error_from(trip.kind, trip.message.into_owned(), None, chunk),
            None if status == ffi::LUA_ERRMEM => {
                located(Kind::Error(ErrorKind::MemoryLimit), message, None, chunk)
            }
            None => located(Kind::Error(ErrorKind::Syntax), message, None, chunk),
        })
    }

    /// Sets the global `arg` as `lua.c` does for a script (the chunk name at
    /// 0, the arguments at 1..n), in a protected call that leaves the table
    /// at index 1 for the arguments' pushes; returns their count.
    ///
    /// # Safety
    /// `l` is this session's state, with an empty stack. Never raises.
    unsafe fn set_args(
        &self,
        l: *mut lua_State,
        args: &[String],
        chunk: &str,
    ) -> Result<c_int, Error> {
        let vm = &*self.vm;
        let Ok(nargs) = c_int::try_from(args.len()) else {
            return Err(located(
                Kind::Error(ErrorKind::InvalidValue),
                format!("{} arguments are more than Lua can pass", args.len()),
                None,
                chunk,
            ));
        };
        let mut job = Args { chunk, args };
        // SAFETY: The stack is empty (caller), with room for the function and
        // its light userdata, which neither allocates. `job` lives on this
        // frame, which the protected call returns to, and `args_entry` only
        // reads it; the call leaves the table or the error value at index 1.
        let status = unsafe {
            ffi::lua_pushcfunction(l, args_entry);
            ffi::lua_pushlightuserdata(l, (&mut job as *mut Args).cast::<c_void>());
            ffi::lua_pcall(l, 1, 1, 0)
        };
        if status == ffi::LUA_OK {
            return Ok(nargs);
        }
        // SAFETY: The failed call holds a memory error, Lua's own string.
        let message = unsafe { error_text(l) };
        Err(match vm.tripped() {
            Some(trip) => self.error_from(trip.kind, trip.message.into_owned(), None, chunk),
            None => located(Kind::Error(ErrorKind::MemoryLimit), message, None, chunk),
        })
    }

    /// Sets each input as a global, in a protected call.
    ///
    /// # Safety
    /// `l` is this session's state, with an empty stack. Never raises.
    unsafe fn set_inputs(
        &self,
        l: *mut lua_State,
        inputs: &[Input],
        chunk: &str,
    ) -> Result<(), Error> {
        if inputs.is_empty() {
            return Ok(());
        }
        for input in inputs {
            if !capability::is_identifier(&input.name) {
                return Err(located(
                    Kind::Error(ErrorKind::InvalidValue),
                    format!("input name '{}' is not a Lua identifier", input.name),
                    None,
                    chunk,
                ));
            }
        }
        let vm = &*self.vm;
        let mut received = Vec::with_capacity(inputs.len());
        for input in inputs {
            match json::Received::parse(input.value.clone()) {
                Ok(value) => received.push((input.name.as_str(), value)),
                Err(e) => {
                    return Err(located(
                        Kind::Error(ErrorKind::InvalidValue),
                        format!("input '{}' is {e}", input.name),
                        None,
                        chunk,
                    ));
                }
            }
        }
        let mut job = Inputs {
            values: received,
            max_depth: vm.limits().max_value_depth,
            error: None,
        };
        // SAFETY: `job` lives on this frame, which the protected call always
        // returns to, and nothing else touches it until then; `inputs_entry`
        // only borrows it. The caller's state has an empty stack, with room
        // for `protected`'s two values.
        let status =
            unsafe { lua::protected(l, inputs_entry, (&mut job as *mut Inputs).cast::<c_void>()) };
        if status == ffi::LUA_OK {
            return Ok(());
        }
        // SAFETY: Without a conversion error the failed protected call holds a
        // memory error, Lua's own string, which `error_text` reads without
        // converting.
        let message = job.error.unwrap_or_else(|| unsafe { error_text(l) });
        Err(match vm.tripped() {
            Some(trip) => self.error_from(trip.kind, trip.message.into_owned(), None, chunk),
            None => located(Kind::Error(ErrorKind::InvalidValue), message, None, chunk),
        })
    }

    /// Classifies the error on top of the stack after `status`.
    /// The kind comes from the guest's own state: a tripped limit, or a
    /// message the guest itself raised (sandboxed names, capabilities).
    /// Nothing is read from the text of a script's own error, so no script
    /// can forge a limit.
    ///
    /// # Safety
    /// `l` is this session's state with the error value of `status` on top,
    /// as `lua_pcall` with [`message_handler`] leaves it: a string. Never
    /// raises.
    unsafe fn error(&self, l: *mut lua_State, status: c_int, chunk: &str) -> Error {
        let vm = &*self.vm;
        // SAFETY: The caller leaves the error value of the eval's `lua_pcall`
        // on top, which `message_handler` has made a string (Lua's memory
        // errors and "error in error handling" are strings already), so
        // `error_text` converts nothing and cannot raise outside a protected
        // call.
        let message = unsafe { error_text(l) };
        let traceback = vm.extension::<Traceback>().0.take();
        if let Some(trip) = vm.tripped() {
            let traceback = traceback.filter(|_| !matches!(trip.kind, Kind::Exit(_)));
            return self.error_from(trip.kind, trip.message.into_owned(), traceback, chunk);
        }
        let kind = match status {
            ffi::LUA_ERRMEM => Kind::Error(ErrorKind::MemoryLimit),
            _ => vm
                .tagged_kind(message.as_bytes())
                .map_or(Kind::Error(ErrorKind::Runtime), Kind::Error),
        };
        self.error_from(kind, message, traceback, chunk)
    }

    fn error_from(
        &self,
        kind: Kind,
        message: String,
        traceback: Option<String>,
        chunk: &str,
    ) -> Error {
        located(kind, message, traceback, chunk)
    }
}

/// Refuses limits outside the contract table's bounds (`wit/contract.toml`,
/// whose guest limits are the fields of the WIT `limits`, in order), naming
/// the first such field. Hosts check the same table first; this is the
/// authority.
fn check_limits(l: &Limits) -> Result<(), String> {
    let values = [
        l.max_instructions,
        u64::from(l.max_call_depth),
        l.max_string_bytes,
        l.max_memory_bytes,
        l.max_output_bytes,
        u64::from(l.max_value_depth),
    ];
    for (rule, value) in contract::LIMITS[..contract::GUEST_LIMITS]
        .iter()
        .zip(values)
    {
        let name = rule.name.replace('_', "-");
        if value == 0 {
            return Err(format!("limit {name} must be greater than zero"));
        }
        if value < rule.min {
            return Err(format!(
                "limit {name} must be at least {}, got {value}",
                rule.min
            ));
        }
        if value > rule.max {
            return Err(format!(
                "limit {name} must be at most {}, got {value}",
                rule.max
            ));
        }
    }
    Ok(())
}

/// The most bytes of an error's message, and of its traceback, that cross
/// the boundary: `max-output-bytes`, within 256 bytes and 64 KiB (the
/// `lua-error` record's rule in wit/moonbox.wit). A message can otherwise be
/// any Lua string, up to `max-string-bytes`, which each host escapes into
/// its one-line form and its JSON report again.
pub fn max_error_bytes(max_output_bytes: u64) -> usize {
    // At most 64 KiB, so the cast cannot truncate.
    max_output_bytes.clamp(contract::MIN_ERROR_BYTES, contract::MAX_ERROR_BYTES) as usize
}

/// `text` cut to at most `max` bytes at a character boundary, ending with
/// ` ... (N bytes cut)` when anything was cut (the note counted in `max`).
pub fn cut_text(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    // The note's length with the widest count this text can need.
    let room = max.saturating_sub(format!(" ... ({} bytes cut)", text.len()).len());
    let keep = text.floor_char_boundary(room);
    let cut = text.len() - keep;
    text.truncate(keep);
    text.push_str(&format!(" ... ({cut} bytes cut)"));
    text
}

/// Builds an error, reading `chunk:line:` from the front of the message.
fn located(kind: Kind, message: String, traceback: Option<String>, chunk: &str) -> Error {
    let (at_chunk, line) = match split_position(&message, chunk) {
        Some((c, line)) => (c, Some(line)),
        None => (chunk.to_owned(), None),
    };
    Error {
        kind,
        message,
        chunk: at_chunk,
        line,
        traceback,
    }
}

/// `("chunk", 3)` for a message starting `chunk:3: `. The evaluated chunk's
/// name is tried first, since a chunk name may itself contain colons.
fn split_position(message: &str, chunk: &str) -> Option<(String, u32)> {
    let line_after = |rest: &str| -> Option<u32> {
        let end = rest.find(':')?;
        rest[..end].parse().ok()
    };
    let own = message
        .strip_prefix(chunk)
        .and_then(|r| r.strip_prefix(':'));
    if let Some(line) = own.and_then(line_after) {
        return Some((chunk.to_owned(), line));
    }
    let mut search = 0;
    while let Some(off) = message[search..].find(':') {
        let colon = search + off;
        match line_after(&message[colon + 1..]) {
            Some(line) if colon > 0 => return Some((message[..colon].to_owned(), line)),
            _ => search = colon + 1,
        }
    }
    None
}

/// `lua.c`'s description of an error value that is not a string.
///
/// # Safety
/// `l` is a live state with the error value on top.
unsafe fn describe_error_object(l: *mut lua_State) -> String {
    // SAFETY: `lua_type` reads the value on top of the live state, and
    // `lua_typename` returns a static NUL-terminated name for the tag it gives.
    unsafe {
        let t = ffi::lua_type(l, -1);
        let name = std::ffi::CStr::from_ptr(ffi::lua_typename(l, t))
            .to_string_lossy()
            .into_owned();
        format!("(error object is a {name} value)")
    }
}

/// A full collection (finalizers included) in protected mode.
///
/// # Safety
/// Called by [`lua::protected`] on a live Vm-owned state.
unsafe extern "C-unwind" fn collect_entry(l: *mut lua_State) -> c_int {
    // SAFETY: `protected` runs this as a C function on the live main thread. A
    // full collection may run finalizers, which execute under Lua's own
    // protection; a memory error during the collection is caught by
    // `protected`, and this frame owns nothing.
    unsafe {
        ffi::lua_gc(l, ffi::LUA_GCCOLLECT, 0);
        0
    }
}

/// Opens the libraries, applies the sandbox and installs the capabilities.
///
/// # Safety
/// Called by [`lua::protected`] on a fresh Vm-owned state, with a pointer
/// to a [`Setup`] that outlives the call.
unsafe extern "C-unwind" fn setup_entry(l: *mut lua_State) -> c_int {
    // SAFETY: `protected` passes a pointer to the `Setup` on
    // `Session::create`'s frame, which outlives this call, as the only
    // argument; it is read as a shared reference. `lua_settop` then leaves the
    // stack empty, as `snapshot::build` and `personalise` require, and each
    // setup step runs in the protected mode it needs.
    unsafe {
        let setup = &*(ffi::lua_touserdata(l, 1) as *const Setup);
        ffi::lua_settop(l, 0);
        if !setup.from_snapshot {
            crate::snapshot::build(l, setup.allow);
        }
        sandbox::personalise(l, setup.modules, setup.seed);
        capability::install(l);
        0
    }
}

/// What this module keeps in the Vm: the traceback the message handler
/// captured for the current error.
#[derive(Default)]
struct Traceback(RefCell<Option<String>>);

impl Extension for Traceback {
    fn begin_eval(&self) {
        self.0.replace(None);
    }
}

/// The eval's message handler: renders the error object as `lua.c` does and
/// records a traceback.
///
/// # Safety
/// Called by Lua as the message handler of an eval's `lua_pcall`.
unsafe extern "C-unwind" fn message_handler(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls the handler on the live thread of a Vm-owned state that
    // raised, inside the eval's protected call, with the error value as
    // argument 1 and free slots. `lua_tolstring` may convert a number in place,
    // and `luaL_callmeta` may run a `__tostring` metamethod; both may raise,
    // with nothing owned on this frame. A call of a removed name is explained
    // (`sandbox::explain` only reads frames); the borrow of the removed names
    // ends before anything runs Lua, and the new message moves into the Vm
    // (`push_owned`) before its push may raise. `luaL_traceback` pushes one string,
    // which `to_bytes` reads without converting, and its copy moves into the Vm
    // before `lua_settop`, which cannot raise.
    unsafe {
        if ffi::lua_tolstring(l, 1, std::ptr::null_mut()).is_null() {
            if ffi::luaL_callmeta(l, 1, c"__tostring".as_ptr()) == 0
                || ffi::lua_type(l, -1) != ffi::LUA_TSTRING
            {
                let name = ffi::luaL_typename(l, 1);
                ffi::lua_pushfstring(l, c"(error object is a %s value)".as_ptr(), name);
            }
            ffi::lua_replace(l, 1);
        }
        ffi::lua_settop(l, 1);
        let vm = Vm::from_state(l);
        if !vm.has_tripped()
            && let Some(message) = lua::string_bytes(l, 1)
        {
            let removed = vm.extension::<sandbox::Removed>().0.borrow();
            let explained = sandbox::explain(l, 1, &String::from_utf8_lossy(message), &removed);
            drop(removed);
            if let Some(explained) = explained {
                vm.tag(explained.as_bytes(), ErrorKind::Sandboxed);
                vm.push_owned(l, explained);
                ffi::lua_replace(l, 1);
            }
        }
        ffi::luaL_traceback(l, l, std::ptr::null(), 1);
        let tb = lua::to_bytes(l, -1).map(|t| String::from_utf8_lossy(t).into_owned());
        // Moved into the Vm before anything else can raise.
        vm.extension::<Traceback>().0.replace(tb);
        ffi::lua_settop(l, 1);
        1
    }
}

/// The error value on top of the stack as text (without converting it in
/// place), or `lua.c`'s description of a value that is not a string.
///
/// # Safety
/// `l` is a live state with the error value on top. A number there is
/// converted in place, which allocates and may raise, so outside a protected
/// call the value must not be one; Lua's own errors and the guest's are
/// strings, and `message_handler` turns a script's into one.
unsafe fn error_text(l: *mut lua_State) -> String {
    // SAFETY: The error value is on top of the live state (caller). A string is
    // read without converting, a number is converted in place only where the
    // caller allows a raise, and anything else is only described; the bytes are
    // copied while the value is on the stack.
    unsafe {
        match lua::string_bytes(l, -1) {
            Some(m) => String::from_utf8_lossy(m).into_owned(),
            None if ffi::lua_type(l, -1) == ffi::LUA_TNUMBER => lua::to_bytes(l, -1)
                .map(|m| String::from_utf8_lossy(m).into_owned())
                .unwrap_or_default(),
            None => describe_error_object(l),
        }
    }
}

/// The buffer `lua_dump` writes the compiled chunk into, with its cap.
struct Dump {
    bytes: Vec<u8>,
    max: usize,
    /// Set when the dump stopped because the linear memory could not grow,
    /// under the cap.
    no_room: bool,
}

/// `lua_dump`'s writer: appends to the [`Dump`], refusing (status 1, which
/// stops the dump) past its cap.
///
/// # Safety
/// Called by `lua_dump` only, with `ud` pointing to a live [`Dump`] and `p`
/// to `sz` readable bytes.
unsafe extern "C-unwind" fn dump_writer(
    _l: *mut lua_State,
    p: *const c_void,
    sz: usize,
    ud: *mut c_void,
) -> c_int {
    // SAFETY: `Session::check` passes a pointer to its `Dump`, alive and
    // otherwise unused during `lua_dump`; Lua passes `sz` readable bytes at
    // `p` (`p` may be null only when `sz` is 0). Nothing here calls Lua.
    unsafe {
        let dump = &mut *(ud as *mut Dump);
        // Past the cap, or when the linear memory cannot grow for it, the
        // dump stops (an allocation failure would abort the guest).
        if dump.bytes.len().saturating_add(sz) > dump.max {
            return 1;
        }
        if dump.bytes.try_reserve(sz).is_err() {
            dump.no_room = true;
            return 1;
        }
        if sz > 0 {
            dump.bytes
                .extend_from_slice(std::slice::from_raw_parts(p.cast::<u8>(), sz));
        }
        0
    }
}

/// The references of a check, handed to the protected call that looks them
/// up in the live state.
struct Lookup<'a> {
    analysis: &'a crate::check::Analysis,
    capabilities: &'a [Capability],
    /// The names the sandbox removed (`sandbox::Removed`), copied out of the
    /// Vm so that no borrow of it is held while Lua runs.
    removed: Vec<String>,
    /// One per reference, in order; allocated with room for all of them.
    verdicts: Vec<crate::check::Verdict>,
}

/// Looks every reference of a [`Lookup`] up in the live state.
///
/// # Safety
/// Called by [`lua::protected`] on a live Vm-owned state, with a pointer to
/// a [`Lookup`] that outlives the call and is not otherwise used during it.
unsafe extern "C-unwind" fn lookup_entry(l: *mut lua_State) -> c_int {
    // SAFETY: `protected` passes a pointer to the `Lookup` on `findings`'
    // frame, which outlives this call and is not otherwise used until it
    // returns, so a unique reference to it is sound; its vector was allocated
    // with room for every verdict, and a push into it does not call Lua. The
    // globals, `package.loaded` and `package.preload` take indices 1 to 3
    // (the registry has no metatable, so `lua_getfield` runs nothing), and
    // each lookup pushes at most three values before `lua_settop` drops them.
    // The pushes of keys may raise a memory error; this frame and
    // `lookup_global` own nothing, the keys being borrowed from the job.
    unsafe {
        let job = &mut *(ffi::lua_touserdata(l, 1) as *mut Lookup);
        ffi::lua_settop(l, 0);
        ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, ffi::LUA_RIDX_GLOBALS);
        let globals_have_meta = ffi::lua_getmetatable(l, 1) != 0;
        ffi::lua_settop(l, 1);
        ffi::lua_getfield(l, ffi::LUA_REGISTRYINDEX, ffi::LUA_LOADED_TABLE);
        ffi::lua_getfield(l, ffi::LUA_REGISTRYINDEX, ffi::LUA_PRELOAD_TABLE);
        for reference in &job.analysis.references {
            let verdict = match reference {
                crate::check::Reference::Global { path, .. } => lookup_global(
                    l,
                    path,
                    job.analysis,
                    job.capabilities,
                    &job.removed,
                    globals_have_meta,
                ),
                crate::check::Reference::Require { name, .. } => lookup_module(l, name),
            };
            job.verdicts.push(verdict);
            ffi::lua_settop(l, 3);
        }
        0
    }
}

/// What the live state says about a global and the fields read from it.
///
/// # Safety
/// As in [`lookup_entry`], with the globals at index 1. May raise a memory
/// error; leaves values above index 3 for the caller to drop.
unsafe fn lookup_global(
    l: *mut lua_State,
    path: &[String],
    analysis: &crate::check::Analysis,
    capabilities: &[Capability],
    removed: &[String],
    globals_have_meta: bool,
) -> crate::check::Verdict {
    use crate::check::{BUILT_IN_GLOBALS, Verdict, is_namespace};
    let Some(first) = path.first() else {
        return Verdict::Fine;
    };
    if analysis.assigned.contains(first) {
        return Verdict::Fine;
    }
    // SAFETY: The caller's contract: index 1 holds the globals table, and each
    // table read from is at an absolute index of this frame's pushes, with a
    // slot per push (at most one per path segment past three; the path is at
    // most eight segments, within the C function's twenty free slots).
    unsafe {
        if lua::get_field(l, 1, first) == ffi::LUA_TNIL {
            let defined = BUILT_IN_GLOBALS.contains(&first.as_str())
                || analysis.env_replaced
                || globals_have_meta;
            return if defined {
                Verdict::Fine
            } else {
                Verdict::UndefinedGlobal
            };
        }
        for (i, key) in path.iter().enumerate().skip(1) {
            if ffi::lua_type(l, -1) != ffi::LUA_TTABLE {
                return Verdict::Fine;
            }
            let table = ffi::lua_gettop(l);
            if lua::get_field(l, table, key) == ffi::LUA_TNIL {
                if i == 1 && removed.iter().any(|r| *r == format!("{first}.{key}")) {
                    return Verdict::Sandboxed(2);
                }
                let plain = ffi::lua_getmetatable(l, table) == 0;
                return if plain && !analysis.env_replaced && is_namespace(capabilities, &path[..i])
                {
                    Verdict::UnknownCapability(i + 1)
                } else {
                    Verdict::Fine
                };
            }
        }
        Verdict::Fine
    }
}

/// Whether `require(name)` finds a module in the live state: a standard
/// library, `json`, or a name in `package.loaded` or `package.preload`.
///
/// # Safety
/// As in [`lookup_entry`], with `package.loaded` at 2 and `package.preload`
/// at 3. May raise a memory error.
unsafe fn lookup_module(l: *mut lua_State, name: &str) -> crate::check::Verdict {
    use crate::check::Verdict;
    if name == "json" || sandbox::STANDARD_LIBRARIES.contains(&name) {
        return Verdict::Fine;
    }
    // SAFETY: Indices 2 and 3 are absolute (caller); each read pushes one
    // value into a free slot.
    unsafe {
        for table in [2, 3] {
            if ffi::lua_type(l, table) == ffi::LUA_TTABLE
                && lua::get_field(l, table, name) != ffi::LUA_TNIL
            {
                return Verdict::Fine;
            }
        }
    }
    Verdict::UnknownModule
}

/// The arguments of one eval, handed to the protected call that sets `arg`.
struct Args<'a> {
    chunk: &'a str,
    args: &'a [String],
}

/// Builds `arg` and sets it as a global, returning the table.
///
/// # Safety
/// Called by `lua_pcall` from [`Session::set_args`] on a live Vm-owned state,
/// with a pointer to an [`Args`] that outlives the call.
unsafe extern "C-unwind" fn args_entry(l: *mut lua_State) -> c_int {
    // SAFETY: The pointer is the `Args` on `set_args`' frame, alive and only
    // read here. Each string is borrowed from the job while it is pushed (a
    // memory error leaves nothing owned here) and stored with a raw set into
    // the new table at index 1; a copy of it is then stored into the globals
    // table (index 2) with a raw set, as inputs are, and popped with it.
    unsafe {
        let job = &*(ffi::lua_touserdata(l, 1) as *const Args);
        ffi::lua_settop(l, 0);
        ffi::lua_createtable(l, c_int::try_from(job.args.len()).unwrap_or(0), 1);
        lua::push_bytes(l, job.chunk.as_bytes());
        ffi::lua_rawseti(l, 1, 0);
        for (i, arg) in job.args.iter().enumerate() {
            lua::push_bytes(l, arg.as_bytes());
            ffi::lua_rawseti(l, 1, i as i64 + 1);
        }
        ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, ffi::LUA_RIDX_GLOBALS);
        ffi::lua_pushvalue(l, 1);
        lua::set_field(l, 2, "arg");
        ffi::lua_settop(l, 1);
        1
    }
}

/// The inputs of one eval, handed to the protected call that sets them.
struct Inputs<'a> {
    values: Vec<(&'a str, json::Received)>,
    max_depth: u32,
    /// A conversion refused (too deep), reported as the eval's error.
    error: Option<String>,
}

/// Pushes each input and sets it as a global.
///
/// # Safety
/// Called by [`lua::protected`] on a live Vm-owned state, with a pointer to
/// an [`Inputs`] that outlives the call and is not otherwise used during it.
unsafe extern "C-unwind" fn inputs_entry(l: *mut lua_State) -> c_int {
    // SAFETY: `protected` passes a pointer to the `Inputs` on `set_inputs`'
    // frame, which outlives this call and is not otherwise used until it
    // returns, so a unique reference to it is sound. Each input needs the
    // globals table plus what `push_received` makes room for. On a conversion
    // error the message moves into `job` before `lua_error`; the loop's
    // iterator owns nothing, so the raise leaks nothing.
    unsafe {
        let job = &mut *(ffi::lua_touserdata(l, 1) as *mut Inputs);
        ffi::lua_settop(l, 0);
        ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, ffi::LUA_RIDX_GLOBALS);
        for (name, value) in &job.values {
            if let Err(e) = json::push_received(l, value, job.max_depth) {
                job.error = Some(format!("input '{name}' {e}"));
                ffi::lua_pushnil(l);
                ffi::lua_error(l);
            }
            lua::set_field(l, 1, name);
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::{cut_text, max_error_bytes, split_position};

    #[test]
    fn error_text_is_cut_within_the_bound_at_a_character_boundary() {
        assert_eq!(cut_text("short".into(), 256), "short");
        let long = "é".repeat(1000);
        let cut = cut_text(long.clone(), 256);
        assert!(cut.len() <= 256, "{}", cut.len());
        assert!(cut.ends_with(" bytes cut)"), "{cut}");
        let kept = cut.split(" ... (").next().unwrap();
        assert!(long.starts_with(kept));
        let note = format!(" ... ({} bytes cut)", long.len() - kept.len());
        assert_eq!(cut, format!("{kept}{note}"));
        // A bound smaller than the note keeps only the note.
        assert!(cut_text(long, 4).starts_with(" ... ("));
    }

    #[test]
    fn the_error_bound_follows_the_output_limit_within_its_range() {
        assert_eq!(max_error_bytes(1), 256);
        assert_eq!(max_error_bytes(4096), 4096);
        assert_eq!(max_error_bytes(1 << 30), 64 << 10);
    }

    #[test]
    fn position_prefers_the_evaluated_chunk() {
        assert_eq!(
            split_position("a:b.lua:3: oops", "a:b.lua"),
            Some(("a:b.lua".to_owned(), 3))
        );
        assert_eq!(
            split_position("json:12: bad", "main.lua"),
            Some(("json".to_owned(), 12))
        );
        assert_eq!(split_position("not enough memory", "main.lua"), None);
    }
}
