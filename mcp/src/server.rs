//! The MCP server: its tools, and how a call runs.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use moonbox::{Diagnostic, EvalError, EvalOutput, Finding, Report, Sandbox, Script, tool};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig as ServerInfo, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use moonbox_service::admission::Admission;
use moonbox_service::reply::Pending;

use crate::answer::{After, finished};
use crate::config::ServerConfig;
use crate::error::{Error, ToolError, human};
use crate::files;
use crate::logging::{Forwarder, Level};
use crate::progress::Progress;
use crate::sessions::{self, Sessions, Slot};

/// The tool that runs Lua.
const RUN_LUA: &str = tool::NAME;
/// The tool that checks Lua without running it.
const CHECK_LUA: &str = "check_lua";
/// The tool that opens a session.
const NEW_SESSION: &str = "new_session";
/// The tool that closes a session.
const CLOSE_SESSION: &str = "close_session";
/// How many calls without a session may wait for a turn, per call that may
/// run at once.
const WAITING_PER_RUNNING: usize = 4;

/// The MCP server: a sandbox offered as the `run_lua`, `check_lua`,
/// `new_session` and `close_session` tools.
///
/// Cheap to clone: clones share the sandbox and the sessions, so one server
/// can answer many connections (each HTTP client gets a clone), and a
/// session id opened on one connection works on another.
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
    /// The least level of the script's log events this connection's client
    /// wants (`logging/setLevel`); each connection has its own.
    level: Level,
}

struct Inner {
    sandbox: Sandbox,
    config: ServerConfig,
    sessions: Sessions,
    /// Turns for the calls without a session: `max_sessions` run at once,
    /// and [`WAITING_PER_RUNNING`] times as many wait (each holding its
    /// code and inputs), so that waiting calls cannot pile up.
    admission: Admission,
    tools: Vec<Tool>,
    /// Set once the server stops: new calls are refused.
    draining: AtomicBool,
    /// Tool calls in flight.
    in_flight: AtomicUsize,
    /// Told when the last call in flight ends.
    idle: Notify,
}

