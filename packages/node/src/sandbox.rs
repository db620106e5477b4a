//! Sandboxes, sessions, evals and cancellation, as napi classes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use moonbox::{
    CancelHandle, Determinism, Engine, Error, EvalError, EvalOutput, Limits, LogEvent, LogSink,
    OutputSink, Report, Sandbox, Script, Session,
};
use napi::bindgen_prelude::{Buffer, Either, PromiseRaw};
use napi::threadsafe_function::{
    ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue,
};
use napi::{Env, Status};
use napi_derive::napi;
use serde::Deserialize;
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use crate::capability::{Drain, Mailbox, js_capability};

/// A capability as the package's JavaScript describes it.
#[napi(object, object_to_js = false)]
pub struct CapabilityOptions {
    /// The dotted name (`records.get`); the crate checks it.
    pub name: String,
    /// The fewest arguments.
    pub min_args: u32,
    /// The most arguments (the crate's bound, `MAX_CAPABILITY_ARGS`).
    pub max_args: u32,
    /// The one-line description.
    pub doc: String,
    /// Calls per eval, when the capability sets its own budget.
    pub call_budget: Option<u32>,
}

/// A module `require(name)` loads.
#[napi(object, object_to_js = false)]
pub struct ModuleOptions {
    /// The name `require` takes.
    pub name: String,
    /// Lua source, as text or bytes.
    pub source: Either<String, Buffer>,
}

/// Everything a sandbox is built from.
#[napi(object, object_to_js = false)]
pub struct SandboxOptions {
    /// JSON text of [`Config`]: limits (the crate's names), `allow`,
    /// `deterministic`, `call_budget`, `audit_args`.
    pub config: String,
    /// The modules.
    pub modules: Vec<ModuleOptions>,
    /// The capabilities; the drain answers a call with the function at
    /// the capability's index in this list.
    pub capabilities: Vec<CapabilityOptions>,
    /// Runs waiting capability calls (see [`crate::capability`]).
    pub drain: Drain,
}

/// The JSON part of [`SandboxOptions`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default)]
    limits: Map<String, Value>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    deterministic: Option<Determinism>,
    #[serde(default)]
    call_budget: Option<u32>,
    #[serde(default)]
    audit_args: bool,
}

/// Receives the script's output (a `Buffer`) and log events (JSON text)
/// as they happen, in order; an empty string marks the end of an eval.
type SinkFn = ThreadsafeFunction<
    Either<Buffer, String>,
    UnknownReturnValue,
    Either<Buffer, String>,
    Status,
    false,
>;

/// A file mounted read-only for one eval (and its session after it).
#[napi(object, object_to_js = false)]
pub struct FileOptions {
    /// Its name in the session's namespace (`data/in.csv`).
    pub name: String,
    /// Its contents: text (as UTF-8) or bytes.
    pub contents: Either<String, Buffer>,
}

/// One eval's options.
#[napi(object, object_to_js = false)]
pub struct EvalOptions {
    /// JSON text of an object whose members become globals.
    pub inputs: Option<String>,
    /// The chunk's name in messages.
    pub chunk_name: Option<String>,
    /// The script's arguments: `arg` and the chunk's `...`.
    pub args: Option<Vec<String>>,
    /// Files mounted read-only before the chunk runs.
    pub files: Option<Vec<FileOptions>>,
    /// What `io.read` and `io.stdin` read.
    pub stdin: Option<Either<String, Buffer>>,
    /// Where output and log events go while the script runs.
    pub sink: Option<SinkFn>,
}

/// A file the eval created or wrote that exists at its end.
#[napi(object)]
pub struct WrittenFile {
    /// Its name, normalised (`out/result.csv`).
    pub name: String,
    /// Its contents.
    pub bytes: Buffer,
}

