//! Sandboxes and sessions of the crate, their limits and engines.

use std::sync::{Arc, Mutex, MutexGuard};

use moonbox::tool::{self, SchemaFormat};
use moonbox::{
    CancelHandle, Determinism, Engine, Error, ErrorKind, EvalError, EvalOutput, Limits, LogSink,
    OutputSink, Sandbox, SandboxBuilder, Script, Session,
};
use pyo3::exceptions::{PyRuntimeError, PyRuntimeWarning, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::capability::{CapabilitySpec, Ctx, capability, set_loop};
use crate::convert::{from_py, to_py};
use crate::report::NativeReport;
use crate::runtime::block_on;
use crate::sinks::{log_sink, output_sink};

/// Every error kind the crate reports, in order, with whether it means a
/// limit stopped the script.
#[pyfunction]
pub(crate) fn error_kinds() -> Vec<(&'static str, bool)> {
    ErrorKind::ALL
        .iter()
        .map(|k| (k.as_str(), k.is_limit()))
        .collect()
}

/// The crate's default limits, by the crate's names (`timeout` in
/// milliseconds).
#[pyfunction]
pub(crate) fn default_limits(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    limits_to_py(py, &Limits::default())
}

/// The limits checked by the crate's rules (a `ValueError` naming the
/// first one out of bounds), with its derived values filled in: `fuel` and
/// `max_wasm_memory_bytes` as they apply when left unset (`None`).
#[pyfunction]
pub(crate) fn effective_limits<'py>(
    py: Python<'py>,
    limits: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut limits = limits_from_py(limits)?;
    limits
        .validate()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    limits.fuel = Some(limits.effective_fuel());
    limits.max_wasm_memory_bytes = Some(limits.effective_max_wasm_memory_bytes());
    limits_to_py(py, &limits)
}

fn limits_to_py<'py>(py: Python<'py>, limits: &Limits) -> PyResult<Bound<'py, PyAny>> {
    let value = serde_json::to_value(limits)
        .map_err(|e| PyRuntimeError::new_err(format!("limits: {e}")))?;
    to_py(py, &value)
}

fn limits_from_py(limits: &Bound<'_, PyAny>) -> PyResult<Limits> {
    let value = from_py(limits).map_err(|e| PyValueError::new_err(format!("limits: {e}")))?;
    serde_json::from_value(value).map_err(|e| PyValueError::new_err(format!("limits: {e}")))
}

/// A `run_lua` call's `inputs` by the crate's rule (`tool::inputs`): an
/// object, the JSON text of one, or nothing; a `ValueError` with the
/// crate's sentence otherwise.
#[pyfunction]
pub(crate) fn tool_inputs<'py>(
    py: Python<'py>,
    inputs: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let value = from_py(inputs).map_err(|e| PyValueError::new_err(format!("`inputs`: {e}")))?;
    let inputs = tool::inputs(Some(value)).map_err(PyValueError::new_err)?;
    to_py(py, &serde_json::Value::Object(inputs))
}

/// Refuses a `run_lua` argument the crate's tool does not take
/// (`tool::unknown_argument` over `tool::ARGUMENTS`): a `ValueError` with
/// its sentence.
#[pyfunction]
pub(crate) fn tool_check_arguments(names: Vec<String>) -> PyResult<()> {
    tool::unknown_argument(
        tool::NAME,
        &tool::ARGUMENTS,
        names.iter().map(String::as_str),
    )
    .map_err(PyValueError::new_err)
}

/// What `tool_extras` gives Python: `args`, the files by name, `stdin`.
type ToolExtras<'py> = (
    Option<Vec<String>>,
    Bound<'py, PyDict>,
    Option<Bound<'py, pyo3::types::PyBytes>>,
);

/// A `run_lua` call's `args`, `files` and `stdin` by the crate's rule
/// (`tool::extras`, which the tool's schema describes): the arguments (or
/// `None`), a dict of file name to bytes, and stdin's bytes (or `None`); a
/// `ValueError` with the crate's sentence otherwise.
#[pyfunction]
pub(crate) fn tool_extras<'py>(
    py: Python<'py>,
    args: &Bound<'py, PyAny>,
    files: &Bound<'py, PyAny>,
    stdin: &Bound<'py, PyAny>,
) -> PyResult<ToolExtras<'py>> {
    let value = |name: &str, v: &Bound<'py, PyAny>| {
        from_py(v).map_err(|e| PyValueError::new_err(format!("`{name}`: {e}")))
    };
    let extras = tool::extras(
        Some(value("args", args)?),
        Some(value("files", files)?),
        Some(value("stdin", stdin)?),
    )
    .map_err(PyValueError::new_err)?;
    let named = PyDict::new(py);
    for file in &extras.files {
        named.set_item(&file.name, pyo3::types::PyBytes::new(py, &file.bytes))?;
    }
    let stdin = extras
        .stdin
        .as_deref()
        .map(|bytes| pyo3::types::PyBytes::new(py, bytes));
    Ok((extras.args, named, stdin))
}

