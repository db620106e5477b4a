//! [`RemoteSandbox`]: evals and sessions on the workers, from Rust, used
//! as a local [`moonbox::Sandbox`] is.

use std::time::{Duration, Instant};

use async_nats::Client;
use async_nats::client::RequestErrorKind;
use base64::Engine as _;
use moonbox::{Report, Script};
use serde_json::{Map, Value, json};

/// Why a remote eval has no report.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// No worker listens on the subject asked (the claim or eval subjects,
    /// or a worker's own).
    #[error("no moonbox worker answers {subject}; start one with `moonbox serve --nats URL`")]
    NoWorkers {
        /// The subject asked.
        subject: String,
    },
    /// The worker that held the session has gone (stopped, crashed or
    /// drained); the session's state is lost with it.
    #[error("session lost: the worker that held session '{id}' is gone; open a new session")]
    SessionLost {
        /// The session's id.
        id: String,
    },
    /// The worker refused the request (the same kinds as the HTTP API's
    /// errors: `overloaded`, `limit_above_ceiling`, `unknown_session`, …).
    #[error("refused ({kind}, {status}): {message}")]
    Refused {
        /// The HTTP status the refusal would have.
        status: u16,
        /// The error kind.
        kind: String,
        /// What went wrong and what to do.
        message: String,
        /// When trying again later can succeed, after how long.
        retry_after: Option<Duration>,
        /// The report of an eval that ran but whose answer could not be
        /// sent whole (`reply_too_large`): its values are dropped, what it
        /// wrote and cost are kept.
        report: Option<Box<moonbox::Report>>,
    },
    /// No answer within the client's timeout: the worker may have stopped
    /// mid-eval.
    #[error("no answer within {} ms; the worker may have stopped while it ran the request", .0.as_millis())]
    Timeout(Duration),
    /// No worker answered a claim in time, so the request was never sent:
    /// nothing ran.
    #[error("no worker could be claimed: {tries} claims went unanswered for {} ms in all; nothing ran, so it is safe to try again", .waited.as_millis())]
    NoClaim {
        /// Claims asked.
        tries: usize,
        /// How long the client waited for them.
        waited: Duration,
    },
    /// The request cannot be sent as it is (code that is not UTF-8).
    #[error("{0}")]
    Request(String),
    /// The bus failed, or the answer is not what a worker sends.
    #[error("{0}")]
    Transport(String),
}

/// A sandbox on the workers behind NATS.
///
/// Each fresh eval and session open claims a worker, then sends the
/// request to that worker alone (the module docs describe the subjects),
/// so that a worker draining loses none of them.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let client = moonbox_serve::NatsConfig::new("nats://127.0.0.1:4222").connect().await?;
/// let remote = moonbox_serve::RemoteSandbox::new(client);
/// let report = remote.eval("return 1 + 1").await?;
/// assert_eq!(report.values, [serde_json::json!(2)]);
///
/// let mut session = remote.session().await?;
/// session.eval("n = 41").await?;
/// assert_eq!(session.eval("return n + 1").await?.values, [serde_json::json!(42)]);
/// session.close().await?;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct RemoteSandbox {
    client: Client,
    prefix: String,
    timeout: Duration,
    session_grace: Duration,
}

/// A session on one worker.
#[derive(Debug)]
pub struct RemoteSession {
    sandbox: RemoteSandbox,
    id: String,
    subject: String,
}

impl RemoteSandbox {
    /// The default time to wait for an answer: longer than the default
    /// eval timeout and queue wait together.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

    /// The default [`RemoteSandbox::session_grace`].
    pub const DEFAULT_SESSION_GRACE: Duration = Duration::from_secs(3);

    /// A client on `client` with the default prefix and timeout.
    pub fn new(client: Client) -> RemoteSandbox {
        RemoteSandbox {
            client,
            prefix: super::DEFAULT_PREFIX.to_owned(),
            timeout: Self::DEFAULT_TIMEOUT,
            session_grace: Self::DEFAULT_SESSION_GRACE,
        }
    }

    /// The workers' subject prefix. Default `moonbox`.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How long a session's subject may go without a subscriber before
    /// its worker is taken as gone ([`RemoteError::SessionLost`]): longer
    /// than a worker takes to reconnect to NATS and subscribe again.
    /// Default [`RemoteSandbox::DEFAULT_SESSION_GRACE`].
    pub fn session_grace(mut self, grace: Duration) -> Self {
        self.session_grace = grace;
        self
    }