/// One eval's outcome: the crate's report as JSON text (as `moonbox run
/// --json` prints it), and its values and log events as their own JSON
/// text, so that JavaScript reads them exactly without a second parser.
#[napi(object)]
pub struct EvalResult {
    /// `Report::to_json()` as text.
    pub report: String,
    /// The report's `values`, as JSON array text.
    pub values: String,
    /// The report's `logs`, as JSON array text.
    pub logs: String,
    /// The files the eval wrote, sorted by name, with their exact bytes
    /// (the report holds them as text or base64).
    pub files: Vec<WrittenFile>,
}

/// How a failure reaches JavaScript.
enum Thrown {
    /// A value of the wrong type: a `TypeError`.
    Type(String),
    /// A limit out of its bounds (`Limits::validate`): a `RangeError`.
    Range(String),
    /// Anything else the crate refused: an `Error`.
    Other(String),
}

impl Thrown {
    /// Throws it as its JavaScript class; the returned error tells napi
    /// that an exception is already pending.
    fn throw(self, env: &Env) -> napi::Error {
        let (thrown, message) = match self {
            Thrown::Type(m) => (env.throw_type_error(&m, None), m),
            Thrown::Range(m) => (env.throw_range_error(&m, None), m),
            Thrown::Other(m) => (env.throw_error(&m, None), m),
        };
        match thrown {
            Ok(()) => napi::Error::new(Status::PendingException, message),
            Err(e) => e,
        }
    }
}

/// The limits from their JSON object, with a message that names the
/// limit whose value has the wrong type (a `TypeError`), then checked by
/// the crate's `Limits::validate` (out of bounds: a `RangeError`).
fn limits(members: Map<String, Value>) -> Result<Limits, Thrown> {
    let object = Value::Object(members);
    let limits: Limits = serde_json::from_value(object.clone()).map_err(|whole| {
        for (name, value) in object.as_object().into_iter().flatten() {
            let one = Value::Object(Map::from_iter([(name.clone(), value.clone())]));
            if let Err(e) = serde_json::from_value::<Limits>(one) {
                return Thrown::Type(format!("limit {name}: {e}"));
            }
        }
        Thrown::Type(format!("limits: {whole}"))
    })?;
    limits
        .validate()
        .map_err(|e| Thrown::Range(e.to_string()))?;
    Ok(limits)
}

/// The process's engines, without fuel and with, built on first use with
/// the conventional compiled-code cache (as the `moonbox` command builds
/// its engine), so that only the first process on a machine compiles the
/// guest.
static ENGINES: [Mutex<Option<Engine>>; 2] = [Mutex::new(None), Mutex::new(None)];

/// Why the default cache directory could not be used, until JavaScript
/// takes it (see [`take_engine_warning`]); taken once per process.
static WARNING: Mutex<Option<String>> = Mutex::new(None);

/// Whether [`WARNING`] was ever set: the warning is given once.
static WARNED: AtomicBool = AtomicBool::new(false);

/// The engine for sandboxes that meter fuel or not. The first time one
/// is built without the default cache directory (unusable), the reason is
/// kept for [`take_engine_warning`]. A failure is the crate's sentence.
fn engine(fuel: bool) -> Result<Engine, String> {
    let mut slot = ENGINES[usize::from(fuel)]
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(engine) = &*slot {
        return Ok(engine.clone());
    }
    let (engine, warning) = Engine::builder()
        .fuel(fuel)
        .build_with_default_cache()
        .map_err(|e| e.to_string())?;
    *slot = Some(engine.clone());
    if let Some(e) = warning
        && !WARNED.swap(true, Ordering::SeqCst)
    {
        let mut text = e.to_string();
        if let Some(source) = std::error::Error::source(&e) {
            text = format!("{text}: {source}");
        }
        *WARNING.lock().unwrap_or_else(PoisonError::into_inner) = Some(format!(
            "{text}; running without the cache (set MOONBOX_CACHE_DIR to choose a directory)"
        ));
    }
    Ok(engine)
}

/// Why the compiled-code cache could not be used, once: the package's
/// JavaScript gives it to `process.emitWarning` after building a sandbox.
#[napi]
pub fn take_engine_warning() -> Option<String> {
    WARNING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
}

