//! Governing what scripts do through capabilities: per-eval call budgets,
//! the audit trail of calls, and approval of calls before they run.
//!
//! A hostile script does its damage through the capabilities it is given,
//! not through the walls. The host bounds how often each capability may be
//! called in one eval ([`SandboxBuilder::call_budget`](crate::SandboxBuilder::call_budget),
//! [`Capability::call_budget`](crate::Capability::call_budget)), sees every
//! call afterwards ([`CallRecord`], on [`EvalOutput::calls`](crate::EvalOutput::calls),
//! [`EvalError::calls`](crate::EvalError::calls) and [`Report::calls`](crate::Report::calls)),
//! and can hold a call until an [`Approver`] allows it
//! ([`Capability::require_approval`](crate::Capability::require_approval)).
//!
//! Every call of the guest's `call` and of each request of its `call-many`
//! passes through the same steps, in this order: the budget (decided when
//! the call is started, so for a batch in request order, before any of it
//! runs), the arguments' conversion, the approval, the handler.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// [`Limits::MAX_CALL_RECORDS`](crate::Limits::MAX_CALL_RECORDS), for this module.
pub(crate) const MAX_CALL_RECORDS: usize = crate::limits::Limits::MAX_CALL_RECORDS;

/// [`Limits::MAX_RECORDED_ARG_BYTES`](crate::Limits::MAX_RECORDED_ARG_BYTES), for this module.
pub(crate) const MAX_RECORDED_ARG_BYTES: u64 = crate::limits::Limits::MAX_RECORDED_ARG_BYTES;

/// [`Limits::MAX_RECORDED_ARG_TREE_BYTES`](crate::Limits::MAX_RECORDED_ARG_TREE_BYTES), for this module.
pub(crate) const MAX_RECORDED_ARG_TREE_BYTES: u64 =
    crate::limits::Limits::MAX_RECORDED_ARG_TREE_BYTES;

/// [`Limits::MAX_CALL_BUDGET`](crate::Limits::MAX_CALL_BUDGET), for this module.
pub(crate) const MAX_CALL_BUDGET: u32 = crate::limits::Limits::MAX_CALL_BUDGET;

/// The most bytes of a capability name a record keeps. Names of registered
/// capabilities are shorter; only a call to an unknown name can be cut.
const MAX_RECORDED_NAME_BYTES: usize = 128;

/// One capability call an eval made, as the host saw it.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use moonbox::{CallOutcome, Capability, CapabilityError, Sandbox};
///
/// let sandbox = Sandbox::builder()
///     .capability(Capability::sync("math2.double", |_ctx, (n,): (i64,)| {
///         Ok::<_, CapabilityError>(n * 2)
///     }))
///     .build()?;
/// let out = sandbox.eval("return math2.double(21)").await?;
/// let call = &out.calls[0];
/// assert_eq!(call.capability, "math2.double");
/// assert_eq!(call.outcome, CallOutcome::Ok);
/// assert_eq!((call.arg_bytes, call.reply_bytes), (4, 2)); // `[21]`, `42`
/// assert_eq!(call.args, None); // arguments are kept only on opt-in
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CallRecord {
    /// The capability's dotted name.
    pub capability: String,
    /// Bytes of the arguments as a JSON array (`["123"]` is 7); 0 when
    /// the call was refused by its budget before they were read.
    pub arg_bytes: u64,
    /// Bytes of the reply's JSON text; 0 when the call did not succeed.
    pub reply_bytes: u64,
    /// Microseconds from the start of the call to its end (an approver's
    /// wait included); for a call cut off, to the end of the eval.
    pub duration_us: u64,
    /// How the call ended.
    pub outcome: CallOutcome,
    /// The arguments, only when the host opted in with
    /// [`SandboxBuilder::audit_args`](crate::SandboxBuilder::audit_args)
    /// and they take at most [`Limits::MAX_RECORDED_ARG_BYTES`](crate::Limits::MAX_RECORDED_ARG_BYTES) bytes of JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<Value>>,
}