/// Counts a tool call in flight until dropped.
struct InFlight(Arc<Inner>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// How long a stop waits past the eval timeout for calls in flight (an
/// upstream call or a session's start can add to the timeout).
const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// How long an answer, once produced, is given to reach the client before
/// a stop closes the transport.
const ANSWER_SETTLE: Duration = Duration::from_millis(200);

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// The largest message the server reads: code, inputs, and args, files
    /// and stdin together, each up to `max_code_bytes`, with room for the
    /// envelope.
    pub(crate) fn max_message_bytes(&self) -> usize {
        let max_code = usize::try_from(self.inner.config.max_code_bytes).unwrap_or(usize::MAX);
        max_code.saturating_mul(3).saturating_add(1 << 20)
    }

    /// The wall-clock limit of one eval.
    pub(crate) fn sandbox_timeout(&self) -> std::time::Duration {
        self.inner.sandbox.limits().timeout
    }

    /// A server for `sandbox`.
    ///
    /// # Errors
    /// [`Error::Config`] when a field of `config` is out of bounds.
    pub fn new(sandbox: Sandbox, config: ServerConfig) -> Result<McpServer, Error> {
        config.validate()?;
        let tools = tools(&sandbox, &config);
        Ok(McpServer {
            inner: Arc::new(Inner {
                sessions: Sessions::new(sandbox.clone(), config.max_sessions, config.session_ttl),
                admission: Admission::new(
                    config.max_sessions,
                    config.max_sessions.saturating_mul(WAITING_PER_RUNNING),
                    None,
                ),
                sandbox,
                config,
                tools,
                draining: AtomicBool::new(false),
                in_flight: AtomicUsize::new(0),
                idle: Notify::new(),
            }),
            level: Level::default(),
        })
    }

    /// A clone for one more connection: the sandbox and the sessions are
    /// shared, the log level is its own.
    pub(crate) fn for_connection(&self) -> McpServer {
        McpServer {
            inner: self.inner.clone(),
            level: Level::default(),
        }
    }

    /// The configuration the server runs with.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// The tool definitions the server lists.
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// Serves one client over standard input and output until it closes
    /// the connection.
    ///
    /// # Errors
    /// [`Error::Protocol`] when the handshake fails or the connection
    /// breaks.
    ///
    /// # Cancel safety
    /// Dropping the future closes the connection and cancels the calls in
    /// flight; the sessions stay open in other clones of the server.
    pub async fn serve_stdio(self) -> Result<(), Error> {
        self.serve_stdio_until(std::future::pending()).await
    }

    /// Stops taking calls and waits for those in flight to finish: a call
    /// that arrives from now on is answered with an error that says the
    /// server is stopping, and one in flight runs to its end (at most the
    /// eval timeout and a few seconds). Returns how many were still running
    /// when the wait ended.
    ///
    /// # Cancel safety
    /// Dropping the future stops the wait; the server still refuses new
    /// calls.
    pub async fn drain(&self) -> usize {
        self.inner.draining.store(true, Ordering::Release);
        let wait = self.sandbox_timeout().saturating_add(DRAIN_GRACE);
        let _ = tokio::time::timeout(wait, async {
            loop {
                let idle = self.inner.idle.notified();
                if self.inner.in_flight.load(Ordering::Acquire) == 0 {
                    break;
                }
                idle.await;
            }
        })
        .await;
        let left = self.inner.in_flight.load(Ordering::Acquire);
        // The last answers go out through the transport's own tasks.
        tokio::time::sleep(ANSWER_SETTLE).await;
        left
    }

    /// Serves one client over standard input and output until it closes
    /// the connection or `shutdown` completes; then [drains](Self::drain)
    /// (calls in flight finish and are answered, new ones are refused) and
    /// closes the connection.
    ///
    /// # Errors
    /// [`Error::Protocol`] when the handshake fails or the connection
    /// breaks.
    ///
    /// # Cancel safety
    /// As for [`McpServer::serve_stdio`].
    pub async fn serve_stdio_until(
        self,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> Result<(), Error> {
        let (stdin, stdout) = rmcp::transport::io::stdio();
        self.serve_io_until(stdin, stdout, shutdown).await
    }

    /// Serves one client over a byte stream, one JSON-RPC message a line
    /// (the stdio transport's framing), until it closes the stream or
    /// `shutdown` completes; then [drains](Self::drain).
    ///
    /// # Errors
    /// As for [`McpServer::serve_stdio_until`].
    ///
    /// # Cancel safety
    /// As for [`McpServer::serve_stdio`].
    pub async fn serve_io_until<R, W>(
        self,
        input: R,
        output: W,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> Result<(), Error>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let sweeper = self.spawn_sweeper();
        let running = self
            .for_connection()
            .serve(self.line_transport(input, output))
            .await
            .map_err(|e| Error::Protocol(e.to_string()))?;
        let token = running.cancellation_token();
        let waiting = running.waiting();
        tokio::pin!(waiting);
        tokio::pin!(shutdown);
        let result = tokio::select! {
            result = &mut waiting => result.map(drop),
            () = &mut shutdown => {
                self.drain().await;
                token.cancel();
                waiting.await.map(drop)
            }
        };
        sweeper.cancel();
        result.map_err(|e| Error::Protocol(e.to_string()))
    }

    /// A byte stream as an MCP transport, a message a line.
    fn line_transport<R, W>(&self, input: R, output: W) -> crate::lines::LineTransport<R, W>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        // A message may hold code and inputs at their bounds, escaped: the
        // same bound as an HTTP request body. A longer line is skipped and
        // answered with an error; the connection stays open.
        crate::lines::LineTransport::new(input, output, self.max_message_bytes())
    }

    /// Starts a task that closes idle sessions every so often, until the
    /// returned token is cancelled or the server is dropped.
    pub(crate) fn spawn_sweeper(&self) -> CancellationToken {
        let stop = CancellationToken::new();
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let every = (self.inner.config.session_ttl / 4)
            .clamp(Duration::from_millis(100), Duration::from_secs(30));
        let token = stop.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = token.cancelled() => return,
                    () = tokio::time::sleep(every) => {}
                }
                match weak.upgrade() {
                    Some(inner) => inner.sessions.sweep(),
                    None => return,
                }
            }
        });
        stop
    }

    /// Answers a `run_lua` call.
    ///
    /// # Cancel safety
    /// As for [`McpServer::run_in`]; a cancelled request is not dropped.
    async fn run_lua(&self, args: JsonObject, ctx: &RequestContext<RoleServer>) -> CallToolResult {
        let call = match RunCall::parse(args, self.inner.config.max_code_bytes) {
            Ok(call) => call,
            Err(e) => return refused(&e),
        };
        let outcome = match &call.session {
            Some(id) => match self.inner.sessions.get(id) {
                Ok(slot) => {
                    let outcome = self.run_in(&slot, Some(id), call.script, ctx).await;
                    self.inner.sessions.touch(id);
                    outcome
                }
                Err(e) => Err(e),
            },
            None => self.run_fresh(call.script, ctx).await,
        };
        match outcome {
            Ok((outcome, after)) => {
                let pending = ctx
                    .extensions
                    .get::<axum::http::request::Parts>()
                    .and_then(|parts| parts.extensions.get::<Pending>());
                finished(&outcome, after, self.inner.config.max_reply_bytes, pending)
            }
            Err(e) => refused(&e),
        }
    }

    /// Runs in a session made for this call, then discards it.
    ///
    /// At most `max_sessions` such calls run at once, and
    /// [`WAITING_PER_RUNNING`] times as many wait for a turn; a call past
    /// that is refused at once.
    ///
    /// # Cancel safety
    /// Dropping the future discards the session; a cancelled request
    /// stops waiting for a turn or for the session's start at once.
    async fn run_fresh(
        &self,
        script: Script,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Ran, ToolError> {
        let _turn = tokio::select! {
            turn = self.inner.admission.enter(None) => turn?,
            () = ctx.ct.cancelled() => return Err(ToolError::Cancelled),
        };
        let session = tokio::select! {
            session = self.inner.sandbox.session(()) => session,
            () = ctx.ct.cancelled() => return Err(ToolError::Cancelled),
        };
        match session {
            Ok(session) => {
                self.run_in(&sessions::slot(session), None, script, ctx)
                    .await
            }
            // A session that cannot start (a limit too small for it) is the
            // call's outcome, reported like any other.
            Err(e) => match e.eval_error() {
                Some(stop) => Ok((Err(stop.clone()), After::Nothing)),
                None => Err(ToolError::Start(e.to_string())),
            },
        }
    }

    /// Runs `script` in the session of `slot`: the named session `id`, or
    /// (`None`) one made for the call.
    ///
    /// When the eval leaves a named session unusable (it was cancelled, or
    /// the outer wall stopped it), the session is restarted with fresh
    /// globals before the call returns, and the result says so: the id
    /// stays valid, as a model that cancelled a run expects. A session
    /// closed before the eval starts is refused as unknown; one closed
    /// while it runs (which cancels it) is not restarted, and the result
    /// says it was closed.
    ///
    /// # Cancel safety
    /// Dropping the future mid-eval poisons the session (the library's
    /// rule) and stops its progress notifications. A cancelled request
    /// does not drop it: it cancels the eval and waits for its end.
    async fn run_in(
        &self,
        slot: &Slot,
        id: Option<&str>,
        script: Script,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Ran, ToolError> {
        // A call right after a cancel waits for the cancelled one to wind
        // down (its eval stops at its next step; the session restarts).
        let Some(mut session) = slot.lock_for_call(STOPPING_WAIT).await else {
            return Err(ToolError::Busy(id.unwrap_or_default().to_owned()));
        };
        let _running = slot.running();
        // The client's cancel is the stop a next call waits for, even
        // before this call notices it.
        let cancelled = ctx.ct.clone();
        slot.stop_requested_by(move || cancelled.is_cancelled());
        // Closed between the lookup and the lock: the id is gone. (A close
        // from here on cancels the eval, even before it starts.)
        if let Some(id) = id
            && !self.inner.sessions.is_open(id, slot)
        {
            return Err(self.inner.sessions.unknown(id));
        }
        let progress = ctx.meta.get_progress_token().map(|token| {
            Progress::start(ctx.peer.clone(), token, self.inner.config.progress_interval)
        });
        session.set_output_sink(progress.as_ref().map(Progress::sink));
        let logs = Forwarder::start(ctx.peer.clone(), self.level.clone());
        session.set_log_sink(Some(logs.sink()));
        let outcome = {
            let run = session.run(script);
            tokio::pin!(run);
            tokio::select! {
                outcome = &mut run => outcome,
                () = ctx.ct.cancelled() => {
                    // The eval stops at its next step and keeps what it
                    // wrote; the session cannot run code afterwards.
                    slot.stop();
                    run.await
                }
            }
        };
        session.set_output_sink(None);
        session.set_log_sink(None);
        logs.finish().await;
        if let Some(progress) = progress {
            progress.finish().await;
        }
        let Some(id) = id else {
            return Ok((outcome, After::Nothing));
        };
        // A session closed meanwhile (close_session cancels its eval) is
        // not restarted: its id is gone.
        if !self.inner.sessions.is_open(id, slot) {
            return Ok((outcome, After::Closed(id.to_owned())));
        }
        if !session.is_poisoned() {
            return Ok((outcome, After::Nothing));
        }
        // Under the session's lock, so no call sees the poisoned session
        // in between. A failed restart leaves it poisoned: later calls
        // then say why they cannot run.
        let Ok(fresh) = self.inner.sandbox.session(()).await else {
            return Ok((outcome, After::Nothing));
        };
        // close_session may have run while the fresh session started.
        match self.inner.sessions.restart(id, slot, &mut session, fresh) {
            Some(_stale) => Ok((outcome, After::Restarted(id.to_owned()))),
            None => Ok((outcome, After::Closed(id.to_owned()))),
        }
    }

    /// Answers a `check_lua` call: the code's findings, checked against the
    /// named session's live state or, without one, a fresh session's.
    ///
    /// # Cancel safety
    /// Dropping the future while it checks in a named session poisons that
    /// session (the library's rule); a cancelled request stops waiting for
    /// a turn at once.
    async fn check_lua(
        &self,
        args: JsonObject,
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let (code, id, inputs) = match CheckCall::parse(args, self.inner.config.max_code_bytes) {
            Ok(call) => (call.code, call.session, call.inputs),
            Err(e) => return refused(&e),
        };
        let chunk = moonbox::DEFAULT_CHUNK_NAME;
        let outcome = match &id {
            Some(id) => match self.inner.sessions.get(id) {
                Ok(slot) => {
                    let Some(mut session) = slot.lock_for_call(STOPPING_WAIT).await else {
                        return refused(&ToolError::Busy(id.clone()));
                    };
                    let _running = slot.running();
                    let outcome = session.check(&code, chunk).await;
                    self.inner.sessions.touch(id);
                    outcome
                }
                Err(e) => return refused(&e),
            },
            None => {
                let _turn = tokio::select! {
                    turn = self.inner.admission.enter(None) => match turn {
                        Ok(turn) => turn,
                        Err(e) => return refused(&e.into()),
                    },
                    () = ctx.ct.cancelled() => return refused(&ToolError::Cancelled),
                };
                self.inner.sandbox.check(&code, chunk).await
            }
        };
        // The inputs a run would set are globals the check cannot see.
        let outcome = outcome.map(|found| {
            found
                .into_iter()
                .filter(|d| !(d.kind == Finding::UndefinedGlobal && inputs.contains(&d.name)))
                .collect()
        });
        checked(&outcome)
    }

    /// Answers a `new_session` call.
    ///
    /// # Cancel safety
    /// As for `Sessions::open`: dropping it leaves no session half-open.
    async fn new_session(&self) -> CallToolResult {
        match self.inner.sessions.open().await {
            Ok(id) => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(id.clone())]);
                result.structured_content = Some(json!({ "session": id }));
                result
            }
            Err(e) => refused(&e),
        }
    }

    fn close_session(&self, args: JsonObject) -> CallToolResult {
        let id = match session_arg(&args, CLOSE_SESSION, true) {
            Ok(Some(id)) => id,
            Ok(None) => {
                return refused(&ToolError::Arguments(
                    "`session` is required: the id new_session returned".to_owned(),
                ));
            }
            Err(e) => return refused(&e),
        };
        match self.inner.sessions.close(&id) {
            Ok(()) => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(format!(
                    "closed session {id}"
                ))]);
                result.structured_content = Some(json!({ "session": id, "closed": true }));
                result
            }
            Err(e) => refused(&e),
        }
    }
}

