//! Every limit, with and without a `pcall` around it. Each case must end with
//! its kind and leave the sandbox usable.

use std::time::Duration;

use moonbox::{ErrorKind, Limits, Sandbox};
use serde_json::json;

use crate::support::{assert_usable, fails, sandbox, values, with_limits};

/// A sandbox on the shared engine that meters fuel.
fn metered(limits: Limits) -> Sandbox {
    Sandbox::builder()
        .engine(&moonbox::Engine::shared_metered().unwrap())
        .limits(limits)
        .build()
        .unwrap()
}

fn small() -> Limits {
    Limits {
        max_instructions: 200_000,
        max_call_depth: 100,
        max_string_bytes: 1 << 20,
        max_memory_bytes: 8 << 20,
        max_output_bytes: 4096,
        timeout: Duration::from_secs(2),
        ..Limits::default()
    }
}

#[tokio::test]
async fn instruction_limit_with_and_without_pcall() {
    // `pcall(error, i)` costs tens of microseconds in the guest (each error
    // unwinds as a wasm exception), so the loop below needs more than a
    // second for its 200,000 instructions: the timeout leaves a loaded
    // machine room, since this test is about the instruction limit.
    let sb = with_limits(Limits {
        timeout: Duration::from_secs(20),
        ..small()
    });
    for code in [
        "while true do end",
        "pcall(function() while true do end end) return 'escaped'",
        "while true do pcall(function() while true do end end) end",
        "local co = coroutine.wrap(function() while true do end end) pcall(co) return 'escaped'",
        "for i = 1, 1e9 do local ok = pcall(error, i) end",
        "local t = setmetatable({}, {__index = function(t, k) while true do end end}) return pcall(function() return t.x end)",
        "local s = ('x'):rep(100) pcall(string.gsub, s, '.', function() while true do end end) return 'escaped'",
        "local t = {} for i = 1, 100 do t[i] = i end pcall(table.sort, t, function(a, b) while true do end end) return 'escaped'",
    ] {
        let e = fails(&sb, code, ErrorKind::InstructionLimit).await;
        assert!(
            e.message
                .contains("instruction limit exceeded (max-instructions is 200000)"),
            "{code}: {}",
            e.message
        );
        assert!(
            e.stats.instructions > Some(200_000),
            "{code}: {:?}",
            e.stats
        );
    }
    assert_usable(&sb).await;
}

#[tokio::test]
async fn instructions_are_counted_as_the_reference_count_hook_counts_them() {
    let sb = sandbox();
    // A count hook of 1 in reference `lua5.4` counts 1004, 4003 and 505 for
    // the first three chunks: it misses the two instructions that open a
    // chunk. The coroutine runs 813 instructions, and its creation is
    // charged 100.
    let cases = [
        ("for i = 1, 1000 do end", 1006),
        ("local i = 0 while i < 1000 do i = i + 1 end", 4005),
        (
            "local function f(x) return x end for i = 1, 100 do f(i) end",
            507,
        ),
        (
            "local co = coroutine.wrap(function() for i = 1, 100 do coroutine.yield(i) end end) for i = 1, 100 do co() end",
            913,
        ),
    ];
    for (code, expected) in cases {
        let outcome = sb.eval(code).await.unwrap();
        assert_eq!(outcome.stats.instructions, Some(expected), "{code}");
    }
}

#[tokio::test]
async fn the_instruction_limit_trips_just_past_the_limit_in_every_shape_of_loop() {
    let sb = with_limits(Limits {
        max_instructions: 100_000,
        ..Limits::default()
    });
    for code in [
        "while true do end",
        "for i = 1, math.huge do end",
        "for k in function() return 1 end do end",
        "::top:: goto top",
        "repeat until false",
        "local function f() return f() end f()",
    ] {
        let e = fails(&sb, code, ErrorKind::InstructionLimit).await;
        let ran = e.stats.instructions.unwrap_or(0);
        assert!(
            (100_001..=100_010).contains(&ran),
            "{code}: stopped after {ran} instructions"
        );
    }
}

