//! The native addon of the moonbox Node package: the `moonbox` crate's
//! sandboxes, sessions, capabilities and reports, which the package's
//! JavaScript (`lib/index.js`) gives its public API.
//!
//! Nothing here is a rule of its own: limits, their defaults and bounds,
//! the error kinds, the report and its JSON are the crate's, and reach
//! JavaScript through [`crate_info`] and the report text. Evals run on
//! napi's tokio runtime and answer a promise, so Node's event loop keeps
//! running while Lua does; capabilities are JavaScript functions called
//! on the main thread (see [`capability`]).

mod capability;
mod sandbox;

pub use capability::NativeMailbox;

use moonbox::{Determinism, ErrorKind, Limits, Report};
use napi_derive::napi;
use serde_json::json;

pub use sandbox::{
    Canceller, CapabilityOptions, EvalOptions, EvalResult, ModuleOptions, NativeSandbox,
    NativeSession, SandboxOptions, take_engine_warning,
};

/// What the crate decides and the package exposes, as one JSON object:
/// the default limits (`Limits::default()`, snake_case, `timeout` in
/// milliseconds), every error kind in order with the limit kinds apart,
/// the report version, the default chunk name and deterministic mode's
/// defaults, and the bounds on inputs, call budgets and capability
/// arguments (the most any capability may take, and the most one
/// takes when it does not say).
#[napi]
pub fn crate_info() -> String {
    json!({
        "limits": Limits::default(),
        "error_kinds": ErrorKind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
        "limit_kinds": ErrorKind::ALL
            .iter()
            .filter(|k| k.is_limit())
            .map(|k| k.as_str())
            .collect::<Vec<_>>(),
        "report_version": Report::VERSION,
        "default_chunk_name": moonbox::DEFAULT_CHUNK_NAME,
        "determinism": Determinism::default(),
        "max_inputs": moonbox::Limits::MAX_INPUTS,
        "max_call_budget": moonbox::Limits::MAX_CALL_BUDGET,
        "max_capability_args": moonbox::Limits::MAX_CAPABILITY_ARGS,
        "default_capability_max_args": <Vec<serde_json::Value> as moonbox::Args>::MAX_ARGS,
    })
    .to_string()
}

/// Runs the `moonbox` command line (`args` with the program name first)
/// on the calling thread, as the Rust `moonbox` binary does, and answers
/// its exit status. Standard output is flushed before it returns, since
/// the caller exits the process right after.
#[napi]
pub fn run_cli(args: Vec<String>) -> u32 {
    let status = moonbox_cli::main_from(args);
    let _ = std::io::Write::flush(&mut std::io::stdout());
    u32::from(status)
}
