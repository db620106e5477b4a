//! Runs the shared case list (`runtimes/cases.json`, embedded at build time)
//! through the moonbox guest and prints one JSON line per case to stdout, in
//! case order, in the shape every moonbox host prints (the report shape of
//! docs/wit.md plus the case's name):
//!
//! ```text
//! {"name":…,"ok":true,"values":[…],"logs":[…],"output":"…","exit_code":null,"error":null,"stats":{…}}
//! {"name":…,"ok":false,"values":[],"logs":[…],"output":"…","exit_code":null,"error":{"kind":"<error_kind>","message":…,"chunk":…,"line":…,"traceback":…},"stats":{…}}
//! {"name":…,"ok":false,"error":{"kind":"create","message":…}}
//! ```
//!
//! `output_base64` is added after `output` when the bytes are not UTF-8.
//!
//! This program is a wasm32-wasip2 command: it imports the guest's `lua`
//! interface and `moonbox:wasmtime-cli/collected`, and exports
//! `wasi:cli/run`. Composed with the guest and with the component that
//! provides the guest's `output` and `capabilities` imports and collects the
//! output (`caps`), it runs under `wasmtime run`. It does not judge the
//! results; `runtimes/check.py` does.
//!
//! Every case gets a new session, dropped when the case ends. All sessions
//! live in the one guest instance of the composition, so the host's outer
//! limits (fuel, memory) apply to the run as a whole, not to each case.

use std::io::Write;
use std::process::ExitCode;

use serde_json::{Map, Value, json};

#[path = "../../../../host/src/contract.rs"]
mod contract;

/// The crate's `one_line`, so that a refused file name reads as the Rust
/// host words it.
#[path = "../../../../host/src/text.rs"]
mod text;

mod bindings {
    wit_bindgen::generate!({
        // The moonbox contract first, then the worlds that use it.
        path: ["../../../wit", "../wit"],
        world: "moonbox:wasmtime-cli/driver",
        // Also generate `moonbox:sandbox/types`, which `lua` uses but which
        // lives in another package than this world.
        generate_all,
    });
}

use bindings::moonbox::sandbox::lua::Session;
use bindings::moonbox::sandbox::types::{
    Capability, Config, Determinism, ErrorKind, EvalRequest, File, Limits, Module, Stats,
};
use bindings::moonbox::wasmtime_cli::collected;

/// The case list.
const CASES: &str = include_str!("../../../cases.json");

/// The chunk name used when the case list names none.
const DEFAULT_CHUNK_NAME: &str = contract::DEFAULT_CHUNK_NAME;

/// The most arguments an eval takes (the contract's `max-args`).
const MAX_ARGS: usize = contract::MAX_ARGS as usize;

