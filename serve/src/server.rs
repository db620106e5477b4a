//! The server: its state, its routes and how an eval runs.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use moonbox::{CancelHandle, EvalError, EvalOutput, Report, Sandbox, Script, Session};
use serde_json::json;
use tokio::net::TcpListener;
use tracing::Instrument;

use crate::admission::Admission;
use crate::api::{self, EvalBody, OpenBody, SessionEvalBody};
use crate::config::ServeConfig;
use crate::error::{ApiError, Error};
use crate::metrics::{Gauges, Metrics};
use crate::quota::Quotas;
use crate::sessions::Sessions;

/// How long responses cut short by a drain's cancel have to be written.
const AFTER_CANCEL: Duration = Duration::from_secs(5);

/// The HTTP server: a sandbox behind an eval and session API.
///
/// Cheap to clone; clones share everything. [`Server::bind`] listens, and
/// [`Bound::run_until`] serves until a shutdown signal, then drains.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let sandbox = moonbox::Sandbox::builder().build_async().await?;
/// let config = moonbox_serve::ServeConfig::new("127.0.0.1:8080".parse()?);
/// let bound = moonbox_serve::Server::new(sandbox, config)?.bind().await?;
/// println!("listening on {}", bound.local_addr()?);
/// // Serve for an hour, then drain; a service waits for SIGTERM instead.
/// bound.run_until(tokio::time::sleep(std::time::Duration::from_secs(3600))).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

struct Inner {
    sandbox: Sandbox,
    config: ServeConfig,
    quotas: Quotas,
    admission: Admission,
    sessions: Sessions,
    metrics: Metrics,
    draining: AtomicBool,
    running: Running,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// The cancel handles of the evals running now, so that a drain past its
/// timeout can stop them.
#[derive(Default)]
struct Running {
    handles: Mutex<HashMap<u64, CancelHandle>>,
    next: AtomicU64,
}

/// Keeps an eval's handle registered while it lives.
struct Registered<'a> {
    running: &'a Running,
    id: u64,
}

impl Running {
    fn register(&self, handle: CancelHandle) -> Registered<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id, handle);
        Registered { running: self, id }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, CancelHandle>> {
        self.handles.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn cancel_all(&self) -> usize {
        let handles = self.lock();
        for handle in handles.values() {
            handle.cancel();
        }
        handles.len()
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.running.lock().remove(&self.id);
    }
}

/// Who sent a request: a tenant's name, or `None` on a server without
/// keys.
#[derive(Clone)]
struct Caller(Option<Arc<str>>);