/// How a capability call ended. Serialized in `snake_case`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CallOutcome {
    /// The handler returned a reply.
    Ok,
    /// The call failed: the handler's error, a reply too large, arguments
    /// too large to hold, an unknown capability.
    Error,
    /// The arguments did not match the capability's signature (their count
    /// or their types); the handler did not run.
    InvalidArgs,
    /// The capability's call budget for the eval was used up; the handler
    /// did not run.
    OverBudget,
    /// The host's approver refused the call; the handler did not run.
    Refused,
    /// The eval stopped (timeout, cancel) while the call was still running
    /// or waiting for approval.
    CutOff,
}

impl CallOutcome {
    /// Every outcome, in the order the report's schema lists them.
    pub(crate) const ALL: [CallOutcome; 6] = [
        CallOutcome::Ok,
        CallOutcome::Error,
        CallOutcome::InvalidArgs,
        CallOutcome::OverBudget,
        CallOutcome::Refused,
        CallOutcome::CutOff,
    ];

    /// Its name in the report (`over_budget`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Ok => "ok",
            CallOutcome::Error => "error",
            CallOutcome::InvalidArgs => "invalid_args",
            CallOutcome::OverBudget => "over_budget",
            CallOutcome::Refused => "refused",
            CallOutcome::CutOff => "cut_off",
        }
    }
}

/// What the host's [`Approver`] decides about one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Approval {
    /// Run the call.
    Allow,
    /// Do not run it. The reason, if any, is shown to the script (and the
    /// model behind it) in the capability error: keep it free of secrets.
    Refuse(Option<String>),
}

impl Approval {
    /// A refusal with a reason the script sees.
    ///
    /// ```
    /// use moonbox::Approval;
    /// assert_eq!(Approval::refuse("payments need a human"), Approval::Refuse(Some("payments need a human".into())));
    /// ```
    pub fn refuse(reason: impl Into<String>) -> Self {
        Approval::Refuse(Some(reason.into()))
    }
}

/// A call waiting for approval: what the [`Approver`] sees.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The capability's dotted name.
    pub capability: String,
    /// The arguments, as JSON, in order (missing optional ones are `null`).
    pub args: Vec<Value>,
}

type ApproveFn =
    dyn Fn(ApprovalRequest) -> Pin<Box<dyn Future<Output = Approval> + Send>> + Send + Sync;

/// The host's decision on calls to capabilities that
/// [require approval](crate::Capability::require_approval).
///
/// It may be async (ask a human, a policy service); the eval's timeout
/// covers the wait, and a call still waiting at the deadline ends the eval
/// with [`ErrorKind::Timeout`](crate::ErrorKind::Timeout). An approver that
/// panics refuses. Cheap to clone (an `Arc`), `Send + Sync`.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use moonbox::{Approval, Approver, Capability, CapabilityError, ErrorKind, Sandbox};
///
/// let pay = Capability::sync("bank.pay", |_ctx, (cents,): (u64,)| {
///     Ok::<_, CapabilityError>(format!("paid {cents}"))
/// })
/// .require_approval();
/// let approver = Approver::new(|request| async move {
///     match request.args[0].as_u64() {
///         Some(cents) if cents <= 500 => Approval::Allow,
///         _ => Approval::refuse("payments over 5.00 need a human"),
///     }
/// });
/// let sandbox = Sandbox::builder().capability(pay).approver(approver).build()?;
/// assert_eq!(sandbox.eval("return bank.pay(300)").await?.values, [serde_json::json!("paid 300")]);
/// let err = sandbox.eval("return bank.pay(9000)").await.unwrap_err();
/// assert_eq!(err.kind, ErrorKind::Capability);
/// assert!(err.message.contains("payments over 5.00 need a human"));
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Clone)]
pub struct Approver(Arc<ApproveFn>);

