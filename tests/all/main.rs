//! End-to-end tests: the committed guest component, driven through the
//! public API of the `moonbox` crate. One module per area; `suite` holds
//! the reference checks, ignored unless asked for (`just compat`).

mod args;
mod capabilities;
mod check;
mod determinism;
mod engines;
mod eval;
mod faults;
mod files;
mod governance;
mod host_memory;
mod hostile;
mod inputs;
mod json;
mod limits;
mod log;
mod parallel;
mod runtimes;
mod sandbox;
mod sessions;
mod snapshot;
mod suite;
mod support;
mod typed;
mod values;