impl Caller {
    fn name(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl Server {
    /// A server for `sandbox`, whose limits are the ceiling every request's
    /// limits must stay within.
    ///
    /// # Errors
    /// As for [`ServeConfig::validate`].
    pub fn new(sandbox: Sandbox, config: ServeConfig) -> Result<Server, Error> {
        config.validate()?;
        let quotas = config.keys.as_ref().map(Quotas::new).unwrap_or_default();
        Ok(Server {
            inner: Arc::new(Inner {
                admission: Admission::new(config.max_running, config.max_queued, config.queue_wait),
                sessions: Sessions::new(config.max_sessions, config.session_ttl),
                quotas,
                metrics: Metrics::default(),
                draining: AtomicBool::new(false),
                running: Running::default(),
                sandbox,
                config,
            }),
        })
    }

    /// The configuration the server runs with.
    pub fn config(&self) -> &ServeConfig {
        &self.inner.config
    }

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
        Ok(Bound {
            listener,
            server: self,
        })
    }

    /// The routes, with the key check in front of all but the health
    /// checks.
    fn router(&self) -> Router {
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
            .with_state(self.clone())
    }

    fn refuse(&self, e: ApiError) -> Response {
        self.inner.metrics.refused(e.kind);
        e.into_response()
    }

    fn check_open(&self) -> Result<(), ApiError> {
        if self.inner.draining.load(Ordering::Relaxed) {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "draining",
                "the server is stopping and takes no new work; send the request to another instance",
            )
            .retry_after(Duration::from_secs(1)));
        }
        Ok(())
    }

    fn admit_tenant(&self, caller: &Caller) -> Result<(), ApiError> {
        let Some(name) = caller.name() else {
            return Ok(());
        };
        self.inner.quotas.admit(name).map_err(|(wait, what)| {
            ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "quota_exceeded",
                format!(
                    "tenant '{name}' has used its {what} quota; it refills in {} ms",
                    wait.as_millis()
                ),
            )
            .retry_after(wait)
        })
    }

    /// Counts and charges a finished eval, and turns it into the report.
    fn finish(
        &self,
        kind: &'static str,
        caller: &Caller,
        started: Instant,
        outcome: &Result<EvalOutput, EvalError>,
    ) -> Response {
        let stats = match outcome {
            Ok(out) => out.stats,
            Err(e) => e.stats,
        };
        let label = match outcome {
            Ok(_) => "ok",
            Err(e) => e.kind.as_str(),
        };
        let wall = started.elapsed();
        if let Some(name) = caller.name() {
            self.inner
                .quotas
                .charge(name, stats.instructions.unwrap_or(0), wall);
        }
        self.inner
            .metrics
            .eval(kind, label, wall, stats.fuel_used, stats.instructions);
        tracing::info!(
            outcome = label,
            wall_us = u64::try_from(wall.as_micros()).unwrap_or(u64::MAX),
            instructions = stats.instructions,
            fuel = stats.fuel_used,
            output_bytes = stats.output_bytes,
            "eval finished"
        );
        json_response(StatusCode::OK, &Report::from(outcome).to_json())
    }

    /// Runs `script` in `session`, stoppable by a drain.
    async fn run(
        &self,
        session: &mut Session<()>,
        script: Script,
    ) -> Result<EvalOutput, EvalError> {
        let _registered = self.inner.running.register(session.cancel_handle());
        session.run(script).await
    }

    fn gauges(&self) -> Gauges {
        Gauges {
            sessions: self.inner.sessions.live(),
            queued: self.inner.admission.queued(),
            running: self.inner.admission.running(),
            draining: self.inner.draining.load(Ordering::Relaxed),
        }
    }
}

/// A server listening, ready to [`run_until`](Bound::run_until).
pub struct Bound {
    listener: TcpListener,
    server: Server,
}

impl std::fmt::Debug for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bound")
            .field("addr", &self.listener.local_addr().ok())
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

    /// Serves until `shutdown` completes, then drains: stops accepting
    /// connections, answers new requests on open ones with 503, lets the
    /// evals in flight finish for up to the drain timeout, cancels those
    /// still running (their reports say `cancelled`, with what they
    /// printed), closes the sessions and returns.
    ///
    /// # Errors
    /// [`Error::Io`] from the listener.
    ///
    /// # Cancel safety
    /// Dropping the future stops serving at once; evals in flight are
    /// dropped with their connections.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), Error> {
        let server = self.server;
        let inner = server.inner.clone();
        let sweeper = tokio::spawn(sweep(Arc::downgrade(&inner)));
        let _stop_sweeper = AbortOnDrop(sweeper);
        let draining = Arc::new(tokio::sync::Notify::new());
        let signal = draining.clone();
        let flag = inner.clone();
        let serving = axum::serve(self.listener, server.router())
            .with_graceful_shutdown(async move {
                shutdown.await;
                flag.draining.store(true, Ordering::Relaxed);
                tracing::info!("draining: no new connections; finishing evals in flight");
                signal.notify_one();
            })
            .into_future();
        tokio::pin!(serving);
        tokio::select! {
            result = &mut serving => return result.map_err(Error::Io),
            () = draining.notified() => {}
        }
        let result = match tokio::time::timeout(inner.config.drain_timeout, &mut serving).await {
            Ok(result) => result,
            Err(_) => {
                let cancelled = inner.running.cancel_all();
                tracing::warn!(
                    cancelled,
                    "drain timeout passed; cancelled the evals still running"
                );
                inner.sessions.close_all();
                tokio::time::timeout(AFTER_CANCEL, serving)
                    .await
                    .unwrap_or(Ok(()))
            }
        };
        inner.sessions.close_all();
        result.map_err(Error::Io)
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Closes idle sessions every so often while the server lives.
async fn sweep(inner: std::sync::Weak<Inner>) {
    let every = match inner.upgrade() {
        Some(inner) => (inner.config.session_ttl / 4)
            .clamp(Duration::from_millis(100), Duration::from_secs(30)),
        None => return,
    };
    loop {
        tokio::time::sleep(every).await;
        match inner.upgrade() {
            Some(inner) => inner.sessions.sweep(),
            None => return,
        }
    }
}