#[tokio::test]
async fn an_error_loses_none_of_the_instructions_before_it() {
    // A long straight function that ends in an error raised by the VM
    // itself (no call, no loop): every instruction it ran is counted, so a
    // loop of `pcall(f)` cannot hide its work from the limit.
    let make = "local src = {'local a = 0'} for i = 1, 2000 do src[#src + 1] = 'a = a + 1' end \
                src[#src + 1] = 'return a + nil' f = load(table.concat(src, ' '))";
    let sb = sandbox();
    let mut session = sb.session(()).await.unwrap();
    session.eval(make).await.unwrap();
    let once = session.eval("return pcall(f)").await.unwrap();
    let ran = once.stats.instructions.unwrap_or(0);
    assert!(ran > 2000, "the failed call counted {ran} instructions");
    let sb = with_limits(Limits {
        max_instructions: 1_000_000,
        ..Limits::default()
    });
    let mut session = sb.session(()).await.unwrap();
    session.eval(make).await.unwrap();
    let e = session
        .eval("n = 0 while true do n = n + 1 pcall(f) end")
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InstructionLimit, "{}", e.message);
    let passes = session.eval("return n").await.unwrap();
    assert!(
        passes.values[0]
            .as_i64()
            .is_some_and(|n| n <= 1_000_000 / 2000 + 1),
        "{:?} passes of 2,000 instructions within a limit of 1,000,000",
        passes.values
    );
}

#[tokio::test]
async fn an_error_raised_by_a_hook_loses_none_of_the_instructions_before_it() {
    // A script's own count hook that raises inside a long straight function:
    // the instructions before the hook ran are counted all the same.
    let sb = Sandbox::builder()
        .allow("debug")
        .allow("debug.sethook")
        .limits(Limits {
            max_instructions: 1_000_000,
            ..Limits::default()
        })
        .build()
        .unwrap();
    let mut session = sb.session(()).await.unwrap();
    session
        .eval(
            "local src = {'inside = true local a = 0'} for i = 1, 2000 do src[#src + 1] = 'a = a + 1' end \
             f = load(table.concat(src, ' '))",
        )
        .await
        .unwrap();
    let e = session
        .eval(
            "debug.sethook(function() if inside then error('hook') end end, '', 1500) \
             n = 0 while true do n = n + 1 pcall(f) inside = false end",
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InstructionLimit, "{}", e.message);
    let passes = session.eval("return n").await.unwrap();
    assert!(
        passes.values[0].as_i64().is_some_and(|n| n <= 1_000),
        "{:?} passes of about 1,500 instructions within a limit of 1,000,000",
        passes.values
    );
}

#[tokio::test]
async fn nothing_runs_after_a_trip_even_without_a_loop_or_call() {
    let sb = with_limits(small());
    let mut session = sb.session(()).await.unwrap();
    let e = session
        .eval("pcall(function() while true do end end) after = 1")
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InstructionLimit);
    let v = session.eval("return after").await.unwrap();
    assert_eq!(v.values, [json!(null)], "code after the trip ran");
    // The next eval runs normally.
    assert_eq!(
        session.eval("return 1 + 1").await.unwrap().values,
        [json!(2)]
    );
}

#[tokio::test]
async fn xpcall_handlers_cannot_swallow_a_limit() {
    let sb = with_limits(small());
    let code = "return xpcall(function() while true do end end, function(m) return 'handled' end)";
    fails(&sb, code, ErrorKind::InstructionLimit).await;
}

#[tokio::test]
async fn call_depth_with_and_without_pcall() {
    let sb = with_limits(small());
    for code in [
        "local function f(n) return f(n + 1) + 1 end return f(1)",
        "local function f(n) return 1 + f(n + 1) end return pcall(f, 1)",
    ] {
        let e = fails(&sb, code, ErrorKind::CallDepth).await;
        assert!(
            e.message
                .contains("call depth limit exceeded (max-call-depth is 100)"),
            "{code}: {}",
            e.message
        );
    }
    // Recursion through C functions ends with Lua's own C-stack guard: a
    // runtime error with the reference message, as lua5.4 reports it.
    let e = fails(&sb, "local t = setmetatable({}, {}) getmetatable(t).__index = function(t, k) return t[k] end return t.x", ErrorKind::Runtime).await;
    assert_eq!(e.message, "main.lua:1: C stack overflow");
    // A script's own error cannot pass for a limit, whatever it says.
    for forged in [
        "error('stack overflow')",
        "error('main.lua:1: call depth limit exceeded (max-call-depth is 100)', 0)",
        "error('C stack overflow', 0)",
        "local function f() error('x: stack overflow') end coroutine.wrap(f)()",
    ] {
        fails(&sb, forged, ErrorKind::Runtime).await;
    }
    // Moderate recursion is fine.
    assert_eq!(
        values(
            &sb,
            "local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end return f(80)"
        )
        .await,
        [json!(80)]
    );
    assert_usable(&sb).await;
}