    /// How long to wait for an answer; set it above the workers' eval
    /// timeout plus their queue wait. Default
    /// [`RemoteSandbox::DEFAULT_TIMEOUT`].
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Runs `code` on some worker, in a fresh sandbox.
    ///
    /// # Errors
    /// [`RemoteError`] when there is no report; a script's own failure is
    /// a report with `ok: false`.
    ///
    /// # Cancel safety
    /// Dropping the future stops waiting; the worker still runs the eval.
    pub async fn eval(&self, code: impl AsRef<[u8]>) -> Result<Report, RemoteError> {
        self.run(Script::new(code.as_ref())).await
    }

    /// Runs a [`Script`] (code, inputs, arguments, standard input and
    /// mounted files) on some worker, in a fresh sandbox.
    ///
    /// # Errors
    /// As for [`RemoteSandbox::eval`].
    ///
    /// # Cancel safety
    /// As for [`RemoteSandbox::eval`].
    pub async fn run(&self, script: Script) -> Result<Report, RemoteError> {
        let body = body(&script, None)?;
        report(self.claimed("eval", body).await?)
    }

    /// Runs a [`Script`] under lower limits than the workers' own, given
    /// as in the HTTP API (`{"max_instructions": 1000, "timeout_ms": 500}`).
    ///
    /// # Errors
    /// As for [`RemoteSandbox::eval`]; `limit_above_ceiling` for a limit
    /// above the workers'.
    ///
    /// # Cancel safety
    /// As for [`RemoteSandbox::eval`].
    pub async fn run_with_limits(
        &self,
        script: Script,
        limits: Value,
    ) -> Result<Report, RemoteError> {
        let body = body(&script, Some(limits))?;
        report(self.claimed("eval", body).await?)
    }