fn json_response(status: StatusCode, body: &serde_json::Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Finds the caller by the key in `Authorization: Bearer KEY`; on a server
/// without keys, every caller is anonymous.
///
/// # Cancel safety
/// Holds no state.
async fn authenticate(State(server): State<Server>, mut request: Request, next: Next) -> Response {
    let caller = match &server.inner.config.keys {
        None => {
            // Without keys only a local client may call; a web page the
            // user visits is local too, so refuse a browser's request from
            // another origin and a DNS-rebound name.
            if let Err(e) = local_only(request.headers()) {
                return server.refuse(e);
            }
            Caller(None)
        }
        Some(keys) => {
            let key = bearer(request.headers());
            match key.and_then(|key| keys.find(key)) {
                Some(tenant) => Caller(Some(Arc::from(tenant.name.as_str()))),
                None => {
                    return server.refuse(ApiError::new(
                        StatusCode::UNAUTHORIZED,
                        "unauthorized",
                        if key.is_some() {
                            "the API key is not one this server knows"
                        } else {
                            "this server needs an API key: send Authorization: Bearer <key>"
                        },
                    ));
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
/// `[::1]`.
fn is_loopback_authority(authority: &str) -> bool {
    let host = match authority.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map_or("", |(h, _)| h),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| key.trim())
        .filter(|key| !key.is_empty())
}

/// The caller the key check put on the request.
fn caller(request: &Request) -> Caller {
    request
        .extensions()
        .get::<Caller>()
        .cloned()
        .unwrap_or(Caller(None))
}

/// Reads a body up to the server's bound.
///
/// # Errors
/// `body_too_large` (413) past it.
async fn read_body(server: &Server, body: Body, headers: &HeaderMap) -> Result<Bytes, ApiError> {
    let max = server.inner.config.max_body_bytes;
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!("the request body is larger than this server's {max} bytes"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > u64::try_from(max).unwrap_or(u64::MAX)) {
        return Err(too_large());
    }
    axum::body::to_bytes(body, max)
        .await
        .map_err(|_| too_large())
}

/// `POST /v1/eval`: one script in a fresh sandbox.
///
/// # Cancel safety
/// A dropped request (the client went away) discards its instance.
async fn eval(State(server): State<Server>, request: Request) -> Response {
    let caller = caller(&request);
    let span = tracing::info_span!("eval", kind = "eval", tenant = caller.name().unwrap_or("-"));
    async {
        match eval_fresh(&server, &caller, request).await {
            Ok(response) => response,
            Err(e) => server.refuse(e),
        }
    }
    .instrument(span)
    .await
}

async fn eval_fresh(
    server: &Server,
    caller: &Caller,
    request: Request,
) -> Result<Response, ApiError> {
    server.check_open()?;
    let (parts, body) = request.into_parts();
    let bytes = read_body(server, body, &parts.headers).await?;
    let body: EvalBody = api::parse(&bytes, None)?;
    drop(bytes);
    let config = &server.inner.config;
    let script = api::script(
        body.code,
        body.inputs,
        body.chunk_name,
        config.max_code_bytes,
    )?;
    let sandbox = match body.limits {
        Some(asked) => {
            let limits = asked.within(server.inner.sandbox.limits())?;
            server.inner.sandbox.with_limits(limits).map_err(|e| {
                ApiError::new(StatusCode::BAD_REQUEST, "invalid_limits", e.to_string())
            })?
        }
        None => server.inner.sandbox.clone(),
    };
    server.admit_tenant(caller)?;
    let _turn = server.inner.admission.enter().await?;
    let started = Instant::now();
    let outcome = match sandbox.session(()).await {
        Ok(mut session) => server.run(&mut session, script).await,
        Err(e) => match e.eval_error() {
            // A stop while starting (a limit too small to start one) is the
            // eval's outcome, with what it cost.
            Some(stop) => Err(stop.clone()),
            None => {
                return Err(ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    format!("cannot start a sandbox: {e}"),
                ));
            }
        },
    };
    Ok(server.finish("eval", caller, started, &outcome))
}

/// `POST /v1/sessions`: opens a session, with limits within the ceiling.
async fn open_session(State(server): State<Server>, request: Request) -> Response {
    let caller = caller(&request);
    match open(&server, &caller, request).await {
        Ok(response) => response,
        Err(e) => server.refuse(e),
    }
}

async fn open(server: &Server, caller: &Caller, request: Request) -> Result<Response, ApiError> {
    server.check_open()?;
    let (parts, body) = request.into_parts();
    let bytes = read_body(server, body, &parts.headers).await?;
    let body: OpenBody = api::parse(&bytes, Some(OpenBody::default()))?;
    let sandbox = match body.limits {
        Some(asked) => {
            let limits = asked.within(server.inner.sandbox.limits())?;
            server.inner.sandbox.with_limits(limits).map_err(|e| {
                ApiError::new(StatusCode::BAD_REQUEST, "invalid_limits", e.to_string())
            })?
        }
        None => server.inner.sandbox.clone(),
    };
    let id = match server.inner.sessions.open(&sandbox, caller.name()).await? {
        Ok(id) => id,
        Err(stop) => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_limits",
                stop.message,
            ));
        }
    };
    tracing::info!(
        tenant = caller.name().unwrap_or("-"),
        session = &id[..8],
        "session opened"
    );
    let limits = serde_json::to_value(sandbox.limits()).unwrap_or_default();
    Ok(json_response(
        StatusCode::CREATED,
        &json!({
            "id": id,
            "idle_ttl_secs": server.inner.config.session_ttl.as_secs(),
            "limits": limits,
        }),
    ))
}

/// `POST /v1/sessions/{id}/eval`: one script in an open session.
///
/// # Cancel safety
/// A dropped request leaves the session poisoned (its next eval says so).
async fn session_eval(
    State(server): State<Server>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let caller = caller(&request);
    let span = tracing::info_span!(
        "eval",
        kind = "session",
        tenant = caller.name().unwrap_or("-"),
        session = id.get(..8).unwrap_or("-")
    );
    async {
        match eval_in(&server, &caller, &id, request).await {
            Ok(response) => response,
            Err(e) => server.refuse(e),
        }
    }
    .instrument(span)
    .await
}

async fn eval_in(
    server: &Server,
    caller: &Caller,
    id: &str,
    request: Request,
) -> Result<Response, ApiError> {
    server.check_open()?;
    let slot = server.inner.sessions.get(id, caller.name())?;
    let (parts, body) = request.into_parts();
    let bytes = read_body(server, body, &parts.headers).await?;
    let body: SessionEvalBody = api::parse(&bytes, None)?;
    drop(bytes);
    let config = &server.inner.config;
    let script = api::script(
        body.code,
        body.inputs,
        body.chunk_name,
        config.max_code_bytes,
    )?;
    let Ok(mut session) = slot.session.try_lock() else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "session_busy",
            "the session is running another eval; wait for it to finish, or use another session",
        ));
    };
    server.admit_tenant(caller)?;
    let _turn = server.inner.admission.enter().await?;
    let started = Instant::now();
    let outcome = server.run(&mut session, script).await;
    drop(session);
    server.inner.sessions.touch(id);
    Ok(server.finish("session", caller, started, &outcome))
}

