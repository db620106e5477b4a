//! The service: its state, and the operations both transports (HTTP and
//! NATS) offer: an eval, a session opened, an eval in it, a session
//! closed. Each takes the request's bytes and answers a JSON value or an
//! [`ApiError`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use moonbox::{CancelHandle, EvalError, EvalOutput, Limits, Report, Sandbox, Script, Session};
use serde_json::{Value, json};

use tracing::Instrument;

use crate::api::{self, EvalBody, LimitsBody, OpenBody, SessionEvalBody};
use crate::config::ServeConfig;
use moonbox_service::accept::{Places, Refusal, Refusals, Refused};
use moonbox_service::admission::{Admission, Turn};
use moonbox_service::reply::Budget;

use crate::error::{ApiError, Error, retry_secs};
use crate::metrics::{Gauges, Metrics};
use crate::quota::{Quotas, Reserved};
use crate::readers::{Full, Readers, Reading};
use crate::sessions::Sessions;

/// The refusal of a tenant whose quota `what` is spent for `wait`.
fn quota_exceeded(name: &str, what: &str, wait: Duration) -> ApiError {
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "quota_exceeded",
        format!(
            "tenant '{name}' has used its {what} quota; it refills in {} ms",
            wait.as_millis()
        ),
    )
    .retry_after(wait)
}

/// The refusal of new work while the server drains.
fn draining() -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "draining",
        "the server is stopping and takes no new work; send the request to another instance",
    )
    .retry_after(Duration::from_secs(1))
}

/// The service: a sandbox behind an eval and session API, served over HTTP
/// ([`Server::bind`]) and, optionally, NATS
/// ([`Bound::nats`](crate::Bound::nats)).
///
/// Cheap to clone; clones share everything.
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
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    sandbox: Sandbox,
    pub(crate) config: ServeConfig,
    quotas: Quotas,
    admission: Admission,
    pub(crate) sessions: Sessions,
    metrics: Metrics,
    draining: AtomicBool,
    running: Running,
    /// Bounds the HTTP request bodies being read at once.
    readers: Readers,
    /// The places of the HTTP connections open at once.
    pub(crate) connections: Places,
    /// The memory for large answers being sent.
    pub(crate) replies: Budget,
}

/// Bodies read at once past the running and queued bounds: room for
/// refusals and session closes.
const SPARE_READERS: usize = 64;

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
    handles: Mutex<Handles>,
    next: AtomicU64,
}

#[derive(Default)]
struct Handles {
    live: HashMap<u64, CancelHandle>,
    /// Set by [`Running::stop_all`]: an eval registered after it is
    /// cancelled at once.
    stopped: bool,
}

/// Keeps an eval's handle registered while it lives.
struct Registered<'a> {
    running: &'a Running,
    id: u64,
}