#[tokio::test]
async fn string_size_is_checked_before_allocating() {
    let sb = with_limits(small());
    let e = fails(&sb, "return string.rep('x', 2^30)", ErrorKind::StringSize).await;
    assert_eq!(
        e.message,
        "main.lua:1: string.rep would make a string of 1073741824 bytes, over the limit of 1048576 (max-string-bytes)"
    );
    // Past INT_MAX, Lua's own check answers first, as in the reference.
    let too_large = fails(&sb, "return string.rep('x', 1e15)", ErrorKind::Runtime).await;
    assert_eq!(too_large.message, "main.lua:1: resulting string too large");
    assert!(
        e.stats.peak_memory_bytes < Some(1 << 20),
        "nothing large was allocated: {:?}",
        e.stats
    );
    fails(
        &sb,
        "local ok = pcall(string.rep, 'x', 2 ^ 21) return 'escaped'",
        ErrorKind::StringSize,
    )
    .await;
    let e = fails(
        &sb,
        "local s = 'x' while true do s = s .. s end",
        ErrorKind::StringSize,
    )
    .await;
    assert_eq!(
        e.message,
        "string length exceeds the limit of 1048576 bytes (max-string-bytes)"
    );
    fails(
        &sb,
        "local s = ('x'):rep(2^19) pcall(function() return s .. s .. s end) return 'escaped'",
        ErrorKind::StringSize,
    )
    .await;
    // Just under the limit is fine.
    assert_eq!(
        values(&sb, "return #string.rep('x', 2^20 - 64)").await,
        [json!((1 << 20) - 64)]
    );
    assert_usable(&sb).await;
}

#[tokio::test]
async fn memory_limit_with_and_without_pcall() {
    let sb = with_limits(Limits {
        max_instructions: 100_000_000,
        ..small()
    });
    for code in [
        "local t = {} for i = 1, 1e8 do t[i] = i end",
        "local t = {} pcall(function() for i = 1, 1e8 do t[i] = {} end end) return 'escaped'",
        "local parts = {} for i = 1, 1e6 do parts[i] = ('x'):rep(1000) .. i end",
        "local fs = {} for i = 1, 1e7 do local up = i fs[i] = function() return up end end",
    ] {
        let e = fails(&sb, code, ErrorKind::MemoryLimit).await;
        assert!(
            e.message.starts_with("not enough memory"),
            "{code}: {}",
            e.message
        );
        assert!(
            e.stats.peak_memory_bytes <= Some(8 << 20),
            "{code}: {:?}",
            e.stats
        );
    }
    assert_usable(&sb).await;
}

#[tokio::test]
async fn output_limit_with_and_without_pcall() {
    let sb = with_limits(small());
    let e = fails(
        &sb,
        "for i = 1, 1e6 do print(i) end",
        ErrorKind::OutputLimit,
    )
    .await;
    assert_eq!(
        e.message,
        "main.lua:1: output limit exceeded (max-output-bytes is 4096)"
    );
    let kept = e.output.len();
    assert!(kept == 4096, "output up to the limit is kept: {kept} bytes");
    fails(
        &sb,
        "for i = 1, 1e6 do pcall(print, ('y'):rep(100)) end return 'escaped'",
        ErrorKind::OutputLimit,
    )
    .await;
    fails(
        &sb,
        "pcall(print, ('z'):rep(5000)) return 'escaped'",
        ErrorKind::OutputLimit,
    )
    .await;
    assert_usable(&sb).await;
}

