//! Sessions keep globals; fresh evals and separate sessions are isolated;
//! many run at once.

use std::time::Duration;

use moonbox::{ErrorKind, Limits, Sandbox};
use serde_json::{Value, json};

use crate::support::{sandbox, values, with_limits};

#[tokio::test]
async fn sessions_keep_globals_and_fresh_evals_do_not() {
    let sb = sandbox();
    let mut s = sb.session(()).await.unwrap();
    s.eval("counter = 1 function bump() counter = counter + 1 return counter end")
        .await
        .unwrap();
    assert_eq!(
        s.eval("return bump(), bump()").await.unwrap().values,
        [json!(2), json!(3)]
    );
    assert_eq!(values(&sb, "return counter").await, [json!(null)]);
    let mut other = sb.session(()).await.unwrap();
    assert_eq!(
        other.eval("return counter").await.unwrap().values,
        [json!(null)]
    );
}

#[tokio::test]
async fn a_session_survives_guest_limits() {
    let sb = with_limits(Limits {
        max_instructions: 100_000,
        max_output_bytes: 100,
        ..Limits::default()
    });
    let mut s = sb.session(()).await.unwrap();
    s.eval("kept = 'yes'").await.unwrap();
    assert!(!s.is_poisoned());
    assert_eq!(
        s.eval("while true do end").await.unwrap_err().kind,
        ErrorKind::InstructionLimit
    );
    assert_eq!(
        s.eval("for i = 1, 100 do print(i) end")
            .await
            .unwrap_err()
            .kind,
        ErrorKind::OutputLimit
    );
    assert_eq!(
        s.eval("error('x')").await.unwrap_err().kind,
        ErrorKind::Runtime
    );
    // The counters restart each eval, and the globals are intact.
    let out = s.eval("print('fine') return kept").await.unwrap();
    assert_eq!(
        (out.output, out.values),
        ("fine\n".into(), vec![json!("yes")])
    );
}

#[tokio::test]
async fn an_outer_wall_stop_poisons_the_session_only() {
    let sb = with_limits(Limits {
        timeout: Duration::from_millis(200),
        fuel: Some(Limits::MAX_FUEL),
        ..Limits::default()
    });
    let mut s = sb.session(()).await.unwrap();
    let e = s
        .eval("return ('a'):rep(28):match(('a?'):rep(28) .. ('a'):rep(28))")
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Timeout);
    assert!(s.is_poisoned());
    let e = s.eval("return 1").await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::SessionPoisoned);
    assert!(e.message.contains("start a new session"), "{}", e.message);
    let mut fresh = sb.session(()).await.unwrap();
    assert_eq!(fresh.eval("return 1").await.unwrap().values, [json!(1)]);
}

