//! The request bodies of the HTTP API, and how a request's limits are
//! checked against the server's ceiling.

use moonbox::{Limits, Script};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::ApiError;
use axum::http::StatusCode;

/// The longest chunk name a request may give.
pub(crate) const MAX_CHUNK_NAME_BYTES: usize = 256;

/// `POST /v1/eval`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EvalBody {
    pub(crate) code: String,
    /// Kept as text until the eval has its turn: parsed, small JSON values
    /// take many times their text's size, and requests waiting in the
    /// queue should hold only their bytes.
    #[serde(default)]
    pub(crate) inputs: Option<Box<RawValue>>,
    #[serde(default)]
    pub(crate) chunk_name: Option<String>,
    #[serde(default)]
    pub(crate) limits: Option<LimitsBody>,
    /// The script's arguments (`arg` and `...`): an array of strings. Kept
    /// as text until the turn, as the inputs are.
    #[serde(default)]
    pub(crate) args: Option<Box<RawValue>>,
    /// Files mounted read-only: an array of `{"name", "text"}` or
    /// `{"name", "base64"}`. Kept as text until the turn.
    #[serde(default)]
    pub(crate) files: Option<Box<RawValue>>,
    /// What `io.stdin` reads: a string, or `{"base64": ...}`. Kept as text
    /// until the turn.
    #[serde(default)]
    pub(crate) stdin: Option<Box<RawValue>>,
}

/// `POST /v1/sessions/{id}/eval`: a session's limits are set when it
/// opens.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionEvalBody {
    pub(crate) code: String,
    /// As [`EvalBody::inputs`].
    #[serde(default)]
    pub(crate) inputs: Option<Box<RawValue>>,
    #[serde(default)]
    pub(crate) chunk_name: Option<String>,
    /// As [`EvalBody::args`].
    #[serde(default)]
    pub(crate) args: Option<Box<RawValue>>,
    /// As [`EvalBody::files`].
    #[serde(default)]
    pub(crate) files: Option<Box<RawValue>>,
    /// As [`EvalBody::stdin`].
    #[serde(default)]
    pub(crate) stdin: Option<Box<RawValue>>,
}

/// `POST /v1/sessions` (the body may be empty).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct OpenBody {
    #[serde(default)]
    pub(crate) limits: Option<LimitsBody>,
}

/// Limits a request asks for: each at most the server's.
#[derive(Deserialize, Default, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub(crate) struct LimitsBody {
    max_instructions: Option<u64>,
    max_call_depth: Option<u32>,
    max_string_bytes: Option<u64>,
    max_memory_bytes: Option<u64>,
    max_output_bytes: Option<u64>,
    max_value_depth: Option<u32>,
    timeout_ms: Option<u64>,
    max_calls_in_flight: Option<u32>,
}

impl LimitsBody {
    /// The server's limits with the asked ones in place.
    ///
    /// # Errors
    /// `limit_above_ceiling` (400) for a limit above the server's, naming
    /// it and the ceiling.
    pub(crate) fn within(self, ceiling: &Limits) -> Result<Limits, ApiError> {
        let mut limits = *ceiling;
        let ceiling_ms = u64::try_from(ceiling.timeout.as_millis()).unwrap_or(u64::MAX);
        if let Some(v) = below(
            "max_instructions",
            self.max_instructions,
            ceiling.max_instructions,
        )? {
            limits.max_instructions = v;
        }
        if let Some(v) = below(
            "max_call_depth",
            self.max_call_depth,
            ceiling.max_call_depth,
        )? {
            limits.max_call_depth = v;
        }
        if let Some(v) = below(
            "max_string_bytes",
            self.max_string_bytes,
            ceiling.max_string_bytes,
        )? {
            limits.max_string_bytes = v;
        }
        if let Some(v) = below(
            "max_memory_bytes",
            self.max_memory_bytes,
            ceiling.max_memory_bytes,
        )? {
            limits.max_memory_bytes = v;
        }
        if let Some(v) = below(
            "max_output_bytes",
            self.max_output_bytes,
            ceiling.max_output_bytes,
        )? {
            limits.max_output_bytes = v;
        }
        if let Some(v) = below(
            "max_value_depth",
            self.max_value_depth,
            ceiling.max_value_depth,
        )? {
            limits.max_value_depth = v;
        }
        if let Some(v) = below("timeout_ms", self.timeout_ms, ceiling_ms)? {
            limits.timeout = std::time::Duration::from_millis(v);
        }
        if let Some(v) = below(
            "max_calls_in_flight",
            self.max_calls_in_flight,
            ceiling.max_calls_in_flight,
        )? {
            limits.max_calls_in_flight = v;
        }
        // An explicit fuel budget stays the server's; with fuel derived from
        // the instruction limit, fewer instructions mean less fuel.
        Ok(limits)
    }
}

