//! `moonbox serve`: a moonbox sandbox as an HTTP JSON service.
//!
//! Routes (docs/serve.md has the whole contract):
//! - `POST /v1/eval`: `{"code", "inputs"?, "chunk_name"?, "limits"?}` runs
//!   in a fresh sandbox and answers the [`moonbox::Report`], the same
//!   object `moonbox run --json` prints, whether the script succeeded or
//!   not;
//! - `POST /v1/sessions` opens a session (`{"limits"?}`), `POST
//!   /v1/sessions/{id}/eval` runs in it, `DELETE /v1/sessions/{id}` closes
//!   it;
//! - `GET /healthz`, `GET /readyz` (503 while draining), `GET /metrics`
//!   (Prometheus text).
//!
//! A request the server does not run gets a status and
//! `{"error": {"kind", "message"}}`: 400 for a malformed body or a limit
//! above the server's ceiling, 401 without a known key, 404, 409 for a
//! busy session, 413 past the body or code bound, 429 with `Retry-After`
//! when the server is full or the tenant's quota is spent, 503 while
//! draining or past the connection cap.
//!
//! Admission is bounded everywhere: connections open and the time to send
//! headers and bodies and to take answers (the accept loop of
//! [`moonbox_service`], shared with `moonbox mcp --http`), evals running at once, requests
//! waiting for a turn (and for how long), sessions open, body and code
//! bytes, and per-tenant instructions and wall time per minute from a
//! [`Keys`] file. Without keys the server listens only on loopback.

#![deny(missing_docs)]
#![warn(unreachable_pub)]
#![allow(
    clippy::result_large_err,
    reason = "ApiError and EvalError are plain records answered to the client; boxing them would only add indirection"
)]

mod api;
mod config;
mod error;
mod hex;
mod http;
mod keys;
mod metrics;
mod nats;
mod quota;
mod readers;
mod reply;
mod service;
mod sessions;

pub use config::ServeConfig;
pub use error::Error;
pub use http::Bound;
pub use keys::{
    DEFAULT_WALL_MS_PER_MINUTE, Keys, MAX_KEYS_FILE_BYTES, MAX_TENANT_NAME, MAX_TENANTS, Tenant,
};
pub use nats::{
    CLAIM_HEADER, CLAIM_USE_WITHIN, DEFAULT_PREFIX, DEFAULT_REMOTE_CALL_BUDGET, NatsAuth,
    NatsConfig, RemoteError, RemoteSandbox, RemoteSession, Worker, remote_capability,
};
pub use service::Server;

/// Entry points for the fuzz targets (`fuzz/`): each transport's request
/// handling, end to end, without a socket or a NATS server. Not part of
/// the API.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::nats::answer_message as nats_message;

    /// What the HTTP API answers `input`, taken as all a client sent on
    /// one connection; see [`moonbox_service::accept::answer_bytes`].
    pub async fn http_bytes(server: &crate::Server, input: &[u8], max_output: usize) -> Vec<u8> {
        moonbox_service::accept::answer_bytes(server.router(), input, max_output).await
    }
}
