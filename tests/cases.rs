//! The shared case list (`runtimes/cases.json`) run through the Rust host.
//!
//! Every host of the component (this crate, Node through jco, Python
//! through wasmtime-py, the wasmtime CLI by composition) runs the same cases
//! with the same config and prints one JSON line per case: the report shape
//! (here, [`Report`] itself) with the case's name. `runtimes/check.py`
//! compares each host's lines with the expectations and with each other.
//! This module is the Rust host's runner, and [`check`] is the same
//! comparison for `cargo test`.

use std::path::Path;

use moonbox::{Capability, CapabilityError, Determinism, Limits, Records, Report, Sandbox, Script};
use serde_json::{Map, Value, json};

/// The parsed case file.
pub struct CaseFile {
    config: Value,
    records: Records,
    chunk_name: String,
    /// The cases, in file order.
    pub cases: Vec<Value>,
}

/// Reads and parses a case file.
pub fn load(path: &Path) -> Result<CaseFile, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let file: Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
    let records = Records::from_json(&file["records"].to_string()).map_err(|e| e.to_string())?;
    Ok(CaseFile {
        config: file["config"].clone(),
        records,
        chunk_name: file["chunk-name"].as_str().unwrap_or("main.lua").to_owned(),
        cases: file["cases"].as_array().cloned().unwrap_or_default(),
    })
}

fn u64_field(limits: &Map<String, Value>, name: &str) -> Result<u64, String> {
    limits
        .get(name)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("config.limits.{name} must be a non-negative integer"))
}

fn u32_field(limits: &Map<String, Value>, name: &str) -> Result<u32, String> {
    u32::try_from(u64_field(limits, name)?)
        .map_err(|_| format!("config.limits.{name} is too large"))
}

/// The sandbox a case runs in: the file's config with the case's limit
/// overrides merged in.
fn sandbox(file: &CaseFile, case: &Value) -> Result<Sandbox, String> {
    let mut limits = file.config["limits"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    if let Some(overrides) = case["limits"].as_object() {
        limits.extend(overrides.clone());
    }
    let limits = Limits {
        max_instructions: u64_field(&limits, "max-instructions")?,
        max_call_depth: u32_field(&limits, "max-call-depth")?,
        max_string_bytes: u64_field(&limits, "max-string-bytes")?,
        max_memory_bytes: u64_field(&limits, "max-memory-bytes")?,
        max_output_bytes: u64_field(&limits, "max-output-bytes")?,
        max_value_depth: u32_field(&limits, "max-value-depth")?,
        ..Limits::default()
    };
    let mut builder = Sandbox::builder().limits(limits);
    for name in file.config["allow"].as_array().into_iter().flatten() {
        builder = builder.allow(name.as_str().unwrap_or_default());
    }
    for module in file.config["modules"].as_array().into_iter().flatten() {
        builder = builder.module(
            module["name"].as_str().unwrap_or_default(),
            module["source"].as_str().unwrap_or_default().as_bytes(),
        );
    }
    for cap in file.config["capabilities"].as_array().into_iter().flatten() {
        let name = cap["name"].as_str().unwrap_or_default();
        let capability: Capability<()> = match name {
            "records.get" => file.records.capability(),
            "cases.fail" => Capability::sync("cases.fail", |_: &(), (message,): (String,)| {
                Err::<Value, _>(CapabilityError::new(message))
            }),
            other => return Err(format!("the Rust runner has no capability {other:?}")),
        };
        let arity = (
            cap["min-args"].as_u64().unwrap_or(0),
            cap["max-args"].as_u64().unwrap_or(0),
        );
        let (min, max) = capability.arity();
        if arity != (u64::from(min), u64::from(max)) {
            return Err(format!(
                "{name}: the case file's arity differs from the runner's"
            ));
        }
        builder = builder
            .capability(capability.with_description(cap["doc"].as_str().unwrap_or_default()));
    }
    if let Some(d) = file.config["deterministic"].as_object() {
        builder = builder.deterministic(Determinism {
            clock: d.get("clock").and_then(Value::as_i64).unwrap_or(0),
            seed: d.get("seed").and_then(Value::as_i64).unwrap_or(0),
        });
    }
    builder.build().map_err(|e| e.to_string())
}

/// A line for a case whose sandbox could not be made.
fn create_failed(name: Value, message: String) -> Value {
    json!({"name": name, "ok": false, "error": {"kind": "create", "message": message}})
}

/// Runs one case and returns its result line: the [`Report`] with the
/// case's name (see docs/other-runtimes.md).
pub async fn run(file: &CaseFile, case: &Value) -> Value {
    let name = case["name"].clone();
    let sandbox = match sandbox(file, case) {
        Ok(sandbox) => sandbox,
        Err(message) => return create_failed(name, message),
    };
    let mut session = match sandbox.session(()).await {
        Ok(session) => session,
        Err(e) => return create_failed(name, e.to_string()),
    };
    let script = match script(case, &file.chunk_name) {
        Ok(script) => script,
        Err(message) => return create_failed(name, message),
    };
    let outcome = session.run(script).await;
    let mut line = Report::from(&outcome).to_json();
    if let Some(fields) = line.as_object_mut() {
        fields.insert("name".to_owned(), name);
    }
    line
}

/// A case's script with its `args` (strings), `files` (each a `name` and
/// its bytes as `text` or `base64`) and `stdin` (text).
fn script(case: &Value, chunk_name: &str) -> Result<Script, String> {
    let code = case["script"].as_str().unwrap_or_default();
    let mut script = Script::new(code).chunk_name(chunk_name);
    if let Some(args) = case.get("args") {
        let args = args
            .as_array()
            .ok_or("args must be an array")?
            .iter()
            .map(|a| {
                a.as_str()
                    .map(str::to_owned)
                    .ok_or("each arg must be a string")
            })
            .collect::<Result<Vec<_>, _>>()?;
        script = script.args(args);
    }
    for file in case["files"].as_array().into_iter().flatten() {
        let name = file["name"]
            .as_str()
            .ok_or("a file's name must be a string")?;
        let bytes = match (file["text"].as_str(), file["base64"].as_str()) {
            (Some(text), None) => text.as_bytes().to_vec(),
            (None, Some(encoded)) => decode_base64(encoded)?,
            _ => return Err(format!("file {name:?} needs one of text and base64")),
        };
        script = script.file(name, bytes);
    }
    if let Some(stdin) = case.get("stdin") {
        script = script.stdin(stdin.as_str().ok_or("stdin must be a string")?);
    }
    Ok(script)
}

/// Standard base64 with padding, as the case list writes binary files.
fn decode_base64(text: &str) -> Result<Vec<u8>, String> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let digits = text.trim_end_matches('=').as_bytes();
    if !text.len().is_multiple_of(4) || text.len() - digits.len() > 2 {
        return Err(format!("{text:?} is not padded base64"));
    }
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    let (mut group, mut bits) = (0u32, 0u32);
    for &c in digits {
        let Some(value) = ALPHABET.iter().position(|&a| a == c) else {
            return Err(format!("{text:?} is not base64"));
        };
        group = (group << 6) | value as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((group >> bits) as u8);
            group &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

/// Whether two JSON values are equal with integers and floats kept apart
/// (`1` is not `1.0`), as the contract keeps them apart.
pub fn strictly_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // Integers are compared whole (2^53 and 2^53 + 1 differ), floats by
        // their bits (-0.0 is not 0.0), and an integer never equals a float.
        (Value::Number(x), Value::Number(y)) => match (x.is_f64(), y.is_f64()) {
            (false, false) => x.as_i64() == y.as_i64() && x.as_u64() == y.as_u64(),
            (true, true) => x.as_f64().map(f64::to_bits) == y.as_f64().map(f64::to_bits),
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| strictly_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| strictly_equal(v, w)))
        }
        _ => a == b,
    }
}