#[tokio::test]
async fn fuel_stops_work_inside_one_c_call() {
    let limits = Limits {
        fuel: Some(200_000_000),
        timeout: Duration::from_secs(30),
        ..Limits::default()
    };
    let sb = with_limits(limits);
    let code = "return ('a'):rep(26):match(('a?'):rep(26) .. ('a'):rep(26))";
    let e = fails(&sb, code, ErrorKind::FuelExhausted).await;
    assert!(e.stats.fuel_used >= Some(200_000_000), "{:?}", e.stats);
    assert_usable(&sb).await;
}

/// Without fuel (the default), the timeout stops work inside one C call.
#[tokio::test]
async fn without_fuel_the_timeout_stops_work_inside_one_c_call() {
    let sb = with_limits(Limits {
        timeout: Duration::from_millis(300),
        ..Limits::default()
    });
    assert!(!sb.engine().meters_fuel());
    let code = "return ('a'):rep(26):match(('a?'):rep(26) .. ('a'):rep(26))";
    let e = fails(&sb, code, ErrorKind::Timeout).await;
    assert_eq!(e.stats.fuel_used, None);
    assert_usable(&sb).await;
}

/// Fuel is metered where it buys something: deterministic mode and an
/// explicit fuel limit. An engine that does not meter it is refused there,
/// with the fix named.
#[tokio::test]
async fn fuel_is_metered_in_deterministic_mode_and_when_its_limit_is_set() {
    let plain = sandbox();
    assert!(!plain.engine().meters_fuel());
    assert_eq!(plain.eval("return 1").await.unwrap().stats.fuel_used, None);
    let deterministic = Sandbox::builder()
        .deterministic(moonbox::Determinism::default())
        .build()
        .unwrap();
    assert!(deterministic.engine().meters_fuel());
    let used = deterministic
        .eval("return 1")
        .await
        .unwrap()
        .stats
        .fuel_used;
    assert!(used.is_some_and(|f| f > 0), "{used:?}");
    let explicit = with_limits(Limits {
        fuel: Some(1_000_000_000),
        ..Limits::default()
    });
    assert!(explicit.engine().meters_fuel());
    let unmetered = moonbox::Engine::shared().unwrap();
    for builder in [
        Sandbox::builder().deterministic(moonbox::Determinism::default()),
        Sandbox::builder().limits(Limits {
            fuel: Some(1_000_000_000),
            ..Limits::default()
        }),
    ] {
        let err = builder.engine(&unmetered).build().unwrap_err();
        assert!(
            err.to_string().contains(
                "needs an engine that meters fuel; build it with Engine::builder().fuel(true)"
            ),
            "{err}"
        );
    }
}

#[tokio::test]
async fn timeout_stops_work_inside_one_c_call() {
    let limits = Limits {
        fuel: Some(Limits::MAX_FUEL),
        timeout: Duration::from_millis(300),
        ..Limits::default()
    };
    let sb = with_limits(limits);
    let started = std::time::Instant::now();
    let code = "return ('a'):rep(28):match(('a?'):rep(28) .. ('a'):rep(28))";
    let e = fails(&sb, code, ErrorKind::Timeout).await;
    assert_eq!(
        e.message,
        "the script ran longer than the 300 ms timeout (raise the timeout limit, Limits::timeout)"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "stopped promptly: {:?}",
        started.elapsed()
    );
    assert_usable(&sb).await;
}

#[tokio::test]
async fn gc_finalizers_are_counted_by_the_instruction_limit() {
    let sb = with_limits(Limits {
        max_instructions: 1_000_000,
        ..Limits::default()
    });
    let code = "setmetatable({}, {__gc = function() while true do end end}) collectgarbage() return 'escaped'";
    fails(&sb, code, ErrorKind::InstructionLimit).await;
    assert_usable(&sb).await;
}

#[tokio::test]
async fn gc_finalizers_are_stopped_by_the_outer_wall() {
    let limits = Limits {
        fuel: Some(100_000_000),
        ..Limits::default()
    };
    let sb = with_limits(limits);
    let code = "setmetatable({}, {__gc = function() while true do end end}) collectgarbage() return 'escaped'";
    fails(&sb, code, ErrorKind::FuelExhausted).await;
    assert_usable(&sb).await;
}