impl Approver {
    /// An async approver.
    pub fn new<F, Fut>(f: F) -> Self
    where
        F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Approval> + Send + 'static,
    {
        Approver(Arc::new(move |request| Box::pin(f(request))))
    }

    /// An approver that decides at once, without awaiting anything.
    ///
    /// ```
    /// use moonbox::{Approval, Approver};
    /// // Refuses everything: a capability that needs approval is then
    /// // offered but never runs.
    /// let never = Approver::from_fn(|_request| Approval::Refuse(None));
    /// # let _ = never;
    /// ```
    pub fn from_fn<F>(f: F) -> Self
    where
        F: Fn(ApprovalRequest) -> Approval + Send + Sync + 'static,
    {
        Approver(Arc::new(move |request| {
            let decision = f(request);
            Box::pin(std::future::ready(decision))
        }))
    }

    /// Asks; a panic (when asking or while waiting) is a refusal.
    async fn ask(&self, request: ApprovalRequest) -> Approval {
        let refused = || Approval::refuse("the host's approver failed");
        match catch_unwind(AssertUnwindSafe(|| (self.0)(request))) {
            Ok(future) => CatchUnwind(future).await.unwrap_or_else(|()| refused()),
            Err(_) => refused(),
        }
    }
}

impl fmt::Debug for Approver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Approver")
    }
}

/// Polls the approver's future inside `catch_unwind`.
struct CatchUnwind(Pin<Box<dyn Future<Output = Approval> + Send>>);

impl Future for CatchUnwind {
    type Output = Result<Approval, ()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match catch_unwind(AssertUnwindSafe(|| inner.as_mut().poll(cx))) {
            Ok(Poll::Ready(out)) => Poll::Ready(Ok(out)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(_) => Poll::Ready(Err(())),
        }
    }
}

/// The sandbox-wide rules, shared by every store.
#[derive(Clone, Debug, Default)]
pub(crate) struct Governance {
    /// Calls per capability per eval when the capability sets none.
    pub(crate) default_budget: Option<u32>,
    /// Whether records keep the arguments.
    pub(crate) audit_args: bool,
    /// Decides calls to capabilities that need approval.
    pub(crate) approver: Option<Approver>,
}

impl Governance {
    /// Asks the approver about a call; without one, refuses (a sandbox
    /// with a capability needing approval and no approver does not build,
    /// so this is only a second lock).
    pub(crate) async fn approve(&self, request: ApprovalRequest) -> Approval {
        match &self.approver {
            Some(approver) => approver.ask(request).await,
            None => Approval::refuse("the host has no approver for it"),
        }
    }
}

/// One eval's audit trail and budget counters, shared with the calls in
/// flight. Reset at the start of each eval, taken at its end.
#[derive(Clone, Default)]
pub(crate) struct Audit(Arc<Mutex<AuditState>>);

#[derive(Default)]
struct AuditState {
    /// Bumped at each reset, so that a call from an earlier eval cannot
    /// write into this one's trail.
    generation: u64,
    /// Calls started per capability name, for the budgets. Only names of
    /// registered capabilities are counted, so it holds at most one entry
    /// per capability.
    counts: HashMap<String, u32>,
    records: Vec<Slot>,
    unrecorded: u32,
}

struct Slot {
    record: CallRecord,
    /// When the call began running, once it has.
    began: Option<Instant>,
    done: bool,
}

impl Audit {
    fn lock(&self) -> MutexGuard<'_, AuditState> {
        // The state is plain data, consistent after every statement: a
        // panic elsewhere cannot leave it half-written.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Clears the trail and the counters for a new eval.
    pub(crate) fn reset(&self) {
        let mut state = self.lock();
        state.generation = state.generation.wrapping_add(1);
        state.counts.clear();
        state.records.clear();
        state.unrecorded = 0;
    }

