//! The HTTP transport: axum routes over the service, the key check, and
//! the serve-and-drain loop (which also runs the NATS worker when one is
//! attached).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use moonbox_service::ListenConfig;
use moonbox_service::accept::Places;
use moonbox_service::body::BodyError;
use moonbox_service::reply::SMALL_REPLY_BYTES;

use crate::error::{ApiError, Error};
use crate::nats::Worker;
use crate::reply;
use crate::service::{Arrival, Caller, Server, sweep};

/// Connections the health listener holds open at once.
const HEALTH_CONNECTIONS: usize = 16;

/// The health listener's header, body and write timeouts.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(5);

/// How long responses cut short by a drain's cancel have to be written.
const AFTER_CANCEL: Duration = Duration::from_secs(5);

impl Server {
    /// Listens on the configured address.
    ///
    /// # Errors
    /// [`Error::Bind`] when the address cannot be bound.
    ///
    /// # Cancel safety
    /// Dropping the future binds nothing.
    pub async fn bind(self) -> Result<Bound, Error> {
        let addr = self.inner.config.addr;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| Error::Bind { addr, source })?;
        let health = match self.inner.config.health_addr {
            Some(addr) => Some(
                TcpListener::bind(addr)
                    .await
                    .map_err(|source| Error::Bind { addr, source })?,
            ),
            None => None,
        };
        Ok(Bound {
            listener,
            health,
            server: self,
            worker: None,
        })
    }

    /// The health checks alone, for the health listener.
    fn health_router(&self) -> Router {
        Router::new()
            .route("/healthz", get(healthz))
            .route("/readyz", get(readyz))
            .fallback(not_found)
            .method_not_allowed_fallback(method_not_allowed)
            .with_state(self.clone())
    }

    /// The routes, with the key check in front of all but the health
    /// checks.
    pub(crate) fn router(&self) -> Router {
        let guarded = Router::new()
            .route("/v1/eval", post(eval))
            .route("/v1/sessions", post(open_session))
            .route("/v1/sessions/{id}", delete(close_session))
            .route("/v1/sessions/{id}/eval", post(session_eval))
            .route("/metrics", get(metrics))
            .route_layer(middleware::from_fn_with_state(self.clone(), authenticate));
        Router::new()
            .route("/healthz", get(healthz))
            .route("/readyz", get(readyz))
            .merge(guarded)
            .fallback(not_found)
            .method_not_allowed_fallback(method_not_allowed)
            .with_state(self.clone())
    }
}

/// A server listening, ready to [`run_until`](Bound::run_until).
pub struct Bound {
    listener: TcpListener,
    health: Option<TcpListener>,
    server: Server,
    worker: Option<Worker>,
}

impl std::fmt::Debug for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bound")
            .field("addr", &self.listener.local_addr().ok())
            .field("nats", &self.worker.is_some())
            .finish_non_exhaustive()
    }
}

impl Bound {
    /// The address the server listens on (with the port the system chose
    /// for port 0).
    ///
    /// # Errors
    /// The system's error when the socket cannot say.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The address of the health listener, when one is configured.
    ///
    /// # Errors
    /// The system's error when the socket cannot say.
    pub fn health_addr(&self) -> std::io::Result<Option<SocketAddr>> {
        self.health
            .as_ref()
            .map(TcpListener::local_addr)
            .transpose()
    }

    /// Also answers evals and sessions from NATS with this worker, sharing
    /// the server's bounds, sessions and metrics; it drains with the
    /// server.
    pub fn nats(mut self, worker: Worker) -> Bound {
        self.worker = Some(worker);
        self
    }

