//! Injected faults: capabilities that panic, hang, return too much, and
//! guests that trap or run out of fuel or time mid-call. Each ends with a
//! clean, typed error, and the sandbox keeps serving.

use std::time::Duration;

use moonbox::{Capability, CapabilityError, ErrorKind, Limits, Sandbox};
use serde_json::json;

use crate::support::{assert_usable, fails, values};

fn with(limits: Limits, caps: Vec<Capability<()>>) -> Sandbox {
    let mut builder = Sandbox::builder().limits(limits);
    for cap in caps {
        builder = builder.capability(cap);
    }
    builder.build().expect("the sandbox builds")
}

#[tokio::test]
async fn a_capability_that_panics_sync_blocking_or_async() {
    let caps = vec![
        Capability::sync("f.sync", |_, (): ()| -> Result<(), CapabilityError> {
            panic!("sync")
        }),
        Capability::blocking("f.blocking", |_, (): ()| -> Result<(), CapabilityError> {
            panic!("blocking")
        }),
        Capability::new_async("f.async", |_, (): ()| async move {
            tokio::task::yield_now().await;
            if true {
                panic!("async");
            }
            Ok::<(), CapabilityError>(())
        }),
    ];
    let sb = with(Limits::default(), caps);
    for name in ["f.sync", "f.blocking", "f.async"] {
        let e = fails(&sb, &format!("{name}()"), ErrorKind::Capability).await;
        assert_eq!(
            e.message,
            format!("main.lua:1: {name}: the capability failed inside the host (it panicked)")
        );
    }
    assert_usable(&sb).await;
}

#[tokio::test]
async fn a_capability_that_hangs_sync_or_async() {
    let caps = vec![
        Capability::blocking("hang.sync", |_, (): ()| {
            std::thread::sleep(Duration::from_secs(2));
            Ok::<_, CapabilityError>(())
        }),
        Capability::new_async("hang.async", |_, (): ()| async move {
            std::future::pending::<()>().await;
            Ok::<_, CapabilityError>(())
        }),
    ];
    let sb = with(
        Limits {
            timeout: Duration::from_millis(150),
            ..Limits::default()
        },
        caps,
    );
    for code in [
        "hang.sync()",
        "hang.async()",
        "pcall(hang.async) return 'escaped'",
    ] {
        let e = fails(&sb, code, ErrorKind::Timeout).await;
        assert_eq!(
            e.message,
            "the script ran longer than the 150 ms timeout (raise the timeout limit, Limits::timeout)"
        );
    }
    assert_usable(&sb).await;
}

#[tokio::test]
async fn a_capability_that_returns_too_much() {
    let caps = vec![
        Capability::sync("big.string", |_, (): ()| {
            Ok::<_, CapabilityError>("x".repeat(2 << 20))
        }),
        Capability::sync("big.deep", |_, (): ()| {
            let mut v = json!(1);
            for _ in 0..100 {
                v = json!([v]);
            }
            Ok::<_, CapabilityError>(v)
        }),
    ];
    let sb = with(
        Limits {
            max_memory_bytes: 1 << 20,
            max_wasm_memory_bytes: Some(32 << 20),
            ..Limits::default()
        },
        caps,
    );
    let e = fails(&sb, "return big.string()", ErrorKind::Capability).await;
    assert!(
        e.message
            .contains("more than 1048576 bytes of JSON, the sandbox's memory limit"),
        "{}",
        e.message
    );
    let e = fails(&sb, "return big.deep()", ErrorKind::Capability).await;
    assert_eq!(
        e.message,
        "main.lua:1: big.deep: result value nests deeper than 64 levels (max-value-depth)"
    );
    assert_usable(&sb).await;
}

#[tokio::test]
async fn an_allowed_exit_ends_the_eval_not_the_instance() {
    // An allowed os.exit used to end the instance through WASI (a trap,
    // reported as internal, output lost). It now ends the eval cleanly.
    let sb = Sandbox::builder().allow("os.exit").build().unwrap();
    let out = sb
        .eval("print('before') os.exit(3) print('after')")
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.output, "before\n");
    assert!(out.values.is_empty());
    let mut session = sb.session(()).await.unwrap();
    session.eval("x = 1").await.unwrap();
    for (code, status) in [
        ("os.exit(true)", 0),
        ("os.exit(false)", 1),
        ("os.exit()", 0),
        ("pcall(os.exit, 5) print('caught')", 5),
        (
            "coroutine.wrap(function() os.exit(6) end)() print('after')",
            6,
        ),
        (
            "local ok = pcall(function() local x <close> = setmetatable({}, {__close = function() print('closed') end}) os.exit(9) end) print(ok)",
            9,
        ),
    ] {
        let out = session.eval(code).await.unwrap();
        assert_eq!(out.exit_code, Some(status), "{code}");
        assert_eq!(out.output, "", "nothing runs after the exit: {code}");
    }
    assert!(!session.is_poisoned());
    assert_eq!(values_of(&mut session, "return x").await, [json!(1)]);
    assert_usable(&sb).await;
}

async fn values_of(session: &mut moonbox::Session<()>, code: &str) -> Vec<serde_json::Value> {
    session.eval(code).await.unwrap().values
}

#[tokio::test]
async fn fuel_running_out_across_capability_calls() {
    let caps = vec![Capability::sync("cheap.call", |_, (n,): (i64,)| {
        Ok::<_, CapabilityError>(n + 1)
    })];
    let sb = with(
        Limits {
            fuel: Some(20_000_000),
            max_instructions: Limits::MAX_MAX_INSTRUCTIONS,
            ..Limits::default()
        },
        caps,
    );
    let e = fails(
        &sb,
        "local n = 0 while true do n = cheap.call(n) end",
        ErrorKind::FuelExhausted,
    )
    .await;
    assert!(e.stats.fuel_used >= Some(20_000_000));
    assert_eq!(values(&sb, "return cheap.call(41)").await, [json!(42)]);
}

#[tokio::test]
async fn a_timeout_during_a_capability_call_keeps_earlier_output() {
    let caps = vec![Capability::new_async(
        "slow.fetch",
        |_, (): ()| async move {
            tokio::time::sleep(Duration::from_secs(10)).await;
            Ok::<_, CapabilityError>("late")
        },
    )];
    let sb = with(
        Limits {
            timeout: Duration::from_millis(200),
            ..Limits::default()
        },
        caps,
    );
    let e = fails(
        &sb,
        "print('started') return slow.fetch()",
        ErrorKind::Timeout,
    )
    .await;
    // Output belongs to the host as it is written: a host stop keeps it,
    // and the stats the host measures are there too.
    assert_eq!(e.output, "started\n");
    assert_eq!(e.stats.output_bytes, 8);
    assert_eq!(e.stats.capability_calls, 1);
    assert_eq!(e.stats.instructions, None, "the guest never reported");
    assert!(e.stats.wall_time_us >= 200_000);
    assert_usable(&sb).await;
}