/// `DELETE /v1/sessions/{id}`: closes a session, cancelling its eval.
async fn close_session(
    State(server): State<Server>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let caller = caller(&request);
    match server.inner.sessions.close(&id, caller.name()) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => server.refuse(e),
    }
}

/// `GET /healthz`: the process is up.
async fn healthz() -> Response {
    json_response(StatusCode::OK, &json!({"status": "ok"}))
}

/// `GET /readyz`: the server takes new work (503 while it drains).
async fn readyz(State(server): State<Server>) -> Response {
    if server.inner.draining.load(Ordering::Relaxed) {
        json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            &json!({"status": "draining"}),
        )
    } else {
        json_response(StatusCode::OK, &json!({"status": "ready"}))
    }
}

/// `GET /metrics`: Prometheus text.
async fn metrics(State(server): State<Server>) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        server.inner.metrics.render(&server.gauges()),
    )
        .into_response()
}

async fn not_found(State(server): State<Server>, request: Request) -> Response {
    let path: String = request.uri().path().chars().take(200).collect();
    server.refuse(ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        format!(
            "no route {} {path}; the routes are POST /v1/eval, POST /v1/sessions, POST /v1/sessions/ID/eval, DELETE /v1/sessions/ID, GET /healthz, /readyz, /metrics",
            request.method()
        ),
    ))
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