    /// Serves until `shutdown` completes, then drains: stops accepting
    /// connections (and leaves the NATS queue group), closes idle connections,
    /// answers new requests with 503, lets the evals in flight finish for
    /// up to the drain timeout, cancels those still running (their reports
    /// say `cancelled`, with what they printed), closes the sessions and
    /// returns. Connections still open then, a few seconds after the
    /// cancel, are closed.
    ///
    /// # Errors
    /// [`Error::Io`] when the task serving connections fails;
    /// [`Error::Nats`] when the NATS worker cannot subscribe. A failed
    /// accept (out of file descriptors, for one) is logged and retried, and
    /// does not stop the server.
    ///
    /// # Cancel safety
    /// Dropping the future stops accepting, closes every connection and
    /// stops the NATS worker.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), Error> {
        let server = self.server;
        let health_server = server.clone();
        let _sweeper =
            AbortOnDrop(tokio::spawn(sweep(Arc::downgrade(&server.inner))).abort_handle());
        let (drain, draining) = tokio::sync::watch::channel(false);
        // The worker subscribes first, so that a failed subscription leaves
        // nothing running.
        let worker = match self.worker {
            Some(worker) => Some(worker.start(server.clone(), draining.clone()).await?),
            None => None,
        };
        let _stop_worker = worker.as_ref().map(|w| AbortOnDrop(w.abort_handle()));
        let http = tokio::spawn(moonbox_service::accept::serve(
            self.listener,
            server.router(),
            server.config().listen,
            server.inner.connections.clone(),
            server.refusals(server.config().listen.max_connections),
            draining,
        ));
        let _stop_http = AbortOnDrop(http.abort_handle());
        // The health checks on their own listener: a few connections, a
        // short header timeout, and nothing else queued there. It serves
        // until the process's drain is over.
        let _stop_health = self.health.map(|listener| {
            let listen = ListenConfig::default()
                .max_connections(HEALTH_CONNECTIONS)
                .header_timeout(HEALTH_TIMEOUT)
                .body_timeout(HEALTH_TIMEOUT)
                .write_timeout(HEALTH_TIMEOUT);
            let (_never, forever) = tokio::sync::watch::channel(false);
            let task = tokio::spawn(async move {
                let _never = _never;
                moonbox_service::accept::serve(
                    listener,
                    health_server.health_router(),
                    listen,
                    Places::new(HEALTH_CONNECTIONS),
                    health_server.refusals(HEALTH_CONNECTIONS),
                    forever,
                )
                .await;
            });
            AbortOnDrop(task.abort_handle())
        });
        // Both transports finished: HTTP's graceful shutdown, then the
        // worker's drain. Each handle is awaited once.
        let done = async move {
            let result = flatten(http.await);
            if result.is_ok()
                && let Some(worker) = worker
            {
                let _ = worker.await;
            }
            result
        };
        tokio::pin!(done);
        tokio::pin!(shutdown);
        tokio::select! {
            // Only a failed task ends HTTP before a drain.
            result = &mut done => return result,
            () = &mut shutdown => {}
        }
        server.start_draining();
        let _ = drain.send(true);
        tracing::info!("draining: no new work; finishing evals in flight");
        let timeout = server.config().drain_timeout;
        let result = match tokio::time::timeout(timeout, &mut done).await {
            Ok(result) => result,
            Err(_) => {
                // Requests still waiting for a turn are refused, and every
                // eval running or about to start is cancelled: each answers
                // with what it printed.
                let cancelled = server.stop_all();
                tracing::warn!(
                    cancelled,
                    "drain timeout passed; cancelled the evals still running"
                );
                server.inner.sessions.close_all();
                tokio::time::timeout(AFTER_CANCEL, &mut done)
                    .await
                    .unwrap_or(Ok(()))
            }
        };
        server.inner.sessions.close_all();
        result
    }
}

