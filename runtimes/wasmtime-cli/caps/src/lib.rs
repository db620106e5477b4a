//! The host side of the shared case list (`runtimes/cases.json`) as a
//! component that exports `moonbox:sandbox/output` and
//! `moonbox:sandbox/capabilities`, plus `moonbox:wasmtime-cli/collected` for
//! the driver.
//!
//! Composed in front of the moonbox guest, it satisfies the guest's non-WASI
//! imports, so the composition runs under a host that links nothing but
//! WASI, such as the stock `wasmtime` CLI.
//!
//! - `output.write` keeps the bytes the script writes, bounded by the limit
//!   the driver sets for each eval, and `collected.take` hands them to the
//!   driver when the eval ends; `output.log` events are kept the same way
//!   (each charged its message and fields bytes plus 32, as the guest charges
//!   them) and handed over by `collected.take-logs` as JSON text.
//! - `capabilities` implements the case list's `capability-behaviour`:
//!   `records.get(id)` replies with the record stored under `id` in the case
//!   list's `records` as JSON, or nil when there is none; `cases.fail(message)`
//!   always fails with `cases.fail: <message>`. `call-many` runs the calls
//!   one after another.

use std::sync::{Mutex, OnceLock};

use serde_json::Map;

#[path = "../../../../host/src/contract.rs"]
mod contract;

mod bindings {
    wit_bindgen::generate!({
        // The moonbox contract first, then the worlds that use it.
        path: ["../../../wit", "../wit"],
        world: "moonbox:wasmtime-cli/caps",
        // Also generate `moonbox:sandbox/types`, which the exports use but
        // which lives in another package than this world.
        generate_all,
    });
}

use bindings::exports::moonbox::sandbox::capabilities::{CallRequest, Guest as Capabilities};
use bindings::exports::moonbox::sandbox::output::Guest as Output;
use bindings::exports::moonbox::wasmtime_cli::collected::Guest as Collected;
use bindings::moonbox::sandbox::types::{FileChange, LogLevel, Value};

/// The case list, embedded at build time; its `records` back `records.get`.
const CASES: &str = include_str!("../../../cases.json");

/// The case list's `records`, parsed on first use.
fn records() -> &'static Map<String, serde_json::Value> {
    static RECORDS: OnceLock<Map<String, serde_json::Value>> = OnceLock::new();
    RECORDS.get_or_init(|| {
        let file: serde_json::Value =
            serde_json::from_str(CASES).expect("the embedded case list is JSON");
        match file.get("records") {
            Some(serde_json::Value::Object(records)) => records.clone(),
            _ => Map::new(),
        }
    })
}

/// The output of the eval that is running.
struct Collector {
    /// The bytes kept so far.
    bytes: Vec<u8>,
    /// How many bytes may still be kept.
    room: u64,
    /// The log events kept so far, as the members of a JSON array.
    logs: String,
    /// How many bytes of log events may still be kept.
    log_room: u64,
}

/// What each log event is charged beyond its message and fields bytes, as
/// the guest charges it.
const LOG_EVENT_BYTES: u64 = contract::LOG_EVENT_BYTES;

/// One collector for the component instance. The guest calls `write` and
/// the driver calls `start` and `take`, each between the driver's calls
/// into the guest, never at the same time; the mutex only makes the shared
/// state safe to reach from a `static`.
static OUTPUT: Mutex<Collector> = Mutex::new(Collector {
    bytes: Vec::new(),
    room: 0,
    logs: String::new(),
    log_room: 0,
});

/// The collector. A poisoned lock cannot happen here (a panic aborts the
/// component), but taking the state back costs nothing and never panics.
fn output() -> std::sync::MutexGuard<'static, Collector> {
    OUTPUT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

struct Caps;

impl Output for Caps {
    /// Keeps what fits under the limit. The guest already stops the script
    /// at `max-output-bytes`; the bound here keeps this component's memory
    /// bounded without relying on that.
    fn write(bytes: Vec<u8>) {
        let mut output = output();
        let fits = usize::try_from(output.room).map_or(bytes.len(), |room| room.min(bytes.len()));
        output.bytes.extend_from_slice(&bytes[..fits]);
        output.room -= fits as u64;
    }

    /// Keeps the event while it fits, as JSON text: the fields are the
    /// guest's JSON object, spliced in verbatim so numbers stay exact.
    fn log(level: LogLevel, message: String, fields: String) {
        let mut output = output();
        let cost = (message.len() as u64)
            .saturating_add(fields.len() as u64)
            .saturating_add(LOG_EVENT_BYTES);
        if cost > output.log_room {
            return;
        }
        output.log_room -= cost;
        let level = match level {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error => "error",
        };
        let message = serde_json::Value::from(message).to_string();
        if !output.logs.is_empty() {
            output.logs.push(',');
        }
        output.logs.push_str(&format!(
            r#"{{"level":"{level}","message":{message},"fields":{fields}}}"#
        ));
    }

    /// Dropped: the driver reports the guest's own account of the files,
    /// and `wasmtime run` ends an eval it stops without one
    /// (docs/other-runtimes.md).
    fn file(_change: FileChange) {}
}

impl Collected for Caps {
    fn start(limit: u64) {
        let mut output = output();
        output.bytes = Vec::new();
        output.room = limit;
        output.logs = String::new();
        output.log_room = limit;
    }

    fn take() -> Vec<u8> {
        let mut output = output();
        output.room = 0;
        std::mem::take(&mut output.bytes)
    }

    fn take_logs() -> String {
        let mut output = output();
        output.log_room = 0;
        format!("[{}]", std::mem::take(&mut output.logs))
    }
}

impl Capabilities for Caps {
    /// One `value` per Lua argument; the guest has already checked the
    /// count against the capability's arity. An `ok` reply becomes the Lua
    /// result, an `err` reply a catchable Lua error. Nothing here panics: a
    /// panic would trap the whole composition.
    fn call(name: String, args: Vec<Value>) -> Result<Value, String> {
        match name.as_str() {
            "records.get" => Ok(records_get(&args)),
            "cases.fail" => Err(cases_fail(&args)),
            _ => Err(format!("{name}: no such capability")),
        }
    }

    /// The calls one after another; the replies are in request order.
    fn call_many(calls: Vec<CallRequest>) -> Vec<Result<Value, String>> {
        calls
            .into_iter()
            .map(|request| Self::call(request.name, request.args))
            .collect()
    }
}

/// The record under `args[0]` as JSON, or nil when there is none (or the id
/// is not a string).
fn records_get(args: &[Value]) -> Value {
    let record = match args.first() {
        Some(Value::Text(id)) => records().get(id),
        _ => None,
    };
    match record {
        Some(record) => Value::Json(record.to_string()),
        None => Value::Nil,
    }
}

/// The error text: `cases.fail: ` and the message (an argument that is not
/// a string is written as JSON).
fn cases_fail(args: &[Value]) -> String {
    let message = match args.first() {
        Some(Value::Text(text)) => text.clone(),
        Some(other) => value_text(other),
        None => String::new(),
    };
    format!("cases.fail: {message}")
}

/// A `value` as JSON text, for messages.
fn value_text(value: &Value) -> String {
    match value {
        Value::Nil => "null".to_owned(),
        Value::Boolean(b) => b.to_string(),
        Value::Integer(n) => n.to_string(),
        Value::Float(x) => serde_json::Value::from(*x).to_string(),
        Value::Text(text) => serde_json::Value::from(text.as_str()).to_string(),
        Value::Json(json) => json.clone(),
    }
}

bindings::export!(Caps with_types_in bindings);