/// An eval's outcome, and what became of its named session.
type Ran = (Result<EvalOutput, EvalError>, After);

/// A `run_lua` call's arguments, checked.
struct RunCall {
    script: Script,
    session: Option<String>,
}

/// How long a call waits for a session whose cancelled call is winding
/// down (it stops at its next step, then the session restarts, in tens of
/// milliseconds) before it is refused as busy.
const STOPPING_WAIT: Duration = Duration::from_secs(5);

/// The arguments `run_lua` takes.
/// (The crate's `tool::ARGUMENTS`, and `session`.)
const RUN_KEYS: &[&str] = &["code", "inputs", "session", "args", "files", "stdin"];
/// The arguments `check_lua` takes.
const CHECK_KEYS: &[&str] = &["code", "inputs", "session"];

impl RunCall {
    fn parse(mut args: JsonObject, max_bytes: u64) -> Result<RunCall, ToolError> {
        unknown_key(&args, RUN_LUA, RUN_KEYS)?;
        let extras = files::take(&mut args, max_bytes)?;
        let call = code_call(args, RUN_LUA, "run", max_bytes)?;
        Ok(RunCall {
            script: extras.apply(Script::new(call.code).inputs(call.inputs)),
            session: call.session,
        })
    }
}

/// Refuses a key `tool_name` does not take, naming those it does.
fn unknown_key(args: &JsonObject, tool_name: &str, keys: &[&str]) -> Result<(), ToolError> {
    tool::unknown_argument(tool_name, keys, args.keys().map(String::as_str))
        .map_err(ToolError::Arguments)
}