/// `value`, when asked for, if it is at most `most`.
///
/// # Errors
/// `limit_above_ceiling` (400) naming the limit and the ceiling.
fn below<N: PartialOrd + std::fmt::Display + Copy>(
    name: &str,
    value: Option<N>,
    most: N,
) -> Result<Option<N>, ApiError> {
    match value {
        Some(value) if value > most => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "limit_above_ceiling",
            format!(
                "limits.{name} is {value}, above this server's ceiling of {most}; ask for {most} or less, or leave it out to get the ceiling"
            ),
        )),
        other => Ok(other),
    }
}

/// Reads a JSON body; an empty body reads as `T::default()` when `empty`
/// is given.
///
/// # Errors
/// `bad_request` (400) naming where the JSON is wrong.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    empty: Option<T>,
) -> Result<T, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace)
        && let Some(default) = empty
    {
        return Ok(default);
    }
    serde_json::from_slice(bytes).map_err(|e| {
        ApiError::bad_request(format!("the request body is not the JSON expected: {e}"))
    })
}

/// The script of an eval request, checked but with its inputs, arguments,
/// files and stdin still text: [`Pending::script`] parses them once the
/// eval has its turn.
pub(crate) struct Pending {
    code: String,
    inputs: Option<Box<RawValue>>,
    chunk_name: Option<String>,
    extras: Extras,
}

/// An eval request's `args`, `files` and `stdin`, as text.
#[derive(Default)]
pub(crate) struct Extras {
    pub(crate) args: Option<Box<RawValue>>,
    pub(crate) files: Option<Box<RawValue>>,
    pub(crate) stdin: Option<Box<RawValue>>,
}

impl Extras {
    /// Refuses what is not of the right kind of JSON value, before the turn:
    /// `args` and `files` arrays, `stdin` a string or an object.
    fn check(&self) -> Result<(), ApiError> {
        let starts = |raw: &Option<Box<RawValue>>, with: &[char]| {
            raw.as_ref()
                .is_none_or(|raw| raw.get() == "null" || raw.get().starts_with(with))
        };
        if !starts(&self.args, &['[']) {
            return Err(ApiError::bad_request(ARGS_SHAPE));
        }
        if !starts(&self.files, &['[']) {
            return Err(ApiError::bad_request(FILES_SHAPE));
        }
        if !starts(&self.stdin, &['"', '{']) {
            return Err(ApiError::bad_request(STDIN_SHAPE));
        }
        Ok(())
    }

    /// `script` with these arguments, files and stdin, parsed.
    fn apply(self, mut script: Script) -> Result<Script, ApiError> {
        if let Some(raw) = &self.args {
            let args: Option<Vec<String>> =
                serde_json::from_str(raw.get()).map_err(|_| ApiError::bad_request(ARGS_SHAPE))?;
            if let Some(args) = args {
                if args.len() > Limits::MAX_ARGS {
                    return Err(ApiError::bad_request(format!(
                        "the request has {} args, more than {}",
                        args.len(),
                        Limits::MAX_ARGS
                    )));
                }
                script = script.args(args);
            }
        }
        if let Some(raw) = &self.files {
            let files: Option<Vec<FileBody>> = serde_json::from_str(raw.get())
                .map_err(|e| ApiError::bad_request(format!("{FILES_SHAPE} ({e})")))?;
            let files = files.unwrap_or_default();
            if files.len() > Limits::MAX_FILES {
                return Err(ApiError::bad_request(format!(
                    "the request has {} files, more than {}",
                    files.len(),
                    Limits::MAX_FILES
                )));
            }
            let mut names = std::collections::HashSet::with_capacity(files.len());
            for file in files {
                if !names.insert(file.name.clone()) {
                    return Err(ApiError::bad_request(format!(
                        "files: '{}' is given twice",
                        shown(&file.name)
                    )));
                }
                let bytes = content(&file.name, "files", file.text, file.base64)?;
                script = script.file(file.name, bytes);
            }
        }
        if let Some(raw) = &self.stdin {
            let stdin: Option<Content> =
                serde_json::from_str(raw.get()).map_err(|_| ApiError::bad_request(STDIN_SHAPE))?;
            match stdin {
                None => {}
                Some(Content::Text(text)) => script = script.stdin(text),
                Some(Content::Bytes(Base64 { base64 })) => {
                    script = script.stdin(content("stdin", "stdin", None, Some(base64))?);
                }
            }
        }
        Ok(script)
    }
}

