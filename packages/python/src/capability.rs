//! Python callables as the crate's capabilities.

use std::sync::{Arc, Mutex};

use moonbox::{Capability, CapabilityError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use serde_json::Value;

use crate::convert::{from_py, to_py};
use crate::pool;

/// One capability as the Python layer describes it: name, callable, the
/// fewest and most arguments, the description a model reads, and the
/// awaiter: what runs an awaitable the callable returns (a coroutine) on
/// the eval's event loop and returns its result.
pub(crate) type CapabilitySpec = (String, Py<PyAny>, u32, u32, String, Py<PyAny>);

/// What every eval of a session shares with its capabilities: the event
/// loop of the `eval_async` that runs (`None` for a synchronous eval), on
/// which coroutine capabilities run.
#[derive(Default)]
pub(crate) struct Ctx {
    pub(crate) event_loop: Arc<Mutex<Option<Py<PyAny>>>>,
}

pub(crate) fn set_loop(slot: &Mutex<Option<Py<PyAny>>>, event_loop: Option<Py<PyAny>>) {
    *slot.lock().unwrap_or_else(|e| e.into_inner()) = event_loop;
}

/// A capability whose handler calls a Python callable on a thread of the
/// capability pool (see `pool`), so that a callable that never returns (or
/// holds the GIL) cannot hold the eval past its deadline: at the deadline
/// the crate drops the reply's future and the call runs on, abandoned.
pub(crate) fn capability(spec: CapabilitySpec) -> Capability<Ctx> {
    let (name, func, min, max, doc, awaiter) = spec;
    let funcs = Arc::new((func, awaiter));
    let handler = move |ctx: Arc<Ctx>, args: Vec<Value>| {
        let funcs = funcs.clone();
        pool::call(move || call_python(&funcs.0, &funcs.1, &ctx, min, args))
    };
    Capability::new_async(name, handler)
        .with_arity(min, max)
        .with_description(doc)
}

/// One call of a Python capability, on a pool thread.
fn call_python(
    func: &Py<PyAny>,
    awaiter: &Py<PyAny>,
    ctx: &Ctx,
    min: u32,
    mut args: Vec<Value>,
) -> Result<Value, CapabilityError> {
    // The crate pads missing arguments with null up to the most the
    // capability takes; Python's own defaults apply to those not given.
    while args.len() > min as usize && args.last().is_some_and(Value::is_null) {
        args.pop();
    }
    crate::calls::attach(|py| {
        let call = || -> Result<Value, String> {
            let mut items = Vec::with_capacity(args.len());
            for arg in &args {
                items.push(to_py(py, arg).map_err(|e| e.to_string())?);
            }
            let args = PyTuple::new(py, items).map_err(|e| e.to_string())?;
            let mut result = func.call1(py, args).map_err(|e| exception_text(py, &e))?;
            if is_awaitable(result.bind(py)) {
                // A coroutine: run it on the eval's event loop.
                let event_loop = match &*ctx.event_loop.lock().unwrap_or_else(|e| e.into_inner()) {
                    Some(l) => l.clone_ref(py),
                    None => py.None(),
                };
                result = awaiter
                    .call1(py, (result, event_loop))
                    .map_err(|e| exception_text(py, &e))?;
            }
            from_py(result.bind(py)).map_err(|e| format!("its result: {e}"))
        };
        call().map_err(CapabilityError::new)
    })
    .unwrap_or_else(|| Err(CapabilityError::new("the Python interpreter is exiting")))
}

/// Whether a capability's result is to be awaited: anything but the plain
/// values that cross as they are, with an `__await__`.
fn is_awaitable(value: &Bound<'_, PyAny>) -> bool {
    let plain = value.is_none()
        || value.is_instance_of::<pyo3::types::PyString>()
        || value.is_instance_of::<pyo3::types::PyInt>()
        || value.is_instance_of::<pyo3::types::PyFloat>()
        || value.is_instance_of::<PyDict>()
        || value.is_instance_of::<pyo3::types::PyList>();
    !plain && value.hasattr("__await__").unwrap_or(false)
}

/// What a script sees of a Python exception: its message, or its type's
/// name when the message is empty.
fn exception_text(py: Python<'_>, e: &PyErr) -> String {
    let value = e.value(py);
    let text = value.str().map(|s| s.to_string()).unwrap_or_default();
    if text.is_empty() {
        value
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "exception".to_owned())
    } else {
        text
    }
}
