//! The store's host state: WASI that grants nothing, the memory limiter, the
//! output stream, and capability dispatch for the guest's `capabilities`
//! import.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;

use rand::SeedableRng;
use wasmtime::ResourceLimiter;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{
    HostMonotonicClock, HostWallClock, ResourceTable, WasiCtx, WasiCtxView, WasiView,
};

use crate::arguments::ArgumentPool;
use crate::bindings::moonbox::sandbox::{capabilities, output};
use crate::bindings::types::{FileChange, LogLevel, Value as WitValue};
use crate::capability::Capability;
use crate::config::Determinism;
use crate::files::FileMirror;
use crate::governance::{Approval, ApprovalRequest, Audit, CallOutcome, Governance, Ticket};
use crate::limits::Limits;
use crate::output::{LogBuffer, OutputBuffer};
use crate::script::CancelHandle;

/// Bytes of guest stdout/stderr kept. The script's output travels through
/// the `output` import; WASI stdio is reached only by an allowed `io.stderr`,
/// and the pipes keep it from the host's own streams.
const STDIO_CAPACITY: usize = 64 << 10;

/// Capabilities by name, shared by every store of a sandbox.
pub(crate) struct Registry<T> {
    pub(crate) capabilities: Vec<Capability<T>>,
    /// Budgets, the audit trail's options, the approver.
    pub(crate) governance: Arc<Governance>,
}

impl<T> Registry<T> {
    /// Where the capability called `name` is in `capabilities`.
    fn find(&self, name: &str) -> Option<usize> {
        self.capabilities.iter().position(|c| c.name() == name)
    }
}

/// Everything one store holds on the host side.
pub(crate) struct HostState<T> {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limiter: Limiter,
    registry: Arc<Registry<T>>,
    ctx: Option<Arc<T>>,
    /// When the current eval must stop; read by the epoch callback.
    pub(crate) deadline: Option<Instant>,
    /// Largest reply a capability may hand the guest, in bytes.
    max_reply_bytes: usize,
    /// What the current eval has written.
    pub(crate) output: OutputBuffer,
    /// The log events the current eval has sent.
    pub(crate) logs: LogBuffer,
    /// The session's files as the guest's changes describe them, for the
    /// stops that end an eval without the guest's own account.
    pub(crate) files: FileMirror,
    /// Capability calls the current eval has made, counted by the host.
    pub(crate) capability_calls: u32,
    /// Set when the host cancels the session; read by the epoch callback.
    pub(crate) cancel: CancelHandle,
    /// Calls of one `call-many` batch that run at the same time.
    max_calls_in_flight: usize,
    /// The current eval's call records and budget counters.
    pub(crate) audit: Audit,
    /// What the calls in flight may hold in parsed arguments: the Lua
    /// heap's limit. The eval's returned values are parsed against it too.
    pub(crate) arguments: ArgumentPool,
    /// In deterministic mode, the host's own time in capability calls,
    /// kept apart from the script's deadline.
    pub(crate) host_time: Option<HostTime>,
}

/// Deterministic mode's clock for the host's side of an eval.
///
/// A capability's wall time is not an input of the script: the same calls
/// take longer on a loaded machine or a slow network. So in deterministic
/// mode the time the host spends in capability calls moves the script's
/// deadline forward (the script's `timeout` counts only the guest's own
/// time, which fuel bounds at the same point on every run), and is bounded
/// on its own by a budget of one `timeout` per eval. An eval then takes at
/// most two timeouts, and it ends at the same point on every run unless
/// one of the two runs out.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostTime {
    /// What the host may spend in one eval: the timeout.
    pub(crate) budget: Duration,
    /// What it has spent in the current eval.
    pub(crate) spent: Duration,
}

/// The trap that ends an eval whose capability calls took longer, in all,
/// than deterministic mode's host budget ([`HostTime`]).
#[derive(Debug, thiserror::Error)]
#[error(
    "the capability calls of this eval took longer than the {} ms timeout in all (deterministic mode counts the host's time apart from the script's; raise the timeout limit, Limits::timeout, or make the capabilities faster)",
    budget.as_millis()
)]
pub(crate) struct HostTimeout {
    pub(crate) budget: Duration,
}

