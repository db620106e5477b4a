//! Deterministic mode is a function of its inputs: a script that ends at a
//! limit ends at the same point, with the same report, on every run, even
//! when the host's capabilities take wall time that varies; that time is
//! the host's, counted apart from the script's timeout.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use moonbox::{Capability, CapabilityError, Determinism, ErrorKind, Limits, Sandbox};

/// A capability whose work takes `ms` milliseconds of the host's time.
fn slow() -> Capability<()> {
    Capability::<()>::new_async("host.wait", |_, (ms,): (u64,)| async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok::<_, CapabilityError>(ms)
    })
}

/// A capability that answers the same on every call and takes a different
/// time each time (0 to 3 ms, in turn), as real host work does.
fn jitter() -> Capability<()> {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    Capability::<()>::new_async("host.jitter", |_, (): ()| async move {
        let ms = CALLS.fetch_add(1, Ordering::Relaxed) % 4;
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok::<_, CapabilityError>("same")
    })
}

fn deterministic(limits: Limits) -> Sandbox {
    Sandbox::builder()
        .deterministic(Determinism {
            clock: 1_700_000_000,
            seed: 7,
        })
        .capability(slow())
        .capability(jitter())
        .limits(limits)
        .build()
        .unwrap()
}

/// Everything a run reports but its wall time.
#[derive(Debug, PartialEq)]
struct Outcome {
    kind: Option<ErrorKind>,
    message: String,
    output: Vec<u8>,
    instructions: Option<u64>,
    fuel_used: Option<u64>,
    peak_memory_bytes: Option<u64>,
    capability_calls: u32,
    output_bytes: u64,
}

async fn outcome(sb: &Sandbox, code: &str) -> Outcome {
    match sb.eval(code).await {
        Ok(out) => Outcome {
            kind: None,
            message: serde_json::to_string(&out.values).unwrap(),
            output: out.output.as_bytes().to_vec(),
            instructions: out.stats.instructions,
            fuel_used: out.stats.fuel_used,
            peak_memory_bytes: out.stats.peak_memory_bytes,
            capability_calls: out.stats.capability_calls,
            output_bytes: out.stats.output_bytes,
        },
        Err(e) => Outcome {
            kind: Some(e.kind),
            message: e.message,
            output: e.output.as_bytes().to_vec(),
            instructions: e.stats.instructions,
            fuel_used: e.stats.fuel_used,
            peak_memory_bytes: e.stats.peak_memory_bytes,
            capability_calls: e.stats.capability_calls,
            output_bytes: e.stats.output_bytes,
        },
    }
}

/// Twenty runs of each script, each of which calls a capability that
/// takes varying wall time and then runs into one limit, report the same
/// stop, output, instructions, fuel, peak heap and call count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_runs_near_each_limit_report_one_outcome() {
    let sb = deterministic(Limits {
        max_instructions: 300_000,
        max_call_depth: 100,
        max_string_bytes: 256 << 10,
        max_memory_bytes: 4 << 20,
        max_output_bytes: 4 << 10,
        fuel: Some(300_000_000),
        timeout: Duration::from_secs(20),
        ..Limits::default()
    });
    // Each script first waits on the host, a different time on each call
    // and run, prints what the host said, a random draw and the clock, then
    // goes to its limit.
    let prelude = "for i = 1, 5 do io.write(host.jitter(), ' ') end\n\
                   print(math.random(1 << 30), os.time(), os.clock())\n";
    let cases = [
        (ErrorKind::InstructionLimit, "while true do end"),
        (
            ErrorKind::MemoryLimit,
            "local t = {} for i = 1, 1e9 do t[i] = ('x'):rep(4096) .. i end",
        ),
        (
            ErrorKind::OutputLimit,
            "while true do io.write('tick ') end",
        ),
        (
            ErrorKind::CallDepth,
            "local function f(n) return 1 + f(n + 1) end return f(1)",
        ),
        (
            ErrorKind::StringSize,
            "local s = 'x' while true do s = s .. s end",
        ),
        (
            ErrorKind::FuelExhausted,
            "return ('a'):rep(26):match(('a?'):rep(26) .. ('a'):rep(26))",
        ),
        (
            ErrorKind::Runtime,
            "local t = setmetatable({}, {__gc = function() error('late') end}) error({code = 7})",
        ),
    ];
    for (kind, body) in cases {
        let code = format!("{prelude}{body}");
        let runs: Vec<_> = (0..20)
            .map(|_| {
                let sb = sb.clone();
                let code = code.clone();
                tokio::spawn(async move { outcome(&sb, &code).await })
            })
            .collect();
        let mut outcomes = Vec::new();
        for run in runs {
            outcomes.push(run.await.unwrap());
        }
        let first = &outcomes[0];
        assert_eq!(first.kind, Some(kind), "{body}: {first:?}");
        assert_eq!(first.capability_calls, 5, "{body}");
        for (i, other) in outcomes.iter().enumerate() {
            assert_eq!(other, first, "{body}: run {i} differs from run 0");
        }
    }
}