    /// Ends the eval's trail: calls still running are cut off. Returns the
    /// records and how many calls were not recorded.
    pub(crate) fn take(&self) -> (Vec<CallRecord>, u32) {
        let mut state = self.lock();
        state.generation = state.generation.wrapping_add(1);
        state.counts.clear();
        let unrecorded = std::mem::take(&mut state.unrecorded);
        let records = std::mem::take(&mut state.records)
            .into_iter()
            .map(|mut slot| {
                if !slot.done {
                    slot.record.outcome = CallOutcome::CutOff;
                    slot.record.duration_us = slot.began.map_or(0, |t| micros(t.elapsed()));
                }
                slot.record
            })
            .collect();
        (records, unrecorded)
    }

    /// Starts one call: counts it against `budget` (calls per eval for
    /// this capability; `None` for unlimited, and for a name that is not a
    /// capability, which is not counted) and opens its record. A call over
    /// budget is recorded as refused and returned as the script's error.
    pub(crate) fn admit(&self, name: &str, budget: Option<Option<u32>>) -> Result<Ticket, String> {
        let mut state = self.lock();
        // Only a capability with a budget needs its calls counted.
        let over = match budget.flatten() {
            Some(limit) => {
                let count = match state.counts.get_mut(name) {
                    Some(count) => count,
                    None => state.counts.entry(name.to_owned()).or_insert(0),
                };
                *count = count.saturating_add(1);
                (*count > limit).then_some(limit)
            }
            None => None,
        };
        let outcome = if over.is_some() {
            CallOutcome::OverBudget
        } else {
            CallOutcome::Ok
        };
        let index = if state.records.len() < MAX_CALL_RECORDS {
            let mut capability = name.to_owned();
            if capability.len() > MAX_RECORDED_NAME_BYTES {
                let mut end = MAX_RECORDED_NAME_BYTES;
                while !capability.is_char_boundary(end) {
                    end -= 1;
                }
                capability.truncate(end);
            }
            state.records.push(Slot {
                record: CallRecord {
                    capability,
                    arg_bytes: 0,
                    reply_bytes: 0,
                    duration_us: 0,
                    outcome,
                    args: None,
                },
                began: None,
                done: over.is_some(),
            });
            Some(state.records.len() - 1)
        } else {
            state.unrecorded = state.unrecorded.saturating_add(1);
            None
        };
        if let Some(limit) = over {
            return Err(over_budget(name, limit));
        }
        Ok(Ticket {
            audit: self.clone(),
            generation: state.generation,
            index,
        })
    }
}

/// The error a script gets for a call past its capability's budget.
fn over_budget(name: &str, limit: u32) -> String {
    let times = if limit == 1 { "time" } else { "times" };
    format!(
        "{name}: call budget exhausted: this eval may call {name} at most {limit} {times} (the host's call budget: SandboxBuilder::call_budget, or Capability::call_budget); use the results you already have, or finish and continue in a later eval"
    )
}

/// A started call's hold on its record.
pub(crate) struct Ticket {
    audit: Audit,
    generation: u64,
    index: Option<usize>,
}

impl Ticket {
    fn with_slot(&self, f: impl FnOnce(&mut Slot)) {
        let Some(index) = self.index else { return };
        let mut state = self.audit.lock();
        if state.generation != self.generation {
            return;
        }
        if let Some(slot) = state.records.get_mut(index) {
            f(slot);
        }
    }

    /// The call begins running now.
    pub(crate) fn begin(&self) {
        self.with_slot(|slot| slot.began = Some(Instant::now()));
    }

    /// The arguments were read: their size, and the values if the host
    /// keeps them.
    pub(crate) fn arguments(&self, governance: &Governance, values: &[Value], tree_bytes: usize) {
        let bytes = json_len(values);
        let keep = governance.audit_args
            && bytes <= MAX_RECORDED_ARG_BYTES
            && tree_bytes as u64 <= MAX_RECORDED_ARG_TREE_BYTES;
        self.with_slot(|slot| {
            slot.record.arg_bytes = bytes;
            if keep {
                slot.record.args = Some(values.to_vec());
            }
        });
    }