/// Compares a result line with its case's `expect`: `values` (exact, ints
/// and floats apart), or `error` (the kind) with optional `message` and
/// `line`; `output` (empty when not given), `output_base64`, `logs` and
/// `files` (none when not given).
pub fn check(case: &Value, result: &Value) -> Result<(), String> {
    let expect = &case["expect"];
    let error = &result["error"];
    if let Some(kind) = expect["error"].as_str() {
        if result["ok"] != json!(false) || error["kind"] != json!(kind) {
            return Err(format!("expected a {kind} error, got {result}"));
        }
        for field in ["message", "line"] {
            if !expect[field].is_null() && expect[field] != error[field] {
                return Err(format!("expected {field} {}, got {result}", expect[field]));
            }
        }
    } else {
        if result["ok"] != json!(true) {
            return Err(format!("expected values, got {result}"));
        }
        if !strictly_equal(&result["values"], &expect["values"]) {
            return Err(format!(
                "expected values {}, got {}",
                expect["values"], result["values"]
            ));
        }
    }
    let output = expect["output"].as_str().unwrap_or_default();
    if result["output"] != json!(output) {
        return Err(format!(
            "expected output {output:?}, got {}",
            result["output"]
        ));
    }
    if result["output_base64"] != expect["output_base64"] {
        return Err(format!(
            "expected output_base64 {}, got {}",
            expect["output_base64"], result["output_base64"]
        ));
    }
    let logs = match &expect["logs"] {
        Value::Null => json!([]),
        logs => logs.clone(),
    };
    if !strictly_equal(&result["logs"], &logs) {
        return Err(format!("expected logs {logs}, got {}", result["logs"]));
    }
    // A report leaves `files` out when the eval wrote none.
    let files = |value: &Value| match value {
        Value::Null => json!([]),
        files => files.clone(),
    };
    if !strictly_equal(&files(&result["files"]), &files(&expect["files"])) {
        return Err(format!(
            "expected files {}, got {}",
            files(&expect["files"]),
            result["files"]
        ));
    }
    Ok(())
}
