//! Governing capabilities: per-eval call budgets, the audit trail of calls,
//! and approval before a call runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use moonbox::{
    Approval, Approver, CallOutcome, Capability, CapabilityError, ConfigError, Error, ErrorKind,
    Limits, Report, Sandbox,
};
use serde_json::json;

use crate::support::{fails, ok};

/// `kv.echo(x)`: returns its argument.
fn echo(name: &str) -> Capability<()> {
    Capability::sync(name, |_ctx, (v,): (serde_json::Value,)| {
        Ok::<_, CapabilityError>(v)
    })
}

/// Calls `f` five times under `pcall` and returns how many calls succeeded
/// and the last error.
const FIVE_CALLS: &str = r#"
local function tries(f)
  local n, last = 0, nil
  for i = 1, 5 do
    local ok, err = pcall(f, i)
    if ok then n = n + 1 else last = err end
  end
  return n, last
end
local a, a_err = tries(kv.a)
local b, b_err = tries(kv.b)
return a, b, a_err, b_err
"#;

#[tokio::test]
async fn the_default_budget_applies_to_each_capability_and_an_override_wins() {
    let sb = Sandbox::builder()
        .capability(echo("kv.a").call_budget(3))
        .capability(echo("kv.b"))
        .call_budget(2)
        .build()
        .unwrap();
    let out = ok(&sb, FIVE_CALLS).await;
    assert_eq!(out.values[..2], [json!(3), json!(2)]);
    let a_err = out.values[2].as_str().unwrap();
    assert!(
        a_err.contains("kv.a: call budget exhausted")
            && a_err.contains("at most 3 times")
            && a_err.contains("SandboxBuilder::call_budget")
            && !a_err.contains("--"),
        "the error names the capability, the budget and what to do: {a_err}"
    );
    assert!(out.values[3].as_str().unwrap().contains("at most 2 times"));
    // Every call was made and recorded, in order; the refused ones did not run.
    assert_eq!(out.stats.capability_calls, 10);
    let outcomes: Vec<_> = out.calls.iter().map(|c| c.outcome).collect();
    use CallOutcome::{Ok as Done, OverBudget as Over};
    assert_eq!(
        outcomes,
        [Done, Done, Done, Over, Over, Done, Done, Over, Over, Over]
    );
    let over = &out.calls[3];
    assert_eq!((over.arg_bytes, over.reply_bytes), (0, 0));
}

#[tokio::test]
async fn without_a_budget_calls_are_unlimited_and_zero_refuses_every_call() {
    let sb = Sandbox::builder()
        .capability(echo("kv.a"))
        .capability(echo("kv.b").call_budget(0))
        .build()
        .unwrap();
    let out = ok(&sb, FIVE_CALLS).await;
    assert_eq!(out.values[..2], [json!(5), json!(0)]);
    assert!(out.values[3].as_str().unwrap().contains("at most 0 times"));
}

#[tokio::test]
async fn an_exhausted_budget_is_a_capability_error_and_the_script_goes_on_after_catching_it() {
    let sb = Sandbox::builder()
        .capability(echo("kv.a").call_budget(1))
        .build()
        .unwrap();
    // Uncaught, it ends the eval as any capability error does.
    let e = fails(&sb, "kv.a(1) return kv.a(2)", ErrorKind::Capability).await;
    assert!(
        e.message
            .starts_with("main.lua:1: kv.a: call budget exhausted"),
        "{}",
        e.message
    );
    assert_eq!(e.calls.len(), 2);
    assert_eq!(e.calls[1].outcome, CallOutcome::OverBudget);
    // Caught, the script continues with what it has.
    let out = ok(
        &sb,
        "local first = kv.a('x') local ok = pcall(kv.a, 'y') return first, ok, 'went on'",
    )
    .await;
    assert_eq!(out.values, [json!("x"), json!(false), json!("went on")]);
}

#[tokio::test]
async fn budgets_reset_at_every_eval_of_a_session() {
    let sb = Sandbox::builder()
        .capability(echo("kv.a"))
        .call_budget(2)
        .build()
        .unwrap();
    let mut session = sb.session(()).await.unwrap();
    for _ in 0..3 {
        let out = session
            .eval("local n = 0 for i = 1, 3 do if pcall(kv.a, i) then n = n + 1 end end return n")
            .await
            .unwrap();
        assert_eq!(out.values, [json!(2)], "each eval gets the full budget");
        assert_eq!(out.calls.len(), 3, "each eval has only its own records");
    }
}

