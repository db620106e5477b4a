//! The moonbox guest: reference Lua 5.4 behind the `moonbox:sandbox` WIT
//! contract (wit/moonbox.wit; docs/wit.md explains it for host authors).
//!
//! Layout:
//! - `lua`: the raw Lua C API and the rules for calling it (how a Lua error
//!   crosses Rust frames);
//! - `vm`: the base layer, which imports no feature: the Lua state, its
//!   allocator (heap and string limits), the first limit that tripped, and
//!   the slots in which each feature below keeps its own state;
//! - `limits`: the instruction budget (instruction and call-depth limits) and the
//!   helpers that raise the guest's own errors (a tripped limit, a tagged
//!   error);
//! - `output`: `print` and `io.stdout`, writing to the host's stream;
//! - `clock`: the C library's `time()`, fixed in deterministic mode;
//! - `environ`: the C library's `getenv`, which finds no variables;
//! - `stdio`: the C library's stdio functions the guest calls, for the C
//!   streams it makes;
//! - `errno`: the errno values the guest sets, in Linux's numbering, and
//!   the C library's `strerror` to match;
//! - `files`: the session's files, behind the C library's `fopen`,
//!   `remove`, `rename`... and `os.tmpname`, `io.tmpfile`;
//! - `sandbox`: the standard library as scripts see it, and the names it
//!   removes;
//! - `debuglib`: the safe `debug` functions every script has;
//! - `coroutines`: the coroutine entry points the limits need;
//! - `capability`: host capabilities as Lua functions;
//! - `parallel`: `parallel(items, fn)`, capability calls made together;
//! - `json`: the Lua ↔ boundary value rules;
//! - `jsonlib`: the `json` library scripts use, by those same rules;
//! - `jsontext`: JSON text from the host pushed as Lua values without a tree;
//! - `check`: the static analysis behind `check`, on the compiled chunk;
//! - `snapshot`: the Lua state built at build time, which the first session
//!   of an instance takes;
//! - `session`: eval and check;
//! - `bindings`: the WIT bindings (the only generated code), whose imports
//!   the features call;
//! - `wit`: the exported `session` resource and the conversions at the
//!   edge between the contract's types and the guest's own.

mod bindings;
mod capability;
mod check;
mod clock;
#[path = "../../host/src/contract.rs"]
mod contract;
mod coroutines;
mod debuglib;
mod environ;
mod errno;
mod files;
mod json;
mod jsonlib;
mod jsontext;
mod limits;
mod lua;
mod output;
mod parallel;
mod sandbox;
mod session;
mod snapshot;
mod stdio;
mod vm;
mod wit;
