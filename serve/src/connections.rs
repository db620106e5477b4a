//! The HTTP connections: accepted within the server's cap, each served by
//! hyper on a task of its own with a time bound on request headers, and
//! closed gracefully when the server drains.
//!
//! A connection past [`ServeConfig::max_connections`] is answered `503
//! too_many_connections` and closed (past 64 such answers being written at
//! once, closed without one); a client that opens a connection and never
//! finishes its headers (or leaves a keep-alive connection idle) is closed
//! after [`ServeConfig::header_timeout`], so it holds a place, or a drain,
//! for that long at most. Writing an answer has no time bound of its own:
//! a client that never reads a large answer holds its place until the
//! drain's end.
//!
//! [`ServeConfig::max_connections`]: crate::ServeConfig::max_connections
//! [`ServeConfig::header_timeout`]: crate::ServeConfig::header_timeout

use std::io::ErrorKind;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::StatusCode;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

use crate::error::{ApiError, retry_secs};
use crate::service::Server;

/// Connections refused past the cap whose answers are being written at
/// once; past it a refused connection is closed without one.
const MAX_REFUSING: usize = 64;

/// How long a refused connection has to take its answer.
const REFUSAL_TIME: Duration = Duration::from_secs(1);

/// The most bytes of a refused connection's request read and dropped: its
/// head is read before the answer, and the rest so that closing it does
/// not reset the connection before the client has read the answer.
const REFUSAL_DRAIN_BYTES: usize = 64 << 10;

/// How long to wait after an accept error other than a failed connection
/// (out of file descriptors, out of memory) before accepting again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// How often such an error is logged while it lasts.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// Accepts and serves connections until `draining`; then stops accepting,
/// closes idle connections, lets each finish the request it is on, and
/// returns when all are closed.
///
/// # Cancel safety
/// Dropping the future stops accepting and aborts every connection's task.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    server: Server,
    mut draining: watch::Receiver<bool>,
) {
    let config = server.config();
    let header_timeout = config.header_timeout;
    let places = server.inner.connections.clone();
    let refusing = Arc::new(Semaphore::new(MAX_REFUSING));
    let mut connections = JoinSet::new();
    let mut last_warned: Option<Instant> = None;
    loop {
        while connections.try_join_next().is_some() {}
        let accepted = tokio::select! {
            // A drain wins over a connection accepted in the same moment.
            biased;
            () = drained(&mut draining) => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            // The client gave up before it was accepted.
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                // Out of file descriptors or memory: said once a minute at
                // most, and tried again shortly unless the server drains.
                if last_warned.is_none_or(|at| at.elapsed() >= WARN_EVERY) {
                    tracing::warn!(error = %e, "cannot accept a connection; trying again shortly (is --max-connections above the open-file limit?)");
                    last_warned = Some(Instant::now());
                }
                tokio::select! {
                    biased;
                    () = drained(&mut draining) => break,
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                }
            }
        };
        let Ok(place) = places.clone().try_acquire_owned() else {
            refuse(&server, stream, &refusing, &mut connections);
            continue;
        };
        // Answers are written whole; waiting for more to send first only
        // delays them.
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let mut draining = draining.clone();
        connections.spawn(async move {
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                // A failed or timed-out connection is the client's.
                _ = connection.as_mut() => {}
                () = drained(&mut draining) => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
            drop(place);
        });
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}

/// Completes when the server drains (or is gone).
async fn drained(draining: &mut watch::Receiver<bool>) {
    let _ = draining.wait_for(|d| *d).await.map(drop);
}

/// Whether an accept error is about one connection (which is dropped),
/// not the listener.
fn is_connection_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    )
}

/// Answers a connection past the cap with `503 too_many_connections` on a
/// task of its own, within [`REFUSAL_TIME`]; with [`MAX_REFUSING`] such
/// answers already being written, closes it without one.
fn refuse(
    server: &Server,
    mut stream: TcpStream,
    refusing: &Arc<Semaphore>,
    tasks: &mut JoinSet<()>,
) {
    let max = server.config().max_connections;
    let e = ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "too_many_connections",
        format!(
            "the server holds {max} connections open, its bound; try again shortly, or reuse a connection"
        ),
    )
    .retry_after(Duration::from_secs(1));
    server.count_refused(&e);
    let Ok(place) = refusing.clone().try_acquire_owned() else {
        return;
    };
    let body = e.body().to_string();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: {}\r\nconnection: close\r\n\r\n{body}",
        body.len(),
        retry_secs(Duration::from_secs(1)),
    );
    tasks.spawn(async move {
        let _ = tokio::time::timeout(REFUSAL_TIME, async {
            // The answer follows the request's head: a client that reads
            // only after sending takes an answer sent before it as a
            // broken connection.
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < REFUSAL_DRAIN_BYTES {
                match stream.read(&mut buf).await? {
                    0 => break,
                    n => head.extend_from_slice(&buf[..n]),
                }
            }
            stream.write_all(answer.as_bytes()).await?;
            stream.shutdown().await?;
            // Read what else the client sent until it closes, so that the
            // close is not a reset that could overtake the answer.
            let mut read = head.len();
            while read < REFUSAL_DRAIN_BYTES {
                match stream.read(&mut buf).await? {
                    0 => break,
                    n => read += n,
                }
            }
            Ok::<_, std::io::Error>(())
        })
        .await;
        drop(place);
    });
}