#[tokio::test]
async fn budgets_are_bounded_and_must_name_a_capability() {
    let err = Sandbox::builder()
        .call_budget(Limits::MAX_CALL_BUDGET + 1)
        .build()
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::Config(ConfigError::CallBudgetTooLarge {
                capability: None,
                ..
            })
        ) && err.to_string().contains("more than the most allowed"),
        "{err}"
    );
    let err = Sandbox::builder()
        .capability(echo("kv.a").call_budget(u32::MAX))
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, Error::Config(ConfigError::CallBudgetTooLarge { capability: Some(c), .. }) if c == "kv.a")
            && err.to_string().contains("'kv.a'"),
        "{err}"
    );
    let err = Sandbox::builder()
        .capability(echo("kv.a"))
        .call_budget_for("kv.typo", 3)
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, Error::Config(ConfigError::UnknownCapability { name, .. }) if name == "kv.typo")
            && err.to_string().contains("'kv.typo'")
            && err.to_string().contains("kv.a"),
        "the error names the bad name and the real ones: {err}"
    );
    // A budget set by name wins over the capability's own.
    let sb = Sandbox::builder()
        .capability(echo("kv.a").call_budget(5))
        .call_budget_for("kv.a", 1)
        .build()
        .unwrap();
    assert_eq!(sb.capabilities()[0].budget(), Some(1));
}

#[tokio::test]
async fn records_give_sizes_outcomes_and_order_but_no_arguments_by_default() {
    let sb = Sandbox::builder()
        .capability(echo("kv.a"))
        .capability(Capability::sync("kv.fail", |_ctx, (): ()| {
            Err::<(), _>(CapabilityError::new("nope"))
        }))
        .capability(Capability::sync("kv.num", |_ctx, (n,): (i64,)| {
            Ok::<_, CapabilityError>(n)
        }))
        .build()
        .unwrap();
    let out = ok(
        &sb,
        "kv.a('123') pcall(kv.fail) kv.a({1, 2}) pcall(kv.num, 'x') return 0",
    )
    .await;
    let calls = &out.calls;
    let names: Vec<_> = calls.iter().map(|c| c.capability.as_str()).collect();
    assert_eq!(names, ["kv.a", "kv.fail", "kv.a", "kv.num"]);
    let sizes: Vec<_> = calls.iter().map(|c| (c.arg_bytes, c.reply_bytes)).collect();
    // `["123"]` -> `"123"`; `[]` -> error; `[[1,2]]` -> `[1,2]`; `["x"]` -> error.
    assert_eq!(sizes, [(7, 5), (2, 0), (7, 5), (5, 0)]);
    let outcomes: Vec<_> = calls.iter().map(|c| c.outcome).collect();
    // The handler's own error, and arguments refused before any handler
    // (or upstream) saw them.
    assert_eq!(
        outcomes,
        [
            CallOutcome::Ok,
            CallOutcome::Error,
            CallOutcome::Ok,
            CallOutcome::InvalidArgs
        ]
    );
    assert!(calls.iter().all(|c| c.args.is_none()));
    // The report carries the trail, in the JSON too.
    let report = Report::from(&Ok(out.clone()));
    assert_eq!(report.calls, out.calls);
    let json = report.to_json();
    assert_eq!(json["calls"][1]["outcome"], "error");
    assert_eq!(json["calls"][3]["outcome"], "invalid_args");
    assert_eq!(json["calls"][0]["capability"], "kv.a");
    assert!(json["calls"][0].get("args").is_none());
    // An eval without calls has no `calls` member.
    let report = Report::from(&sb.eval("return 1").await);
    assert!(report.to_json().get("calls").is_none());
}

