//! What moonbox's servers share, so that `moonbox serve` and `moonbox mcp
//! --http` meet hostile clients with the same defences:
//!
//! - [`ListenConfig`]: the bounds of the HTTP transport (connections open,
//!   and the time a client has to send headers, send a body and take an
//!   answer), each with one default and one largest value;
//! - [`accept::serve`]: the accept loop that enforces them, closes the
//!   connection idle longest when the cap is reached, and answers new
//!   connections during a drain instead of resetting them;
//! - [`body::read`]: a request body read within a size and a time bound;
//! - [`reply::Budget`]: the memory for answers being sent, shared by every
//!   connection.
//!
//! The crate knows HTTP and nothing of Lua, MCP or the HTTP API: each
//! server is a protocol adapter over it.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod accept;
pub mod body;
mod config;
mod io;
pub mod reply;

pub use config::{ConfigError, ListenConfig};
