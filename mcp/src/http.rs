//! The streamable HTTP transport: rmcp's tower service at `/mcp`, behind a
//! bearer-token check when a token is configured.
//!
//! Defences, in the order a request meets them:
//! 1. the token (when configured): `Authorization: Bearer TOKEN`, compared
//!    in constant time, else 401;
//! 2. `Host` (on a loopback address): only loopback names and the
//!    listening address, else 403, so that a DNS-rebound name cannot reach
//!    the server;
//! 3. `Origin`: absent, loopback, or on the allow-list, else 403, so that
//!    a web page the user visits cannot drive the server;
//! 4. the body: read whole within the message bound and
//!    [`ListenConfig::body_timeout`](moonbox_service::ListenConfig::body_timeout),
//!    else 413 or 408;
//! 5. the ids: a request whose JSON-RPC id is in flight on its MCP
//!    connection, 409 with a JSON-RPC error (the transport would drop the
//!    first call's answer and lose its cancellation);
//! 6. the connection cap: an `initialize` past
//!    [`HttpConfig::max_connections`] open connections, 503.
//!
//! On the way out, each answer over 64 KiB holds its part of
//! [`HttpConfig::reply_memory`] until it is written (see
//! [`moonbox_service::reply::Pending`]), and nothing keeps it after that:
//! the transport's cache of a finished call's events, kept for clients
//! that resume a broken stream, is dropped once the call is answered.
//!
//! Beneath them all is the accept loop `moonbox serve` uses too
//! ([`moonbox_service::accept`]): a cap on TCP connections, and header and
//! write timeouts, from [`HttpConfig::listen`].

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use moonbox_service::ListenConfig;
use moonbox_service::accept::{Places, Refusal, Refusals};
use moonbox_service::body;
use moonbox_service::reply::{self, Budget, Pending};

use crate::config::HttpConfig;
use crate::connections::{Capped, limit_connections};
use crate::error::Error;
use crate::ids::{InFlight, distinct_ids};
use crate::server::McpServer;

/// The path the MCP endpoint is served at.
pub const PATH: &str = "/mcp";

/// How long an MCP connection may go without traffic (a request from the
/// client, a message from the server) before the server closes it, at the
/// least: it is always longer than the eval timeout, so that a quiet call
/// is never cut off while it runs.
const CONNECTION_KEEP_ALIVE: Duration = Duration::from_secs(300);

/// The keep-alive for a sandbox whose evals may run for `timeout`: a minute
/// past the timeout, and never less than [`CONNECTION_KEEP_ALIVE`].
fn keep_alive(timeout: Duration) -> Duration {
    CONNECTION_KEEP_ALIVE.max(timeout.saturating_add(Duration::from_secs(60)))
}

/// A bound HTTP server, ready to [`run`](HttpServer::run).
pub struct HttpServer {
    listener: TcpListener,
    router: Router,
    listen: ListenConfig,
    server: McpServer,
    stop: CancellationToken,
    sweeper: CancellationToken,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("addr", &self.listener.local_addr().ok())
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// Checks `http` and binds its address; the MCP endpoint is at
    /// [`PATH`] (`/mcp`).
    ///
    /// # Errors
    /// [`Error::TokenRequired`] for a non-loopback address without a token,
    /// [`Error::BadToken`], [`Error::BadOrigin`] or [`Error::Config`] for
    /// unusable settings, [`Error::Bind`] when the address cannot be bound.
    ///
    /// # Cancel safety
    /// Dropping the future before it completes binds nothing.
    pub async fn bind_http(self, http: HttpConfig) -> Result<HttpServer, Error> {
        http.validate()?;
        reply::check(self.config().max_reply_bytes, http.reply_memory)
            .map_err(|e| Error::Config(e.to_string()))?;
        let listener = TcpListener::bind(http.addr)
            .await
            .map_err(|source| Error::Bind {
                addr: http.addr,
                source,
            })?;
        let stop = CancellationToken::new();
        let router = self.http_router(&http, &stop);
        let sweeper = self.spawn_sweeper();
        Ok(HttpServer {
            listener,
            router,
            listen: http.listen,
            server: self,
            stop,
            sweeper,
        })
    }