/// A sandbox: the crate's, built once; every eval and session shares it.
#[napi]
pub struct NativeSandbox {
    sandbox: Sandbox,
    mailbox: Arc<Mailbox>,
}

#[napi]
impl NativeSandbox {
    /// Builds the sandbox, as `Sandbox::builder().build()` does: the
    /// crate validates everything and starts one session to prove it
    /// (the first sandbox of the process also loads the engine, from the
    /// compiled-code cache when it can: see [`engine`]).
    #[napi(constructor)]
    pub fn new(env: Env, options: SandboxOptions) -> napi::Result<Self> {
        Self::build(options).map_err(|t| t.throw(&env))
    }

    fn build(options: SandboxOptions) -> Result<Self, Thrown> {
        let config: Config = serde_json::from_str(&options.config)
            .map_err(|e| Thrown::Type(format!("sandbox options: {e}")))?;
        let limits = limits(config.limits)?;
        // Deterministic mode and an explicit fuel budget need an engine
        // that meters fuel (the crate refuses one that does not).
        let fuel = config.deterministic.is_some() || limits.fuel.is_some();
        let engine = engine(fuel).map_err(Thrown::Other)?;
        let mut builder = Sandbox::builder().engine(&engine).limits(limits);
        for name in config.allow {
            builder = builder.allow(name);
        }
        for module in options.modules {
            let source = match module.source {
                Either::A(text) => text.into_bytes(),
                Either::B(bytes) => bytes.to_vec(),
            };
            builder = builder.module(module.name, source);
        }
        let mailbox = Arc::new(Mailbox::new(options.drain));
        for (index, spec) in (0..).zip(options.capabilities) {
            let mut capability = js_capability(
                spec.name,
                index,
                spec.min_args,
                spec.max_args,
                mailbox.clone(),
            )
            .with_description(spec.doc);
            if let Some(calls) = spec.call_budget {
                capability = capability.call_budget(calls);
            }
            builder = builder.capability(capability);
        }
        if let Some(determinism) = config.deterministic {
            builder = builder.deterministic(determinism);
        }
        if let Some(calls) = config.call_budget {
            builder = builder.call_budget(calls);
        }
        builder = builder.audit_args(config.audit_args);
        let sandbox = builder.build().map_err(|e| Thrown::Other(e.to_string()))?;
        Ok(NativeSandbox { sandbox, mailbox })
    }

    /// The limits every eval runs under, as the crate's JSON.
    #[napi(getter)]
    pub fn limits(&self) -> String {
        serde_json::to_string(self.sandbox.limits()).unwrap_or_default()
    }

    /// Runs `code` in a fresh instance, discarded after. Resolves to the
    /// report whatever the script did; rejects only when the options are
    /// unusable.
    #[napi(ts_return_type = "Promise<EvalResult>")]
    pub fn eval<'env>(
        &self,
        env: &'env Env,
        code: Either<String, Buffer>,
        options: EvalOptions,
        cancel: Option<&Canceller>,
    ) -> napi::Result<PromiseRaw<'env, EvalResult>> {
        let (script, sink) = script(code, options).map_err(|t| t.throw(env))?;
        let sandbox = self.sandbox.clone();
        let mailbox = self.mailbox.clone();
        let slot = cancel.map(|c| c.slot.clone());
        env.spawn_future(async move {
            let _running = mailbox.running();
            let mut session = match sandbox.session(()).await {
                Ok(session) => session,
                // A session that could not start is the eval's failure.
                Err(Error::Session(stop)) => return Ok(result(&Err(*stop))),
                Err(other) => return Err(napi::Error::from_reason(other.to_string())),
            };
            if let Some(slot) = slot {
                slot.attach(session.cancel_handle());
            }
            Ok(run(&mut session, script, sink).await)
        })
    }

    /// Starts a session: one Lua state whose globals persist.
    #[napi(ts_return_type = "Promise<NativeSession>")]
    pub fn session<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, NativeSession>> {
        let sandbox = self.sandbox.clone();
        let mailbox = self.mailbox.clone();
        env.spawn_future(async move {
            let session = sandbox
                .session(())
                .await
                .map_err(|e| napi::Error::from_reason(e.to_string()))?;
            Ok(NativeSession::new(session, mailbox))
        })
    }
}

