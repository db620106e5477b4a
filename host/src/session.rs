//! [`Session`]: one store, one instance, one Lua state that keeps its
//! globals across evals.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::ResourceAny;
use wasmtime::{Store, Trap, UpdateDeadline};

use crate::arguments::ArgumentError;
use crate::bindings::{Guest, types};
use crate::config::DEFAULT_CHUNK_NAME;
use crate::diagnostic::Diagnostic;
use crate::error::{ErrorKind, EvalError};
use crate::host::{HostState, HostTimeout};
use crate::limits::Limits;
use crate::outcome::{EvalOutput, Output, Stats};
use crate::output::{LogSink, OutputSink};
use crate::prepared::Prepared;
use crate::script::{self, CancelHandle, Script};

/// Why a session did not start.
#[derive(Debug)]
pub(crate) enum StartError {
    /// The guest refused the configuration; the text names the setting.
    Refused(String),
    /// A limit stopped the start before any script ran, so it is too small
    /// for a session at all: the error keeps the limit's kind, and its
    /// message names the limit to raise.
    TooSmall(EvalError),
    /// Something else stopped the start, as the eval error that says what.
    Stopped(EvalError),
}

impl From<StartError> for EvalError {
    fn from(e: StartError) -> Self {
        match e {
            StartError::Refused(why) => {
                EvalError::internal(format!("the configuration was refused: {why}"))
            }
            StartError::TooSmall(stop) | StartError::Stopped(stop) => stop,
        }
    }
}

impl From<EvalError> for StartError {
    fn from(e: EvalError) -> Self {
        StartError::Stopped(e)
    }
}

/// A Lua state that persists across evals, with a private context `T`.
///
/// Globals set by one eval are visible to the next, as in a REPL. Limits
/// are per eval (instructions, output, fuel, timeout), except the Lua heap,
/// which the session's state shares.
///
/// When the outer wall stops an eval ([`ErrorKind::Timeout`],
/// [`ErrorKind::FuelExhausted`] or a trap), the instance is discarded and
/// every later eval fails with [`ErrorKind::SessionPoisoned`]; the guest's own
/// limits leave the session usable.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let mut session = sandbox.session(()).await?;
/// session.eval("count = 41").await?;
/// let out = session.eval("count = count + 1 return count").await?;
/// assert_eq!(out.values, [serde_json::json!(42)]);
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
pub struct Session<T: 'static> {
    prepared: Arc<Prepared<T>>,
    store: Store<HostState<T>>,
    guest: Guest,
    handle: ResourceAny,
    poisoned: Option<String>,
    chunk_name: String,
    start_times: StartTimes,
}

/// How long a session took to start, in its two steps: for finding where a
/// cold start spends its time (`moonbox bench` reports them).
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let session = sandbox.session(()).await?;
/// let t = session.start_times();
/// assert!(t.instantiate > std::time::Duration::ZERO);
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StartTimes {
    /// A new store and the guest instantiated in it (wasmtime's share:
    /// memory mapped from the component's snapshot, core instances linked).
    pub instantiate: Duration,
    /// The guest's `session.create`: the Lua state made the session's
    /// (limits, capabilities, modules, a fresh random seed).
    pub create: Duration,
}

impl<T> fmt::Debug for Session<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("chunk_name", &self.chunk_name)
            .field("poisoned", &self.poisoned.is_some())
            .finish_non_exhaustive()
    }
}

