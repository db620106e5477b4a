//! The accept loop: connections accepted within a cap, each served by
//! hyper on a task of its own under the [`ListenConfig`]'s timeouts, and
//! closed gracefully when the server drains.
//!
//! Defences, in the order a connection meets them:
//! 1. **The cap.** At [`ListenConfig::max_connections`] open, the
//!    connection idle longest (still sending its first headers, or between
//!    requests) is closed and the new one takes its place, within a second;
//!    when every open connection is busy, the new one is answered with the
//!    server's `too_many_connections` refusal and closed. A client that
//!    opens connections and sends nothing can therefore not lock out one
//!    that sends a request at once, health probes included. Past 64
//!    connections waiting for a place or being refused at once, a new one
//!    is closed without an answer.
//! 2. **Headers.** A connection that does not finish its headers within
//!    [`ListenConfig::header_timeout`] of opening (or of its previous
//!    answer) is closed, and a request head past [`MAX_HEAD_BYTES`] is
//!    refused, so a connection's read buffer holds at most that.
//! 3. **Write timeout.** A client that does not take an answer within
//!    [`ListenConfig::write_timeout`] of the server first waiting on it is
//!    disconnected, and the answer freed.
//! 4. **Drain.** Once the server drains, idle connections are closed, busy
//!    ones finish the request they are on, and a new connection is
//!    answered with the server's `draining` refusal (rather than a reset)
//!    until the last open one has closed.
//!
//! The body timeout is the server's to apply, with [`crate::body::read`],
//! since only the route knows whether and how to read a body.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::ErrorKind;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;
use tower_service::Service;

use crate::config::ListenConfig;
use crate::io::Timed;

/// The largest request head (request line and headers) read, in bytes;
/// also the most a connection's read buffer holds.
pub const MAX_HEAD_BYTES: usize = 64 << 10;

/// Connections waiting for a place or being refused at once; past it a
/// new connection past the cap is closed without an answer.
const MAX_WAITING: usize = 64;

/// How long a connection past the cap waits for an idle one to close.
const WAIT_FOR_PLACE: Duration = Duration::from_secs(1);

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

/// The places for connections: a cheap handle the server keeps to report
/// how many are open.
#[derive(Clone, Debug)]
pub struct Places {
    places: Arc<Semaphore>,
    max: usize,
}

impl Places {
    /// Places for `max` connections.
    pub fn new(max: usize) -> Places {
        Places {
            places: Arc::new(Semaphore::new(max)),
            max,
        }
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.max.saturating_sub(self.places.available_permits())
    }
}

/// Why a connection was refused before any request was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refused {
    /// Every place is held by a busy connection.
    Full,
    /// The server is draining.
    Draining,
}

/// An answer written on a raw connection the server will not serve: a
/// status, a JSON body, and `Retry-After`.
#[derive(Clone, Debug)]
pub struct Refusal {
    head: String,
    body: String,
}

impl Refusal {
    /// An answer with `status`, the JSON text `body` and `Retry-After:
    /// retry_after_secs`; the connection is closed after it.
    pub fn new(status: StatusCode, body: impl Into<String>, retry_after_secs: u64) -> Refusal {
        let body = body.into();
        let head = format!(
            "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: {retry_after_secs}\r\nconnection: close\r\n\r\n",
            status.as_u16(),
            status.canonical_reason().unwrap_or(""),
            body.len(),
        );
        Refusal { head, body }
    }

    /// An answer with `status` and the JSON error body every moonbox
    /// server answers ([`error_body`](crate::error_body)).
    ///
    /// ```
    /// use axum::http::StatusCode;
    /// use moonbox_service::accept::Refusal;
    /// let draining = Refusal::error(StatusCode::SERVICE_UNAVAILABLE, "draining", "stopping", 1);
    /// # let _ = draining;
    /// ```
    pub fn error(status: StatusCode, kind: &str, message: &str, retry_after_secs: u64) -> Refusal {
        let body = crate::error_body(kind, message, Some(retry_after_secs));
        Refusal::new(status, body.to_string(), retry_after_secs)
    }

