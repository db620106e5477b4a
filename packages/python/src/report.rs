//! The crate's report, as the Python layer reads it.

use moonbox::{ErrorKind, EvalError, EvalOutput, File, Report, Stats};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert::to_py;

/// One eval's report, as the crate makes it (`moonbox run --json` prints
/// the same JSON).
#[pyclass(frozen, module = "moonbox._native")]
pub(crate) struct NativeReport {
    report: Report,
    /// The files the eval wrote, with their exact bytes (the report holds
    /// them as text or base64).
    files: Vec<File>,
}

impl From<&Result<EvalOutput, EvalError>> for NativeReport {
    fn from(outcome: &Result<EvalOutput, EvalError>) -> Self {
        let files = match outcome {
            Ok(out) => &out.files,
            Err(e) => &e.files,
        };
        NativeReport {
            report: Report::from(outcome),
            files: files.clone(),
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

    /// The files the eval created or wrote that exist at its end, sorted
    /// by name, with their bytes.
    fn files<'py>(&self, py: Python<'py>) -> Vec<(&str, Bound<'py, PyBytes>)> {
        self.files
            .iter()
            .map(|f| (f.name.as_str(), PyBytes::new(py, &f.bytes)))
            .collect()
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
