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
//! - [`reply`]: answers within a size bound, and [`reply::Budget`], the
//!   memory for answers being sent, shared by every connection;
//! - [`admission::Admission`]: turns to run and a bounded queue for them,
//!   with each tenant's share;
//! - [`sessions::Sessions`]: the open sessions, with caps in all and per
//!   owner and an idle time, for every server that keeps sessions.
//!
//! The crate knows HTTP and nothing of Lua, MCP or the HTTP API (a session
//! is any value with a way to stop it): each server is a protocol adapter
//! over it.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod accept;
pub mod admission;
pub mod body;
mod config;
mod io;
pub mod reply;
pub mod sessions;

pub use config::{ConfigError, ListenConfig};

/// The JSON body of an error answer, the one shape every moonbox server
/// uses: `{"error": {"kind": ..., "message": ..., "retry_after_secs": ...}}`,
/// the last only when a retry is advised.
///
/// ```
/// let body = moonbox_service::error_body("draining", "the server is stopping", Some(1));
/// assert_eq!(body["error"]["kind"], "draining");
/// assert_eq!(body["error"]["retry_after_secs"], 1);
/// ```
pub fn error_body(kind: &str, message: &str, retry_after_secs: Option<u64>) -> serde_json::Value {
    let mut error = serde_json::json!({"kind": kind, "message": message});
    if let Some(secs) = retry_after_secs {
        error["retry_after_secs"] = serde_json::json!(secs);
    }
    serde_json::json!({ "error": error })
}