const ARGS_SHAPE: &str = "args must be an array of strings: arg[1..n] and the chunk's ...";
const FILES_SHAPE: &str =
    "files must be an array of {\"name\", \"text\"} or {\"name\", \"base64\"} objects";
const STDIN_SHAPE: &str = "stdin must be a string, or {\"base64\": \"...\"} for bytes";

/// One of an eval request's `files`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileBody {
    name: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    base64: Option<String>,
}

/// An eval request's `stdin`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Bytes(Base64),
}

/// `{"base64": ...}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Base64 {
    base64: String,
}

/// A file's (or stdin's) bytes: its text, or its base64 decoded; exactly
/// one of the two.
fn content(
    name: &str,
    field: &str,
    text: Option<String>,
    base64: Option<String>,
) -> Result<Vec<u8>, ApiError> {
    use base64::Engine as _;
    match (text, base64) {
        (Some(text), None) => Ok(text.into_bytes()),
        (None, Some(encoded)) => base64::engine::general_purpose::STANDARD
            .decode(encoded.as_bytes())
            .map_err(|e| {
                ApiError::bad_request(format!(
                    "{field}: the base64 of '{}' does not decode ({e})",
                    shown(name)
                ))
            }),
        _ => Err(ApiError::bad_request(format!(
            "{field}: '{}' needs either text or base64",
            shown(name)
        ))),
    }
}

/// A name as a message shows it: its first 64 characters, controls
/// escaped.
fn shown(name: &str) -> String {
    name.chars()
        .take(64)
        .flat_map(char::escape_default)
        .collect()
}

/// Checks an eval request's script, leaving its inputs, arguments, files
/// and stdin unparsed.
///
/// # Errors
/// `code_too_large` (413) past `max_code_bytes`; `bad_request` (400) for a
/// chunk name too long, inputs that are not a JSON object, or `args`,
/// `files` or `stdin` of the wrong kind of value.
pub(crate) fn script(
    code: String,
    inputs: Option<Box<RawValue>>,
    chunk_name: Option<String>,
    extras: Extras,
    max_code_bytes: usize,
) -> Result<Pending, ApiError> {
    if code.len() > max_code_bytes {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "code_too_large",
            format!(
                "the code is {} bytes, more than this server's {max_code_bytes}",
                code.len()
            ),
        ));
    }
    if let Some(name) = &chunk_name
        && (name.is_empty() || name.len() > MAX_CHUNK_NAME_BYTES)
    {
        return Err(ApiError::bad_request(format!(
            "chunk_name must be 1 to {MAX_CHUNK_NAME_BYTES} bytes"
        )));
    }
    // The whole body parsed, so the text is valid JSON: an object is all
    // that is left to check before the turn.
    if inputs
        .as_ref()
        .is_some_and(|raw| !raw.get().starts_with('{'))
    {
        return Err(ApiError::bad_request(
            "inputs must be a JSON object of names to values",
        ));
    }
    extras.check()?;
    Ok(Pending {
        code,
        inputs,
        chunk_name,
        extras,
    })
}

