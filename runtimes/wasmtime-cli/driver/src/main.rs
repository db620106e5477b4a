//! Runs the shared case list (`runtimes/cases.json`, embedded at build time)
//! through the moonbox guest and prints one JSON line per case to stdout, in
//! case order, in the shape every moonbox host prints:
//!
//! ```text
//! {"name":…,"ok":true,"values":"<the guest's JSON text>","output":[…],"stats":{…}}
//! {"name":…,"ok":false,"kind":"<error-kind>","message":…,"chunk":…,"line":…,"output":[…],"stats":{…}}
//! {"name":…,"ok":false,"kind":"create","message":…}
//! ```
//!
//! This program is a wasm32-wasip2 command: it imports the guest's `lua`
//! interface and exports `wasi:cli/run`. Composed with the guest (and with a
//! component that provides the guest's `capabilities` import), it runs under
//! `wasmtime run`. It does not judge the results; `runtimes/check.py` does.
//!
//! Every case gets a new session, dropped when the case ends. All sessions
//! live in the one guest instance of the composition, so the host's outer
//! limits (fuel, memory) apply to the run as a whole, not to each case.

use std::io::Write;
use std::process::ExitCode;

use serde_json::{Map, Value, json};

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
    Capability, Config, Determinism, ErrorKind, Limits, Module, Stats,
};

/// The case list.
const CASES: &str = include_str!("../../../cases.json");

/// The chunk name used when the case list names none.
const DEFAULT_CHUNK_NAME: &str = "main.lua";

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

/// Runs one case in a new session and returns its result line.
fn run_case(config: &Value, chunk_name: &str, case: &Value) -> Value {
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

    match session.eval(script, chunk_name) {
        Ok(success) => json!({
            "name": name,
            "ok": true,
            // The guest's JSON text, passed through untouched so that number
            // formatting (`1` versus `1.0`, `-0.0`) is exactly the guest's.
            "values": success.values,
            "output": success.output,
            "stats": stats_json(&success.stats),
        }),
        Err(failure) => {
            let error = failure.error;
            json!({
                "name": name,
                "ok": false,
                "kind": kind_name(error.kind),
                "message": error.message,
                "chunk": error.chunk,
                "line": error.line,
                "output": failure.output,
                "stats": stats_json(&failure.stats),
            })
        }
    }
    // `session` is dropped here, which drops the guest's resource.
}

fn create_failure(name: &Value, message: &str) -> Value {
    json!({"name": name, "ok": false, "kind": "create", "message": message})
}

fn stats_json(stats: &Stats) -> Value {
    json!({
        "instructions": stats.instructions,
        "peak-memory-bytes": stats.peak_memory_bytes,
        "capability-calls": stats.capability_calls,
    })
}

/// The WIT name of an error kind.
fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Syntax => "syntax",
        ErrorKind::Runtime => "runtime",
        ErrorKind::Sandboxed => "sandboxed",
        ErrorKind::Capability => "capability",
        ErrorKind::InstructionLimit => "instruction-limit",
        ErrorKind::CallDepth => "call-depth",
        ErrorKind::MemoryLimit => "memory-limit",
        ErrorKind::StringSize => "string-size",
        ErrorKind::OutputLimit => "output-limit",
        ErrorKind::InvalidValue => "invalid-value",
    }
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
                source: string(&m["source"], "config.modules[].source")?,
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
                doc: c["doc"].as_str().unwrap_or_default().to_owned(),
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
