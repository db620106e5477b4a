//! The capabilities of the shared case list (`runtimes/cases.json`) as a
//! component that exports `moonbox:sandbox/capabilities`.
//!
//! Composed in front of the moonbox guest, it satisfies the guest's only
//! non-WASI import, so the composition runs under a host that links nothing
//! but WASI, such as the stock `wasmtime` CLI. It implements the case list's
//! `capability-behaviour`:
//!
//! - `records.get(id)` replies with the record stored under `id` in the case
//!   list's `records`, or `null` (nil in Lua) when there is none;
//! - `cases.fail(message)` always fails with `cases.fail: <message>`.

use std::sync::OnceLock;

use serde_json::{Map, Value};

mod bindings {
    wit_bindgen::generate!({
        // The moonbox contract first, then the worlds that use it.
        path: ["../../../wit", "../wit"],
        world: "moonbox:wasmtime-cli/caps",
    });
}

use bindings::exports::moonbox::sandbox::capabilities::Guest;

/// The case list, embedded at build time; its `records` back `records.get`.
const CASES: &str = include_str!("../../../cases.json");

/// The case list's `records`, parsed on first use.
fn records() -> &'static Map<String, Value> {
    static RECORDS: OnceLock<Map<String, Value>> = OnceLock::new();
    RECORDS.get_or_init(|| {
        let file: Value = serde_json::from_str(CASES).expect("the embedded case list is JSON");
        match file.get("records") {
            Some(Value::Object(records)) => records.clone(),
            _ => Map::new(),
        }
    })
}

struct Caps;

impl Guest for Caps {
    /// `args` is a JSON array with one element per Lua argument; the guest
    /// has already checked its length against the capability's arity. An
    /// `ok` reply is one JSON value, an `err` reply becomes a catchable Lua
    /// error. Nothing here panics: a panic would trap the whole composition.
    fn call(name: String, args: String) -> Result<String, String> {
        let args = match serde_json::from_str::<Value>(&args) {
            Ok(Value::Array(args)) => args,
            Ok(_) => return Err(format!("{name}: malformed arguments (not an array)")),
            Err(e) => return Err(format!("{name}: malformed arguments ({e})")),
        };
        match name.as_str() {
            "records.get" => Ok(records_get(&args)),
            "cases.fail" => Err(cases_fail(&args)),
            _ => Err(format!("{name}: no such capability")),
        }
    }
}

/// The record under `args[0]` as JSON text, or `null` when there is none
/// (or the id is not a string).
fn records_get(args: &[Value]) -> String {
    let record = args
        .first()
        .and_then(Value::as_str)
        .and_then(|id| records().get(id));
    match record {
        Some(record) => record.to_string(),
        None => "null".to_owned(),
    }
}

/// The error text: `cases.fail: ` and the message (a non-string argument is
/// written as JSON).
fn cases_fail(args: &[Value]) -> String {
    let message = match args.first() {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    format!("cases.fail: {message}")
}

bindings::export!(Caps with_types_in bindings);