/// The arguments `run_lua` and `check_lua` share, checked: `code` (what the
/// tool does with it is `verb`), `inputs` and `session`, each bounded by
/// `max_bytes`.
fn code_call(
    mut args: JsonObject,
    tool_name: &str,
    verb: &str,
    max_bytes: u64,
) -> Result<CodeCall, ToolError> {
    unknown_key(&args, tool_name, CHECK_KEYS)?;
    let session = session_arg(&args, tool_name, false)?;
    let code = match args.remove("code") {
        Some(Value::String(code)) => code,
        Some(_) => {
            return Err(ToolError::Arguments(
                "`code` must be a string of Lua source".to_owned(),
            ));
        }
        None => {
            return Err(ToolError::Arguments(format!(
                "`code` is required: the Lua chunk to {verb}"
            )));
        }
    };
    check_size("code", code.len(), max_bytes)?;
    let inputs = args.remove("inputs");
    if let Some(Value::String(text)) = &inputs {
        check_size("inputs", text.len(), max_bytes)?;
    }
    let inputs = tool::inputs(inputs).map_err(ToolError::Arguments)?;
    if !inputs.is_empty() {
        let len = serde_json::to_vec(&inputs).map_or(usize::MAX, |v| v.len());
        check_size("inputs", len, max_bytes)?;
    }
    Ok(CodeCall {
        code,
        inputs,
        session,
    })
}