/// The crate's script from the eval's code and options.
fn script(
    code: Either<String, Buffer>,
    options: EvalOptions,
) -> Result<(Script, Option<Arc<SinkFn>>), Thrown> {
    let mut script = Script::new(bytes(code));
    if let Some(text) = options.inputs {
        let inputs: Map<String, Value> = serde_json::from_str(&text).map_err(|e| {
            Thrown::Type(format!("inputs must be an object of JSON-able values: {e}"))
        })?;
        script = script.inputs(inputs);
    }
    if let Some(name) = options.chunk_name {
        script = script.chunk_name(name);
    }
    // The crate refuses what is past its bounds (too many, a bad name, too
    // large) with an `invalid_value` report.
    if let Some(args) = options.args {
        script = script.args(args);
    }
    for file in options.files.into_iter().flatten() {
        script = script.file(file.name, bytes(file.contents));
    }
    if let Some(stdin) = options.stdin {
        script = script.stdin(bytes(stdin));
    }
    Ok((script, options.sink.map(Arc::new)))
}

/// Text as its UTF-8 bytes, or bytes as they are.
fn bytes(value: Either<String, Buffer>) -> Vec<u8> {
    match value {
        Either::A(text) => text.into_bytes(),
        Either::B(bytes) => bytes.to_vec(),
    }
}

/// The output and log sinks that forward to `sink`.
fn sinks(sink: &Arc<SinkFn>) -> (OutputSink, LogSink) {
    let out = sink.clone();
    let output: OutputSink = Arc::new(move |bytes: &[u8]| {
        out.call(
            Either::A(Buffer::from(bytes.to_vec())),
            ThreadsafeFunctionCallMode::NonBlocking,
        );
    });
    let log = sink.clone();
    let logs: LogSink = Arc::new(move |event: &LogEvent| {
        let text = serde_json::to_value(event)
            .map(|v| v.to_string())
            .unwrap_or_default();
        log.call(Either::B(text), ThreadsafeFunctionCallMode::NonBlocking);
    });
    (output, logs)
}

/// Runs `script` on `session` with the sink, if any, forwarding; waits
/// until JavaScript has received everything forwarded before answering.
async fn run(session: &mut Session<()>, script: Script, sink: Option<Arc<SinkFn>>) -> EvalResult {
    if let Some(sink) = &sink {
        let (output, logs) = sinks(sink);
        session.set_output_sink(Some(output));
        session.set_log_sink(Some(logs));
    }
    let outcome = session.run(script).await;
    if let Some(sink) = sink {
        session.set_output_sink(None);
        session.set_log_sink(None);
        // The calls queued before this one run before it.
        let _ = sink.call_async(Either::B(String::new())).await;
    }
    result(&outcome)
}

/// The report of an outcome, as [`EvalResult`]'s three texts, and the
/// files the eval wrote.
fn result(outcome: &Result<EvalOutput, EvalError>) -> EvalResult {
    let report = Report::from(outcome).to_json();
    let files = match outcome {
        Ok(out) => &out.files,
        Err(e) => &e.files,
    };
    EvalResult {
        values: report["values"].to_string(),
        logs: report["logs"].to_string(),
        report: report.to_string(),
        files: files
            .iter()
            .map(|f| WrittenFile {
                name: f.name.clone(),
                bytes: Buffer::from(f.bytes.clone()),
            })
            .collect(),
    }
}