    /// The call ended.
    pub(crate) fn finish(&self, outcome: CallOutcome, reply_bytes: usize) {
        self.with_slot(|slot| {
            slot.record.outcome = outcome;
            slot.record.reply_bytes = reply_bytes as u64;
            slot.record.duration_us = slot.began.map_or(0, |t| micros(t.elapsed()));
            slot.done = true;
        });
    }
}

/// Bytes of `values` as a JSON array, counted without building the text.
fn json_len(values: &[Value]) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(buf.len() as u64);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a `Value` to a writer that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, values);
    count.0
}

fn micros(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_are_listed_once_by_their_serde_names() {
        let names: Vec<_> = CallOutcome::ALL.iter().map(|o| o.as_str()).collect();
        for (outcome, name) in CallOutcome::ALL.iter().zip(&names) {
            assert_eq!(serde_json::to_value(outcome).unwrap(), *name);
        }
        let distinct: std::collections::BTreeSet<_> = names.iter().collect();
        assert_eq!(distinct.len(), names.len());
    }
    use serde_json::json;

    #[test]
    fn budgets_count_in_admission_order_and_reset() {
        let audit = Audit::default();
        audit.reset();
        assert!(audit.admit("a", Some(Some(2))).is_ok());
        assert!(audit.admit("b", Some(Some(2))).is_ok());
        assert!(audit.admit("a", Some(Some(2))).is_ok());
        let err = audit.admit("a", Some(Some(2))).err().unwrap();
        assert!(err.contains("at most 2 times"), "{err}");
        // Unknown names and unlimited capabilities are never refused.
        for _ in 0..5 {
            assert!(audit.admit("nope", None).is_ok());
            assert!(audit.admit("free", Some(None)).is_ok());
        }
        let (records, unrecorded) = audit.take();
        assert_eq!(unrecorded, 0);
        assert_eq!(records[3].outcome, CallOutcome::OverBudget);
        // Admitted but never finished: cut off.
        assert_eq!(records[0].outcome, CallOutcome::CutOff);
        audit.reset();
        assert!(audit.admit("a", Some(Some(2))).is_ok());
    }

    #[test]
    fn the_trail_is_bounded_and_counts_what_it_drops() {
        let audit = Audit::default();
        for _ in 0..MAX_CALL_RECORDS + 7 {
            let ticket = audit.admit("a", Some(None)).unwrap();
            ticket.finish(CallOutcome::Ok, 1);
        }
        let (records, unrecorded) = audit.take();
        assert_eq!(records.len(), MAX_CALL_RECORDS);
        assert_eq!(unrecorded, 7);
        assert!(records.iter().all(|r| r.outcome == CallOutcome::Ok));
    }

    #[test]
    fn a_ticket_from_an_earlier_eval_writes_nothing() {
        let audit = Audit::default();
        let stale = audit.admit("a", Some(None)).unwrap();
        audit.reset();
        let fresh = audit.admit("b", Some(None)).unwrap();
        stale.finish(CallOutcome::Error, 99);
        fresh.finish(CallOutcome::Ok, 2);
        let (records, _) = audit.take();
        assert_eq!(records.len(), 1);
        assert_eq!(
            (records[0].capability.as_str(), records[0].reply_bytes),
            ("b", 2)
        );
    }

    #[test]
    fn arguments_are_sized_and_kept_only_on_opt_in_and_when_small() {
        let audit = Audit::default();
        let keep = Governance {
            audit_args: true,
            ..Governance::default()
        };
        let values = [json!("123"), json!(null)];
        let ticket = audit.admit("a", Some(None)).unwrap();
        ticket.arguments(&Governance::default(), &values, 0);
        let kept = audit.admit("a", Some(None)).unwrap();
        kept.arguments(&keep, &values, 0);
        let big = [json!("x".repeat(MAX_RECORDED_ARG_BYTES as usize))];
        let too_big = audit.admit("a", Some(None)).unwrap();
        too_big.arguments(&keep, &big, 0);
        // Small text, but a tree past its bound: left out.
        let dense = audit.admit("a", Some(None)).unwrap();
        dense.arguments(&keep, &values, MAX_RECORDED_ARG_TREE_BYTES as usize + 1);
        let (records, _) = audit.take();
        assert_eq!(records[0].arg_bytes, 12); // ["123",null]
        assert_eq!(records[0].args, None);
        assert_eq!(records[1].args.as_deref(), Some(&values[..]));
        assert_eq!(records[2].arg_bytes, MAX_RECORDED_ARG_BYTES + 4);
        assert_eq!(records[2].args, None);
        assert_eq!(records[3].arg_bytes, 12);
        assert_eq!(records[3].args, None);
    }

    #[test]
    fn long_unknown_names_are_cut_on_a_character_boundary() {
        let audit = Audit::default();
        let name = "é".repeat(100);
        let _ = audit.admit(&name, None);
        let (records, _) = audit.take();
        assert_eq!(records[0].capability.len(), MAX_RECORDED_NAME_BYTES);
    }

    /// A batch through `call-many` is governed as single calls are: its
    /// budget is decided in request order, whatever order the calls finish
    /// in, and its records are in request order.
    #[tokio::test]
    async fn a_batch_is_budgeted_and_recorded_in_request_order() {
        use crate::bindings::moonbox::sandbox::capabilities::{self, CallRequest};
        use crate::bindings::types::Value as WitValue;
        use crate::capability::{Capability, CapabilityError};
        use crate::host::{HostState, Registry};

        // The first call is the slowest, so it finishes last.
        let slow = Capability::<()>::new_async("t.wait", |_ctx, (ms,): (u64,)| async move {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            Ok::<_, CapabilityError>(ms)
        })
        .call_budget(2);
        let registry = Arc::new(Registry {
            capabilities: vec![slow],
            governance: Arc::new(Governance::default()),
        });
        let limits = crate::Limits {
            max_memory_bytes: 1 << 20,
            max_output_bytes: 1 << 20,
            max_calls_in_flight: 16,
            ..crate::Limits::default()
        };
        let mut state = HostState::new(registry, Some(Arc::new(())), &limits, None);
        state.audit.reset();
        let calls = [60, 0, 0, 0]
            .into_iter()
            .map(|ms| CallRequest {
                name: "t.wait".into(),
                args: vec![WitValue::Integer(ms)],
            })
            .collect();
        let results = capabilities::Host::call_many(&mut state, calls)
            .await
            .unwrap();
        assert!(matches!(results[0], Ok(WitValue::Integer(60))));
        assert!(matches!(results[1], Ok(WitValue::Integer(0))));
        assert!(results[2].as_ref().unwrap_err().contains("at most 2 times"));
        assert!(results[3].is_err());
        let (records, _) = state.audit.take();
        let outcomes: Vec<_> = records.iter().map(|r| r.outcome).collect();
        assert_eq!(
            outcomes,
            [
                CallOutcome::Ok,
                CallOutcome::Ok,
                CallOutcome::OverBudget,
                CallOutcome::OverBudget
            ]
        );
        assert!(
            records[0].duration_us >= 50_000,
            "{}",
            records[0].duration_us
        );
    }

    #[tokio::test]
    async fn a_panicking_approver_refuses() {
        let approver = Approver::from_fn(|_| panic!("secret"));
        let request = ApprovalRequest {
            capability: "a".into(),
            args: vec![],
        };
        assert_eq!(
            approver.ask(request.clone()).await,
            Approval::refuse("the host's approver failed")
        );
        let approver = Approver::new(|_| async { panic!("secret") });
        assert!(matches!(
            approver.ask(request.clone()).await,
            Approval::Refuse(_)
        ));
        let none = Governance::default();
        assert!(matches!(none.approve(request).await, Approval::Refuse(_)));
    }
}