/// The process's engines, without and with fuel metering, each built on
/// first use with the compiled-code cache in the user's cache directory
/// (as the `moonbox` command keeps it).
static ENGINES: [Mutex<Option<Engine>>; 2] = [Mutex::new(None), Mutex::new(None)];

/// The engine for sandboxes that meter fuel or not, and, the first time,
/// why the default cache directory could not be used (for a warning).
fn engine(fuel: bool) -> PyResult<(Engine, Option<String>)> {
    let mut slot = ENGINES[usize::from(fuel)]
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(engine) = &*slot {
        return Ok((engine.clone(), None));
    }
    let (engine, warning) = Engine::builder()
        .fuel(fuel)
        .build_with_default_cache()
        .map_err(config_error)?;
    *slot = Some(engine.clone());
    let warning = warning.map(|e| {
        let mut text = e.to_string();
        if let Some(source) = std::error::Error::source(&e) {
            text = format!("{text}: {source}");
        }
        format!("{text}; running without the cache (set MOONBOX_CACHE_DIR to choose a directory)")
    });
    Ok((engine, warning))
}

/// A Python error for a sandbox that cannot be built: the crate's sentence.
fn config_error(e: Error) -> PyErr {
    match e {
        Error::Config(e) => PyValueError::new_err(e.to_string()),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// An eval's arguments, mounted files and standard input, as the Python
/// layer passes them (their types already checked there); the crate
/// refuses what is past its bounds with an `invalid_value` report.
/// The tuple `(args, files, stdin)`: `None` or a list of `str`; a list of
/// `(name, bytes)`; `bytes`.
#[derive(FromPyObject)]
pub(crate) struct Extra(Option<Vec<String>>, Vec<(String, Vec<u8>)>, Vec<u8>);

/// The script of one eval: its code, inputs, chunk name, arguments, files
/// and standard input.
fn script(
    code: Vec<u8>,
    inputs: Option<&Bound<'_, PyAny>>,
    chunk_name: String,
    extra: Option<Extra>,
) -> PyResult<Script> {
    let mut script = Script::new(code).chunk_name(chunk_name);
    if let Some(Extra(args, files, stdin)) = extra {
        if let Some(args) = args {
            script = script.args(args);
        }
        for (name, bytes) in files {
            script = script.file(name, bytes);
        }
        script = script.stdin(stdin);
    }
    if let Some(inputs) = inputs.filter(|i| !i.is_none()) {
        let Ok(inputs) = inputs.cast::<PyDict>() else {
            return Err(PyValueError::new_err(
                "inputs must be a dict of name to JSON-able value",
            ));
        };
        for (name, value) in inputs.iter() {
            let name: String = name
                .extract()
                .map_err(|_| PyValueError::new_err("an input's name must be a str"))?;
            let value =
                from_py(&value).map_err(|e| PyValueError::new_err(format!("input {name}: {e}")))?;
            script = script.input(name, value);
        }
    }
    Ok(script)
}

/// Cancels an eval from another thread or task: the guest stops at its next
/// check and the report has kind `cancelled`.
#[pyclass(frozen, module = "moonbox._native")]
#[derive(Default)]
pub(crate) struct CancelToken {
    state: Mutex<(bool, Option<CancelHandle>)>,
}

impl CancelToken {
    fn state(&self) -> MutexGuard<'_, (bool, Option<CancelHandle>)> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ties the token to the session an eval runs in.
    fn attach(&self, handle: CancelHandle) {
        let mut state = self.state();
        if state.0 {
            handle.cancel();
        }
        state.1 = Some(handle);
    }
}

#[pymethods]
impl CancelToken {
    #[new]
    fn new() -> Self {
        CancelToken::default()
    }

    /// Cancels the eval the token was given to (or, if it has not started,
    /// makes it stop as it starts).
    fn cancel(&self) {
        let mut state = self.state();
        state.0 = true;
        if let Some(handle) = &state.1 {
            handle.cancel();
        }
    }

    /// Whether `cancel` was called.
    #[getter]
    fn cancelled(&self) -> bool {
        self.state().0
    }
}

/// A prepared sandbox of the crate: limits, capabilities, modules, allowed
/// names. Shared between threads; each eval or session gets its own wasm
/// instance.
#[pyclass(frozen, module = "moonbox._native")]
pub(crate) struct NativeSandbox {
    sandbox: Sandbox<Ctx>,
}

#[pymethods]
impl NativeSandbox {
    /// Builds the sandbox (compiling the guest once per process, or loading
    /// it from the compiled-code cache) and starts one session to prove the
    /// configuration. A configuration the crate refuses is a `ValueError`
    /// with the crate's sentence.
    #[new]
    #[pyo3(signature = (limits, capabilities, allow, modules, deterministic))]
    fn new(
        py: Python<'_>,
        limits: &Bound<'_, PyAny>,
        capabilities: Vec<CapabilitySpec>,
        allow: Vec<String>,
        modules: Vec<(String, Vec<u8>)>,
        deterministic: Option<(i64, i64)>,
    ) -> PyResult<Self> {
        let limits = limits_from_py(limits)?;
        let fuel = deterministic.is_some() || limits.fuel.is_some();
        let (engine, warning) = py.detach(|| engine(fuel))?;
        if let Some(warning) = warning {
            let text = std::ffi::CString::new(warning.replace('\0', " "))
                .unwrap_or_else(|_| c"the compiled-code cache cannot be used".to_owned());
            PyErr::warn(py, &py.get_type::<PyRuntimeWarning>(), &text, 1)?;
        }
        let mut builder = SandboxBuilder::<Ctx>::new().engine(&engine).limits(limits);
        for name in allow {
            builder = builder.allow(name);
        }
        for (name, source) in modules {
            builder = builder.module(name, source);
        }
        for spec in capabilities {
            builder = builder.capability(capability(spec));
        }
        if let Some((clock, seed)) = deterministic {
            builder = builder.deterministic(Determinism { clock, seed });
        }
        let sandbox = py.detach(|| builder.build().map_err(config_error))?;
        Ok(NativeSandbox { sandbox })
    }

    /// The limits in force, with derived values filled in.
    fn limits<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut limits = *self.sandbox.limits();
        limits.fuel = Some(limits.effective_fuel());
        limits.max_wasm_memory_bytes = Some(limits.effective_max_wasm_memory_bytes());
        limits_to_py(py, &limits)
    }

    /// Runs `code` in a fresh session, with the GIL released while it runs.
    #[pyo3(signature = (code, inputs, chunk_name, on_output=None, on_log=None, cancel=None, event_loop=None, extra=None))]
    #[expect(
        clippy::too_many_arguments,
        reason = "the Python layer's keyword arguments, one for one"
    )]
    fn eval(
        &self,
        py: Python<'_>,
        code: Vec<u8>,
        inputs: Option<&Bound<'_, PyAny>>,
        chunk_name: String,
        on_output: Option<Py<PyAny>>,
        on_log: Option<Py<PyAny>>,
        cancel: Option<Py<CancelToken>>,
        event_loop: Option<Py<PyAny>>,
        extra: Option<Extra>,
    ) -> PyResult<NativeReport> {
        let script = script(code, inputs, chunk_name, extra)?;
        let (output, log) = (output_sink(on_output), log_sink(on_log));
        let sandbox = &self.sandbox;
        let ctx = Ctx {
            event_loop: Arc::new(Mutex::new(event_loop)),
        };
        let outcome = py.detach(|| {
            block_on(async {
                let mut session = match sandbox.session(ctx).await {
                    Ok(session) => session,
                    // A start the guest refused (a limit) is the eval's
                    // report, as the crate's own fresh evals give it.
                    Err(e) => match e.eval_error() {
                        Some(err) => return Ok(Err::<_, EvalError>(err.clone())),
                        None => return Err(start_error(e)),
                    },
                };
                if let Some(token) = &cancel {
                    token.get().attach(session.cancel_handle());
                }
                Ok(run(&mut session, script, output, log).await)
            })
        })??;
        Ok(NativeReport::from(&outcome))
    }

    /// A session: globals persist from one eval to the next.
    fn session(&self, py: Python<'_>) -> PyResult<NativeSession> {
        let sandbox = &self.sandbox;
        let ctx = Ctx::default();
        let event_loop = ctx.event_loop.clone();
        let session = py
            .detach(|| block_on(sandbox.session(ctx)))?
            .map_err(start_error)?;
        Ok(NativeSession {
            cancel: session.cancel_handle(),
            session: Mutex::new(Some(session)),
            event_loop,
        })
    }

    /// The `run_lua` tool's description: limits, capabilities, modules and
    /// allowed names, for a model.
    fn tool_description(&self) -> String {
        tool::description(&self.sandbox)
    }

    /// The `run_lua` tool definition in `format`: `anthropic`, `openai`,
    /// `openai-responses` or `mcp`.
    fn tool_definition<'py>(&self, py: Python<'py>, format: &str) -> PyResult<Bound<'py, PyAny>> {
        let format = match format {
            "anthropic" => SchemaFormat::Anthropic,
            "openai" => SchemaFormat::OpenAi,
            "openai-responses" => SchemaFormat::OpenAiResponses,
            "mcp" => SchemaFormat::Mcp,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown tool format {other:?}; the formats are anthropic, openai, openai-responses, mcp"
                )));
            }
        };
        to_py(py, &tool::definition(&self.sandbox, format))
    }
}