fn flatten(joined: Result<(), tokio::task::JoinError>) -> Result<(), Error> {
    joined.map_err(|e| Error::Io(std::io::Error::other(e.to_string())))
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Counts a refusal and answers it.
fn refuse(server: &Server, e: ApiError) -> Response {
    server.count_refused(&e);
    e.into_response()
}

/// The answer to an operation: its value with `ok`, within the reply
/// bound and the memory for answers, or the refusal.
fn answer(server: &Server, ok: StatusCode, result: Result<Value, ApiError>) -> Response {
    let value = match result {
        Ok(value) => value,
        Err(e) => return refuse(server, e),
    };
    let max = server.config().max_reply_bytes;
    let refusal = match reply::encode(&value, max, "--max-reply-bytes") {
        Ok(bytes) => match server.inner.replies.hold(bytes) {
            Ok(bytes) => {
                return (
                    ok,
                    [(header::CONTENT_TYPE, "application/json")],
                    Body::from(bytes),
                )
                    .into_response();
            }
            Err(_) => reply::with_report(
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "replies_busy",
                    format!(
                        "the server holds as many large answers for slow clients as --reply-memory ({} bytes) allows, so this one's values were dropped; try again shortly",
                        server.config().reply_memory
                    ),
                )
                .retry_after(Duration::from_secs(1)),
                &value,
                max,
            ),
        },
        Err(e) => e,
    };
    // A refusal that carries the report takes its size from the memory for
    // answers too; with no room there, it keeps only what fits in a small
    // answer.
    server.count_refused(&refusal);
    match server
        .inner
        .replies
        .hold(refusal.body().to_string().into_bytes())
    {
        Ok(bytes) => refusal.response(Body::from(bytes)),
        Err(_) => {
            let bare = ApiError {
                report: None,
                ..refusal
            };
            reply::with_report(bare, &value, SMALL_REPLY_BYTES).into_response()
        }
    }
}

/// Put on a request whose key's tenant may read `/metrics`.
#[derive(Clone, Copy, Debug)]
struct ReadsMetrics;

/// Finds the caller by the key in `Authorization: Bearer KEY`; on a server
/// without keys, every caller is anonymous.
///
/// # Cancel safety
/// Holds no state.
async fn authenticate(State(server): State<Server>, mut request: Request, next: Next) -> Response {
    let caller = match &server.config().keys {
        None => {
            // Without keys only a local client may call; a web page the
            // user visits is local too, so refuse a browser's request from
            // another origin and a DNS-rebound name.
            if let Err(e) = local_only(request.headers()) {
                return refuse(&server, e);
            }
            Caller(None)
        }
        Some(keys) => {
            let key = bearer(request.headers());
            match key.and_then(|key| keys.find(key)) {
                Some(tenant) => {
                    if tenant.metrics {
                        request.extensions_mut().insert(ReadsMetrics);
                    }
                    Caller(Some(Arc::from(tenant.name.as_str())))
                }
                None => {
                    return refuse(
                        &server,
                        ApiError::new(
                            StatusCode::UNAUTHORIZED,
                            "unauthorized",
                            if key.is_some() {
                                "the API key is not one this server knows"
                            } else {
                                "this server needs an API key: send Authorization: Bearer <key>"
                            },
                        ),
                    );
                }
            }
        }
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// Refuses a request whose `Host` is not a loopback name or address, or
/// whose `Origin` (sent by browsers) is not a loopback origin.
fn local_only(headers: &HeaderMap) -> Result<(), ApiError> {
    let forbidden = |what: &str| {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!(
                "this server has no API keys, so it answers only local clients, and the request's {what} is not local; serve with --keys to take requests from elsewhere"
            ),
        )
    };
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !is_loopback_authority(host) {
        return Err(forbidden("Host"));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let authority = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"));
        if !authority.is_some_and(is_loopback_authority) {
            return Err(forbidden("Origin"));
        }
    }
    Ok(())
}

/// Whether `host[:port]` names loopback: `localhost`, `127.x.y.z` or
/// `[::1]`, with nothing else around it. The port, when present, is a
/// decimal port number, so that a form with more after the host
/// (`127.0.0.1:80@evil.example`, `[::1]evil.example`), which another
/// parser could read as another host, is not local.
fn is_loopback_authority(authority: &str) -> bool {
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((host, "")) => (host, None),
            Some((host, after)) => match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return false,
            },
            None => return false,
        },
        None => match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    let port_ok = port.is_none_or(|p| {
        !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok()
    });
    port_ok
        && (host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback()))
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| key.trim())
        .filter(|key| !key.is_empty())
}