/// The host's time in capability calls does not count against the
/// script's timeout in deterministic mode: 3.2 s of waiting on the host
/// plus the guest's own work (about 0.9 s on an idle machine) pass a 4 s
/// timeout together, and the script still ends at its instruction limit.
/// Each part alone stays well under the timeout (the host's by 0.8 s, the
/// guest's by four times), so that the tests running beside it on a loaded
/// machine do not turn it into a timeout.
#[tokio::test]
async fn capability_time_is_not_the_scripts_time() {
    let sb = deterministic(Limits {
        max_instructions: 100_000_000,
        timeout: Duration::from_secs(4),
        ..Limits::default()
    });
    let code = "for i = 1, 16 do host.wait(200) end\n\
                local t = os.clock()\n\
                while true do t = t + 1 end";
    for _ in 0..2 {
        let e = sb.eval(code).await.expect_err("stops at a limit");
        assert_eq!(e.kind, ErrorKind::InstructionLimit, "{e:#}");
        assert_eq!(e.stats.capability_calls, 16);
    }
}

/// The host's own time is bounded too: capability calls that take longer
/// than the timeout in all end the eval with `timeout`, with a message
/// that blames them, and the output written before stays.
#[tokio::test]
async fn capability_time_has_a_budget_of_its_own() {
    let sb = deterministic(Limits {
        timeout: Duration::from_millis(200),
        ..Limits::default()
    });
    let code = "print('before') for i = 1, 100 do host.wait(20) end";
    let e = sb.eval(code).await.expect_err("the host's budget runs out");
    assert_eq!(e.kind, ErrorKind::Timeout, "{e:#}");
    assert!(
        e.message
            .contains("capability calls of this eval took longer"),
        "{e:#}"
    );
    assert_eq!(e.output.as_bytes(), b"before\n");
    assert!(
        (9..=11).contains(&e.stats.capability_calls),
        "{}",
        e.stats.capability_calls
    );
    // A call that hangs is cut off at the budget, not at its own end.
    let e = sb
        .eval("host.wait(60000)")
        .await
        .expect_err("cut off at the budget");
    assert_eq!(e.kind, ErrorKind::Timeout, "{e:#}");
    assert!(
        e.stats.wall_time_us < 10_000_000,
        "{}",
        e.stats.wall_time_us
    );
}

/// Outside deterministic mode the timeout is the wall clock's, capability
/// calls included: the same waiting ends the eval at the timeout.
#[tokio::test]
async fn outside_deterministic_mode_the_timeout_counts_the_host_too() {
    let sb = Sandbox::builder()
        .capability(slow())
        .limits(Limits {
            timeout: Duration::from_millis(200),
            ..Limits::default()
        })
        .build()
        .unwrap();
    let e = sb
        .eval("for i = 1, 10 do host.wait(30) end return 1")
        .await
        .expect_err("the wall clock runs out");
    assert_eq!(e.kind, ErrorKind::Timeout, "{e:#}");
    assert!(
        e.message.contains("ran longer than the 200 ms timeout"),
        "{e:#}"
    );
}