    fn bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.head.len() + self.body.len());
        bytes.extend_from_slice(self.head.as_bytes());
        bytes.extend_from_slice(self.body.as_bytes());
        bytes
    }
}

/// What the loop answers connections it will not serve, and who hears of
/// it.
pub struct Refusals {
    /// Past the cap, with no idle connection to close.
    pub full: Refusal,
    /// During a drain.
    pub draining: Refusal,
    /// Told of every refusal (to count it), including those closed without
    /// an answer.
    pub on_refused: Box<dyn Fn(Refused) + Send + Sync>,
}

impl std::fmt::Debug for Refusals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Refusals")
            .field("full", &self.full)
            .field("draining", &self.draining)
            .finish_non_exhaustive()
    }
}

/// One open connection, as the cap sees it.
pub(crate) struct Conn {
    /// Requests whose answers are not yet all produced.
    busy: AtomicUsize,
    /// Output waits to be taken by the client.
    pub(crate) writing: AtomicBool,
    /// When it last became idle, in ms since the loop started.
    idle_since: AtomicU64,
    /// Told to close to make room.
    evict: Notify,
    /// Chosen to close already: not chosen again by the next arrival.
    evicted: AtomicBool,
}

impl Conn {
    fn is_idle(&self) -> bool {
        self.busy.load(Ordering::Acquire) == 0 && !self.writing.load(Ordering::Relaxed)
    }
}

/// A connection's entry in the table, removed when its task ends, however
/// it ends.
struct Registered {
    table: Arc<Table>,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.table.remove(self.id);
    }
}

/// The open connections, for choosing one to close at the cap.
struct Table {
    epoch: Instant,
    next: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Conn>>>,
}

