//! An MCP server that offers a moonbox sandbox to a model as tools.
//!
//! Four tools: `run_lua` runs a Lua 5.4 chunk (with optional named
//! `inputs`, `args`, mounted `files` and `stdin`, in an optional
//! `session`), `check_lua` checks one without running it, `new_session`
//! opens a session whose globals persist across calls, and `close_session`
//! closes one. Every `run_lua` result carries one line of text for the
//! model, the moonbox [`Report`](moonbox::Report) as `structuredContent`,
//! each file the script wrote as an embedded resource `file:///NAME` (when
//! the answer has room for them twice), and `isError` when the script
//! failed or hit a limit.
//!
//! The server speaks MCP over standard input and output
//! ([`McpServer::serve_stdio`]) or over streamable HTTP
//! ([`McpServer::bind_http`]), which checks `Origin` against an allow-list
//! and, when configured, a bearer token on every request.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let sandbox = moonbox::Sandbox::builder().build()?;
//! let server = moonbox_mcp::McpServer::new(sandbox, moonbox_mcp::ServerConfig::default())?;
//! server.serve_stdio().await?;
//! # Ok(()) }
//! ```
//!
//! # Cancellation and streamed output
//!
//! A `notifications/cancelled` for a running `run_lua` stops its eval
//! through the session's [`CancelHandle`](moonbox::CancelHandle). The
//! stopped Lua state cannot run code again, so a named session is then
//! restarted with fresh globals under the same id, and the call's result
//! says so; a session closed meanwhile is not. When a call carries a
//! `progressToken`, what the script writes is sent as
//! `notifications/progress` while it runs (coalesced, and bounded in
//! memory); the final result still carries all of it.

#![deny(missing_docs)]
#![warn(unreachable_pub)]
#![allow(
    clippy::result_large_err,
    reason = "EvalError is a plain record that callers match on; boxing it would only add indirection"
)]

mod answer;
mod config;
mod connections;
mod error;
mod files;
mod forwarder;
mod http;
mod ids;
mod lines;
mod logging;
mod progress;
mod server;
mod sessions;
pub mod upstream;

pub use config::{HttpConfig, ServerConfig};
pub use error::Error;
pub use http::{HttpServer, PATH};
pub use server::McpServer;

/// The environment variable the `moonbox mcp` command reads the HTTP bearer
/// token from. Code mode removes it from the environment of the upstream
/// servers it starts, so that they never see the token.
pub const TOKEN_ENV: &str = "MOONBOX_MCP_TOKEN";

/// Entry points for the fuzz targets (`fuzz/`): the HTTP transport's
/// request handling, end to end, without a socket. (The line transport is
/// public: [`McpServer::serve_io_until`].) Not part of the API.
#[doc(hidden)]
pub mod fuzzing {
    use crate::{HttpConfig, McpServer};

    /// What the HTTP endpoint configured by `http` answers `input`, taken
    /// as all a client sent on one connection; see
    /// [`moonbox_service::accept::answer_bytes`]. Its event streams end
    /// with the call.
    pub async fn http_bytes(
        server: &McpServer,
        http: &HttpConfig,
        input: &[u8],
        max_output: usize,
    ) -> Vec<u8> {
        let stop = tokio_util::sync::CancellationToken::new();
        let _ends = stop.clone().drop_guard();
        let router = server.http_router(http, &stop);
        moonbox_service::accept::answer_bytes(router, input, max_output).await
    }
}