#[tokio::test]
async fn arguments_are_recorded_only_when_the_host_opts_in() {
    let sb = Sandbox::builder()
        .capability(echo("kv.a"))
        .audit_args(true)
        .build()
        .unwrap();
    let out = ok(&sb, "kv.a({id = 7}) kv.a(string.rep('x', 5000)) return 0").await;
    assert_eq!(out.calls[0].args, Some(vec![json!({"id": 7})]));
    // Too large to keep: the size is still there.
    assert_eq!(out.calls[1].args, None);
    assert_eq!(out.calls[1].arg_bytes, 5004);
    assert_eq!(
        Report::from(&Ok(out)).to_json()["calls"][0]["args"],
        json!([{"id": 7}])
    );
}

#[tokio::test]
async fn the_trail_is_bounded_and_counts_the_calls_it_left_out() {
    let sb = Sandbox::builder().capability(echo("kv.a")).build().unwrap();
    let extra = 7;
    let code = format!(
        "for i = 1, {} do kv.a(i) end return 0",
        Limits::MAX_CALL_RECORDS + extra
    );
    let out = ok(&sb, &code).await;
    assert_eq!(out.calls.len(), Limits::MAX_CALL_RECORDS);
    assert_eq!(out.stats.calls_unrecorded, extra as u32);
    assert_eq!(
        out.stats.capability_calls as usize,
        Limits::MAX_CALL_RECORDS + extra
    );
    // The first calls are the ones kept.
    assert_eq!(out.calls[0].arg_bytes, 3); // [1]
}

#[tokio::test]
async fn a_failing_eval_keeps_the_records_made_before_it_failed() {
    let sb = Sandbox::builder().capability(echo("kv.a")).build().unwrap();
    let e = fails(&sb, "kv.a(1) kv.a(2) error('boom')", ErrorKind::Runtime).await;
    assert_eq!(e.calls.len(), 2);
    assert!(e.calls.iter().all(|c| c.outcome == CallOutcome::Ok));
    let e = fails(
        &sb,
        "kv.a(1) while true do end",
        ErrorKind::InstructionLimit,
    )
    .await;
    assert_eq!(e.calls.len(), 1);
    assert_eq!(Report::from(&Err(e)).calls.len(), 1);
}

#[tokio::test]
async fn a_timeout_keeps_the_records_and_marks_the_running_call_cut_off() {
    let sb = Sandbox::builder()
        .limits(Limits {
            timeout: Duration::from_millis(300),
            ..Limits::default()
        })
        .capability(echo("kv.a"))
        .capability(Capability::new_async("kv.hang", |_ctx, (): ()| async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok::<_, CapabilityError>(0)
        }))
        .build()
        .unwrap();
    let e = fails(&sb, "kv.a(1) kv.hang()", ErrorKind::Timeout).await;
    assert_eq!(e.calls.len(), 2);
    assert_eq!(e.calls[0].outcome, CallOutcome::Ok);
    let hung = &e.calls[1];
    assert_eq!(hung.outcome, CallOutcome::CutOff);
    assert!(
        hung.duration_us >= 200_000,
        "a cut-off call lasts until the eval stopped: {}",
        hung.duration_us
    );
}

/// A sandbox whose typed `bank.pay(cents)` needs approval, counting the calls that
/// actually ran.
fn bank(approver: Approver) -> (Sandbox, Arc<AtomicUsize>) {
    bank_with(approver, Limits::default(), None)
}

fn bank_with(
    approver: Approver,
    limits: Limits,
    budget: Option<u32>,
) -> (Sandbox, Arc<AtomicUsize>) {
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = ran.clone();
    let mut pay = Capability::sync_typed("bank.pay", move |_ctx, (cents,): (u64,)| {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok::<_, CapabilityError>(format!("paid {cents}"))
    })
    .require_approval();
    if let Some(calls) = budget {
        pay = pay.call_budget(calls);
    }
    let sb = Sandbox::builder()
        .limits(limits)
        .capability(pay)
        .capability(echo("kv.a"))
        .approver(approver)
        .build()
        .unwrap();
    (sb, ran)
}