impl<T: Send + Sync + 'static> HostState<T> {
    pub(crate) fn new(
        registry: Arc<Registry<T>>,
        ctx: Option<Arc<T>>,
        limits: &Limits,
        determinism: Option<Determinism>,
    ) -> Self {
        let max_reply_bytes = limits.max_memory_bytes;
        let mut wasi = WasiCtx::builder();
        // Defaults already grant no preopens, environment, arguments, stdin
        // or network; the stdio pipes are bounded and never read back.
        wasi.stdout(MemoryOutputPipe::new(STDIO_CAPACITY))
            .stderr(MemoryOutputPipe::new(STDIO_CAPACITY))
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        if let Some(d) = determinism {
            let seed = d.seed as u64;
            wasi.wall_clock(FixedClock(Duration::from_secs(
                u64::try_from(d.clock).unwrap_or(0),
            )))
            .monotonic_clock(FixedClock(Duration::ZERO))
            .secure_random(rand::rngs::StdRng::seed_from_u64(seed))
            .insecure_random(rand::rngs::StdRng::seed_from_u64(seed ^ 0x5eed))
            .insecure_random_seed(u128::from(seed));
        }
        HostState {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            limiter: Limiter::new(limits.effective_max_wasm_memory_bytes()),
            registry,
            ctx,
            deadline: None,
            max_reply_bytes: usize::try_from(max_reply_bytes).unwrap_or(usize::MAX),
            output: OutputBuffer::new(limits.max_output_bytes),
            logs: LogBuffer::new(limits.max_output_bytes, limits.max_memory_bytes),
            files: FileMirror::new(limits.max_memory_bytes),
            capability_calls: 0,
            cancel: CancelHandle::default(),
            max_calls_in_flight: usize::try_from(limits.max_calls_in_flight)
                .unwrap_or(1)
                .max(1),
            audit: Audit::default(),
            arguments: ArgumentPool::new(max_reply_bytes),
            host_time: determinism.map(|_| HostTime {
                budget: limits.timeout,
                spent: Duration::ZERO,
            }),
        }
    }
}

impl<T: Send + Sync + 'static> WasiView for HostState<T> {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl<T> crate::bindings::types::Host for HostState<T> {}

impl<T> output::Host for HostState<T> {
    fn write(&mut self, bytes: Vec<u8>) {
        self.output.write(&bytes);
    }

    fn log(&mut self, level: LogLevel, message: String, fields: String) {
        self.logs.push(level.into(), message, &fields);
    }

    fn file(&mut self, change: FileChange) {
        self.files.apply(change);
    }
}

impl<T: Send + Sync + 'static> HostState<T> {
    /// One capability call, ready to run: the capability and the context
    /// are looked up now, and the call is counted against its budget and
    /// given its audit record now (so a batch is decided in request order);
    /// the work happens when the future is polled.
    fn start_call(
        &self,
        name: String,
        args: Vec<WitValue>,
    ) -> impl std::future::Future<Output = Result<WitValue, String>> + Send + 'static {
        // The future holds the registry, not a copy of the capability.
        let registry = self.registry.clone();
        let index = registry.find(&name);
        let ctx = self.ctx.clone();
        let max_reply = self.max_reply_bytes;
        let pool = self.arguments.clone();
        let budget = index.map(|i| {
            registry.capabilities[i]
                .budget()
                .or(registry.governance.default_budget)
        });
        let admitted = self.audit.admit(&name, budget);
        async move {
            let ticket = admitted?;
            ticket.begin();
            let Some(cap) = index.map(|i| &registry.capabilities[i]) else {
                ticket.finish(CallOutcome::Error, 0);
                return Err(format!("{name}: no such capability"));
            };
            let Some(ctx) = ctx else {
                ticket.finish(CallOutcome::Error, 0);
                return Err(format!(
                    "{name}: capabilities are unavailable in this instance"
                ));
            };
            dispatch(
                cap,
                ctx,
                args,
                max_reply,
                &pool,
                &registry.governance,
                &ticket,
            )
            .await
        }
    }
}

impl<T> HostState<T> {
    /// Runs the host's side of one call (or batch). Outside deterministic
    /// mode it simply runs, under the eval's timeout. In deterministic mode
    /// its wall time is taken out of the script's deadline and charged to
    /// the host's budget ([`HostTime`]); past that budget the eval ends
    /// with [`HostTimeout`], as soon as the call returns or at once when it
    /// is still awaiting.
    async fn host_work<R>(&mut self, work: impl Future<Output = R>) -> wasmtime::Result<R> {
        let Some(clock) = self.host_time else {
            return Ok(work.await);
        };
        let begun = Instant::now();
        let left = clock.budget.saturating_sub(clock.spent);
        let outcome = tokio::time::timeout(left, work).await;
        let took = begun.elapsed();
        self.deadline = self.deadline.and_then(|d| d.checked_add(took));
        let spent = clock.spent.saturating_add(took);
        self.host_time = Some(HostTime { spent, ..clock });
        match outcome {
            Ok(value) if spent <= clock.budget => Ok(value),
            _ => Err(wasmtime::Error::new(HostTimeout {
                budget: clock.budget,
            })),
        }
    }
}