impl Pending {
    /// The script, with its inputs, arguments, files and stdin parsed.
    ///
    /// # Errors
    /// `bad_request` (400) for more inputs, arguments or files than a
    /// script takes, a file named twice, one with neither or both of
    /// `text` and `base64`, or base64 that does not decode.
    pub(crate) fn script(self) -> Result<Script, ApiError> {
        let inputs: Map<String, Value> = match &self.inputs {
            Some(raw) => serde_json::from_str(raw.get())
                .map_err(|e| ApiError::bad_request(format!("inputs: {e}")))?,
            None => Map::new(),
        };
        if inputs.len() > Limits::MAX_INPUTS {
            return Err(ApiError::bad_request(format!(
                "the request has {} inputs, more than {}",
                inputs.len(),
                Limits::MAX_INPUTS
            )));
        }
        let mut script = Script::new(self.code).inputs(inputs);
        if let Some(name) = self.chunk_name {
            script = script.chunk_name(name);
        }
        self.extras.apply(script)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn limits(json: &str) -> Result<Limits, ApiError> {
        serde_json::from_str::<LimitsBody>(json)
            .unwrap()
            .within(&Limits::default())
    }

    #[test]
    fn asked_limits_replace_the_ceiling_below_it() {
        let got = limits(r#"{"max_instructions": 1000, "timeout_ms": 250, "max_call_depth": 10}"#)
            .unwrap();
        assert_eq!(got.max_instructions, 1000);
        assert_eq!(got.timeout, Duration::from_millis(250));
        assert_eq!(got.max_call_depth, 10);
        assert_eq!(got.max_memory_bytes, Limits::default().max_memory_bytes);
        assert_eq!(limits("{}").unwrap(), Limits::default());
    }

    #[test]
    fn a_limit_above_the_ceiling_is_refused_by_name() {
        let err = limits(r#"{"max_instructions": 10000001}"#).unwrap_err();
        assert_eq!(err.kind, "limit_above_ceiling");
        assert!(
            err.message.contains("limits.max_instructions is 10000001"),
            "{}",
            err.message
        );
        assert!(
            err.message.contains("ceiling of 10000000"),
            "{}",
            err.message
        );
        let err = limits(r#"{"timeout_ms": 5001}"#).unwrap_err();
        assert!(err.message.contains("timeout_ms"), "{}", err.message);
        assert!(serde_json::from_str::<LimitsBody>(r#"{"fuel": 1}"#).is_err());
    }

    #[test]
    fn bodies_are_parsed_strictly() {
        assert!(parse::<EvalBody>(b"{\"code\": \"return 1\"}", None).is_ok());
        let err = parse::<EvalBody>(b"{\"code\": 1}", None).err().unwrap();
        assert_eq!(err.kind, "bad_request");
        assert!(parse::<EvalBody>(b"{\"code\": \"\", \"extra\": 1}", None).is_err());
        assert!(parse::<EvalBody>(b"", None).is_err());
        assert!(parse::<OpenBody>(b"  ", Some(OpenBody::default())).is_ok());
        assert!(parse::<SessionEvalBody>(b"{\"code\": \"\", \"limits\": {}}", None).is_err());
    }

    #[test]
    fn code_and_chunk_names_are_bounded() {
        let err = script("x".repeat(11), None, None, Extras::default(), 10)
            .err()
            .unwrap();
        assert_eq!(err.status, StatusCode::PAYLOAD_TOO_LARGE);
        assert!(script("x".into(), None, Some(String::new()), Extras::default(), 10).is_err());
        assert!(
            script(
                "x".into(),
                None,
                Some("n".repeat(257)),
                Extras::default(),
                10
            )
            .is_err()
        );
        assert!(
            script(
                "x".into(),
                None,
                Some("tool.lua".into()),
                Extras::default(),
                10
            )
            .is_ok()
        );
    }

    #[test]
    fn inputs_stay_text_until_the_script_is_made() {
        let body: EvalBody =
            parse(br#"{"code": "return n", "inputs": {"n": [1, 2, 3]}}"#, None).unwrap();
        let raw = body.inputs.as_ref().unwrap().get().to_owned();
        assert_eq!(raw, r#"{"n": [1, 2, 3]}"#);
        let pending = script(body.code, body.inputs, None, Extras::default(), 100).unwrap();
        assert!(pending.script().is_ok());
        // Not an object: refused before the turn.
        let body: EvalBody = parse(br#"{"code": "", "inputs": [1]}"#, None).unwrap();
        let err = script(body.code, body.inputs, None, Extras::default(), 100)
            .err()
            .unwrap();
        assert!(err.message.contains("JSON object"), "{}", err.message);
        // Too many inputs: refused when the script is made.
        let many: Map<String, Value> = (0..=Limits::MAX_INPUTS)
            .map(|i| (format!("k{i}"), Value::Null))
            .collect();
        let text = serde_json::json!({"code": "", "inputs": many}).to_string();
        let body: EvalBody = parse(text.as_bytes(), None).unwrap();
        let pending = script(body.code, body.inputs, None, Extras::default(), 100).unwrap();
        assert!(pending.script().is_err());
    }
}