    /// Opens a session on some worker; it stays on that worker.
    ///
    /// # Errors
    /// [`RemoteError`], for instance `too_many_sessions`.
    ///
    /// # Cancel safety
    /// Dropping the future may leave a session open on the worker until
    /// its idle TTL closes it.
    pub async fn session(&self) -> Result<RemoteSession, RemoteError> {
        let answer = self.claimed("open", Vec::new()).await?;
        let id = answer
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| RemoteError::Transport(format!("a session open answered {answer}")))?
            .to_owned();
        let Some((worker, session)) = id
            .split_once('.')
            .filter(|(worker, session)| is_token(worker) && is_token(session))
        else {
            return Err(RemoteError::Transport(format!(
                "the session id '{}' is not a worker's id and a session's",
                id.chars().take(200).collect::<String>()
            )));
        };
        let subject = format!("{}.worker.{worker}.session.{session}", self.prefix);
        Ok(RemoteSession {
            sandbox: self.clone(),
            id,
            subject,
        })
    }

    /// Claims a worker, then sends it `body` on its own subject `op`
    /// (`eval` or `open`).
    ///
    /// A claim runs nothing, so one that is lost (a worker leaving the
    /// queue group), refused as `draining`, or whose worker has gone or
    /// refuses the request as `draining` before it ran, is claimed again,
    /// up to [`MAX_CLAIMS`] times within the timeout. A request sent on a
    /// claim is never sent twice.
    async fn claimed(&self, op: &str, body: Vec<u8>) -> Result<Value, RemoteError> {
        let began = Instant::now();
        let deadline = began.checked_add(self.timeout);
        let left = || {
            deadline.map_or(Duration::MAX, |d| {
                d.saturating_duration_since(Instant::now())
            })
        };
        let claim_subject = format!("{}.claim", self.prefix);
        let mut last = None;
        let mut tries = 0;
        for attempt in 0..MAX_CLAIMS {
            if attempt > 0 {
                // A moment for a worker that is leaving the queue group to
                // be gone from it.
                tokio::time::sleep(RETRY_PAUSE * u32::try_from(attempt).unwrap_or(1)).await;
            }
            if left().is_zero() {
                break;
            }
            tries += 1;
            let asked = Instant::now();
            let claim = match self
                .request(&claim_subject, Vec::new(), None, left().min(CLAIM_WAIT))
                .await
            {
                Ok(claim) => claim,
                // Lost (a worker leaving the queue group), or its worker is
                // too busy to answer soon: nothing ran.
                Err(RemoteError::Timeout(_)) => {
                    last = None;
                    continue;
                }
                // A worker stopping or holding all the claims it may: the
                // queue group gives the next claim to another, maybe.
                Err(e) if is_draining(&e) || is_overloaded(&e) => {
                    last = Some(e);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let (Some(worker), Some(id)) = (
                claim
                    .get("worker")
                    .and_then(Value::as_str)
                    .filter(|w| is_token(w)),
                claim
                    .get("claim")
                    .and_then(Value::as_str)
                    .filter(|c| is_token(c)),
            ) else {
                return Err(RemoteError::Transport(format!(
                    "a claim answered {}",
                    claim.to_string().chars().take(200).collect::<String>()
                )));
            };
            if asked.elapsed() > crate::CLAIM_USE_WITHIN {
                // Too old to be sure the worker still holds it.
                last = None;
                continue;
            }
            let subject = format!("{}.worker.{worker}.{op}", self.prefix);
            let mut headers = async_nats::HeaderMap::new();
            headers.insert(crate::CLAIM_HEADER, id);
            match self
                .request(&subject, body.clone(), Some(headers), left())
                .await
            {
                // The worker left after its claim was lost, or it is
                // stopping: the request did not run.
                Err(e @ RemoteError::NoWorkers { .. }) => last = Some(e),
                Err(e) if is_draining(&e) => last = Some(e),
                Err(RemoteError::Timeout(_)) => return Err(RemoteError::Timeout(self.timeout)),
                answer => return answer,
            }
        }
        Err(last.unwrap_or(RemoteError::NoClaim {
            tries,
            waited: began.elapsed(),
        }))
    }

    /// One request and its answer, or the error that stands for it; no
    /// subscriber is [`RemoteError::NoWorkers`].
    async fn request(
        &self,
        subject: &str,
        body: Vec<u8>,
        headers: Option<async_nats::HeaderMap>,
        timeout: Duration,
    ) -> Result<Value, RemoteError> {
        // This client's timeout, whatever the NATS client's default.
        let mut request = async_nats::Request::new()
            .payload(body.into())
            .timeout(Some(timeout));
        if let Some(headers) = headers {
            request = request.headers(headers);
        }
        let request = self.client.send_request(subject.to_owned(), request);
        let reply = match tokio::time::timeout(timeout, request).await {
            Err(_) => return Err(RemoteError::Timeout(timeout)),
            Ok(Err(e)) if e.kind() == RequestErrorKind::NoResponders => {
                return Err(RemoteError::NoWorkers {
                    subject: subject.to_owned(),
                });
            }
            Ok(Err(e)) if e.kind() == RequestErrorKind::TimedOut => {
                return Err(RemoteError::Timeout(timeout));
            }
            Ok(Err(e)) => return Err(RemoteError::Transport(e.to_string())),
            Ok(Ok(reply)) => reply,
        };
        let answer: Value = serde_json::from_slice(&reply.payload)
            .map_err(|e| RemoteError::Transport(format!("the worker's answer is not JSON: {e}")))?;
        if let Some(refused) = answer.get("refused") {
            let text = |key: &str| {
                refused
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            let status = refused.get("status").and_then(Value::as_u64).unwrap_or(0);
            // A live worker that no longer has the session (closed, or idle
            // past its TTL) says so as `unknown_session`.
            let kind = text("kind");
            return Err(RemoteError::Refused {
                status: u16::try_from(status).unwrap_or(0),
                kind,
                message: text("message"),
                retry_after: refused
                    .get("retry_after_secs")
                    .and_then(Value::as_u64)
                    .map(Duration::from_secs),
                report: answer
                    .get("report")
                    .and_then(|r| serde_json::from_value(r.clone()).ok())
                    .map(Box::new),
            });
        }
        Ok(answer)
    }

    /// A request on a session's subject: no subscriber for
    /// the session grace means its worker has gone. A worker that lost its
    /// connection to NATS has no subscription until it reconnects, and
    /// "no responders" means nothing ran, so the request is sent again
    /// until the grace has passed.
    async fn session_request(
        &self,
        subject: &str,
        body: Vec<u8>,
        id: &str,
    ) -> Result<Value, RemoteError> {
        let began = tokio::time::Instant::now();
        let mut pause = Duration::from_millis(25);
        loop {
            match self
                .request(subject, body.clone(), None, self.timeout)
                .await
            {
                Err(RemoteError::NoWorkers { .. }) => {
                    if began.elapsed() + pause > self.session_grace {
                        return Err(RemoteError::SessionLost { id: id.to_owned() });
                    }
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(500));
                }
                answer => return answer,
            }
        }
    }
}

/// Claims a request may take before it fails with the last error.
const MAX_CLAIMS: usize = 5;

/// How long to wait for a claim's answer before asking again: a worker
/// answers claims at once, so a longer wait means the claim was lost.
const CLAIM_WAIT: Duration = Duration::from_secs(1);

/// The pause before the second claim, growing by as much for each one
/// after it.
const RETRY_PAUSE: Duration = Duration::from_millis(5);

/// Whether a worker id or claim from an answer is one subject token of
/// letters and digits (both are hex).
fn is_token(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Whether a worker refused because it is full: nothing ran.
fn is_overloaded(e: &RemoteError) -> bool {
    matches!(e, RemoteError::Refused { kind, .. } if kind == "overloaded")
}

/// Whether a worker refused because it is stopping: nothing ran.
fn is_draining(e: &RemoteError) -> bool {
    matches!(e, RemoteError::Refused { kind, .. } if kind == "draining")
}

impl RemoteSession {
    /// The session's id: its worker's id, a dot, and the session's own.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Runs `code` in the session.
    ///
    /// # Errors
    /// [`RemoteError::SessionLost`] when its worker has gone;
    /// [`RemoteError::Refused`] with `session_busy` or `unknown_session`;
    /// as for [`RemoteSandbox::eval`] otherwise.
    ///
    /// # Cancel safety
    /// Dropping the future stops waiting; the worker still runs the eval.
    pub async fn eval(&mut self, code: impl AsRef<[u8]>) -> Result<Report, RemoteError> {
        self.run(Script::new(code.as_ref())).await
    }

    /// Runs a [`Script`] in the session.
    ///
    /// # Errors
    /// As for [`RemoteSession::eval`].
    ///
    /// # Cancel safety
    /// As for [`RemoteSession::eval`].
    pub async fn run(&mut self, script: Script) -> Result<Report, RemoteError> {
        let body = body(&script, None)?;
        let subject = format!("{}.eval", self.subject);
        report(
            self.sandbox
                .session_request(&subject, body, &self.id)
                .await?,
        )
    }

    /// Closes the session on its worker.
    ///
    /// # Errors
    /// [`RemoteError::SessionLost`] when its worker has gone.
    ///
    /// # Cancel safety
    /// Dropping the future may leave the session open until its idle TTL.
    pub async fn close(self) -> Result<(), RemoteError> {
        let subject = format!("{}.close", self.subject);
        self.sandbox
            .session_request(&subject, Vec::new(), &self.id)
            .await
            .map(drop)
    }
}

/// The JSON body of an eval request.
fn body(script: &Script, limits: Option<Value>) -> Result<Vec<u8>, RemoteError> {
    let code = std::str::from_utf8(script.code()).map_err(|_| {
        RemoteError::Request(
            "the code is not UTF-8, and a request carries it as JSON text".to_owned(),
        )
    })?;
    let inputs: Map<String, Value> = script.input_values().iter().cloned().collect();
    let mut body = json!({"code": code, "inputs": inputs});
    if let Some(args) = script.arg_values() {
        body["args"] = json!(args);
    }
    let stdin = script.stdin_bytes();
    if !stdin.is_empty() {
        body["stdin"] = match std::str::from_utf8(stdin) {
            Ok(text) => json!(text),
            Err(_) => json!({"base64": base64::engine::general_purpose::STANDARD.encode(stdin)}),
        };
    }
    if !script.files().is_empty() {
        let files: Vec<Value> = script
            .files()
            .iter()
            .map(|file| match std::str::from_utf8(&file.bytes) {
                Ok(text) => json!({"name": file.name, "text": text}),
                Err(_) => json!({
                    "name": file.name,
                    "base64": base64::engine::general_purpose::STANDARD.encode(&file.bytes)
                }),
            })
            .collect();
        body["files"] = Value::Array(files);
    }
    if let Some(limits) = limits {
        body["limits"] = limits;
    }
    Ok(body.to_string().into_bytes())
}

fn report(answer: Value) -> Result<Report, RemoteError> {
    serde_json::from_value(answer)
        .map_err(|e| RemoteError::Transport(format!("the worker's answer is not a report: {e}")))
}