#[tokio::test]
async fn invalid_limits_are_refused() {
    let err = Sandbox::builder()
        .limits(Limits {
            max_instructions: 0,
            ..Limits::default()
        })
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid sandbox configuration: limit max_instructions must be greater than zero"
    );
    let err = Sandbox::builder()
        .limits(Limits {
            max_memory_bytes: 1000,
            ..Limits::default()
        })
        .build()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("limit max_memory_bytes must be at least 1048576, got 1000"),
        "{err}"
    );
}

#[tokio::test]
async fn defaults_are_finite() {
    let sb = sandbox();
    let limits = sb.limits();
    assert_eq!(limits.max_instructions, Limits::DEFAULT_MAX_INSTRUCTIONS);
    let e = fails(&sb, "while true do end", ErrorKind::InstructionLimit).await;
    assert!(e.stats.instructions <= Some(Limits::DEFAULT_MAX_INSTRUCTIONS + 1000));
}

#[tokio::test]
async fn many_short_coroutines_are_counted() {
    // Every thread counts into one budget, and creating a coroutine is
    // charged, so neither a flat loop nor a tree of short ones escapes.
    let sb = with_limits(Limits {
        max_instructions: 1_000_000,
        fuel: Some(Limits::MAX_FUEL),
        ..Limits::default()
    });
    let flat = "while true do coroutine.wrap(function() for i = 1, 10 do end end)() end";
    let e = fails(&sb, flat, ErrorKind::InstructionLimit).await;
    assert!(e.stats.instructions > Some(1_000_000));
    let flat = "while true do coroutine.resume(coroutine.create(function() end)) end";
    fails(&sb, flat, ErrorKind::InstructionLimit).await;
    let tree = r#"
        local function grow(depth)
            if depth == 0 then return end
            coroutine.wrap(grow)(depth - 1)
            coroutine.wrap(grow)(depth - 1)
        end
        grow(40)
    "#;
    fails(&sb, tree, ErrorKind::InstructionLimit).await;
    // Wrapped coroutines keep the reference error behaviour.
    let v = values(
        &sb,
        "local f = coroutine.wrap(function() error('inner') end) return pcall(f)",
    )
    .await;
    assert_eq!(v, [json!(false), json!("main.lua:1: inner")]);
}

/// Once a limit trips, the script gets no further effect: no output, no
/// capability call, not even before its next loop back-edge or call.
#[tokio::test]
async fn a_trip_stops_output_and_capabilities_at_once() {
    let count = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let seen = count.clone();
    let sb = Sandbox::builder()
        .limits(small())
        .capability(moonbox::Capability::sync("probe.hit", move |_, (): ()| {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok::<_, moonbox::CapabilityError>(true)
        }))
        .build()
        .unwrap();
    let cases = [
        (
            "print('before') pcall(function() local t = {} for i = 1, 1e9 do t[i] = ('x'):rep(1000) .. i end end) print('after') probe.hit()",
            ErrorKind::MemoryLimit,
        ),
        (
            "print('before') pcall(string.rep, 'x', 1 << 30) print('after') probe.hit()",
            ErrorKind::StringSize,
        ),
        (
            "print('before') coroutine.wrap(function() pcall(string.rep, 'x', 1 << 30) print('after') probe.hit() end)()",
            ErrorKind::StringSize,
        ),
        (
            // A string literal built by a reader, past the limit only once
            // `load` makes it: `load` catches the error, the trip stands.
            "local n = 0 local function r() n = n + 1 if n == 1 then return 'return \"' elseif n <= 4 then return ('x'):rep(1 << 19) elseif n == 5 then return '\"' end end print('before') print(pcall(load, r)) print('after') probe.hit()",
            ErrorKind::StringSize,
        ),
    ];
    for (code, kind) in cases {
        let e = fails(&sb, code, kind).await;
        assert_eq!(e.output, "before\n", "{code}");
        assert_eq!(e.stats.capability_calls, 0, "{code}");
    }
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 0);
    // The output limit: what fits is written, nothing after.
    let e = fails(
        &sb,
        "pcall(function() while true do io.write(('z'):rep(1000)) end end) print('after') probe.hit()",
        ErrorKind::OutputLimit,
    )
    .await;
    assert_eq!(e.output.len(), 4096);
    assert!(e.output.as_bytes().iter().all(|&b| b == b'z'));
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_usable(&sb).await;
}