#[tokio::test]
async fn a_cancelled_eval_poisons_the_session() {
    // Limits the dropped eval cannot reach first, however fast the machine.
    let sb = with_limits(Limits {
        max_instructions: Limits::MAX_MAX_INSTRUCTIONS,
        timeout: Duration::from_secs(60),
        ..Limits::default()
    });
    let mut s = sb.session(()).await.unwrap();
    let _ = tokio::time::timeout(
        Duration::from_millis(20),
        s.eval("local x = 0 while true do x = x + 1 end"),
    )
    .await;
    assert_eq!(
        s.eval("return 1").await.unwrap_err().kind,
        ErrorKind::SessionPoisoned
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_concurrent_sessions() {
    let sb = sandbox();
    let mut tasks = Vec::new();
    for i in 0..1000u32 {
        let sb = sb.clone();
        tasks.push(tokio::spawn(async move {
            let mut s = sb.session(()).await?;
            s.eval(&format!("id = {i}")).await?;
            tokio::task::yield_now().await;
            let out = s
                .eval("local acc = 0 for k = 1, 1000 do acc = acc + k end return id, acc")
                .await?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(out.values)
        }));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        let v = task.await.unwrap().unwrap();
        assert_eq!(v, [json!(i), json!(500500)]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_scripts_do_not_starve_short_ones() {
    let sb = with_limits(Limits {
        max_instructions: Limits::MAX_MAX_INSTRUCTIONS,
        timeout: Duration::from_secs(2),
        fuel: Some(Limits::MAX_FUEL),
        ..Limits::default()
    });
    // Two spinning scripts occupy both worker threads until their timeout.
    let spinners: Vec<_> = (0..2)
        .map(|_| {
            let sb = sb.clone();
            tokio::spawn(async move { sb.eval("while true do end").await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = std::time::Instant::now();
    assert_eq!(values(&sb, "return 'quick'").await, [json!("quick")]);
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "a short eval waited {:?}",
        started.elapsed()
    );
    for s in spinners {
        assert_eq!(s.await.unwrap().unwrap_err().kind, ErrorKind::Timeout);
    }
}

#[tokio::test]
async fn an_eval_does_not_inherit_the_garbage_of_the_last_one() {
    let sb = with_limits(Limits {
        max_memory_bytes: 1 << 20,
        max_call_depth: 100,
        ..Limits::default()
    });
    let mut s = sb.session(()).await.unwrap();
    for _ in 0..3 {
        let bomb = "local t = {} while true do t[#t + 1] = ('x'):rep(512) .. #t end";
        assert_eq!(s.eval(bomb).await.unwrap_err().kind, ErrorKind::MemoryLimit);
        let deep = "local function f() return 1 + f() end return f()";
        assert_eq!(s.eval(deep).await.unwrap_err().kind, ErrorKind::CallDepth);
        assert_eq!(
            s.eval("return #('y'):rep(100000)").await.unwrap().values,
            [json!(100000)]
        );
    }
}

#[tokio::test]
async fn the_async_builders_validate_like_build_and_hand_back_a_working_session() {
    // `build_with_session` returns the probe session itself: it runs, keeps
    // globals, and has the context it was given.
    let (sandbox, mut session) = Sandbox::builder().build_with_session(()).await.unwrap();
    session.eval("kept = 41").await.unwrap();
    let out = session.eval("return kept + 1").await.unwrap();
    assert_eq!(out.values, [json!(42)]);
    assert_eq!(
        sandbox.eval("return kept").await.unwrap().values,
        [Value::Null]
    );
    let sandbox = Sandbox::builder().build_async().await.unwrap();
    assert_eq!(
        sandbox.eval("return 1 + 1").await.unwrap().values,
        [json!(2)]
    );
    // A configuration the guest refuses is a configuration error from all
    // three, with the same message.
    let bad = || Sandbox::builder().module("broken", "return (");
    let sync = bad().build().unwrap_err().to_string();
    let built_async = bad().build_async().await.unwrap_err();
    assert!(
        matches!(built_async, moonbox::Error::Config(_)),
        "{built_async:?}"
    );
    assert_eq!(built_async.to_string(), sync);
    let with_session = bad().build_with_session(()).await.unwrap_err();
    assert!(
        matches!(with_session, moonbox::Error::Config(_)),
        "{with_session:?}"
    );
    assert_eq!(with_session.to_string(), sync);
}

/// Garbage with a finalizer, left by one eval past half the heap, so that
/// the next eval's start collects it and runs the finalizer `body`.
const FINALIZER_LEFT: &str = "
collectgarbage('stop')
setmetatable({}, { __gc = function() BODY end })
local junk = {}
for i = 1, 10000 do junk[i] = ('x'):rep(200 + i % 7) end
";

#[tokio::test]
async fn a_finalizer_run_as_an_eval_starts_is_charged_to_it() {
    let sb = with_limits(Limits {
        max_instructions: 1_000_000,
        max_memory_bytes: 4 << 20,
        ..Limits::default()
    });
    let mut s = sb.session(()).await.unwrap();
    let counted = FINALIZER_LEFT.replace("BODY", "for i = 1, 200000 do end print('finalized')");
    s.eval(&counted).await.unwrap();
    let out = s.eval("return 1").await.unwrap();
    assert_eq!(
        out.output, "finalized\n",
        "the finalizer's output is the eval's"
    );
    let instructions = out.stats.instructions.unwrap();
    assert!(
        instructions > 200_000,
        "the finalizer's loop is counted: {instructions}"
    );

    // A finalizer that never ends trips the limit, and that ends the eval
    // with the limit's error, the instructions counted up to it.
    let endless = FINALIZER_LEFT.replace("BODY", "while true do end");
    s.eval(&endless).await.unwrap();
    let err = s.eval("return 1").await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::InstructionLimit, "{err}");
    let instructions = err.stats.instructions.unwrap();
    assert!(
        (1_000_000..=1_001_000).contains(&instructions),
        "stopped at the limit: {instructions}"
    );
    // The session goes on.
    assert_eq!(s.eval("return 2").await.unwrap().values, [json!(2)]);
}
