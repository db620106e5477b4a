//! The crate's report, as the Python layer reads it.

use moonbox::{ErrorKind, EvalError, EvalOutput, Report, Stats};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::convert::to_py;

/// One eval's report, as the crate makes it (`moonbox run --json` prints
/// the same JSON).
#[pyclass(frozen, module = "moonbox._native")]
pub(crate) struct NativeReport {
    report: Report,
}

impl From<&Result<EvalOutput, EvalError>> for NativeReport {
    fn from(outcome: &Result<EvalOutput, EvalError>) -> Self {
        NativeReport {
            report: Report::from(outcome),
        }
    }
}

#[pymethods]
impl NativeReport {
    /// Whether the eval finished without an error.
    #[getter]
    fn ok(&self) -> bool {
        self.report.ok
    }

    /// The report as a dict of JSON values.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.report.to_json())
    }

    /// The report as one line of JSON text, values exact.
    fn to_json(&self) -> String {
        self.report.to_json().to_string()
    }
}

/// A report for a call that never reached the guest (a tool call whose
/// arguments are wrong): `kind` one of the crate's error kinds, `chunk`
/// what the message is about.
#[pyfunction]
pub(crate) fn error_report(kind: &str, message: String, chunk: String) -> PyResult<NativeReport> {
    let kind = ErrorKind::ALL
        .iter()
        .copied()
        .find(|k| k.as_str() == kind)
        .ok_or_else(|| PyValueError::new_err(format!("unknown error kind {kind:?}")))?;
    let error = EvalError {
        kind,
        message,
        chunk,
        line: None,
        traceback: None,
        output: Default::default(),
        stats: Stats::default(),
        calls: Vec::new(),
        logs: Vec::new(),
        files: Vec::new(),
    };
    Ok(NativeReport::from(&Err(error)))
}
