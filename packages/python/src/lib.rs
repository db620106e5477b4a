//! The native module of the moonbox Python package (`moonbox._native`):
//! the `moonbox` crate's sandboxes, sessions, capabilities and reports,
//! which the package's Python layer (`python/moonbox`) gives a Python API.
//!
//! Nothing here is a rule of its own: limits, their defaults and bounds,
//! error kinds, the report and the command line are the crate's. What this
//! module adds is the crossing: Python values to JSON values and back, the
//! GIL released while Lua runs, and Python callables as capabilities.

mod calls;
mod capability;
mod convert;
mod pool;
mod report;
mod runtime;
mod sandbox;
mod sinks;

use pyo3::prelude::*;

/// The module's contents, as `moonbox._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<sandbox::NativeSandbox>()?;
    m.add_class::<sandbox::NativeSession>()?;
    m.add_class::<sandbox::CancelToken>()?;
    m.add_class::<report::NativeReport>()?;
    m.add_function(wrap_pyfunction!(sandbox::error_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(sandbox::default_limits, m)?)?;
    m.add_function(wrap_pyfunction!(sandbox::effective_limits, m)?)?;
    m.add_function(wrap_pyfunction!(sandbox::tool_inputs, m)?)?;
    m.add_function(wrap_pyfunction!(sandbox::tool_extras, m)?)?;
    m.add_function(wrap_pyfunction!(sandbox::tool_check_arguments, m)?)?;
    m.add_function(wrap_pyfunction!(report::error_report, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(calls::at_exit, m)?)?;
    m.add("DEFAULT_CHUNK_NAME", moonbox::DEFAULT_CHUNK_NAME)?;
    m.add("MAX_CAPABILITY_ARGS", moonbox::Limits::MAX_CAPABILITY_ARGS)?;
    m.add("REPORT_VERSION", moonbox::Report::VERSION)?;
    m.add("CRATE_VERSION", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

/// Runs the `moonbox` command line (`argv[0]` first) with the GIL released
/// and returns its exit status: the same command as the Rust binary.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| moonbox_cli::main_from(argv))
}
