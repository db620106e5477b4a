//! Every limit, with and without a `pcall` around it. Each case must end with
//! its kind and leave the sandbox usable.

use std::time::Duration;

use moonbox::{ErrorKind, Limits, Sandbox};
use serde_json::json;

use crate::support::{assert_usable, fails, sandbox, values, with_limits};

fn small() -> Limits {
    Limits {
        max_instructions: 200_000,
        max_call_depth: 100,
        max_string_bytes: 1 << 20,
        memory: 8 << 20,
        max_output_bytes: 4096,
        timeout: Duration::from_secs(2),
        ..Limits::default()
    }
}

#[tokio::test]
async fn instruction_limit_with_and_without_pcall() {
    let sb = with_limits(small());
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
        assert!(e.stats.instructions > 200_000, "{code}: {:?}", e.stats);
    }
    assert_usable(&sb).await;
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
    // Recursion through C functions ends with Lua's own guard, reported as call depth.
    let e = fails(&sb, "local t = setmetatable({}, {}) getmetatable(t).__index = function(t, k) return t[k] end return t.x", ErrorKind::CallDepth).await;
    assert!(e.message.contains("stack overflow"), "{}", e.message);
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
        e.stats.peak_memory_bytes < 1 << 20,
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
            e.stats.peak_memory_bytes <= 8 << 20,
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
    let kept: usize = e.output.iter().map(|l| l.len() + 1).sum();
    assert!(
        kept <= 4096 && kept > 4000,
        "output up to the limit is kept: {kept} bytes"
    );
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
        fuel: 200_000_000,
        timeout: Duration::from_secs(30),
        ..Limits::default()
    };
    let sb = with_limits(limits);
    let code = "return ('a'):rep(26):match(('a?'):rep(26) .. ('a'):rep(26))";
    let e = fails(&sb, code, ErrorKind::FuelExhausted).await;
    assert!(e.stats.fuel_used >= 200_000_000, "{:?}", e.stats);
    assert_usable(&sb).await;
}

#[tokio::test]
async fn timeout_stops_work_inside_one_c_call() {
    let limits = Limits {
        fuel: u64::MAX,
        timeout: Duration::from_millis(300),
        ..Limits::default()
    };
    let sb = with_limits(limits);
    let started = std::time::Instant::now();
    let code = "return ('a'):rep(28):match(('a?'):rep(28) .. ('a'):rep(28))";
    let e = fails(&sb, code, ErrorKind::Timeout).await;
    assert_eq!(e.message, "the script ran longer than the 300 ms timeout");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "stopped promptly: {:?}",
        started.elapsed()
    );
    assert_usable(&sb).await;
}

#[tokio::test]
async fn gc_finalizers_are_stopped_by_the_outer_wall() {
    let limits = Limits {
        fuel: 100_000_000,
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
            memory: 1000,
            ..Limits::default()
        })
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("at least 1 MiB"), "{err}");
}

#[tokio::test]
async fn defaults_are_finite() {
    let sb = sandbox();
    let limits = sb.limits();
    assert_eq!(limits.max_instructions, Limits::DEFAULT_MAX_INSTRUCTIONS);
    let e = fails(&sb, "while true do end", ErrorKind::InstructionLimit).await;
    assert!(e.stats.instructions <= Limits::DEFAULT_MAX_INSTRUCTIONS + 1000);
}

#[tokio::test]
async fn many_short_coroutines_are_counted() {
    // Each coroutine runs fewer instructions than any hook step; creating one
    // is charged up front, so neither a flat loop nor a tree of them escapes.
    let sb = with_limits(Limits {
        max_instructions: 1_000_000,
        fuel: u64::MAX,
        ..Limits::default()
    });
    let flat = "while true do coroutine.wrap(function() for i = 1, 10 do end end)() end";
    let e = fails(&sb, flat, ErrorKind::InstructionLimit).await;
    assert!(e.stats.instructions > 1_000_000);
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