/// What [`code_call`] returns.
struct CodeCall {
    code: String,
    inputs: serde_json::Map<String, Value>,
    session: Option<String>,
}

/// A `check_lua` call's arguments, checked.
struct CheckCall {
    code: String,
    session: Option<String>,
    /// The names of the inputs a run would set.
    inputs: Vec<String>,
}

impl CheckCall {
    fn parse(args: JsonObject, max_bytes: u64) -> Result<CheckCall, ToolError> {
        let call = code_call(args, CHECK_LUA, "check", max_bytes)?;
        Ok(CheckCall {
            code: call.code,
            session: call.session,
            inputs: call.inputs.into_iter().map(|(name, _)| name).collect(),
        })
    }
}

/// A finished check: the warnings (or the error) as text, one a line; as
/// structured content `{ok, diagnostics, error}`; `isError` when the code
/// does not compile. Warnings alone are not an error.
fn checked(outcome: &Result<Vec<Diagnostic>, EvalError>) -> CallToolResult {
    match outcome {
        Ok(found) => {
            let text = if found.is_empty() {
                "no findings: the code compiles and references nothing this sandbox refuses"
                    .to_owned()
            } else {
                found
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = Some(json!({ "ok": true, "diagnostics": found }));
            result
        }
        Err(e) => {
            let mut result = CallToolResult::error(vec![ContentBlock::text(e.to_string())]);
            result.structured_content =
                Some(json!({ "ok": false, "diagnostics": [], "error": Report::from(e).error }));
            result
        }
    }
}

fn check_size(what: &'static str, len: usize, max: u64) -> Result<(), ToolError> {
    let len = u64::try_from(len).unwrap_or(u64::MAX);
    if len > max {
        return Err(ToolError::TooLarge { what, len, max });
    }
    Ok(())
}

/// The `session` argument: absent or null is `None`.
fn session_arg(args: &JsonObject, tool: &str, only: bool) -> Result<Option<String>, ToolError> {
    if only && let Some(unknown) = args.keys().find(|k| k.as_str() != "session") {
        return Err(ToolError::Arguments(format!(
            "{tool} takes only session, not '{}'",
            unknown.chars().take(64).collect::<String>()
        )));
    }
    match args.get("session") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(id)) => Ok(Some(id.clone())),
        Some(_) => Err(ToolError::Arguments(
            "`session` must be a string: the id new_session returned".to_owned(),
        )),
    }
}