/// Reads a body up to the server's bound, within its body timeout.
///
/// # Errors
/// `body_too_large` (413) past the bound, `overloaded` (429) when the
/// server reads as many bodies as it may, `body_timeout` (408) when the
/// body is late, `bad_request` (400) when the connection fails.
async fn read_body(
    server: &Server,
    caller: &Caller,
    body: Body,
    headers: &HeaderMap,
) -> Result<Bytes, ApiError> {
    // A body is read only once its tenant has quota left, with a place
    // among the bounded readers (a tenant holds a quarter of them at most),
    // and within a time bound: a slow or stalled sender holds neither
    // memory nor a drain for long, and pays for the time in its quota.
    let _reading = server.start_reading(caller)?;
    let began = std::time::Instant::now();
    let config = server.config();
    let read = moonbox_service::body::read(
        headers,
        body,
        config.max_body_bytes,
        config.listen.body_timeout,
    )
    .await;
    server.charge_reading(caller, began.elapsed());
    read.map_err(|e| {
        let kind = match e {
            BodyError::TooLarge { .. } => "body_too_large",
            BodyError::Timeout { .. } => "body_timeout",
            _ => "bad_request",
        };
        ApiError::new(e.status(), kind, e.to_string())
    })
}

/// The caller the key check put on the request.
fn caller(request: &Request) -> Caller {
    request
        .extensions()
        .get::<Caller>()
        .cloned()
        .unwrap_or(Caller(None))
}

/// The caller and the body of a request, read up to the server's bound,
/// once the server is known to take work.
async fn take(server: &Server, request: Request) -> Result<(Caller, Bytes), ApiError> {
    let caller = caller(&request);
    // The service checks too; checked here so that a body is not read for
    // nothing.
    server.check_open()?;
    let (parts, body) = request.into_parts();
    let bytes = read_body(server, &caller, body, &parts.headers).await?;
    Ok((caller, bytes))
}

/// `POST /v1/eval`: one script in a fresh sandbox.
///
/// # Cancel safety
/// A dropped request (the client went away) discards its instance.
async fn eval(State(server): State<Server>, request: Request) -> Response {
    let result = match take(&server, request).await {
        Ok((caller, bytes)) => server.eval("http", &caller, Arrival::New, &bytes).await,
        Err(e) => Err(e),
    };
    answer(&server, StatusCode::OK, result)
}

/// `POST /v1/sessions`: opens a session, with limits within the ceiling.
async fn open_session(State(server): State<Server>, request: Request) -> Response {
    let result = match take(&server, request).await {
        Ok((caller, bytes)) => server
            .open(&caller, &bytes)
            .await
            .map(|opened| opened.to_json(&opened.id)),
        Err(e) => Err(e),
    };
    answer(&server, StatusCode::CREATED, result)
}

/// `POST /v1/sessions/{id}/eval`: one script in an open session.
///
/// # Cancel safety
/// A dropped request leaves the session poisoned (its next eval says so).
async fn session_eval(
    State(server): State<Server>,
    id: Result<Path<String>, PathRejection>,
    request: Request,
) -> Response {
    let id = match session_id(id) {
        Ok(id) => id,
        Err(e) => return refuse(&server, e),
    };
    let result = match take(&server, request).await {
        Ok((caller, bytes)) => server.eval_in("http", &caller, &id, &bytes).await,
        Err(e) => Err(e),
    };
    answer(&server, StatusCode::OK, result)
}

/// `DELETE /v1/sessions/{id}`: closes a session, cancelling its eval.
async fn close_session(
    State(server): State<Server>,
    id: Result<Path<String>, PathRejection>,
    request: Request,
) -> Response {
    let id = match session_id(id) {
        Ok(id) => id,
        Err(e) => return refuse(&server, e),
    };
    match server.close(&caller(&request), &id) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => refuse(&server, e),
    }
}

/// The session id from the path, or `bad_request` when it is not text
/// (a percent-encoded byte that is not UTF-8).
fn session_id(id: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    id.map(|Path(id)| id).map_err(|_| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "the session id in the path is not UTF-8 text once percent-decoded, so it is none this server gave out",
        )
    })
}

/// `GET /healthz`: the process is up.
async fn healthz() -> Response {
    json_response(StatusCode::OK, &json!({"status": "ok"}))
}

/// `GET /readyz`: the server takes new work (503 while it drains).
async fn readyz(State(server): State<Server>) -> Response {
    if server.is_draining() {
        json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            &json!({"status": "draining"}),
        )
    } else {
        json_response(StatusCode::OK, &json!({"status": "ready"}))
    }
}