impl<T: Send + Sync + 'static> Session<T> {
    /// Instantiates the guest and creates its Lua session. `ctx` is `None`
    /// only for throw-away instances that never call capabilities.
    pub(crate) async fn start(
        prepared: Arc<Prepared<T>>,
        ctx: Option<Arc<T>>,
    ) -> Result<Session<T>, StartError> {
        let started = Instant::now();
        let inner = &*prepared;
        let limits = inner.limits;
        let host = HostState::new(inner.registry.clone(), ctx, &limits, inner.determinism);
        let mut store = Store::new(inner.engine.wasmtime(), host);
        store.limiter(|data| &mut data.limiter);
        store.epoch_deadline_callback(|ctx| {
            let data = ctx.data();
            match data.deadline {
                _ if data.cancel.is_cancelled() => Ok(UpdateDeadline::Interrupt),
                Some(deadline) if Instant::now() >= deadline => Ok(UpdateDeadline::Interrupt),
                _ => Ok(UpdateDeadline::Yield(1)),
            }
        });
        store.set_epoch_deadline(1);
        // The epoch advances while this guard lives, for the timeout.
        let _ticking = inner.engine.ticking().map_err(StartError::Stopped)?;
        arm_call(&mut store, inner, started)?;

        let mut start_times = StartTimes::default();
        let work = async {
            let begun = Instant::now();
            let guest = inner.pre.instantiate_async(&mut store).await?;
            let instantiated = Instant::now();
            start_times.instantiate = instantiated - begun;
            let created = guest
                .moonbox_sandbox_lua()
                .session()
                .call_create(&mut store, &inner.config)
                .await?;
            start_times.create = instantiated.elapsed();
            Ok::<_, wasmtime::Error>((guest, created))
        };
        let outcome = tokio::time::timeout(limits.timeout, work).await;
        let stats = Stats {
            wall_time_us: micros(started.elapsed()),
            ..Stats::default()
        };
        // No script has run yet: a stop here means a limit is too small to
        // start a session at all, and the message names it.
        let (guest, created) = settle(outcome, &store, DEFAULT_CHUNK_NAME, stats, &limits)
            .map_err(|mut stop| {
                let why = match stop.kind {
                    ErrorKind::FuelExhausted => format!(
                        "limit fuel ({}) is too small to start a session; raise it",
                        limits.effective_fuel()
                    ),
                    ErrorKind::Timeout => format!(
                        "limit timeout ({} ms) is too short to start a session; raise it",
                        limits.timeout.as_millis()
                    ),
                    ErrorKind::MemoryLimit => format!(
                        "limit max_wasm_memory_bytes ({} bytes) is too small to start a session; raise it",
                        limits.effective_max_wasm_memory_bytes()
                    ),
                    _ => return StartError::Stopped(stop),
                };
                stop.message = why;
                StartError::TooSmall(stop)
            })?;
        let handle = created.map_err(StartError::Refused)?;
        store.data_mut().deadline = None;
        Ok(Session {
            prepared,
            store,
            guest,
            handle,
            poisoned: None,
            chunk_name: DEFAULT_CHUNK_NAME.to_owned(),
            start_times,
        })
    }

    /// How long this session took to start.
    pub fn start_times(&self) -> StartTimes {
        self.start_times
    }

    /// Sends the output of later evals to `sink` as it is written, as well as
    /// into their results; `None` stops forwarding. Default: none.
    pub fn set_output_sink(&mut self, sink: Option<OutputSink>) {
        self.store.data_mut().output.sink = sink;
    }

    /// Sends the [`LogEvent`](crate::LogEvent)s of later evals to `sink` as
    /// the script makes them, in order with the output sink's writes, as well
    /// as into their results; `None` stops forwarding. Default: none.
    pub fn set_log_sink(&mut self, sink: Option<LogSink>) {
        self.store.data_mut().logs.sink = sink;
    }

    /// Sets the chunk name later evals use in messages (`tool.lua:3: ...`).
    /// Default: [`DEFAULT_CHUNK_NAME`].
    pub fn set_chunk_name(&mut self, name: impl Into<String>) {
        self.chunk_name = name.into();
    }

    /// Whether an earlier eval was stopped by the host (timeout, fuel, a
    /// trap) or cancelled, so that every later eval fails with
    /// [`ErrorKind::SessionPoisoned`].
    pub fn is_poisoned(&self) -> bool {
        self.poisoned.is_some()
    }

    /// The error a poisoned session answers every call with.
    fn poisoned_error(&self, chunk_name: &str) -> Option<EvalError> {
        let reason = self.poisoned.as_ref()?;
        Some(EvalError::host(
            ErrorKind::SessionPoisoned,
            format!("this session can no longer run code: {reason}; start a new session"),
            chunk_name,
            Stats::default(),
        ))
    }

    pub(crate) fn prepared(&self) -> &Arc<Prepared<T>> {
        &self.prepared
    }

    /// A handle that cancels this session's evals from another task (see
    /// [`CancelHandle`]). Every handle of a session is the same handle.
    pub fn cancel_handle(&self) -> CancelHandle {
        self.store.data().cancel.clone()
    }

    /// Runs `code` (Lua source: text, or any bytes) with the session's
    /// globals.
    ///
    /// # Errors
    /// The script's failure as an [`EvalError`], with everything it wrote
    /// before it stopped.
    ///
    /// # Cancel safety
    /// Dropping the future mid-eval poisons the session: later evals fail
    /// with [`ErrorKind::SessionPoisoned`]. Output already written reached
    /// the output sink, if one is set. To stop an eval and keep its output
    /// and stats, use [`Session::cancel_handle`].
    pub async fn eval(&mut self, code: impl AsRef<[u8]>) -> Result<EvalOutput, EvalError> {
        self.run(Script::new(code.as_ref())).await
    }

    /// Runs `code` as a chunk named `chunk_name`.
    ///
    /// # Errors
    /// The script's failure as an [`EvalError`].
    ///
    /// # Cancel safety
    /// As for [`Session::eval`].
    pub async fn eval_chunk(
        &mut self,
        code: impl AsRef<[u8]>,
        chunk_name: &str,
    ) -> Result<EvalOutput, EvalError> {
        self.run(Script::new(code.as_ref()).chunk_name(chunk_name))
            .await
    }

    /// Runs a [`Script`]: its code, with its inputs set as globals first.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let sandbox = moonbox::Sandbox::builder().build()?;
    /// let mut session = sandbox.session(()).await?;
    /// let script = moonbox::Script::new("total = (total or 0) + n return total");
    /// session.run(script.clone().input("n", 40)).await?;
    /// let out = session.run(script.input("n", 2)).await?;
    /// assert_eq!(out.values, [serde_json::json!(42)]);
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    ///
    /// # Errors
    /// The script's failure as an [`EvalError`], with everything it wrote
    /// before it stopped; [`ErrorKind::InvalidValue`] for an input that
    /// cannot become a Lua global; [`ErrorKind::Cancelled`] once the
    /// session's [`CancelHandle`] is cancelled.
    ///
    /// # Cancel safety
    /// As for [`Session::eval`].
    pub async fn run(&mut self, script: Script) -> Result<EvalOutput, EvalError> {
        let chunk_name = script.chunk_name.as_deref().unwrap_or(&self.chunk_name);
        let cancel = self.store.data().cancel.clone();
        if cancel.is_cancelled() {
            self.poisoned = Some("it was cancelled".to_owned());
            return Err(EvalError::host(
                ErrorKind::Cancelled,
                "the session was cancelled by the host; start a new session".to_owned(),
                chunk_name,
                Stats::default(),
            ));
        }
        if let Some(e) = self.poisoned_error(chunk_name) {
            return Err(e);
        }
        let limits = self.prepared.limits;
        let inputs =
            script::wit_inputs(&script.inputs, limits.max_memory_bytes).map_err(|why| {
                EvalError::host(ErrorKind::InvalidValue, why, chunk_name, Stats::default())
            })?;
        script::check_files(&script, limits.max_memory_bytes).map_err(|why| {
            EvalError::host(ErrorKind::InvalidValue, why, chunk_name, Stats::default())
        })?;
        let started = Instant::now();
        let _ticking = self.prepared.engine.ticking()?;
        arm_call(&mut self.store, &self.prepared, started)?;
        {
            let data = self.store.data_mut();
            data.limiter.refused = false;
            data.capability_calls = 0;
            data.audit.reset();
            data.output.take();
            data.logs.take();
            data.files.begin_eval();
        }
        // If this future is dropped before the call returns, the session
        // stays poisoned.
        self.poisoned = Some("an earlier eval was cancelled mid-run".to_owned());
        let request = types::EvalRequest {
            code: script.code,
            chunk_name: chunk_name.to_owned(),
            inputs,
            args: script.args,
            files: script
                .files
                .into_iter()
                .map(|f| types::File {
                    name: f.name,
                    bytes: f.bytes,
                })
                .collect(),
            stdin: script.stdin,
        };
        let accessor = self.guest.moonbox_sandbox_lua().session();
        let call = accessor.call_eval(&mut self.store, self.handle, &request);
        let outcome = tokio::select! {
            outcome = tokio::time::timeout(outer_timeout(&self.prepared), call) => Some(outcome),
            () = cancel.cancelled() => None,
        };
        let chunk_name = request.chunk_name;
        let data = self.store.data_mut();
        data.deadline = None;
        // Whatever stopped the eval, the output written so far is the host's.
        let output = Output::from(data.output.take());
        let logs = data.logs.take();
        let capability_calls = data.capability_calls;
        // Calls still running when the eval stopped are recorded as cut off.
        let (calls, calls_unrecorded) = data.audit.take();
        let fuel_used = self.prepared.engine.meters_fuel().then(|| {
            limits
                .effective_fuel()
                .saturating_sub(self.store.get_fuel().unwrap_or(0))
        });
        let mut stats = Stats {
            fuel_used,
            wall_time_us: micros(started.elapsed()),
            capability_calls,
            output_bytes: output.len() as u64,
            calls_unrecorded,
            ..Stats::default()
        };
        // A cancel, a timeout or a trap leaves the instance unusable
        // (wasmtime does not re-enter a store after a trap, and a dropped
        // call leaves the guest mid-eval), so the session is poisoned.
        let settled = match outcome {
            Some(outcome) if !cancel.is_cancelled() => {
                settle(outcome, &self.store, &chunk_name, stats, &limits)
            }
            _ => Err(EvalError::host(
                ErrorKind::Cancelled,
                "the host cancelled the eval".to_owned(),
                &chunk_name,
                stats,
            )),
        };
        let result = match settled {
            Err(mut stop) => {
                self.poisoned = Some(format!(
                    "an earlier eval was stopped by the host ({})",
                    stop.kind
                ));
                stop.output = output;
                stop.calls = calls;
                stop.logs = logs;
                // The guest gave no account of its files: the host's copy
                // of what it wrote is the one there is.
                stop.files = self.store.data().files.touched().unwrap_or_default();
                return Err(stop);
            }
            Ok(Ok(success)) => {
                add_guest_stats(&mut stats, &success.stats);
                // Parsed within the Lua heap's limit, as arguments are: the
                // text can stand for a tree many times its size.
                match self.store.data().arguments.parse_list(&success.values) {
                    Ok(values) => Ok(EvalOutput {
                        values,
                        output,
                        exit_code: success.exit_code,
                        stats,
                        calls,
                        logs,
                        files: files_from(success.files),
                    }),
                    Err(e) => {
                        let (kind, message) = match e {
                            ArgumentError::TooLarge { capacity, .. } => (
                                ErrorKind::InvalidValue,
                                format!(
                                    "the returned values would take more than {capacity} bytes of host memory once parsed (max-memory-bytes); return less data"
                                ),
                            ),
                            ArgumentError::Malformed(e) => (
                                ErrorKind::Internal,
                                format!("the guest returned malformed JSON values ({e})"),
                            ),
                        };
                        let mut err = EvalError::host(kind, message, &chunk_name, stats);
                        err.output = output;
                        err.calls = calls;
                        err.logs = logs;
                        err.files = files_from(success.files);
                        Err(err)
                    }
                }
            }
            Ok(Err(failure)) => {
                add_guest_stats(&mut stats, &failure.stats);
                let mut err = lua_error(failure.error, output, stats);
                err.calls = calls;
                err.logs = logs;
                err.files = files_from(failure.files);
                Err(err)
            }
        };
        self.poisoned = None;
        result
    }

    /// Checks `code` against this session, without running it: compiles it
    /// as [`eval`](Session::eval) would, then reads the compiled chunk for
    /// references this session will refuse. The live state counts: a global
    /// an earlier eval defined is not `undefined_global`, a sandboxed name
    /// a script replaced is no longer `sandboxed`. The rules and limits are
    /// in docs/wit.md (`check`).
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let sandbox = moonbox::Sandbox::builder().build()?;
    /// let mut session = sandbox.session(()).await?;
    /// assert_eq!(session.check("return helper()", "tool.lua").await?.len(), 1);
    /// session.eval("function helper() return 1 end").await?;
    /// assert!(session.check("return helper()", "tool.lua").await?.is_empty());
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    ///
    /// # Errors
    /// A [`ErrorKind::Syntax`] error for code that does not parse, or the
    /// limit ([`ErrorKind::StringSize`], [`ErrorKind::MemoryLimit`]) that
    /// refused it; a poisoned session refuses with
    /// [`ErrorKind::SessionPoisoned`]. A host stop (timeout, trap) poisons
    /// the session, as for an eval.
    ///
    /// # Cancel safety
    /// Dropping the future leaves the instance mid-call: the session is then
    /// poisoned.
    pub async fn check(
        &mut self,
        code: impl AsRef<[u8]>,
        chunk_name: &str,
    ) -> Result<Vec<Diagnostic>, EvalError> {
        if let Some(e) = self.poisoned_error(chunk_name) {
            return Err(e);
        }
        let limits = self.prepared.limits;
        let started = Instant::now();
        let _ticking = self.prepared.engine.ticking()?;
        arm_call(&mut self.store, &self.prepared, started)?;
        // Poisoned until the call settles, so a dropped future leaves it so.
        self.poisoned = Some("an earlier check was stopped by the host".to_owned());
        let accessor = self.guest.moonbox_sandbox_lua().session();
        let call = accessor.call_check(&mut self.store, self.handle, code.as_ref(), chunk_name);
        let outcome = tokio::time::timeout(outer_timeout(&self.prepared), call).await;
        self.store.data_mut().deadline = None;
        let stats = Stats {
            wall_time_us: micros(started.elapsed()),
            ..Stats::default()
        };
        let settled = settle(outcome, &self.store, chunk_name, stats, &limits)?;
        self.poisoned = None;
        match settled {
            Ok(diagnostics) => Ok(diagnostics.into_iter().map(Diagnostic::from).collect()),
            Err(error) => Err(lua_error(error, Output::default(), stats)),
        }
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

fn timeout_message(timeout: Duration) -> String {
    format!(
        "the script ran longer than the {} ms timeout (raise the timeout limit, Limits::timeout)",
        timeout.as_millis()
    )
}

/// What to say when fuel runs out: which budget it was, and which limit to
/// raise. Derived fuel follows the instruction limit, so that is the one to
/// raise; explicit fuel is its own limit.
fn fuel_message(limits: &Limits) -> String {
    match limits.fuel {
        None => format!(
            "the script used up its fuel ({} units, derived from max-instructions {}): its instructions did more work in the C library than the margin allows; raise the instruction limit (Limits::max_instructions) or set the fuel limit (Limits::fuel)",
            limits.effective_fuel(),
            limits.max_instructions
        ),
        Some(fuel) => format!(
            "the script used up its fuel ({fuel} units, the host's budget of wasm instructions); raise the fuel limit (Limits::fuel)"
        ),
    }
}

/// Adds what only the guest can measure. Calls and output bytes stay the
/// host's own counts.
fn add_guest_stats(stats: &mut Stats, guest: &types::Stats) {
    stats.instructions = Some(guest.instructions);
    stats.peak_memory_bytes = Some(guest.peak_memory_bytes);
}

/// The files a guest result carries, in the host's type.
fn files_from(files: Vec<types::File>) -> Vec<crate::File> {
    files
        .into_iter()
        .map(|f| crate::File::new(f.name, f.bytes))
        .collect()
}

fn lua_error(e: types::LuaError, output: Output, stats: Stats) -> EvalError {
    let kind = ErrorKind::from(e.kind);
    EvalError {
        kind,
        message: e.message,
        chunk: e.chunk,
        line: e.line,
        traceback: e.traceback,
        output,
        stats,
        calls: Vec::new(),
        logs: Vec::new(),
        files: Vec::new(),
    }
}

/// Gives the store a fresh fuel budget (when its engine meters fuel) and
/// deadline for one call into the guest.
fn arm_call<T>(
    store: &mut Store<HostState<T>>,
    prepared: &Prepared<T>,
    started: Instant,
) -> Result<(), EvalError> {
    let limits = &prepared.limits;
    if prepared.engine.meters_fuel() {
        store
            .set_fuel(limits.effective_fuel())
            .map_err(|e| EvalError::internal(format!("cannot set fuel: {e}")))?;
    }
    // `Limits::validate` bounds the timeout, so this cannot overflow; a
    // deadline that could not be represented would never fire.
    let data = store.data_mut();
    data.deadline = started.checked_add(limits.timeout);
    if let Some(clock) = &mut data.host_time {
        clock.spent = Duration::ZERO;
    }
    Ok(())
}

/// The async timeout around one call into the guest. The epoch deadline
/// stops the guest's own work; this one stops a call that awaits. In
/// deterministic mode the host's time in capability calls does not count
/// against the script's deadline and has a budget of one timeout of its
/// own (`HostTime`), so a call into the guest may take up to two
/// timeouts, and this one, past both, only backs them up.
fn outer_timeout<T>(prepared: &Prepared<T>) -> Duration {
    let timeout = prepared.limits.timeout;
    if prepared.determinism.is_some() {
        timeout
            .saturating_mul(2)
            .saturating_add(Duration::from_secs(1))
    } else {
        timeout
    }
}

/// Settles one call into the guest: the tokio timeout firing, or a wasmtime
/// error (a trap), becomes the error for that stop.
fn settle<T, R>(
    outcome: Result<wasmtime::Result<R>, tokio::time::error::Elapsed>,
    store: &Store<HostState<T>>,
    chunk: &str,
    stats: Stats,
    limits: &Limits,
) -> Result<R, EvalError> {
    match outcome {
        Err(_) => Err(EvalError::host(
            ErrorKind::Timeout,
            timeout_message(limits.timeout),
            chunk,
            stats,
        )),
        Ok(Err(e)) => Err(trap_error(&e, store, chunk, stats, limits)),
        Ok(Ok(value)) => Ok(value),
    }
}

/// Maps a wasmtime error (a trap, usually) to the kind the outer wall means.
fn trap_error<T>(
    e: &wasmtime::Error,
    store: &Store<HostState<T>>,
    chunk: &str,
    stats: Stats,
    limits: &Limits,
) -> EvalError {
    if let Some(stop) = e.downcast_ref::<HostTimeout>() {
        return EvalError::host(ErrorKind::Timeout, stop.to_string(), chunk, stats);
    }
    let (kind, message) = match e.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => (ErrorKind::FuelExhausted, fuel_message(limits)),
        Some(Trap::Interrupt) => (ErrorKind::Timeout, timeout_message(limits.timeout)),
        Some(Trap::StackOverflow) => (
            ErrorKind::CallDepth,
            "the script exhausted the wasm stack (recursion through C functions is too deep)"
                .to_owned(),
        ),
        _ if store.data().limiter.refused => (
            ErrorKind::MemoryLimit,
            "the sandbox ran out of linear memory (the max_wasm_memory_bytes limit)".to_owned(),
        ),
        Some(trap) => (ErrorKind::Internal, format!("the guest trapped: {trap}")),
        None => (ErrorKind::Internal, format!("the sandbox failed: {e}")),
    };
    EvalError::host(kind, message, chunk, stats)
}
