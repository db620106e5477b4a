//! Inputs and cancellation: data reaches a script as globals, never spliced
//! into its code; a host can stop an eval and keep what it wrote.

use std::time::Duration;

use moonbox::{ErrorKind, Limits, Sandbox, Script};
use serde_json::json;

use crate::support::{assert_usable, sandbox};

#[tokio::test]
async fn inputs_arrive_as_globals_with_their_types() {
    let script = Script::new(
        "return math.type(i), math.type(f), type(s), type(t), t.rows[2].name, #t.rows, flag, missing",
    )
    .input("i", 7)
    .input("f", 1.5)
    .input("s", "text")
    .input("t", json!({"rows": [{"name": "Ada"}, {"name": "Grace"}]}))
    .input("flag", true)
    .input("missing", json!(null));
    let out = sandbox().run(script).await.expect("runs");
    assert_eq!(
        out.values,
        [
            json!("integer"),
            json!("float"),
            json!("string"),
            json!("table"),
            json!("Grace"),
            json!(2),
            json!(true),
            json!(null)
        ]
    );
}

#[tokio::test]
async fn an_input_string_is_data_not_code() {
    let hostile = "'); os.exit(1) --\"]] error('x') --";
    let out = sandbox()
        .run(Script::new("return s").input("s", hostile))
        .await
        .expect("runs");
    assert_eq!(out.values, [json!(hostile)]);
}

#[tokio::test]
async fn a_bad_input_name_is_an_invalid_value_error_naming_it() {
    for name in ["end", "1x", "a.b", "", "na me"] {
        let err = sandbox()
            .run(Script::new("return 1").input(name, 1))
            .await
            .expect_err("a bad name is refused");
        assert_eq!(err.kind, ErrorKind::InvalidValue, "{name:?}: {err}");
        assert!(err.to_string().contains(name), "{name:?}: {err}");
    }
}

#[tokio::test]
async fn inputs_past_the_depth_cap_or_memory_limit_are_refused() {
    let mut deep = json!(1);
    for _ in 0..200 {
        deep = json!([deep]);
    }
    let err = sandbox()
        .run(Script::new("return 1").input("deep", deep))
        .await
        .expect_err("too deep");
    assert_eq!(err.kind, ErrorKind::InvalidValue, "{err}");

    let small = Sandbox::builder()
        .limits(Limits {
            max_memory_bytes: Limits::MIN_MAX_MEMORY_BYTES,
            ..Limits::default()
        })
        .build()
        .expect("builds");
    let big = "x".repeat(usize::try_from(Limits::MIN_MAX_MEMORY_BYTES).unwrap() + 1);
    let err = small
        .run(Script::new("return #big").input("big", big))
        .await
        .expect_err("too big");
    assert_eq!(err.kind, ErrorKind::InvalidValue, "{err}");
    assert!(err.message.contains("max_memory_bytes"), "{err}");
    assert_usable(&small).await;
}

#[tokio::test]
async fn more_inputs_than_the_cap_are_refused_before_anything_runs() {
    let names = (0..=moonbox::Limits::MAX_INPUTS).map(|i| (format!("v{i}"), json!(i)));
    let err = sandbox()
        .run(Script::new("print('ran')").inputs(names))
        .await
        .expect_err("too many");
    assert_eq!(err.kind, ErrorKind::InvalidValue);
    assert!(err.message.contains("1024"), "{err}");
    assert_eq!(err.output, "");
    let names = (0..moonbox::Limits::MAX_INPUTS).map(|i| (format!("v{i}"), json!(i)));
    let out = sandbox()
        .run(Script::new("return v1023").inputs(names))
        .await
        .expect("the cap itself fits");
    assert_eq!(out.values, [json!(1023)]);
}

#[tokio::test]
async fn inputs_in_a_session_replace_globals_for_that_eval_on() {
    let mut session = sandbox().session(()).await.expect("starts");
    session
        .run(Script::new("seen = {} ").input("n", 1))
        .await
        .expect("runs");
    let out = session
        .run(
            Script::new("return n")
                .input("n", 2)
                .chunk_name("second.lua"),
        )
        .await
        .expect("runs");
    assert_eq!(out.values, [json!(2)]);
    let err = session
        .run(Script::new("error('boom')").chunk_name("third.lua"))
        .await
        .expect_err("errors");
    assert!(err.message.starts_with("third.lua:1:"), "{err}");
}

#[tokio::test]
async fn cancel_stops_a_busy_eval_and_keeps_its_output() {
    let sandbox = Sandbox::builder()
        .limits(Limits {
            max_instructions: Limits::MAX_MAX_INSTRUCTIONS,
            timeout: Duration::from_secs(120),
            ..Limits::default()
        })
        .build()
        .expect("builds");
    let mut session = sandbox.session(()).await.expect("starts");
    let cancel = session.cancel_handle();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let err = session
        .eval("print('before') while true do end")
        .await
        .expect_err("cancelled");
    canceller.await.expect("the canceller ran");
    assert_eq!(err.kind, ErrorKind::Cancelled, "{err}");
    assert_eq!(err.output, "before\n");
    assert!(err.stats.wall_time_us > 0);
    assert!(!err.kind.is_limit());
    // The session is done; the next eval says so at once.
    let again = session.eval("return 1").await.expect_err("still cancelled");
    assert_eq!(again.kind, ErrorKind::Cancelled);
    assert!(session.is_poisoned());
}

#[tokio::test]
async fn cancel_stops_an_eval_waiting_on_a_capability() {
    let sandbox = Sandbox::builder()
        .capability(moonbox::Capability::new_async(
            "slow",
            |_ctx, (): ()| async {
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok::<_, moonbox::CapabilityError>(1)
            },
        ))
        .limits(Limits {
            timeout: Duration::from_secs(120),
            ..Limits::default()
        })
        .build()
        .expect("builds");
    let mut session = sandbox.session(()).await.expect("starts");
    let cancel = session.cancel_handle();
    let started = std::time::Instant::now();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let err = session
        .eval("io.write('waiting') return slow()")
        .await
        .expect_err("cancelled");
    assert_eq!(err.kind, ErrorKind::Cancelled);
    assert_eq!(err.output, "waiting");
    assert_eq!(err.stats.capability_calls, 1);
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[tokio::test]
async fn a_cancel_before_an_eval_starts_is_not_lost() {
    let mut session = sandbox().session(()).await.expect("starts");
    session.cancel_handle().cancel();
    let err = session.eval("return 1").await.expect_err("cancelled");
    assert_eq!(err.kind, ErrorKind::Cancelled);
    // Other sessions of the sandbox are untouched.
    assert_usable(&sandbox()).await;
}