impl Table {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn add(&self) -> (u64, Arc<Conn>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            busy: AtomicUsize::new(0),
            writing: AtomicBool::new(false),
            idle_since: AtomicU64::new(self.now_ms()),
            evict: Notify::new(),
            evicted: AtomicBool::new(false),
        });
        self.lock().insert(id, conn.clone());
        (id, conn)
    }

    fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// Tells the connection idle longest to close; whether there was one.
    fn evict_idlest(&self) -> bool {
        let open = self.lock();
        let idlest = open
            .iter()
            .filter(|(_, c)| c.is_idle() && !c.evicted.load(Ordering::Relaxed))
            .min_by_key(|(id, c)| (c.idle_since.load(Ordering::Relaxed), **id));
        match idlest {
            Some((_, conn)) => {
                conn.evicted.store(true, Ordering::Relaxed);
                conn.evict.notify_one();
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Conn>>> {
        // The map holds no invariant a panic mid-update could break.
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Marks a connection busy while a request's answer is being produced.
struct Busy {
    conn: Arc<Conn>,
    table: Arc<Table>,
}

impl Busy {
    fn enter(conn: &Arc<Conn>, table: &Arc<Table>) -> Busy {
        conn.busy.fetch_add(1, Ordering::AcqRel);
        Busy {
            conn: conn.clone(),
            table: table.clone(),
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.conn
            .idle_since
            .store(self.table.now_ms(), Ordering::Relaxed);
        self.conn.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What every connection task needs.
struct Shared {
    router: Router,
    config: ListenConfig,
    refusals: Refusals,
    table: Arc<Table>,
    places: Places,
    waiting: Arc<Semaphore>,
}

/// Accepts and serves connections on `router` until `draining`; then
/// closes idle connections, lets each busy one finish the request it is
/// on, answers new connections with [`Refusals::draining`], and returns
/// when the last served connection has closed.
///
/// `places` should hold [`ListenConfig::max_connections`] places; the
/// body timeout is left to the routes ([`crate::body::read`]).
///
/// # Cancel safety
/// Dropping the future stops accepting and aborts every connection's task.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    config: ListenConfig,
    places: Places,
    refusals: Refusals,
    mut draining: watch::Receiver<bool>,
) {
    let shared = Arc::new(Shared {
        router,
        config,
        refusals,
        table: Arc::new(Table {
            epoch: Instant::now(),
            next: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
        }),
        places,
        waiting: Arc::new(Semaphore::new(MAX_WAITING)),
    });
    // Connections served (or waiting for a place), and refusals written.
    let mut serving = JoinSet::new();
    let mut refusing = JoinSet::new();
    let mut last_warned: Option<Instant> = None;
    let mut is_draining = false;
    loop {
        while serving.try_join_next().is_some() {}
        while refusing.try_join_next().is_some() {}
        if is_draining && serving.is_empty() {
            break;
        }
        let accepted = tokio::select! {
            // A drain wins over a connection accepted in the same moment.
            biased;
            () = drained(&mut draining), if !is_draining => {
                is_draining = true;
                continue;
            }
            Some(_) = serving.join_next(), if is_draining => continue,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            // The client gave up before it was accepted.
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                // Out of file descriptors or memory: said once a minute at
                // most, and tried again shortly.
                if last_warned.is_none_or(|at| at.elapsed() >= WARN_EVERY) {
                    tracing::warn!(error = %e, "cannot accept a connection; trying again shortly (is the connection cap above the open-file limit?)");
                    last_warned = Some(Instant::now());
                }
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        if is_draining {
            refuse(&shared, stream, Refused::Draining, &mut refusing);
            continue;
        }
        // Answers are written whole; waiting for more to send first only
        // delays them.
        let _ = stream.set_nodelay(true);
        if let Ok(place) = shared.places.places.clone().try_acquire_owned() {
            serving.spawn(connection(shared.clone(), stream, place, draining.clone()));
            continue;
        }
        // At the cap: close the idlest connection and wait for its place.
        let Ok(waiting) = shared.waiting.clone().try_acquire_owned() else {
            (shared.refusals.on_refused)(Refused::Full);
            continue;
        };
        if !shared.table.evict_idlest() {
            drop(waiting);
            refuse(&shared, stream, Refused::Full, &mut refusing);
            continue;
        }
        let shared = shared.clone();
        let draining = draining.clone();
        serving.spawn(async move {
            let places = shared.places.places.clone();
            let place = tokio::time::timeout(WAIT_FOR_PLACE, places.acquire_owned()).await;
            drop(waiting);
            match place {
                Ok(Ok(place)) if !*draining.borrow() => {
                    connection(shared, stream, place, draining).await;
                }
                Ok(_) if *draining.borrow() => {
                    (shared.refusals.on_refused)(Refused::Draining);
                    write_refusal(&shared.refusals.draining, stream).await;
                }
                _ => {
                    (shared.refusals.on_refused)(Refused::Full);
                    write_refusal(&shared.refusals.full, stream).await;
                }
            }
        });
    }
    drop(listener);
    while refusing.join_next().await.is_some() {}
}

/// Serves one connection until it closes, the server drains, or it is
/// closed to make room.
async fn connection(
    shared: Arc<Shared>,
    stream: TcpStream,
    place: OwnedSemaphorePermit,
    mut draining: watch::Receiver<bool>,
) {
    let (id, conn) = shared.table.add();
    let registered = Registered {
        table: shared.table.clone(),
        id,
    };
    let io = TokioIo::new(Timed::new(
        stream,
        shared.config.write_timeout,
        conn.clone(),
    ));
    let service = {
        let shared = shared.clone();
        let conn = conn.clone();
        service_fn(move |request: Request<Incoming>| {
            let busy = Busy::enter(&conn, &shared.table);
            let mut router = shared.router.clone();
            async move {
                let response: Response<Body> = match router.call(request).await {
                    Ok(response) => response,
                    Err(never) => match never {},
                };
                // The connection stays busy until the answer is all
                // produced (a stream of events, for one).
                Ok::<_, Infallible>(response.map(|body| crate::body::with_guard(body, busy)))
            }
        })
    };
    let connection = http(&shared.config).serve_connection(io, service);
    tokio::pin!(connection);
    tokio::select! {
        // A failed or timed-out connection is the client's.
        _ = connection.as_mut() => {}
        () = drained(&mut draining) => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
        // Chosen to make room: closed at once if still idle (nothing it
        // sent is lost but a request's unfinished head); a request that
        // began since it was chosen finishes first.
        () = conn.evict.notified() => {
            if !conn.is_idle() {
                connection.as_mut().graceful_shutdown();
                let _ = connection.await;
            }
        }
    }
    // Out of the table before the place is free, so that no arrival
    // chooses a connection that is gone.
    drop(registered);
    drop(place);
}

/// The HTTP/1.1 settings of every connection.
fn http(config: &ListenConfig) -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_timeout)
        // A request head larger than this is refused (431), and the read
        // buffer holds at most this, not hyper's default of 400 KiB.
        .max_header_size(MAX_HEAD_BYTES)
        .max_buf_size(MAX_HEAD_BYTES);
    builder
}

/// What `router` answers `input`, taken as all a client sent on one
/// connection before closing its side, with the HTTP settings the accept
/// loop uses: every request in it is parsed, routed and answered, end to
/// end, without a socket. For fuzz targets and tests of a server's request
/// parsing; the output is cut at `max_output` bytes.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let router = axum::Router::new().route("/", axum::routing::get(|| async { "hi" }));
/// let out = moonbox_service::accept::answer_bytes(router, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 1 << 20).await;
/// assert!(out.starts_with(b"HTTP/1.1 200 OK"));
/// # });
/// ```
pub async fn answer_bytes(router: Router, input: &[u8], max_output: usize) -> Vec<u8> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let (client, server) = tokio::io::duplex(64 << 10);
    let service = service_fn(move |request: Request<Incoming>| {
        let mut router = router.clone();
        async move {
            match router.call(request).await {
                Ok(response) => Ok::<_, Infallible>(response),
                Err(never) => match never {},
            }
        }
    });
    let mut builder = http(&ListenConfig::default());
    // The input's end is the client's last word, not a hang-up: what it
    // asked for is still answered.
    builder.half_close(true);
    let connection = builder.serve_connection(TokioIo::new(server), service);
    let (mut read, mut write) = tokio::io::split(client);
    let send = async {
        let _ = write.write_all(input).await;
        let _ = write.shutdown().await;
    };
    let mut output = Vec::new();
    let receive = async {
        let mut buf = [0u8; 8 << 10];
        loop {
            match read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = max_output.saturating_sub(output.len());
                    output.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
    };
    let _ = tokio::join!(connection, send, receive);
    output
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

/// Answers a connection the server will not serve on a task of its own;
/// with [`MAX_WAITING`] such answers already being written, closes it
/// without one.
fn refuse(shared: &Arc<Shared>, stream: TcpStream, why: Refused, tasks: &mut JoinSet<()>) {
    (shared.refusals.on_refused)(why);
    let Ok(place) = shared.waiting.clone().try_acquire_owned() else {
        return;
    };
    let shared = shared.clone();
    tasks.spawn(async move {
        let refusal = match why {
            Refused::Full => &shared.refusals.full,
            Refused::Draining => &shared.refusals.draining,
        };
        write_refusal(refusal, stream).await;
        drop(place);
    });
}

/// Writes `refusal` after the request's head, within [`REFUSAL_TIME`].
async fn write_refusal(refusal: &Refusal, mut stream: TcpStream) {
    let answer = refusal.bytes();
    let _ = tokio::time::timeout(REFUSAL_TIME, async {
        // The answer follows the request's head: a client that reads
        // only after sending takes an answer sent before it as a broken
        // connection.
        let mut head = Vec::new();
        let mut buf = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < REFUSAL_DRAIN_BYTES {
            match stream.read(&mut buf).await? {
                0 => break,
                n => head.extend_from_slice(&buf[..n]),
            }
        }
        stream.write_all(&answer).await?;
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_at_the_cap_each_evict_a_different_idle_connection() {
        let table = Table {
            epoch: Instant::now(),
            next: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
        };
        let conns: Vec<_> = (0..3).map(|_| table.add().1).collect();
        // One busy connection is never chosen.
        conns[0].busy.store(1, Ordering::Release);
        assert!(table.evict_idlest());
        assert!(table.evict_idlest());
        assert!(!table.evict_idlest(), "only two were idle");
        assert!(!conns[0].evicted.load(Ordering::Relaxed));
        assert!(conns[1].evicted.load(Ordering::Relaxed));
        assert!(conns[2].evicted.load(Ordering::Relaxed));
    }
}