    /// The routes of the MCP endpoint and the defences in front of it; the
    /// transport's event streams end when `stop` is cancelled.
    pub(crate) fn http_router(&self, http: &HttpConfig, stop: &CancellationToken) -> Router {
        let mut origins: Vec<String> = HttpConfig::LOOPBACK_ORIGINS
            .iter()
            .map(|o| (*o).to_owned())
            .collect();
        origins.extend(http.allowed_origins.iter().cloned());
        let max_body = self.max_message_bytes();
        let mut config = StreamableHttpServerConfig::default()
            .with_allowed_origins(origins)
            .enforce_origin_validation()
            .with_max_request_body_bytes(max_body)
            .with_cancellation_token(stop.child_token());
        if http.addr.ip().is_loopback() {
            // The loopback names, and the address itself (127.0.0.2 is
            // loopback too).
            let mut hosts = vec![
                "localhost".to_owned(),
                "127.0.0.1".to_owned(),
                "::1".to_owned(),
            ];
            hosts.push(http.addr.ip().to_string());
            config = config.with_allowed_hosts(hosts);
        } else {
            // Clients reach a public address by names this server cannot
            // know; the token, required here, is what keeps strangers out.
            config = config.disable_allowed_hosts();
        }
        let mut connections = LocalSessionManager::default();
        connections.session_config.keep_alive = Some(keep_alive(self.sandbox_timeout()));
        // A finished call's events (its answer among them) are not kept
        // for a resume: they would hold every answer for the cache's time
        // whether or not its client took it, beyond any bound.
        connections.session_config.completed_cache_ttl = Duration::ZERO;
        let connections = Arc::new(Capped::new(connections, http.max_connections));
        let server = self.clone();
        let service =
            StreamableHttpService::new(move || Ok(server.for_connection()), connections, config);
        // The last layer added is the first a request meets.
        let bodies = Arc::new(Bodies {
            max: max_body,
            timeout: http.listen.body_timeout,
            reading: tokio::sync::Semaphore::new(MAX_READING),
        });
        let mut router = Router::new()
            .route_service(PATH, service)
            .layer(middleware::from_fn_with_state(
                Budget::new(http.reply_memory),
                hold_replies,
            ))
            .layer(middleware::from_fn_with_state(
                http.max_connections,
                limit_connections,
            ))
            .layer(middleware::from_fn_with_state(
                Arc::new(InFlight::default()),
                distinct_ids,
            ))
            .layer(middleware::from_fn_with_state(bodies, read_body));
        if let Some(token) = &http.token {
            router = router.layer(middleware::from_fn_with_state(
                Arc::new(Token::new(token)),
                require_token,
            ));
        }
        router
    }
}

impl HttpServer {
    /// The address the server listens on (with the port the system chose
    /// when the configured port is 0).
    ///
    /// # Errors
    /// The system's error when the socket cannot say.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until the process ends; accept errors (out of file
    /// descriptors, for one) are retried, not returned.
    ///
    /// # Errors
    /// None today; the `Result` leaves room for a transport that can fail.
    ///
    /// # Cancel safety
    /// Dropping the future stops accepting connections and closes the MCP
    /// sessions, cancelling their calls in flight.
    pub async fn run(self) -> Result<(), Error> {
        self.run_until(std::future::pending()).await
    }

    /// Serves until `shutdown` completes, then drains: calls in flight
    /// finish and are answered (for at most the eval timeout and a few
    /// seconds) while new calls are refused; then the MCP sessions close
    /// (their event streams end), idle connections close, and new
    /// connections are answered `503 draining` until the last open one has
    /// closed, when this returns.
    ///
    /// # Errors
    /// As for [`HttpServer::run`].
    ///
    /// # Cancel safety
    /// As for [`HttpServer::run`].
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), Error> {
        // The drain waits for every open response, and an event stream
        // (a GET, or a call's SSE reply) ends only when its session is
        // cancelled: cancel them as the drain begins.
        let stop = self.stop.clone();
        let _guards = (self.stop.drop_guard(), self.sweeper.drop_guard());
        let (drain, draining) = tokio::sync::watch::channel(false);
        let accept = moonbox_service::accept::serve(
            self.listener,
            self.router,
            self.listen,
            Places::new(self.listen.max_connections),
            refusals(self.listen.max_connections),
            draining,
        );
        tokio::pin!(accept);
        tokio::pin!(shutdown);
        tokio::select! {
            () = &mut accept => return Ok(()),
            () = &mut shutdown => {}
        }
        // Calls in flight finish and are answered; new ones are refused.
        let server = self.server;
        let finish = server.drain();
        tokio::pin!(finish);
        tokio::select! {
            () = &mut accept => return Ok(()),
            _ = &mut finish => {}
        }
        stop.cancel();
        let _ = drain.send(true);
        accept.await;
        Ok(())
    }
}