/// A call refused before any Lua ran: the reason as text, and `isError`.
fn refused(e: &ToolError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(e.to_string())])
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn tools(sandbox: &Sandbox, config: &ServerConfig) -> Vec<Tool> {
    let ttl = human(config.session_ttl);
    let mut description = tool::description(sandbox);
    description.push_str(&format!(
        "Sessions: without `session`, each call runs in a fresh Lua state. To keep globals between \
         calls, open a session with new_session and pass its id as `session`; a session closes after \
         {ttl} idle, and runs one call at a time. Inputs: `inputs` is an object of name -> JSON value; \
         each becomes a Lua global before the code runs (objects and arrays become tables), so data \
         need not be pasted into the code. Files: `files` mounts files read-only (name -> text, or \
         -> {{\"base64\": ...}} for bytes) for io.open, io.lines, dofile and require; `args` sets `arg` \
         and `...`; `stdin` is what io.read reads. Files the code writes (io.open(name, \"w\")) come \
         back in the result's `files` and as embedded resources file:///NAME. `code`, `inputs`, and \
         `args`, `files` and `stdin` together, may each be up to {} bytes.\n",
        config.max_code_bytes
    ));
    if let Some(extra) = &config.extra_description {
        description.push_str(extra);
        if !extra.ends_with('\n') {
            description.push('\n');
        }
    }
    let mut input = tool::input_schema(false);
    if let Some(properties) = input.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert(
            "session".to_owned(),
            json!({
                "type": "string",
                "description": "A session id from new_session, to run with that session's globals; without it the code runs in a fresh Lua state."
            }),
        );
    }
    // One type per field, as strict clients and Gemini's tool format take
    // them; the structured content leaves out what would be null.
    let output = crate::answer::output_schema();
    // A sandbox with no capabilities reaches nothing outside itself; with
    // them (code mode's upstreams among them), what a script does is theirs.
    let reaches_out = !sandbox.capabilities().is_empty();
    let mut run_annotations = ToolAnnotations::with_title("Run Lua").read_only(false);
    run_annotations = if reaches_out {
        run_annotations.open_world(true)
    } else {
        run_annotations.destructive(false).open_world(false)
    };
    let run_lua = Tool::new(RUN_LUA, description, object(input))
        .with_raw_output_schema(object(output))
        .annotate(run_annotations);
    let new_session = Tool::new(
        NEW_SESSION,
        format!(
            "Open a Lua session whose globals persist across run_lua calls that pass its id as \
             `session`. Returns the id. A session closes after {ttl} idle; at most {} are open at once, \
             so close sessions you no longer need with close_session.",
            config.max_sessions
        ),
        object(json!({ "type": "object", "properties": {}, "additionalProperties": false })),
    )
    .with_raw_output_schema(object(json!({
        "type": "object",
        "properties": { "session": { "type": "string" } },
        "required": ["session"]
    })))
    .annotate(
        ToolAnnotations::with_title("New Lua session")
            .read_only(false)
            .destructive(false)
            .idempotent(false)
            .open_world(false),
    );
    let close_session = Tool::new(
        CLOSE_SESSION,
        "Close a session opened with new_session. A run_lua call running in it is cancelled.",
        object(json!({
            "type": "object",
            "properties": {
                "session": { "type": "string", "description": "The id new_session returned." }
            },
            "required": ["session"],
            "additionalProperties": false
        })),
    )
    .with_raw_output_schema(object(json!({
        "type": "object",
        "properties": {
            "session": { "type": "string" },
            "closed": { "type": "boolean", "const": true }
        },
        "required": ["session", "closed"]
    })))
    .annotate(
        ToolAnnotations::with_title("Close Lua session")
            .read_only(false)
            .destructive(true)
            .idempotent(true)
            .open_world(false),
    );
    let check_lua = Tool::new(
        CHECK_LUA,
        format!(
            "Check Lua code without running it: syntax errors (isError), and warnings, one a line as \
             `chunk:line: warning[kind]: message`, for what this sandbox will refuse: a sandboxed \
             name not allowed (sandboxed), require of a module it does not offer (unknown_module), \
             a missing capability of a namespace (unknown_capability), a global that is read, never \
             assigned and nil (undefined_global). With `session`, globals that session defined \
             count as defined; the names in `inputs` (as run_lua takes them) too. `code` and \
             `inputs` may each be up to {} bytes.",
            config.max_code_bytes
        ),
        object(json!({
            "type": "object",
            "properties": {
                "code": { "type": "string", "description": "The Lua 5.4 chunk to check." },
                "inputs": {
                    "type": "object",
                    "description": "The inputs a run_lua call would pass: their names are globals the check counts as defined."
                },
                "session": {
                    "type": "string",
                    "description": "A session id from new_session, to check against that session's globals."
                }
            },
            "required": ["code"],
            "additionalProperties": false
        })),
    )
    .with_raw_output_schema(object(json!({
        "type": "object",
        "properties": {
            "ok": { "type": "boolean", "description": "Whether the code compiles." },
            "diagnostics": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "kind": {
                            "type": "string",
                            "enum": ["sandboxed", "unknown_module", "unknown_capability", "undefined_global"]
                        },
                        "name": { "type": "string" },
                        "message": { "type": "string" },
                        "chunk": { "type": "string" },
                        "line": { "type": "integer" }
                    },
                    "required": ["kind", "name", "message", "chunk", "line"]
                }
            },
            "error": { "type": "object", "description": "The syntax or limit error, when ok is false." }
        },
        "required": ["ok", "diagnostics"]
    })))
    .annotate(
        ToolAnnotations::with_title("Check Lua")
            .read_only(true)
            .open_world(false),
    );
    vec![run_lua, check_lua, new_session, close_session]
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerInfo {
        // Logging is deprecated by SEP-2577 (protocol 2026-07-28); clients of
        // the revisions before it use it (see `logging`).
        #[allow(deprecated, reason = "MCP logging, see `logging`")]
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .build();
        ServerInfo::new(capabilities)
            .with_server_info(Implementation::new("moonbox", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Run Lua 5.4 in a sandbox with run_lua; check_lua finds what the sandbox would \
                 refuse without running anything. Open a session with new_session to keep \
                 state between calls; close it with close_session.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    #[allow(deprecated, reason = "MCP logging, see `logging`")]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.level.set(request.level);
        Ok(())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Counted before the check, so that a drain that sees no call in
        // flight never misses one that is starting.
        self.inner.in_flight.fetch_add(1, Ordering::AcqRel);
        let _in_flight = InFlight(self.inner.clone());
        if self.inner.draining.load(Ordering::Acquire) {
            return Err(ErrorData::internal_error(
                "the server is stopping and takes no new calls; try again on another instance",
                None,
            ));
        }
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            RUN_LUA => self.run_lua(args, &context).await,
            CHECK_LUA => self.check_lua(args, &context).await,
            NEW_SESSION => self.new_session().await,
            CLOSE_SESSION => self.close_session(args),
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "unknown tool '{}'; this server has run_lua, check_lua, new_session and close_session",
                        other.chars().take(64).collect::<String>()
                    ),
                    None,
                ));
            }
        };
        Ok(result.into())
    }
}
