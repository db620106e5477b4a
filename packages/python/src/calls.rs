//! Calls from the crate's threads into Python, and the interpreter's exit.
//!
//! A capability or sink runs on a thread the crate owns. Once the
//! interpreter starts to finalize, such a thread must not enter Python (it
//! would be stopped half-way, through Rust frames), so the package's
//! `atexit` hook calls [`at_exit`]: calls that have not started are refused,
//! and the exit waits for those in Python to return, as Python's own thread
//! pools are joined at exit.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};

use pyo3::prelude::*;

static CLOSING: AtomicBool = AtomicBool::new(false);
static IN_FLIGHT: Mutex<usize> = Mutex::new(0);
static DONE: Condvar = Condvar::new();

/// Runs `f` attached to the interpreter, or returns `None` when the
/// interpreter is exiting.
pub(crate) fn attach<R>(f: impl FnOnce(Python<'_>) -> R) -> Option<R> {
    {
        let mut in_flight = IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner());
        if CLOSING.load(Ordering::SeqCst) {
            return None;
        }
        *in_flight += 1;
    }
    let result = Python::try_attach(f);
    let mut in_flight = IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner());
    *in_flight -= 1;
    if *in_flight == 0 {
        DONE.notify_all();
    }
    result
}

/// Refuses calls into Python from now on and waits, with the GIL released,
/// for those under way to return.
#[pyfunction]
pub(crate) fn at_exit(py: Python<'_>) {
    py.detach(|| {
        let mut in_flight = IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner());
        CLOSING.store(true, Ordering::SeqCst);
        while *in_flight > 0 {
            in_flight = DONE.wait(in_flight).unwrap_or_else(|e| e.into_inner());
        }
    });
}