impl<T: Send + Sync + 'static> capabilities::Host for HostState<T> {
    async fn call(
        &mut self,
        name: String,
        args: Vec<WitValue>,
    ) -> wasmtime::Result<Result<WitValue, String>> {
        self.capability_calls = self.capability_calls.saturating_add(1);
        let call = self.start_call(name, args);
        self.host_work(call).await
    }

    async fn call_many(
        &mut self,
        calls: Vec<capabilities::CallRequest>,
    ) -> wasmtime::Result<Vec<Result<WitValue, String>>> {
        let count = u32::try_from(calls.len()).unwrap_or(u32::MAX);
        self.capability_calls = self.capability_calls.saturating_add(count);
        let total = calls.len();
        let calls: Vec<_> = calls
            .into_iter()
            .map(|call| self.start_call(call.name, call.args))
            .collect();
        let budget = self.max_reply_bytes;
        let batch = run_bounded(calls, self.max_calls_in_flight, budget, reply_bytes);
        Ok(match self.host_work(batch).await? {
            Ok(results) => results,
            Err(Overflow) => {
                let msg = format!(
                    "the replies of this batch of {total} calls from parallel passed {budget} bytes, \
                     the sandbox's memory limit; fan out over fewer items at a time"
                );
                vec![Err(msg); total]
            }
        })
    }
}

/// Bytes a reply holds, for the batch's budget.
fn reply_bytes(reply: &Result<WitValue, String>) -> usize {
    match reply {
        Ok(WitValue::Json(text) | WitValue::Text(text)) | Err(text) => text.len(),
        Ok(_) => 8,
    }
}

/// A batch whose replies passed its byte budget.
struct Overflow;

/// Runs one admitted capability call: converts and checks the arguments,
/// asks the approver when the capability needs approval, runs the handler
/// (bounded by `max_reply` bytes of reply) and converts the reply; the
/// ticket's record follows each step.
async fn dispatch<T: Send + Sync + 'static>(
    cap: &Capability<T>,
    ctx: Arc<T>,
    args: Vec<WitValue>,
    max_reply: usize,
    pool: &ArgumentPool,
    governance: &Governance,
    ticket: &Ticket,
) -> Result<WitValue, String> {
    let name = cap.name();
    // The record says how the call failed; the script gets the message.
    let failed = |outcome: CallOutcome, e: &dyn std::fmt::Display| {
        ticket.finish(outcome, 0);
        Err(format!("{name}: {e}"))
    };
    // The parsed arguments are held against the session's pool for as long
    // as they live: `held` goes with them into the handler (`Capability::run`).
    let (values, held) = match pool.parse(args) {
        Ok(parsed) => parsed,
        Err(e) => return failed(CallOutcome::Error, &e),
    };
    ticket.arguments(governance, &values, held.bytes());
    let values = match cap.prepare(values) {
        Ok(values) => values,
        Err(e) => return failed(e.outcome(), &e),
    };
    if cap.needs_approval() {
        // The approver's copy is held against the pool too.
        let _copy = match pool.hold(held.bytes()) {
            Ok(copy) => copy,
            Err(e) => return failed(CallOutcome::Error, &e),
        };
        let request = ApprovalRequest {
            capability: name.to_owned(),
            args: values.clone(),
        };
        if let Approval::Refuse(reason) = governance.approve(request).await {
            ticket.finish(CallOutcome::Refused, 0);
            return Err(match reason {
                Some(reason) => format!("{name}: the host refused this call: {reason}"),
                None => format!(
                    "{name}: the host refused this call (it needs the host's approval); do not retry it, continue without it"
                ),
            });
        }
    }
    match cap.run(&ctx, values, max_reply, held).await {
        Ok(text) => {
            ticket.finish(CallOutcome::Ok, text.len());
            Ok(to_wit(text))
        }
        Err(e) => failed(e.outcome(), &e),
    }
}