#[tokio::test]
async fn the_approver_sees_the_call_and_allows_or_refuses_it_with_a_reason() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let (sb, ran) = bank(Approver::new(move |request| {
        log.lock()
            .unwrap()
            .push((request.capability.clone(), request.args.clone()));
        async move {
            match request.args[0].as_u64() {
                Some(c) if c <= 500 => Approval::Allow,
                Some(c) if c <= 1000 => Approval::Refuse(None),
                _ => Approval::refuse("over the limit a script may spend"),
            }
        }
    }));
    let out = ok(
        &sb,
        "local a = bank.pay(300) local ok1, e1 = pcall(bank.pay, 900) local ok2, e2 = pcall(bank.pay, 9000) kv.a(1) return a, e1, e2",
    )
    .await;
    assert_eq!(out.values[0], json!("paid 300"));
    let bare = out.values[1].as_str().unwrap();
    assert!(
        bare.contains("bank.pay: the host refused this call (it needs the host's approval)"),
        "{bare}"
    );
    let reasoned = out.values[2].as_str().unwrap();
    assert!(
        reasoned
            .ends_with("bank.pay: the host refused this call: over the limit a script may spend"),
        "{reasoned}"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 1, "refused calls never ran");
    // Only the capability that needs approval was asked about.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ("bank.pay".to_owned(), vec![json!(300)]),
            ("bank.pay".to_owned(), vec![json!(900)]),
            ("bank.pay".to_owned(), vec![json!(9000)]),
        ]
    );
    let outcomes: Vec<_> = out.calls.iter().map(|c| c.outcome).collect();
    assert_eq!(
        outcomes,
        [
            CallOutcome::Ok,
            CallOutcome::Refused,
            CallOutcome::Refused,
            CallOutcome::Ok
        ]
    );
    // Uncaught, a refusal ends the eval as a capability error.
    let e = fails(&sb, "return bank.pay(5000)", ErrorKind::Capability).await;
    assert!(e.message.contains("over the limit"), "{}", e.message);
}

#[tokio::test]
async fn arguments_that_fail_their_schemas_never_reach_the_approver() {
    let asked = Arc::new(AtomicUsize::new(0));
    let count = asked.clone();
    let (sb, _) = bank(Approver::from_fn(move |_| {
        count.fetch_add(1, Ordering::SeqCst);
        Approval::Allow
    }));
    fails(&sb, "return bank.pay('lots')", ErrorKind::Capability).await;
    fails(&sb, "return bank.pay(1, 2)", ErrorKind::Capability).await;
    assert_eq!(asked.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_budget_bounds_how_often_a_script_can_ask() {
    let asked = Arc::new(AtomicUsize::new(0));
    let count = asked.clone();
    let (sb, _) = bank_with(
        Approver::from_fn(move |_| {
            count.fetch_add(1, Ordering::SeqCst);
            Approval::Refuse(None)
        }),
        Limits::default(),
        Some(2),
    );
    let out = ok(&sb, "for i = 1, 10 do pcall(bank.pay, i) end return 0").await;
    assert_eq!(out.calls.len(), 10);
    let refused = out
        .calls
        .iter()
        .filter(|c| c.outcome == CallOutcome::Refused)
        .count();
    assert_eq!(refused, 2);
    assert_eq!(
        asked.load(Ordering::SeqCst),
        2,
        "only the calls within budget reach the approver"
    );
}

#[tokio::test]
async fn the_eval_timeout_covers_the_wait_for_approval() {
    let (sb, ran) = bank_with(
        Approver::new(|_| async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Approval::Allow
        }),
        Limits {
            timeout: Duration::from_millis(300),
            ..Limits::default()
        },
        None,
    );
    let started = std::time::Instant::now();
    let e = fails(&sb, "return bank.pay(1)", ErrorKind::Timeout).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(e.calls.len(), 1);
    assert_eq!(e.calls[0].outcome, CallOutcome::CutOff);
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_capability_needing_approval_without_an_approver_fails_to_build() {
    let err = Sandbox::builder()
        .capability(echo("bank.pay").require_approval())
        .build()
        .unwrap_err();
    match &err {
        Error::Config(why @ ConfigError::NoApprover { capability }) => {
            assert_eq!(capability, "bank.pay");
            let message = why.to_string();
            assert!(message.contains("'bank.pay' needs approval"), "{message}");
            assert!(message.contains("SandboxBuilder::approver"), "{message}");
        }
        other => panic!("expected a configuration error, got {other}"),
    }
}