/// Runs `script` with the sinks of this eval, which a session holds for it
/// alone: they are removed once it ends.
async fn run(
    session: &mut Session<Ctx>,
    script: Script,
    output: Option<OutputSink>,
    log: Option<LogSink>,
) -> Result<EvalOutput, EvalError> {
    session.set_output_sink(output);
    session.set_log_sink(log);
    let outcome = session.run(script).await;
    session.set_output_sink(None);
    session.set_log_sink(None);
    outcome
}

/// An error starting a session: the eval's report when the crate has one
/// (a start that hit a limit), else a Python error.
fn start_error(e: Error) -> PyErr {
    match e.eval_error() {
        Some(err) => PyRuntimeError::new_err(err.message.clone()),
        None => config_error(e),
    }
}

/// A session of the crate: one wasm instance whose globals persist.
#[pyclass(frozen, module = "moonbox._native")]
pub(crate) struct NativeSession {
    session: Mutex<Option<Session<Ctx>>>,
    cancel: CancelHandle,
    /// The session context's event loop slot, set for each eval.
    event_loop: Arc<Mutex<Option<Py<PyAny>>>>,
}

impl NativeSession {
    fn lock(&self) -> MutexGuard<'_, Option<Session<Ctx>>> {
        self.session.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[pymethods]
impl NativeSession {
    /// Runs `code` with the session's globals, with the GIL released while
    /// it runs. Evals of one session run one at a time.
    #[pyo3(signature = (code, inputs, chunk_name, on_output=None, on_log=None, event_loop=None, extra=None))]
    #[expect(
        clippy::too_many_arguments,
        reason = "the Python layer's keyword arguments, one for one"
    )]
    fn eval(
        &self,
        py: Python<'_>,
        code: Vec<u8>,
        inputs: Option<&Bound<'_, PyAny>>,
        chunk_name: String,
        on_output: Option<Py<PyAny>>,
        on_log: Option<Py<PyAny>>,
        event_loop: Option<Py<PyAny>>,
        extra: Option<Extra>,
    ) -> PyResult<NativeReport> {
        let script = script(code, inputs, chunk_name, extra)?;
        let (output, log) = (output_sink(on_output), log_sink(on_log));
        let outcome = py.detach(|| {
            let mut guard = self.lock();
            let Some(session) = guard.as_mut() else {
                return Err(PyValueError::new_err("this session is closed"));
            };
            set_loop(&self.event_loop, event_loop);
            let outcome = block_on(run(session, script, output, log));
            set_loop(&self.event_loop, None);
            outcome
        })?;
        Ok(NativeReport::from(&outcome))
    }

    /// Whether the outer wall stopped an eval mid-call, so that every later
    /// eval reports `session_poisoned`.
    #[getter]
    fn poisoned(&self, py: Python<'_>) -> bool {
        py.detach(|| self.lock().as_ref().is_some_and(Session::is_poisoned))
    }

    /// Cancels the running eval and every later one of this session.
    fn cancel(&self) {
        self.cancel.cancel();
    }

    /// Frees the instance; later evals raise.
    fn close(&self, py: Python<'_>) {
        let session = py.detach(|| self.lock().take());
        py.detach(move || drop(session));
    }
}