impl Running {
    fn register(&self, handle: CancelHandle) -> Registered<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut handles = self.lock();
        if handles.stopped {
            handle.cancel();
        }
        handles.live.insert(id, handle);
        Registered { running: self, id }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Handles> {
        self.handles.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Cancels every eval running, and every one registered later.
    fn stop_all(&self) -> usize {
        let mut handles = self.lock();
        handles.stopped = true;
        for handle in handles.live.values() {
            handle.cancel();
        }
        handles.live.len()
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.running.lock().live.remove(&self.id);
    }
}

/// Who sent a request: a tenant's name, or `None` on a server without
/// keys (and on NATS, where the bus's own permissions decide who may
/// send).
#[derive(Clone)]
pub(crate) struct Caller(pub(crate) Option<Arc<str>>);

impl Caller {
    pub(crate) fn name(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

/// How a fresh eval arrived: as new work, which a draining server refuses,
/// or as work a NATS worker granted a claim for before its drain began,
/// which it still runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arrival {
    New,
    Claimed,
}

/// A session just opened: its id (in the session table) and limits.
pub(crate) struct Opened {
    pub(crate) id: String,
    pub(crate) limits: Value,
    pub(crate) idle_ttl_secs: u64,
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
                admission: Admission::new(
                    config.max_running,
                    config.max_queued,
                    Some(config.queue_wait),
                ),
                sessions: Sessions::new(
                    config.max_sessions,
                    config.max_sessions_per_tenant,
                    config.session_ttl,
                ),
                quotas,
                metrics: Metrics::default(),
                draining: AtomicBool::new(false),
                running: Running::default(),
                readers: Readers::new(
                    config
                        .max_running
                        .saturating_add(config.max_queued)
                        .saturating_add(SPARE_READERS),
                ),
                connections: Places::new(config.listen.max_connections),
                replies: Budget::new(config.reply_memory),
                sandbox,
                config,
            }),
        })
    }

    /// The configuration the server runs with.
    pub fn config(&self) -> &ServeConfig {
        &self.inner.config
    }

    /// Counts a refused request in the metrics.
    pub(crate) fn count_refused(&self, e: &ApiError) {
        self.inner.metrics.refused(e.kind);
    }

    /// What an accept loop of `max` connections answers the connections
    /// it will not serve: `503 too_many_connections` past the cap, `503
    /// draining` during a drain, each counted as a refusal.
    pub(crate) fn refusals(&self, max: usize) -> Refusals {
        let full = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "too_many_connections",
            format!(
                "the server holds {max} connections open, its bound, and none is idle; try again shortly, or reuse a connection"
            ),
        )
        .retry_after(Duration::from_secs(1));
        let draining = draining();
        let refusal = |e: &ApiError| {
            let after = e.retry_after.unwrap_or(Duration::from_secs(1));
            Refusal::new(e.status, e.body().to_string(), retry_secs(after))
        };
        let server = self.clone();
        let (full_kind, draining_kind) = (full.kind, draining.kind);
        Refusals {
            full: refusal(&full),
            draining: refusal(&draining),
            on_refused: Box::new(move |why| {
                let kind = match why {
                    Refused::Draining => draining_kind,
                    _ => full_kind,
                };
                server.inner.metrics.refused(kind);
            }),
        }
    }

    /// A place to read a request body of `caller`, once its tenant has
    /// quota left.
    ///
    /// # Errors
    /// `quota_exceeded` (429) when a quota of the tenant is spent;
    /// `overloaded` (429) when every place, or the tenant's share (a
    /// quarter), is taken.
    pub(crate) fn start_reading(&self, caller: &Caller) -> Result<Reading, ApiError> {
        if let Some(name) = caller.name() {
            self.inner
                .quotas
                .check(name)
                .map_err(|(wait, what)| quota_exceeded(name, what, wait))?;
        }
        self.inner.readers.start(caller.0.as_ref()).map_err(|full| {
            let message = match full {
                Full::All => {
                    "the server is reading as many request bodies as it may; try again later"
                        .to_owned()
                }
                Full::Tenant(n) => format!(
                    "this tenant is sending {n} request bodies at once, its share of the server's places; finish one first"
                ),
            };
            ApiError::new(StatusCode::TOO_MANY_REQUESTS, "overloaded", message)
                .retry_after(Duration::from_secs(1))
        })
    }

    /// Charges `caller` the time its body took to arrive, so that slow
    /// bodies cost their own tenant's quota.
    pub(crate) fn charge_reading(&self, caller: &Caller, took: Duration) {
        if let Some(name) = caller.name() {
            self.inner.quotas.charge_wall(name, took);
        }
    }

    /// The bound on a request body, on every transport.
    ///
    /// # Errors
    /// `body_too_large` (413).
    pub(crate) fn check_body(&self, bytes: &[u8]) -> Result<(), ApiError> {
        let max = self.inner.config.max_body_bytes;
        if bytes.len() > max {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                format!("the request body is larger than this server's {max} bytes"),
            ));
        }
        Ok(())
    }

    pub(crate) fn is_draining(&self) -> bool {
        self.inner.draining.load(Ordering::Relaxed)
    }

    pub(crate) fn start_draining(&self) {
        self.inner.draining.store(true, Ordering::Relaxed);
    }

    /// Ends a drain: refuses the requests waiting for a turn, cancels every
    /// eval running and any that starts later; returns how many ran.
    pub(crate) fn stop_all(&self) -> usize {
        self.inner.admission.close();
        self.inner.running.stop_all()
    }

    /// Refuses new work while the server drains.
    ///
    /// # Errors
    /// `draining` (503).
    pub(crate) fn check_open(&self) -> Result<(), ApiError> {
        if self.is_draining() {
            return Err(draining());
        }
        Ok(())
    }

    /// Admits an eval of `caller` under `limits`, taking its worst case
    /// out of the tenant's quota.
    fn admit_tenant(
        &self,
        caller: &Caller,
        limits: &Limits,
    ) -> Result<Option<Reserved<'_>>, ApiError> {
        let Some(name) = caller.name() else {
            return Ok(None);
        };
        self.inner
            .quotas
            .admit(name, limits.max_instructions, limits.timeout)
            .map(Some)
            .map_err(|(wait, what)| quota_exceeded(name, what, wait))
    }

    /// Admits an eval under `limits`: its tenant's quota, then a turn to
    /// run. Returns the quota's reservation (started), the turn, and when
    /// the eval starts.
    ///
    /// # Cancel safety
    /// Dropping the future gives the reservation back and leaves the queue.
    async fn admit<T>(
        &self,
        caller: &Caller,
        limits: &Limits,
        prepare: impl FnOnce() -> Result<T, ApiError>,
    ) -> Result<(Option<Reserved<'_>>, Turn, Instant, T), ApiError> {
        let mut reserved = self.admit_tenant(caller, limits)?;
        let turn = self.inner.admission.enter(caller.0.as_ref()).await?;
        // Within the turn, so that requests waiting for one hold only
        // their bytes, and before the eval is charged as running, so that
        // one that fails here costs its tenant nothing.
        let prepared = prepare()?;
        if let Some(reserved) = &mut reserved {
            reserved.start();
        }
        Ok((reserved, turn, Instant::now(), prepared))
    }

    /// The sandbox for a request's limits: the server's, or the same under
    /// lower limits.
    fn sandbox(&self, asked: Option<LimitsBody>) -> Result<Sandbox, ApiError> {
        let Some(asked) = asked else {
            return Ok(self.inner.sandbox.clone());
        };
        let limits = asked.within(self.inner.sandbox.limits())?;
        self.inner
            .sandbox
            .with_limits(limits)
            .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid_limits", e.to_string()))
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

    /// Counts and charges a finished eval, and turns it into the report.
    fn finish(
        &self,
        kind: &'static str,
        reserved: Option<Reserved<'_>>,
        started: Instant,
        outcome: &Result<EvalOutput, EvalError>,
    ) -> Value {
        let stats = match outcome {
            Ok(out) => out.stats,
            Err(e) => e.stats,
        };
        let label = match outcome {
            Ok(_) => "ok",
            Err(e) => e.kind.as_str(),
        };
        let wall = started.elapsed();
        if let Some(reserved) = reserved {
            reserved.settle(stats.instructions, wall);
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
        Report::from(outcome).to_json()
    }

    /// One script in a fresh sandbox: the body of `POST /v1/eval`.
    ///
    /// # Cancel safety
    /// Dropping the future discards the instance.
    pub(crate) async fn eval(
        &self,
        via: &'static str,
        caller: &Caller,
        arrival: Arrival,
        bytes: &[u8],
    ) -> Result<Value, ApiError> {
        let span = tracing::info_span!(
            "eval",
            via,
            kind = "eval",
            tenant = caller.name().unwrap_or("-")
        );
        self.eval_fresh(caller, arrival, bytes)
            .instrument(span)
            .await
    }

    async fn eval_fresh(
        &self,
        caller: &Caller,
        arrival: Arrival,
        bytes: &[u8],
    ) -> Result<Value, ApiError> {
        if arrival == Arrival::New {
            self.check_open()?;
        }
        self.check_body(bytes)?;
        let body: EvalBody = api::parse(bytes, None)?;
        let max_code = self.inner.config.max_code_bytes;
        let extras = api::Extras {
            args: body.args,
            files: body.files,
            stdin: body.stdin,
        };
        let pending = api::script(body.code, body.inputs, body.chunk_name, extras, max_code)?;
        let sandbox = self.sandbox(body.limits)?;
        let (reserved, _turn, started, script) = self
            .admit(caller, sandbox.limits(), || pending.script())
            .await?;
        let outcome = match sandbox.session(()).await {
            Ok(mut session) => self.run(&mut session, script).await,
            Err(e) => match e.eval_error() {
                // A stop while starting (a limit too small to start one) is
                // the eval's outcome, with what it cost.
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
        Ok(self.finish("eval", reserved, started, &outcome))
    }

    /// Opens a session: the body of `POST /v1/sessions`.
    ///
    /// # Cancel safety
    /// Dropping the future opens nothing.
    pub(crate) async fn open(&self, caller: &Caller, bytes: &[u8]) -> Result<Opened, ApiError> {
        self.check_open()?;
        self.check_body(bytes)?;
        let body: OpenBody = api::parse(bytes, Some(OpenBody::default()))?;
        let asked = body.limits.is_some();
        let sandbox = self.sandbox(body.limits)?;
        // The caps first, so that a tenant at its cap does not wait for a
        // turn to be refused; then starting a session takes a turn like an
        // eval.
        let place = self.inner.sessions.reserve(caller.name())?;
        let _turn = self.inner.admission.enter(caller.0.as_ref()).await?;
        let id = match self.inner.sessions.start(place, &sandbox).await? {
            Ok(id) => id,
            // Limits the request asked for that are too small to start a
            // session (the message names the limit) are the request's
            // fault; any other stop is the server's.
            Err(stop) if asked => {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_limits",
                    stop.message,
                ));
            }
            Err(stop) => {
                return Err(ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "session_start_failed",
                    format!("the session could not start: {}", stop.message),
                )
                .retry_after(Duration::from_secs(1)));
            }
        };
        tracing::info!(
            tenant = caller.name().unwrap_or("-"),
            session = id.get(..8).unwrap_or("-"),
            "session opened"
        );
        Ok(Opened {
            id,
            limits: serde_json::to_value(sandbox.limits()).unwrap_or_default(),
            idle_ttl_secs: self.inner.config.session_ttl.as_secs(),
        })
    }

    /// One script in session `id`: the body of `POST /v1/sessions/{id}/eval`.
    ///
    /// # Cancel safety
    /// Dropping the future leaves the session poisoned (its next eval says
    /// so).
    pub(crate) async fn eval_in(
        &self,
        via: &'static str,
        caller: &Caller,
        id: &str,
        bytes: &[u8],
    ) -> Result<Value, ApiError> {
        let span = tracing::info_span!(
            "eval",
            via,
            kind = "session",
            tenant = caller.name().unwrap_or("-"),
            session = id.get(..8).unwrap_or("-")
        );
        self.eval_session(caller, id, bytes).instrument(span).await
    }

    async fn eval_session(
        &self,
        caller: &Caller,
        id: &str,
        bytes: &[u8],
    ) -> Result<Value, ApiError> {
        self.check_open()?;
        self.check_body(bytes)?;
        let slot = self.inner.sessions.get(id, caller.name())?;
        let body: SessionEvalBody = api::parse(bytes, None)?;
        let max_code = self.inner.config.max_code_bytes;
        let extras = api::Extras {
            args: body.args,
            files: body.files,
            stdin: body.stdin,
        };
        let pending = api::script(body.code, body.inputs, body.chunk_name, extras, max_code)?;
        let Ok(mut open) = slot.session.try_lock() else {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "session_busy",
                "the session is running another eval; wait for it to finish, or use another session",
            ));
        };
        let _running = slot.running();
        // The sweeper may have closed it between the lookup and the lock;
        // held now, it is never idle.
        if !self.inner.sessions.is_open(id, &slot) {
            return Err(self.inner.sessions.unknown(id));
        }
        let (reserved, _turn, started, script) = self
            .admit(caller, &open.limits, || pending.script())
            .await?;
        let outcome = self.run(&mut open.session, script).await;
        self.inner.sessions.touch(id);
        drop(open);
        Ok(self.finish("session", reserved, started, &outcome))
    }

    /// Closes session `id`, cancelling its eval.
    ///
    /// # Errors
    /// `unknown_session` (404).
    pub(crate) fn close(&self, caller: &Caller, id: &str) -> Result<(), ApiError> {
        self.inner.sessions.close(id, caller.name())
    }

    /// The Prometheus text.
    pub(crate) fn metrics_text(&self) -> String {
        self.inner.metrics.render(&Gauges {
            sessions: self.inner.sessions.live(),
            queued: self.inner.admission.queued(),
            running: self.inner.admission.running(),
            draining: self.is_draining(),
            connections: self.inner.connections.open(),
        })
    }
}

impl Opened {
    /// The reply to an open, with the id clients use.
    pub(crate) fn to_json(&self, id: &str) -> Value {
        json!({"id": id, "idle_ttl_secs": self.idle_ttl_secs, "limits": self.limits})
    }
}

/// Closes idle sessions every so often while the server lives.
pub(crate) async fn sweep(inner: std::sync::Weak<Inner>) {
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