/// `coroutine.wrap` charges once for the coroutine it creates, and a trip
/// in that charge points at the script's line.
#[tokio::test]
async fn coroutine_wrap_is_charged_once() {
    let sb = with_limits(small());
    let out = sb
        .eval("for i = 1, 1000 do coroutine.wrap(function() end) end")
        .await
        .unwrap();
    let instructions = out.stats.instructions.unwrap();
    assert!(
        (100_000..150_000).contains(&instructions),
        "1,000 wraps at 100 each, plus the loop: {instructions}"
    );
    let e = fails(
        &sb,
        "\nwhile true do coroutine.wrap(print) end",
        ErrorKind::InstructionLimit,
    )
    .await;
    assert_eq!(e.line, Some(2), "{}", e.message);
}

/// A capability reply that cannot be pushed (the heap trips mid-way) is
/// owned by the guest's session, not leaked on an unwound frame: a session
/// survives many such trips without its linear memory growing out.
#[tokio::test]
async fn failed_replies_do_not_leak_in_a_session() {
    let reply: Vec<String> = (0..20_000).map(|i| format!("item number {i}")).collect();
    let sb = Sandbox::builder()
        .limits(Limits {
            max_memory_bytes: 1 << 20,
            // Room for the reply's charge, so that the heap trips mid-way.
            max_instructions: 10_000_000,
            ..small()
        })
        .capability(moonbox::Capability::sync("data.list", move |_, (): ()| {
            Ok::<_, moonbox::CapabilityError>(reply.clone())
        }))
        .build()
        .unwrap();
    let mut session = sb.session(()).await.unwrap();
    for round in 0..60 {
        let e = session
            .eval("local t = data.list() return #t")
            .await
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::MemoryLimit, "round {round}: {e}");
    }
    let out = session.eval("return 1 + 1").await.unwrap();
    assert_eq!(out.values, [json!(2)]);
}

#[tokio::test]
async fn collector_parameters_are_validated() {
    let sb = sandbox();
    for (code, message) in [
        (
            "collectgarbage('incremental', -1, -1, -1)",
            "main.lua:1: bad argument #2 to 'collectgarbage' (must not be negative)",
        ),
        (
            "collectgarbage('generational', 20, -5)",
            "main.lua:1: bad argument #3 to 'collectgarbage' (must not be negative)",
        ),
        (
            "collectgarbage('incremental', 200, 100, 40)",
            "main.lua:1: bad argument #4 to 'collectgarbage' (step size must be at most 20)",
        ),
        (
            "collectgarbage('nope')",
            "main.lua:1: bad argument #1 to 'collectgarbage' (invalid option 'nope')",
        ),
    ] {
        let e = fails(&sb, code, ErrorKind::Runtime).await;
        assert_eq!(e.message, message);
    }
    assert_eq!(
        values(
            &sb,
            "collectgarbage('setpause', 0x7ffffffe) collectgarbage('setstepmul', 0) return collectgarbage('incremental', 200, 100, 13), type(collectgarbage('count'))"
        )
        .await,
        [json!("incremental"), json!("number")]
    );
}

#[tokio::test]
async fn check_uses_the_sandbox_limits_so_it_agrees_with_eval() {
    let sb = with_limits(small());
    let long = format!("local s = '{}' return #s", "x".repeat(2 << 20));
    let checked = sb.check(&long, "main.lua").await.unwrap_err();
    let ran = fails(&sb, &long, ErrorKind::StringSize).await;
    assert_eq!(checked.kind, ErrorKind::StringSize);
    assert_eq!(checked.message, ran.message);
    let nested = format!("return {}1{}", "(".repeat(1000), ")".repeat(1000));
    let checked = sb.check(&nested, "main.lua").await.unwrap_err();
    let ran = fails(&sb, &nested, ErrorKind::Syntax).await;
    assert_eq!(checked.kind, ErrorKind::Syntax);
    assert_eq!(checked.message, ran.message);
}

