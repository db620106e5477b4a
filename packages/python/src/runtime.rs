//! The async runtime the crate's evals run on, one per process.

use std::future::Future;
use std::sync::OnceLock;

use pyo3::PyResult;
use pyo3::exceptions::PyRuntimeError;
use tokio::runtime::{Builder, Handle, Runtime};

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// The process's runtime: one worker thread for the crate's timers and
/// tasks (an eval itself runs on the thread that calls it), and tokio's
/// blocking pool for capabilities.
fn runtime() -> PyResult<&'static Runtime> {
    RUNTIME
        .get_or_init(|| {
            Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("moonbox")
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the async runtime: {e}"))
        })
        .as_ref()
        .map_err(|e| PyRuntimeError::new_err(e.clone()))
}

/// Runs `future` to completion on the calling thread, which must not hold
/// the GIL. A call from inside the runtime (a capability that runs an eval
/// of its own) runs it on a thread of its own, since a runtime thread
/// cannot block on another future.
pub(crate) fn block_on<F>(future: F) -> PyResult<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let rt = runtime()?;
    if Handle::try_current().is_err() {
        return Ok(rt.block_on(future));
    }
    std::thread::scope(|s| {
        s.spawn(|| rt.block_on(future))
            .join()
            .map_err(|_| PyRuntimeError::new_err("a nested eval panicked"))
    })
}
