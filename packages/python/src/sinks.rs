//! Output and log sinks that hand what a script writes to Python callables.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use moonbox::{LogSink, OutputSink};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert::to_py;

/// An output sink that hands each chunk to a Python callable, until the
/// callable raises (the exception goes to Python's unraisable hook).
pub(crate) fn output_sink(callback: Option<Py<PyAny>>) -> Option<OutputSink> {
    let callback = callback?;
    let failed = AtomicBool::new(false);
    Some(Arc::new(move |bytes: &[u8]| {
        if failed.load(Ordering::Relaxed) {
            return;
        }
        crate::calls::attach(|py| {
            if let Err(e) = callback.call1(py, (PyBytes::new(py, bytes),)) {
                failed.store(true, Ordering::Relaxed);
                e.write_unraisable(py, Some(callback.bind(py)));
            }
        });
    }))
}

/// A log sink that hands each event, as a dict, to a Python callable,
/// until the callable raises.
pub(crate) fn log_sink(callback: Option<Py<PyAny>>) -> Option<LogSink> {
    let callback = callback?;
    let failed = AtomicBool::new(false);
    Some(Arc::new(move |event: &moonbox::LogEvent| {
        if failed.load(Ordering::Relaxed) {
            return;
        }
        let Ok(value) = serde_json::to_value(event) else {
            return;
        };
        crate::calls::attach(|py| {
            let result = to_py(py, &value).and_then(|dict| callback.call1(py, (dict,)));
            if let Err(e) = result {
                failed.store(true, Ordering::Relaxed);
                e.write_unraisable(py, Some(callback.bind(py)));
            }
        });
    }))
}