/// A reply's JSON text as a WIT value: a table stays JSON text; a scalar
/// travels typed.
fn to_wit(text: String) -> WitValue {
    use serde_json::Value;
    match text.as_bytes().first() {
        Some(b'[' | b'{') => return WitValue::Json(text),
        // The common scalars without a parser: JSON writes an integer as
        // plain digits, which `i64` reads the same way, except `-0` (a
        // float to JSON) and leading zeros (not JSON), left to the parser.
        Some(b'-' | b'0'..=b'9') => {
            let digits = text.strip_prefix('-').unwrap_or(&text);
            let zero_led = digits.starts_with('0') && text != "0";
            if let (false, Ok(i)) = (zero_led, text.parse::<i64>()) {
                return WitValue::Integer(i);
            }
        }
        _ => match text.as_str() {
            "true" => return WitValue::Boolean(true),
            "false" => return WitValue::Boolean(false),
            "null" => return WitValue::Nil,
            _ => {}
        },
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Null) => WitValue::Nil,
        Ok(Value::Bool(b)) => WitValue::Boolean(b),
        Ok(Value::Number(n)) => match n.as_i64() {
            Some(i) => WitValue::Integer(i),
            None => WitValue::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Ok(Value::String(s)) => WitValue::Text(s),
        _ => WitValue::Json(text),
    }
}

/// Runs the futures with at most `limit` in flight at once, starting them
/// in order as earlier ones finish; the results come back in input order,
/// whatever order the futures finish in. Only a future that was woken is
/// polled again.
///
/// The results held at once weigh at most `budget` (by `weigh`): once the
/// finished ones pass it, the rest are dropped unfinished and the batch
/// fails as a whole. Whether it fails depends only on the results, not on
/// the order they arrive in, since they all count.
async fn run_bounded<F: Future>(
    futures: Vec<F>,
    limit: usize,
    budget: usize,
    weigh: impl Fn(&F::Output) -> usize,
) -> Result<Vec<F::Output>, Overflow> {
    let total = futures.len();
    let tag = |(index, future): (usize, F)| async move { (index, future.await) };
    let mut waiting = futures.into_iter().enumerate();
    let mut running: FuturesUnordered<_> = waiting.by_ref().take(limit.max(1)).map(tag).collect();
    let mut results: Vec<Option<F::Output>> = (0..total).map(|_| None).collect();
    let mut held = 0usize;
    while let Some((index, out)) = running.next().await {
        held = held.saturating_add(weigh(&out));
        if held > budget {
            return Err(Overflow);
        }
        results[index] = Some(out);
        if let Some(next) = waiting.next() {
            running.push(tag(next));
        }
    }
    Ok(results.into_iter().flatten().collect())
}

/// Caps linear memory, tables and instances, and remembers a refusal so a
/// resulting trap can be reported as a memory limit.
pub(crate) struct Limiter {
    max_memory: usize,
    pub(crate) refused: bool,
}

impl Limiter {
    fn new(max_memory: u64) -> Self {
        Limiter {
            max_memory: usize::try_from(max_memory).unwrap_or(usize::MAX),
            refused: false,
        }
    }
}

/// Table elements the guest may have: ample for its function table.
const MAX_TABLE_ELEMENTS: usize = 100_000;

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let ok = desired <= self.max_memory;
        self.refused |= !ok;
        Ok(ok)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let ok = desired <= MAX_TABLE_ELEMENTS;
        self.refused |= !ok;
        Ok(ok)
    }

    fn instances(&self) -> usize {
        // The guest component is a handful of core instances (the program
        // and the WASI adapter pieces).
        32
    }

    fn tables(&self) -> usize {
        32
    }

    fn memories(&self) -> usize {
        8
    }
}

/// A clock that never moves, for deterministic mode.
struct FixedClock(Duration);

impl HostWallClock for FixedClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        self.0
    }
}

impl HostMonotonicClock for FixedClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        u64::try_from(self.0.as_nanos()).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::{WitValue, to_wit};

    /// The fast path for scalars gives what the JSON parser would.
    #[test]
    fn scalar_replies_read_as_the_json_parser_reads_them() {
        let read = |text: &str| to_wit(text.to_owned());
        assert!(matches!(read("0"), WitValue::Integer(0)));
        assert!(matches!(read("42"), WitValue::Integer(42)));
        assert!(matches!(read("-7"), WitValue::Integer(-7)));
        assert!(matches!(read("-0"), WitValue::Float(f) if f == 0.0 && f.is_sign_negative()));
        assert!(matches!(read("9223372036854775808"), WitValue::Float(_)));
        assert!(matches!(read("1.5"), WitValue::Float(f) if f == 1.5));
        assert!(matches!(read("1e3"), WitValue::Float(f) if f == 1000.0));
        assert!(matches!(read("true"), WitValue::Boolean(true)));
        assert!(matches!(read("false"), WitValue::Boolean(false)));
        assert!(matches!(read("null"), WitValue::Nil));
        assert!(matches!(read("\"a\\n\""), WitValue::Text(s) if s == "a\n"));
        assert!(matches!(read("[1]"), WitValue::Json(s) if s == "[1]"));
        // Not JSON: passed on as text for the guest to refuse.
        assert!(matches!(read("01"), WitValue::Json(_)));
    }
}