/// What the accept loop answers a connection it will not serve.
fn refusals(max: usize) -> Refusals {
    Refusals {
        full: Refusal::error(
            StatusCode::SERVICE_UNAVAILABLE,
            "too_many_connections",
            &format!(
                "the server holds {max} TCP connections open, its bound, and none is idle; try again shortly"
            ),
            1,
        ),
        draining: Refusal::error(
            StatusCode::SERVICE_UNAVAILABLE,
            "draining",
            "the server is stopping and takes no new requests",
            1,
        ),
        // The MCP server keeps no metrics to count them in.
        on_refused: Box::new(|_| {}),
    }
}

/// Gives the request its share of the memory for answers (the handler
/// reserves its answer's size in it) and makes the response's large frames
/// hold their parts until written.
async fn hold_replies(State(budget): State<Budget>, mut request: Request, next: Next) -> Response {
    let pending = Pending::new(budget);
    request.extensions_mut().insert(pending.clone());
    let response = next.run(request).await;
    response.map(|body| pending.hold_frames(body))
}

/// The bound and the time limit of a request body, and the places for
/// reading them.
struct Bodies {
    max: usize,
    timeout: Duration,
    reading: tokio::sync::Semaphore,
}

/// Bodies over [`body::SMALL_BODY_BYTES`] read at once: each is at most
/// the message bound (twice the code bound and 1 MiB), so this bounds the
/// memory they hold.
const MAX_READING: usize = 16;

/// Reads a request's body whole, within the message bound and the body
/// timeout, before the MCP transport sees it: a client that sends a body
/// slowly, or never finishes it, is answered `408` and holds memory only
/// that long.
///
/// # Cancel safety
/// Dropping it drops what was read.
async fn read_body(State(bodies): State<Arc<Bodies>>, request: Request, next: Next) -> Response {
    // A small body needs no place (see `body::SMALL_BODY_BYTES`), so that
    // large ones that stall cannot lock out a client's small calls.
    let small = body::is_small(request.headers());
    let max = if small {
        bodies.max.min(body::SMALL_BODY_BYTES)
    } else {
        bodies.max
    };
    let _reading = if small {
        None
    } else {
        let Ok(place) = bodies.reading.try_acquire() else {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "1")],
                format!("the server is reading {MAX_READING} request bodies over 64 KiB at once, its bound; try again shortly\n"),
            )
                .into_response();
        };
        Some(place)
    };
    let (parts, body) = request.into_parts();
    match body::read(&parts.headers, body, max, bodies.timeout).await {
        Ok(bytes) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Err(e) => (e.status(), format!("{e}\n")).into_response(),
    }
}

/// The configured bearer token, kept as its SHA-256 digest.
///
/// A header's token is hashed too and the two digests compared in constant
/// time: a comparison of the tokens themselves would stop early at a
/// length mismatch, telling a client the token's length.
struct Token([u8; 32]);

impl Token {
    fn new(token: &str) -> Token {
        Token(digest(token))
    }

    /// Whether an `Authorization` header carries this token.
    fn admits(&self, header: Option<&HeaderValue>) -> bool {
        let Some(value) = header.and_then(|v| v.to_str().ok()) else {
            return false;
        };
        let Some((scheme, given)) = value.split_once(' ') else {
            return false;
        };
        scheme.eq_ignore_ascii_case("bearer") && bool::from(digest(given.trim()).ct_eq(&self.0))
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Passes a request that carries the token on; answers any other with 401.
///
/// # Cancel safety
/// Holds no state: dropping it drops the request.
async fn require_token(State(token): State<Arc<Token>>, request: Request, next: Next) -> Response {
    if token.admits(request.headers().get(header::AUTHORIZATION)) {
        return next.run(request).await;
    }
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        "Unauthorized: send Authorization: Bearer <token>\n",
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_outlives_the_longest_eval() {
        assert_eq!(keep_alive(Duration::from_secs(5)), CONNECTION_KEEP_ALIVE);
        assert_eq!(
            keep_alive(Duration::from_secs(3600)),
            Duration::from_secs(3660)
        );
    }

    #[test]
    fn only_the_exact_token_is_admitted() {
        let token = Token::new("0123456789abcdef0123456789abcdef");
        let header = |s: &str| HeaderValue::from_str(s).ok();
        assert!(token.admits(header("Bearer 0123456789abcdef0123456789abcdef").as_ref()));
        assert!(token.admits(header("bearer 0123456789abcdef0123456789abcdef").as_ref()));
        assert!(!token.admits(header("Bearer 0123456789abcdef0123456789abcde").as_ref()));
        assert!(!token.admits(header("Bearer 0123456789abcdef0123456789abcdef0").as_ref()));
        assert!(!token.admits(header("Basic 0123456789abcdef0123456789abcdef").as_ref()));
        assert!(!token.admits(header("0123456789abcdef0123456789abcdef").as_ref()));
        assert!(!token.admits(None));
    }
}