fn main() -> ExitCode {
    let file: Value = match serde_json::from_str(CASES) {
        Ok(file) => file,
        Err(e) => {
            eprintln!("moonbox-cli-driver: the embedded case list is not JSON: {e}");
            return ExitCode::from(2);
        }
    };
    let chunk_name = file["chunk-name"].as_str().unwrap_or(DEFAULT_CHUNK_NAME);
    let cases = file["cases"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();

    let mut stdout = std::io::stdout().lock();
    for case in cases {
        let line = run_case(&file["config"], chunk_name, case);
        // One line per case, flushed as it finishes, so a run stopped by the
        // host still shows every case before the one that stopped it.
        if writeln!(stdout, "{line}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// Runs one case in a new session and returns its result line as JSON text.
fn run_case(config: &Value, chunk_name: &str, case: &Value) -> String {
    let name = &case["name"];
    let script = case["script"].as_str().unwrap_or_default();

    let config = match session_config(config, &case["limits"]) {
        Ok(config) => config,
        Err(message) => return create_failure(name, &message),
    };
    let session = match Session::create(&config) {
        Ok(session) => session,
        Err(message) => return create_failure(name, &message),
    };

    let mut request = match eval_request(case) {
        Ok(request) => request,
        Err(message) => return create_failure(name, &message),
    };
    request.code = script.as_bytes().to_vec();
    request.chunk_name = chunk_name.to_owned();
    // What the Rust host refuses before the guest sees it, it refuses here
    // the same way: an `invalid_value` failure with the host's stats.
    if let Err(message) = check_files(&request, config.limits.max_memory_bytes) {
        return result_line(
            name,
            false,
            "[]",
            json!({
                "exit_code": null,
                "error": {
                    "kind": "invalid_value",
                    "message": message,
                    "chunk": chunk_name,
                    "line": null,
                    "traceback": null,
                },
                "stats": {
                    "instructions": null,
                    "peak_memory_bytes": null,
                    "capability_calls": 0,
                    "output_bytes": 0,
                },
            }),
            &[],
            "[]",
        );
    }

    // `caps` collects what the guest writes to `output` during the eval;
    // the bytes are taken afterwards, whatever the outcome.
    collected::start(config.limits.max_output_bytes);
    let outcome = session.eval(&request);
    let output = collected::take();
    let logs = collected::take_logs();

    match outcome {
        Ok(success) => result_line(
            name,
            true,
            &success.values,
            json!({
                "exit_code": success.exit_code,
                "error": null,
                "files": files_json(&success.files),
                "stats": stats_json(&success.stats),
            }),
            &output,
            &logs,
        ),
        Err(failure) => {
            let error = failure.error;
            result_line(
                name,
                false,
                "[]",
                json!({
                    "exit_code": null,
                    "error": {
                        "kind": kind_name(error.kind),
                        "message": error.message,
                        "chunk": error.chunk,
                        "line": error.line,
                        "traceback": error.traceback,
                    },
                    "files": files_json(&failure.files),
                    "stats": stats_json(&failure.stats),
                }),
                &output,
                &logs,
            )
        }
    }
    // `session` is dropped here, which drops the guest's resource.
}

/// A result line: `name`, `ok`, the guest's `values` JSON text spliced in
/// verbatim (so `1.0`, `-0.0` and 64-bit integers stay exactly as the guest
/// wrote them, with no float parsing in between), the `logs` JSON text from
/// `caps` spliced in the same way, the output fields, and the fields in
/// `rest`.
fn result_line(
    name: &Value,
    ok: bool,
    values: &str,
    rest: Value,
    output: &[u8],
    logs: &str,
) -> String {
    let mut fields = Map::new();
    match std::str::from_utf8(output) {
        Ok(text) => {
            fields.insert("output".into(), text.into());
        }
        Err(_) => {
            // Invalid sequences become U+FFFD, as in every other host, and
            // the exact bytes go along in base64.
            fields.insert(
                "output".into(),
                String::from_utf8_lossy(output).into_owned().into(),
            );
            fields.insert("output_base64".into(), base64(output).into());
        }
    }
    if let Value::Object(rest) = rest {
        // `files` is left out when there are none, as a report leaves it.
        fields.extend(
            rest.into_iter()
                .filter(|(k, v)| k != "files" || !v.is_null()),
        );
    }
    let fields = Value::Object(fields).to_string();
    // `fields` is a non-empty object (it always holds `output`): `name`,
    // `ok`, `values` and `logs` go in front of its members.
    format!(
        r#"{{"name":{name},"ok":{ok},"values":{values},"logs":{logs},{}"#,
        &fields[1..]
    )
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        // Up to three bytes make a 24-bit group, written as four characters;
        // a short last group is padded with `=`.
        let group = chunk.iter().enumerate().fold(0u32, |group, (i, &b)| {
            group | (u32::from(b) << (16 - 8 * i))
        });
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(
                    ALPHABET[((group >> (18 - 6 * i)) & 63) as usize],
                ));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The eval request of a case, without its code and chunk name: its
/// `args` (strings), `files` (each a `name` and its bytes as `text` or
/// `base64`) and `stdin` (text).
fn eval_request(case: &Value) -> Result<EvalRequest, String> {
    let args = match case.get("args") {
        None => None,
        Some(args) => Some(
            items(args)
                .map(|a| string(a, "args[]"))
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    let mut files: Vec<File> = Vec::new();
    for file in items(&case["files"]) {
        let name = string(&file["name"], "files[].name")?;
        let bytes = match (file["text"].as_str(), file["base64"].as_str()) {
            (Some(text), None) => text.as_bytes().to_vec(),
            (None, Some(encoded)) => decode_base64(encoded)?,
            _ => return Err(format!("file {name:?} needs one of text and base64")),
        };
        // A later file of the same name replaces an earlier one, as the
        // Rust host's `Script::file` does.
        files.retain(|f| f.name != name);
        files.push(File { name, bytes });
    }
    let stdin = match case.get("stdin") {
        None => Vec::new(),
        Some(stdin) => string(stdin, "stdin")?.into_bytes(),
    };
    Ok(EvalRequest {
        code: Vec::new(),
        chunk_name: String::new(),
        inputs: Vec::new(),
        args,
        files,
        stdin,
    })
}

/// Why a request's arguments, files or standard input cannot cross, as the
/// Rust host words it (its `script::check_files`).
fn check_files(request: &EvalRequest, max_memory_bytes: u64) -> Result<(), String> {
    if let Some(args) = &request.args
        && args.len() > MAX_ARGS
    {
        return Err(format!(
            "{} arguments are more than the {MAX_ARGS} an eval takes",
            args.len()
        ));
    }
    let max_files = contract::MAX_FILES;
    if request.files.len() as u64 > max_files {
        return Err(format!(
            "{} files are more than the {max_files} a session holds",
            request.files.len()
        ));
    }
    let max_name = contract::MAX_FILE_NAME_BYTES;
    let mut total = request.stdin.len() as u64;
    for file in &request.files {
        if file.name.is_empty() || file.name.len() as u64 > max_name || file.name.contains('\0') {
            return Err(format!(
                "file name '{}' is empty, longer than {max_name} bytes or contains NUL",
                text::one_line(&file.name.chars().take(80).collect::<String>())
            ));
        }
        total = total.saturating_add(file.bytes.len() as u64);
    }
    if total > max_memory_bytes {
        return Err(format!(
            "the files and stdin take {total} bytes, more than max-memory-bytes ({max_memory_bytes})"
        ));
    }
    Ok(())
}

/// The files an eval wrote as a report lists them (`null` when none):
/// each one's name and size, and its bytes as `text` when they are UTF-8,
/// else as `base64`.
fn files_json(files: &[File]) -> Value {
    if files.is_empty() {
        return Value::Null;
    }
    files
        .iter()
        .map(|f| match std::str::from_utf8(&f.bytes) {
            Ok(text) => json!({"name": f.name, "size": f.bytes.len(), "text": text}),
            Err(_) => json!({"name": f.name, "size": f.bytes.len(), "base64": base64(&f.bytes)}),
        })
        .collect()
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

fn create_failure(name: &Value, message: &str) -> String {
    json!({"name": name, "ok": false, "error": {"kind": "create", "message": message}}).to_string()
}

fn stats_json(stats: &Stats) -> Value {
    json!({
        "instructions": stats.instructions,
        "peak_memory_bytes": stats.peak_memory_bytes,
        "capability_calls": stats.capability_calls,
        "output_bytes": stats.output_bytes,
    })
}

/// The name of an error kind in a result line: the contract table's name
/// of the WIT enum case, which lists the guest's kinds in the enum's order.
fn kind_name(kind: ErrorKind) -> &'static str {
    contract::ERROR_KINDS[kind as usize].name
}

// --- The WIT `config` from the case list's JSON ----------------------------
//
// The case list spells the config with WIT's field names; a case's `limits`
// object overrides single fields of `config.limits`.

/// The session config for one case.
fn session_config(config: &Value, overrides: &Value) -> Result<Config, String> {
    let mut limits = config["limits"].as_object().cloned().unwrap_or_default();
    if let Some(overrides) = overrides.as_object() {
        limits.extend(overrides.clone());
    }
    let limits = Limits {
        max_instructions: u64_field(&limits, "max-instructions")?,
        max_call_depth: u32_field(&limits, "max-call-depth")?,
        max_string_bytes: u64_field(&limits, "max-string-bytes")?,
        max_memory_bytes: u64_field(&limits, "max-memory-bytes")?,
        max_output_bytes: u64_field(&limits, "max-output-bytes")?,
        max_value_depth: u32_field(&limits, "max-value-depth")?,
    };

    let allow = items(&config["allow"])
        .map(|name| string(name, "config.allow[]"))
        .collect::<Result<_, _>>()?;
    let modules = items(&config["modules"])
        .map(|m| {
            Ok(Module {
                name: string(&m["name"], "config.modules[].name")?,
                // Module sources are bytes; the case list's are text.
                source: string(&m["source"], "config.modules[].source")?.into_bytes(),
            })
        })
        .collect::<Result<_, String>>()?;
    let capabilities = items(&config["capabilities"])
        .map(|c| {
            let fields = c.as_object().cloned().unwrap_or_default();
            Ok(Capability {
                name: string(&c["name"], "config.capabilities[].name")?,
                min_args: u32_field(&fields, "min-args")?,
                max_args: u32_field(&fields, "max-args")?,
                // The case list declares no JSON Schemas.
            })
        })
        .collect::<Result<_, String>>()?;
    let deterministic = match &config["deterministic"] {
        Value::Null => None,
        d => Some(Determinism {
            clock: d["clock"]
                .as_i64()
                .ok_or("config.deterministic.clock must be an integer")?,
            seed: d["seed"]
                .as_i64()
                .ok_or("config.deterministic.seed must be an integer")?,
        }),
    };

    Ok(Config {
        limits,
        allow,
        modules,
        capabilities,
        deterministic,
    })
}

/// The elements of a JSON array; nothing for a missing field.
fn items(value: &Value) -> impl Iterator<Item = &Value> {
    value.as_array().into_iter().flatten()
}

fn string(value: &Value, what: &str) -> Result<String, String> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{what} must be a string"))
}

fn u64_field(fields: &Map<String, Value>, name: &str) -> Result<u64, String> {
    fields
        .get(name)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("{name} must be a non-negative integer"))
}

fn u32_field(fields: &Map<String, Value>, name: &str) -> Result<u32, String> {
    u32::try_from(u64_field(fields, name)?).map_err(|_| format!("{name} is too large"))
}
