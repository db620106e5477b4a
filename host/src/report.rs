//! [`Report`]: the one serialised form of an eval's outcome, shared by the
//! CLI's `--json`, the agent tool's result and the case runners.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ErrorKind, EvalError};
use crate::governance::CallRecord;
use crate::outcome::{EvalOutput, Output, Stats};
use crate::output::LogEvent;

/// The outcome of one eval as one JSON object, whether it succeeded or not.
///
/// Every surface that serialises an outcome uses this type, so the shape is
/// the same everywhere:
///
/// ```json
/// {"version": 1, "ok": false, "values": [], "output": "step 1\n",
///  "exit_code": null,
///  "error": {"kind": "timeout", "message": "...", "chunk": "main.lua",
///            "line": null, "traceback": null, "summary": "error[timeout]: ..."},
///  "stats": {"fuel_used": 123, "instructions": null, ...},
///  "logs": [{"level": "info", "message": "step 1", "fields": {}}]}
/// ```
///
/// Output is bytes; JSON strings are text. `output` is the output with
/// invalid UTF-8 replaced by U+FFFD, and `output_base64` (present only then)
/// carries the exact bytes.
///
/// [`Report::VERSION`] changes when a field is removed, renamed or changes
/// meaning; new fields may appear without a change (docs/wit.md).
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let report = moonbox::Report::from(&sandbox.eval("print('hi') error('boom')").await);
/// assert!(!report.ok);
/// assert_eq!(report.output, "hi\n");
/// let error = report.error.as_ref().unwrap();
/// assert_eq!(error.kind, moonbox::ErrorKind::Runtime);
/// assert_eq!(error.line, Some(1));
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Report {
    /// The report format's version: [`Report::VERSION`].
    pub version: u32,
    /// Whether the eval finished without an error (an `os.exit` counts as
    /// finished; see `exit_code`).
    pub ok: bool,
    /// The returned values (`[]` on error).
    pub values: Vec<Value>,
    /// What the script wrote, as text (invalid UTF-8 replaced).
    pub output: String,
    /// The exact output bytes, in standard base64, when they are not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_base64: Option<String>,
    /// The status of `os.exit`, if the script called it.
    pub exit_code: Option<i32>,
    /// Why the eval failed.
    pub error: Option<ReportError>,
    /// What the eval cost, up to where it stopped.
    pub stats: Stats,
    /// The audit trail: the capability calls the eval made, in order
    /// ([`CallRecord`]). Absent when it made none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<CallRecord>,
    /// The events of the script's `log`, in order, up to where it stopped.
    #[serde(default)]
    pub logs: Vec<LogEvent>,
    /// The files the eval created or wrote ([`ReportFile`]), sorted by
    /// name. Absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<ReportFile>,
}

/// A file in a [`Report`]: its name and size, and its bytes as `text` when
/// they are UTF-8, else as `base64`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReportFile {
    /// The file's name, normalised (`out/result.csv`).
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its contents, when they are UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Its exact contents in standard base64, when they are not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base64: Option<String>,
}

impl From<&crate::File> for ReportFile {
    fn from(file: &crate::File) -> Self {
        let text = std::str::from_utf8(&file.bytes).ok().map(str::to_owned);
        ReportFile {
            name: file.name.clone(),
            size: file.bytes.len() as u64,
            base64: text.is_none().then(|| base64(&file.bytes)),
            text,
        }
    }
}

/// The error part of a [`Report`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReportError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// The exact message (Lua's, or the host's for outer-wall stops).
    pub message: String,
    /// The chunk the error points at.
    pub chunk: String,
    /// The line, when known.
    pub line: Option<u32>,
    /// The Lua traceback, for errors raised while running.
    pub traceback: Option<String>,
    /// The one-line form to show a model or a terminal
    /// (`error[kind]: message`, control characters escaped).
    pub summary: String,
}

impl Report {
    /// The version of the report format this crate writes.
    pub const VERSION: u32 = crate::contract::REPORT_VERSION as u32;

    /// The report as a JSON value.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|e| {
            serde_json::json!({"version": Self::VERSION, "ok": false, "error": {"kind": "internal", "message": e.to_string()}})
        })
    }
}

impl From<&Result<EvalOutput, EvalError>> for Report {
    fn from(outcome: &Result<EvalOutput, EvalError>) -> Self {
        match outcome {
            Ok(out) => Report::from(out),
            Err(e) => Report::from(e),
        }
    }
}

impl Report {
    /// The fields every report fills the same way: the version, the output
    /// in both its forms, and the stats.
    fn with_output(output: &Output, stats: Stats, logs: &[LogEvent]) -> Report {
        Report {
            version: Report::VERSION,
            ok: false,
            values: Vec::new(),
            output: output.to_str_lossy().into_owned(),
            output_base64: (!output.is_utf8()).then(|| base64(output.as_bytes())),
            exit_code: None,
            error: None,
            stats,
            calls: Vec::new(),
            logs: logs.to_vec(),
            files: Vec::new(),
        }
    }
}

impl From<&EvalOutput> for Report {
    fn from(out: &EvalOutput) -> Self {
        Report {
            ok: true,
            values: out.values.clone(),
            exit_code: out.exit_code,
            calls: out.calls.clone(),
            files: out.files.iter().map(ReportFile::from).collect(),
            ..Report::with_output(&out.output, out.stats, &out.logs)
        }
    }
}

impl From<&EvalError> for Report {
    fn from(e: &EvalError) -> Self {
        Report {
            error: Some(ReportError {
                kind: e.kind,
                message: e.message.clone(),
                chunk: e.chunk.clone(),
                line: e.line,
                traceback: e.traceback.clone(),
                summary: e.to_string(),
            }),
            calls: e.calls.clone(),
            files: e.files.iter().map(ReportFile::from).collect(),
            ..Report::with_output(&e.output, e.stats, &e.logs)
        }
    }
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn output_that_is_not_utf8_travels_exactly_in_base64() {
        let out = EvalOutput {
            output: Output::from(b"\xff\xfeok".to_vec()),
            ..EvalOutput::default()
        };
        let report = Report::from(&out);
        assert_eq!(report.output, "\u{fffd}\u{fffd}ok");
        assert_eq!(report.output_base64.as_deref(), Some("//5vaw=="));
        let utf8 = Report::from(&EvalOutput {
            output: Output::from("café"),
            ..EvalOutput::default()
        });
        assert_eq!(utf8.output_base64, None);
        assert!(utf8.to_json().get("output_base64").is_none());
    }
}
