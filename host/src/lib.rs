//! Run untrusted Lua 5.4 inside two walls.
//!
//! moonbox runs the reference Lua 5.4 interpreter compiled to a WebAssembly
//! component, on wasmtime. Scripts (often written by AI agents) get full Lua
//! with coroutines, but no files, environment, network or process control:
//! they reach the world only through the [`Capability`] functions the host
//! chooses, and every eval runs under finite [`Limits`].
//!
//! ```
//! use moonbox::{Capability, CapabilityError, ErrorKind, Sandbox};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let sandbox = Sandbox::builder()
//!     .capability(Capability::sync("weather.today", |_ctx, (city,): (String,)| {
//!         Ok::<_, CapabilityError>(format!("sunny in {city}"))
//!     }))
//!     .build()?;
//!
//! let out = sandbox.eval("print(weather.today('Lisbon')) return 6 * 7").await?;
//! assert_eq!(out.output, "sunny in Lisbon\n");
//! assert_eq!(out.values, [serde_json::json!(42)]);
//!
//! let err = sandbox.eval("while true do end").await.unwrap_err();
//! assert_eq!(err.kind, ErrorKind::InstructionLimit);
//! # Ok(()) }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
//! ```
//!
//! # Core concepts
//!
//! - [`Engine`]: wasmtime with the guest compiled for it (a few hundred
//!   milliseconds, or about one with a cache directory). Sandboxes share
//!   [`Engine::shared`] (or [`Engine::shared_metered`], when they need fuel)
//!   unless given their own.
//! - [`Sandbox`]: an engine plus a configuration. Cheap to clone,
//!   `Send + Sync`: share one.
//! - [`Sandbox::eval`]: a fresh, isolated instance per call, discarded after.
//! - [`Session`]: one instance whose Lua globals persist across evals, with
//!   a private context `T` that capabilities see and scripts never do.
//! - [`EvalOutput`] and [`EvalError`]: what an eval produced, or why it
//!   failed. An error's `Display` is the one line to show a model; its kind
//!   says what happened. [`Report`] is their one JSON form.
//!
//! # Security model
//!
//! The inner wall is the Lua sandbox inside the guest: removed functions,
//! deterministic limits on instructions, call depth, string size, heap and
//! output, none of which `pcall` can catch. The outer wall is wasmtime: fuel,
//! a wall-clock timeout (epochs), a linear-memory cap, a wasm stack cap, and
//! WASI that grants nothing. See docs/security.md for what each guarantees
//! and where the guarantees end.
//!
//! # Async and cancellation
//!
//! Evals are async and run on tokio; long scripts yield every few
//! milliseconds so that other tasks progress. Dropping an eval's future
//! discards a fresh instance, or poisons a session.

#![deny(missing_docs)]
#![allow(
    clippy::result_large_err,
    reason = "EvalError is a plain record that callers match on; boxing it would only add indirection"
)]
#![warn(unreachable_pub)]

mod arguments;
mod bindings;
mod capability;
pub mod catalog;
mod config;
mod contract;
mod diagnostic;
mod engine;
mod error;
mod files;
mod governance;
mod host;
mod limits;
mod outcome;
mod output;
mod prepared;
mod records;
mod report;
mod sandbox;
mod schema;
mod script;
mod session;
mod text;
pub mod tool;
mod wasi;

pub use capability::{Args, ArgsSchema, Capability, CapabilityError};
pub use config::{DEFAULT_CHUNK_NAME, Determinism};
pub use diagnostic::{Diagnostic, Finding};
pub use engine::{Engine, EngineBuilder};
pub use error::{ConfigError, Error, ErrorKind, EvalError};
pub use governance::{Approval, ApprovalRequest, Approver, CallOutcome, CallRecord};
pub use limits::{LimitError, Limits};
pub use outcome::{EvalOutput, File, Output, Stats};
pub use output::{FIELDS_DROPPED, LOG_EVENT_BYTES, LogEvent, LogLevel, LogSink, OutputSink};
pub use records::Records;
pub use report::{Report, ReportError, ReportFile};
pub use sandbox::{Sandbox, SandboxBuilder};
pub use script::{CancelHandle, Script};
pub use session::{Session, StartTimes};

#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct Readme;

#[cfg(doctest)]
#[doc = include_str!("../../docs/embedding.md")]
struct Embedding;

const _: () = {
    const fn assert_send<T: Send>() {}
    const fn assert_send_sync<T: Send + Sync>() {}
    // A session is one store: it moves between tasks, one user at a time.
    assert_send::<Session<()>>();
    assert_send_sync::<Sandbox>();
    assert_send_sync::<Engine>();
    assert_send_sync::<Capability<()>>();
    assert_send_sync::<EvalError>();
    assert_send_sync::<EvalOutput>();
    assert_send_sync::<Report>();
    assert_send_sync::<Error>();
    assert_send_sync::<CancelHandle>();
    assert_send_sync::<Script>();
    assert_send_sync::<Approver>();
    assert_send_sync::<CallRecord>();
};