/// Fuel follows the instruction limit unless it is set: raising
/// `max_instructions` alone is never capped by a second budget the user did
/// not set, and when fuel does stop a script the message names the limit to
/// raise.
#[tokio::test]
async fn raising_the_instruction_limit_raises_fuel_with_it() {
    // About 100 million instructions: past what the old fixed default fuel
    // (5e9) covered.
    let code = "local x = 0 for i = 1, 5e7 do x = x + i end return x";
    let sb = metered(Limits {
        max_instructions: 300_000_000,
        timeout: Duration::from_secs(120),
        ..Limits::default()
    });
    let out = sb.eval(code).await.unwrap();
    assert_eq!(out.values, [json!(1_250_000_025_000_000_i64)]);
    assert!(out.stats.fuel_used > Some(5_000_000_000), "{:?}", out.stats);
    assert_eq!(
        sb.limits().effective_fuel(),
        300_000_000 * Limits::FUEL_PER_INSTRUCTION
    );

    // Explicit fuel is its own limit, and the message says so.
    let sb = with_limits(Limits {
        max_instructions: 300_000_000,
        fuel: Some(100_000_000),
        ..Limits::default()
    });
    let e = fails(&sb, code, ErrorKind::FuelExhausted).await;
    assert_eq!(
        e.message,
        "the script used up its fuel (100000000 units, the host's budget of wasm instructions); raise the fuel limit (Limits::fuel)"
    );

    // Derived fuel that still runs out (work inside one C call) names both.
    let sb = metered(Limits {
        max_instructions: 10_000,
        timeout: Duration::from_secs(120),
        ..Limits::default()
    });
    let e = fails(
        &sb,
        "return ('a'):rep(30):match(('a?'):rep(30) .. ('a'):rep(30))",
        ErrorKind::FuelExhausted,
    )
    .await;
    assert!(
        e.message
            .contains("(5000000000 units, derived from max-instructions 10000)")
            && e.message.contains("Limits::max_instructions")
            && e.message.contains("Limits::fuel"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn with_limits_keeps_the_capabilities_and_checks_the_new_limits() {
    use moonbox::{Capability, CapabilityError};
    let sandbox = Sandbox::builder()
        .capability(Capability::sync("twice", |_, (n,): (i64,)| {
            Ok::<_, CapabilityError>(n * 2)
        }))
        .build_async()
        .await
        .unwrap();
    let tight = sandbox
        .with_limits(Limits {
            max_instructions: 500,
            ..*sandbox.limits()
        })
        .unwrap();
    assert_eq!(tight.limits().max_instructions, 500);
    assert_eq!(
        tight.eval("return twice(21)").await.unwrap().values,
        [json!(42)]
    );
    let err = tight.eval("for i = 1, 1e6 do end").await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::InstructionLimit);
    // The original is untouched.
    assert!(sandbox.eval("for i = 1, 1e5 do end").await.is_ok());

    let zero = sandbox.with_limits(Limits {
        max_instructions: 0,
        ..Limits::default()
    });
    assert!(zero.unwrap_err().to_string().contains("max_instructions"));
    // An explicit fuel budget needs an engine that meters fuel.
    let fuel = sandbox.with_limits(Limits {
        fuel: Some(1_000_000),
        ..Limits::default()
    });
    assert!(fuel.unwrap_err().to_string().contains("meters fuel"));
}

/// An error's message and traceback cross the boundary cut to
/// `max-output-bytes`, kept within 256 bytes and 64 KiB: a script cannot make
/// the host escape and report a message as large as a string may be.
#[tokio::test]
async fn error_messages_are_cut_to_the_output_limit() {
    let huge = "local s = ('\\1'):rep(1 << 20) local function f() error(s, 0) end f()";
    for (max_output, bound) in [
        (1024, 1024),
        (1, 256),
        (Limits::DEFAULT_MAX_OUTPUT_BYTES, 64 << 10),
    ] {
        let sb = with_limits(Limits {
            max_output_bytes: max_output,
            ..Limits::default()
        });
        let err = sb.eval(huge).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Runtime);
        assert!(
            err.message.len() <= bound,
            "{} > {bound}",
            err.message.len()
        );
        assert!(err.message.len() > bound - 64, "cut near the bound");
        assert!(
            err.message.ends_with(" bytes cut)"),
            "{:?}",
            &err.message[err.message.len() - 40..]
        );
        assert!(err.message.starts_with('\u{1}'));
        let traceback = err.traceback.as_deref().unwrap_or_default();
        assert!(traceback.len() <= bound);
        // The one-line form escapes each control character (six bytes),
        // and the report holds both: a few times the bound, not the string.
        let report = moonbox::Report::from(&err).to_json();
        let size = report.to_string().len();
        assert!(size < 16 * bound + 4096, "a report of {size} bytes");
    }
    // A short message is left whole.
    let err = sandbox().eval("error('short', 0)").await.unwrap_err();
    assert_eq!(err.message, "short");
}

/// `rawequal` on two distinct, equal long strings compares them in full;
/// it may not raise, so its charge lands at the next check point, and a
/// loop of them still ends at the instruction limit, not after the fuel.
#[tokio::test]
async fn rawequal_of_long_strings_is_charged() {
    let sb = metered(Limits {
        max_instructions: 1_000_000,
        fuel: Some(2_000_000_000),
        ..Limits::default()
    });
    let code = "local a, b = ('x'):rep(1 << 20), ('x'):rep(1 << 20) \
                while true do local _ = rawequal(a, b) end";
    let err = sb.eval(code).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::InstructionLimit, "{err}");
}