/// A session: one instance whose Lua globals persist across evals, which
/// run one at a time in the order they were asked for.
#[napi]
pub struct NativeSession {
    session: Arc<tokio::sync::Mutex<Option<Session<()>>>>,
    mailbox: Arc<Mailbox>,
    cancel: CancelHandle,
    poisoned: Arc<AtomicBool>,
    /// The end of the queue: resolves (its sender dropped) once the last
    /// eval or close asked for has finished. Each new one waits for it and
    /// becomes the new end, in the order JavaScript called.
    tail: Mutex<oneshot::Receiver<()>>,
}

impl NativeSession {
    fn new(session: Session<()>, mailbox: Arc<Mailbox>) -> Self {
        let (_done, tail) = oneshot::channel();
        NativeSession {
            mailbox,
            cancel: session.cancel_handle(),
            poisoned: Arc::new(AtomicBool::new(false)),
            session: Arc::new(tokio::sync::Mutex::new(Some(session))),
            tail: Mutex::new(tail),
        }
    }

    /// Joins the queue: the turn before this one, and the sender that
    /// ends this one when dropped.
    fn queue(&self) -> (oneshot::Receiver<()>, oneshot::Sender<()>) {
        let (done, next) = oneshot::channel();
        let mut tail = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        (std::mem::replace(&mut *tail, next), done)
    }
}

#[napi]
impl NativeSession {
    /// Runs `code` with the session's globals.
    #[napi(ts_return_type = "Promise<EvalResult>")]
    pub fn eval<'env>(
        &self,
        env: &'env Env,
        code: Either<String, Buffer>,
        options: EvalOptions,
    ) -> napi::Result<PromiseRaw<'env, EvalResult>> {
        let (script, sink) = script(code, options).map_err(|t| t.throw(env))?;
        let session = self.session.clone();
        let mailbox = self.mailbox.clone();
        let poisoned = self.poisoned.clone();
        let (turn, _done) = self.queue();
        env.spawn_future(async move {
            let _done = _done;
            let _ = turn.await;
            let _running = mailbox.running();
            let mut guard = session.lock().await;
            let Some(session) = guard.as_mut() else {
                return Err(napi::Error::from_reason("the session is closed"));
            };
            let result = run(session, script, sink).await;
            poisoned.store(session.is_poisoned(), Ordering::SeqCst);
            Ok(result)
        })
    }

    /// Whether an earlier eval was stopped by the host or cancelled, so
    /// that later evals fail (as of the last eval that finished).
    #[napi(getter)]
    pub fn poisoned(&self) -> bool {
        self.poisoned.load(Ordering::SeqCst) || self.cancel.is_cancelled()
    }

    /// Cancels the running eval, and every later one (the crate's
    /// `CancelHandle::cancel`).
    #[napi]
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// Drops the session once the evals already asked for have run.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let session = self.session.clone();
        let (turn, _done) = self.queue();
        env.spawn_future(async move {
            let _done = _done;
            let _ = turn.await;
            session.lock().await.take();
            Ok(())
        })
    }
}

/// Cancels one one-shot eval, whether it has started or not.
#[napi]
pub struct Canceller {
    slot: Arc<CancelSlot>,
}

/// Whether a cancel was asked for, and the eval's handle once it has one.
#[derive(Default)]
struct CancelSlot {
    state: Mutex<(bool, Option<CancelHandle>)>,
}

impl CancelSlot {
    /// Gives the slot its eval's handle; cancels at once if asked before.
    fn attach(&self, handle: CancelHandle) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.0 {
            handle.cancel();
        }
        state.1 = Some(handle);
    }
}

impl Default for Canceller {
    fn default() -> Self {
        Self::new()
    }
}

#[napi]
impl Canceller {
    /// A canceller for an eval not yet started.
    #[napi(constructor)]
    pub fn new() -> Self {
        Canceller {
            slot: Arc::new(CancelSlot::default()),
        }
    }

    /// Cancels the eval: the guest stops and the report has kind
    /// `cancelled`.
    #[napi]
    pub fn cancel(&self) {
        let mut state = self
            .slot
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        state.0 = true;
        if let Some(handle) = &state.1 {
            handle.cancel();
        }
    }
}