/// `GET /metrics`: Prometheus text.
async fn metrics(State(server): State<Server>, request: Request) -> Response {
    // With keys, only an operator's tenant may see every tenant's load.
    if server.config().keys.is_some() && request.extensions().get::<ReadsMetrics>().is_none() {
        return refuse(
            &server,
            ApiError::new(
                StatusCode::FORBIDDEN,
                "forbidden",
                "this key may not read /metrics, which tells of every tenant's load; use a tenant with \"metrics\": true in the keys file",
            ),
        );
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        server.metrics_text(),
    )
        .into_response()
}

async fn not_found(State(server): State<Server>, request: Request) -> Response {
    let path: String = request.uri().path().chars().take(200).collect();
    refuse(
        &server,
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!(
                "no route {} {path}; the routes are POST /v1/eval, POST /v1/sessions, POST /v1/sessions/ID/eval, DELETE /v1/sessions/ID, GET /healthz, /readyz, /metrics",
                request.method()
            ),
        ),
    )
}

/// A route asked with a method it does not take (`POST /healthz`): the
/// error's JSON like every other refusal (axum adds the `Allow` header).
async fn method_not_allowed(State(server): State<Server>, request: Request) -> Response {
    let path: String = request.uri().path().chars().take(200).collect();
    refuse(
        &server,
        ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            format!(
                "{path} does not take {}; the Allow header names the methods it takes",
                request.method()
            ),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_and_origins_are_local() {
        for host in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "127.1.2.3",
            "[::1]:80",
            "LOCALHOST",
        ] {
            assert!(is_loopback_authority(host), "{host}");
        }
        for host in [
            "",
            "example.com",
            "example.com:80",
            "10.0.0.1:80",
            "[::2]:80",
            "localhost.evil.com",
            // More after the host than a port: another parser may read
            // the part after `@` as the host.
            "127.0.0.1:80@evil.example",
            "localhost:80@evil.example",
            "[::1]:80@evil.example",
            "[::1]evil.example",
            "[::1",
            "::1",
            "localhost:",
            "localhost:http",
            "localhost:+80",
            "localhost:65536",
            "127.0.0.1:80:81",
        ] {
            assert!(!is_loopback_authority(host), "{host}");
        }
        let headers = |pairs: &[(header::HeaderName, &str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.insert(name.clone(), value.parse().unwrap());
            }
            map
        };
        assert!(local_only(&headers(&[(header::HOST, "127.0.0.1:8080")])).is_ok());
        assert!(local_only(&headers(&[(header::HOST, "evil.example:8080")])).is_err());
        assert!(local_only(&headers(&[])).is_err());
        assert!(
            local_only(&headers(&[
                (header::HOST, "localhost:8080"),
                (header::ORIGIN, "http://localhost:3000")
            ]))
            .is_ok()
        );
        assert!(
            local_only(&headers(&[
                (header::HOST, "localhost:8080"),
                (header::ORIGIN, "http://127.0.0.1:80@evil.example")
            ]))
            .is_err()
        );
        assert!(local_only(&headers(&[(header::HOST, "127.0.0.1:8080@evil.example")])).is_err());
        let refused = local_only(&headers(&[
            (header::HOST, "localhost:8080"),
            (header::ORIGIN, "https://evil.example"),
        ]))
        .unwrap_err();
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
        assert!(refused.message.contains("Origin"));
        assert!(
            local_only(&headers(&[
                (header::HOST, "localhost"),
                (header::ORIGIN, "null")
            ]))
            .is_err()
        );
    }

    #[test]
    fn the_bearer_key_is_read_from_authorization() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer(&headers), None);
        headers.insert(header::AUTHORIZATION, "Bearer  k1 ".parse().unwrap());
        assert_eq!(bearer(&headers), Some("k1"));
        headers.insert(header::AUTHORIZATION, "Basic k1".parse().unwrap());
        assert_eq!(bearer(&headers), None);
        headers.insert(header::AUTHORIZATION, "Bearer ".parse().unwrap());
        assert_eq!(bearer(&headers), None);
    }
}