/// Conversions are charged for the work they do, at no more than the fuel
/// the host derives per instruction: with fuel at exactly that ratio, the
/// densest values (nested arrays of small integers, nested objects, a
/// dense document to decode, a document of nested arrays, a capability's
/// dense reply asked for in a loop, nested arguments) end at the
/// instruction limit, which the script can be told about,
/// never at fuel.
#[tokio::test]
async fn conversions_reach_the_instruction_limit_before_derived_fuel() {
    let max_instructions = 2_000_000;
    let dense = moonbox::Capability::<()>::sync("host.dense", |_, (): ()| {
        Ok::<_, moonbox::CapabilityError>(vec![1; 20_000])
    });
    let take = moonbox::Capability::<()>::sync("host.take", |_, (_,): (serde_json::Value,)| {
        Ok::<_, moonbox::CapabilityError>(true)
    });
    let sb = Sandbox::builder()
        .capability(dense)
        .capability(take)
        .limits(Limits {
            max_instructions,
            max_memory_bytes: 256 << 20,
            max_string_bytes: 64 << 20,
            fuel: Some(max_instructions * Limits::FUEL_PER_INSTRUCTION),
            timeout: Duration::from_secs(60),
            ..Limits::default()
        })
        .build()
        .unwrap();
    let nested = |open: &str, close: &str| {
        format!("local t = 1 for i = 1, 7 do t = {open}t, t, t, t, t, t, t, t{close} end")
    };
    let cases = [
        format!("{} return json.encode(t)", nested("{", "}")),
        "local t = 1 for i = 1, 7 do t = {a = t, b = t, c = t, d = t, e = t, f = t, g = t, h = t} end return json.encode(t)".to_owned(),
        "local s = '[' .. ('1,'):rep(4000000) .. '1]' return #json.decode(s)".to_owned(),
        "while true do host.dense() end".to_owned(),
        format!("{} while true do host.take(t) end", nested("{", "}")),
        // Found by the capability_args fuzz target: empty tables 54 levels
        // down, where the cycle check's scan of the open tables costs most.
        "local t = {} for i = 1, 54 do t = {t, t, t, t, t, t, t, t} end return json.encode({k = t})"
            .to_owned(),
        // A table every two bytes: decoding costs more per byte than text.
        "local one = ('['):rep(40) .. '1' .. (']'):rep(40) \
         local s = '[' .. (one .. ','):rep(5000) .. one .. ']' \
         while true do json.decode(s) end"
            .to_owned(),
    ];
    for code in cases {
        let e = sb.eval(&code).await.expect_err("stops at a limit");
        assert_eq!(e.kind, ErrorKind::InstructionLimit, "{code}: {e:#}");
    }
}
