//! `check`'s static findings: what each kind reports, what it must not
//! report (locals, allowed names, configured modules and capabilities,
//! globals the chunk or the session defines), lines in nested functions,
//! the limits, and that nothing runs.

use std::time::{Duration, Instant};

use moonbox::{Capability, Diagnostic, ErrorKind, Finding, Limits, Sandbox};

use crate::support::sandbox;

async fn check<T: Send + Sync + 'static>(sb: &Sandbox<T>, code: &str) -> Vec<Diagnostic> {
    match sb.check(code, "main.lua").await {
        Ok(found) => found,
        Err(e) => panic!("expected {code:?} to compile, got {e:#}"),
    }
}

/// `(kind, name, line)` of each finding, for compact assertions.
fn summary(found: &[Diagnostic]) -> Vec<(Finding, &str, u32)> {
    found
        .iter()
        .map(|d| (d.kind, d.name.as_str(), d.line))
        .collect()
}

fn records() -> Sandbox {
    let get = Capability::<()>::sync("records.get", |_, (id,): (i64,)| {
        Ok::<i64, moonbox::CapabilityError>(id)
    });
    Sandbox::builder().capability(get).build().unwrap()
}

#[tokio::test]
async fn sandboxed_names_are_reported_with_their_line_and_a_message() {
    let sb = sandbox();
    let code =
        "local x = 1\nos.execute('ls')\nlocal f = io.popen('x')\ndofile('y')\nreturn string.dump";
    let found = check(&sb, code).await;
    assert_eq!(
        summary(&found),
        vec![
            (Finding::Sandboxed, "os.execute", 2),
            (Finding::Sandboxed, "io.popen", 3),
            (Finding::Sandboxed, "string.dump", 5),
        ]
    );
    let first = &found[0];
    assert_eq!(first.chunk, "main.lua");
    assert_eq!(
        first.to_string(),
        "main.lua:2: warning[sandboxed]: os.execute is sandboxed in this session: calling it raises an error. Do without it, or have the host allow \"os.execute\""
    );
}

#[tokio::test]
async fn names_every_script_has_give_no_finding() {
    let sb = sandbox();
    let code = "print(os.time(), os.clock(), io.write('x'), string.rep('a', 2), math.max(1, 2))\n\
                io.open('f') io.lines('f') os.remove('f') os.exit(0) os.getenv('HOME') dofile('x.lua')\n\
                debug.getinfo(1) debug.getmetatable('') package.searchpath('x', package.path)\n\
                local t = table.concat({}) return pcall(error), tostring(1), require('string'), debug.traceback()";
    assert_eq!(check(&sb, code).await, vec![]);
}

#[tokio::test]
async fn allowed_names_give_no_finding() {
    let sb = Sandbox::builder().allow("os").build().unwrap();
    assert_eq!(
        summary(&check(&sb, "os.execute('x') os.getenv('HOME') io.popen('f')").await),
        vec![(Finding::Sandboxed, "io.popen", 1)]
    );
    let sb = Sandbox::builder().allow("io.popen").build().unwrap();
    assert_eq!(
        summary(&check(&sb, "io.popen('ls') os.execute('ls')").await),
        vec![(Finding::Sandboxed, "os.execute", 1)]
    );
}

#[tokio::test]
async fn locals_that_shadow_globals_give_no_finding() {
    let sb = sandbox();
    let code = "local os = {execute = print}\nos.execute('x')\n\
                local function f(io) return io.open end\n\
                local undefined_name = 1 return undefined_name, f";
    assert_eq!(check(&sb, code).await, vec![]);
    // An upvalue that shadows: the nested function reads the outer local.
    let code = "local dofile = 1\nlocal function g() return dofile end\nreturn g";
    assert_eq!(check(&sb, code).await, vec![]);
    // A local _ENV: names read through it are not the session's globals.
    let code = "local _ENV = {x = 1}\nreturn x, os";
    assert_eq!(check(&sb, code).await, vec![]);
}

#[tokio::test]
async fn unknown_modules_are_reported_and_known_ones_are_not() {
    let sb = Sandbox::builder()
        .module("util", "return {}")
        .build()
        .unwrap();
    let code = "local u = require('util')\nlocal s = require 'socket'\nlocal j = require('json')\nlocal m = require('math')\nreturn require('lfs')";
    let found = check(&sb, code).await;
    assert_eq!(
        summary(&found),
        vec![
            (Finding::UnknownModule, "require(\"socket\")", 2),
            (Finding::UnknownModule, "require(\"lfs\")", 5),
        ]
    );
    assert!(
        found[0].message.contains("the host's modules are: util"),
        "{}",
        found[0].message
    );
}

#[tokio::test]
async fn a_missing_capability_of_a_namespace_is_reported() {
    let sb = records();
    let code = "local a = records.get(1)\nlocal b = records.fetch(2)\nreturn records:get()";
    let found = check(&sb, code).await;
    assert_eq!(
        summary(&found),
        vec![(Finding::UnknownCapability, "records.fetch", 2)]
    );
    assert!(
        found[0]
            .message
            .contains("the capabilities under records are: records.get"),
        "{}",
        found[0].message
    );
    // Without the capability, `records` itself is an undefined global.
    assert_eq!(
        summary(&check(&sandbox(), "return records.get(1)").await),
        vec![(Finding::UndefinedGlobal, "records", 1)]
    );
}

#[tokio::test]
async fn undefined_globals_are_reported_unless_assigned_or_built_in() {
    let sb = sandbox();
    let code = "function helper() return 1 end\n\
                counter = 0\n\
                local function bump() counter = counter + 1 end\n\
                return helper(), counter, undefined_name, json, log, parallel, prnit";
    assert_eq!(
        summary(&check(&sb, code).await),
        vec![
            (Finding::UndefinedGlobal, "undefined_name", 4),
            (Finding::UndefinedGlobal, "prnit", 4),
        ]
    );
    // A global assigned after its first read is still the chunk's own.
    assert_eq!(
        check(&sb, "local v = late\nlate = 1\nreturn v").await,
        vec![]
    );
}

#[tokio::test]
async fn env_tricks_silence_undefined_globals() {
    let sb = sandbox();
    // _ENV replaced: names may mean another table.
    assert_eq!(check(&sb, "_ENV = {}\nreturn anything").await, vec![]);
    // A metatable on the globals (from an earlier eval) may define any name.
    let mut session = sb.session(()).await.unwrap();
    session
        .eval("setmetatable(_G, {__index = function() return 1 end})")
        .await
        .unwrap();
    assert_eq!(
        session.check("return anything", "main.lua").await.unwrap(),
        vec![]
    );
}

#[tokio::test]
async fn session_check_reads_the_live_state() {
    let sb = sandbox();
    let mut session = sb.session(()).await.unwrap();
    let code = "return helper(), os.execute";
    assert_eq!(
        summary(&session.check(code, "main.lua").await.unwrap()),
        vec![
            (Finding::UndefinedGlobal, "helper", 1),
            (Finding::Sandboxed, "os.execute", 1),
        ]
    );
    session
        .eval("function helper() end os.execute = function() end")
        .await
        .unwrap();
    assert_eq!(session.check(code, "main.lua").await.unwrap(), vec![]);
    // A check leaves the session usable.
    assert_eq!(
        session.eval("return 1").await.unwrap().values,
        vec![serde_json::json!(1)]
    );
}

#[tokio::test]
async fn nested_functions_report_their_own_lines_in_source_order() {
    let sb = sandbox();
    let code = "local function outer()\n\
                  local function inner()\n\
                    return io.popen('x')\n\
                  end\n\
                  return debug.sethook, inner\n\
                end\n\
                return missing, outer";
    assert_eq!(
        summary(&check(&sb, code).await),
        vec![
            (Finding::Sandboxed, "io.popen", 3),
            (Finding::Sandboxed, "debug.sethook", 5),
            (Finding::UndefinedGlobal, "missing", 7),
        ]
    );
}

#[tokio::test]
async fn lines_past_long_runs_of_code_are_exact() {
    // More than 128 instructions in one function make Lua store absolute
    // line entries; the line must still be the reference's own.
    let sb = sandbox();
    let mut code = String::from("local function f()\nlocal t = {}\n");
    for i in 0..300 {
        code.push_str(&format!("t[{i}] = {i} * 2\n"));
    }
    code.push_str("os.execute(1)\nend\nreturn f");
    assert_eq!(
        summary(&check(&sb, &code).await),
        vec![(Finding::Sandboxed, "os.execute", 303)]
    );
}

#[tokio::test]
async fn globals_past_the_short_constants_are_still_seen() {
    // Past 256 constants, or with a name longer than 40 bytes, Lua reads a
    // global through a register instead of `GETTABUP`.
    let sb = sandbox();
    let mut code = String::from("local t = {}\n");
    code.extend((0..300).map(|i| format!("t[{i}] = 'k{i}'\n")));
    code.push_str("os.execute('x')\nundefined_late = nil\nreturn undefined_late, missing_late\n");
    assert_eq!(
        summary(&check(&sb, &code).await),
        vec![
            (Finding::Sandboxed, "os.execute", 302),
            (Finding::UndefinedGlobal, "missing_late", 304),
        ]
    );
    let long = "a_global_name_that_is_longer_than_forty_bytes";
    let code = format!("local x = {long}\nreturn io.{long}");
    assert_eq!(
        summary(&check(&sb, &code).await),
        vec![(Finding::UndefinedGlobal, long, 1)]
    );
    let code = format!("{long} = 1\nreturn {long}");
    assert_eq!(check(&sb, &code).await, vec![]);
}

#[tokio::test]
async fn globals_through_g_are_globals() {
    let sb = sandbox();
    let code = "_G.helper = function() end\nreturn helper(), _G.os.execute, _G.nothing";
    assert_eq!(
        summary(&check(&sb, code).await),
        vec![
            (Finding::Sandboxed, "os.execute", 2),
            (Finding::UndefinedGlobal, "nothing", 2),
        ]
    );
    // A name computed at run time may define anything.
    let code = "local n = 'hel' .. 'per'\n_G[n] = 1\nreturn helper";
    assert_eq!(check(&sb, code).await, vec![]);
}

#[tokio::test]
async fn the_same_name_on_one_line_is_reported_once() {
    let sb = sandbox();
    let found = check(&sb, "os.execute('a') os.execute('b')\nos.execute('c')").await;
    assert_eq!(
        summary(&found),
        vec![
            (Finding::Sandboxed, "os.execute", 1),
            (Finding::Sandboxed, "os.execute", 2)
        ]
    );
}

#[tokio::test]
async fn syntax_errors_are_still_errors() {
    let e = sandbox()
        .check("os.execute(", "main.lua")
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Syntax);
    assert_eq!(e.line, Some(1));
}

#[tokio::test]
async fn a_chunk_that_would_loop_forever_is_not_run() {
    let sb = sandbox();
    let started = Instant::now();
    let found = check(&sb, "while true do os.execute('x') end").await;
    assert_eq!(summary(&found), vec![(Finding::Sandboxed, "os.execute", 1)]);
    assert!(started.elapsed() < Duration::from_secs(5));
    // Nor is any of it: output and side effects do not happen.
    let mut session = sb.session(()).await.unwrap();
    session
        .check("marker = 1 print('x')", "main.lua")
        .await
        .unwrap();
    assert_eq!(
        session.eval("return marker == nil").await.unwrap().values,
        vec![serde_json::json!(true)]
    );
}

#[tokio::test]
async fn many_findings_are_capped_with_a_note() {
    let sb = sandbox();
    let code: String = (0..250).map(|i| format!("x{i} = undefined{i}\n")).collect();
    let found = check(&sb, &code).await;
    assert_eq!(found.len(), 100);
    assert_eq!(found[99].name, "undefined99");
    assert!(
        found[99]
            .message
            .ends_with("(150 more findings were cut: check reports at most 100)"),
        "{}",
        found[99].message
    );
}

#[tokio::test]
async fn a_huge_chunk_is_analysed_within_the_limits() {
    let sb = sandbox();
    let mut code = String::with_capacity(4 << 20);
    code.push_str("local function f()\nlocal t = {}\n");
    for i in 0..100_000 {
        code.push_str(&format!("t[{}] = (a{} or 0) + 1\n", i % 100, i % 7));
    }
    code.push_str("end return f");
    let found = check(&sb, &code).await;
    // a0..a6, each once per line it appears on, capped.
    assert_eq!(found.len(), 100);
    assert_eq!((found[0].name.as_str(), found[0].line), ("a0", 3));
    assert_eq!((found[99].name.as_str(), found[99].line), ("a1", 102));
    // A chunk over the heap limit is refused as compiling it would be.
    let small = Sandbox::builder()
        .limits(Limits {
            max_memory_bytes: 1 << 20,
            ..Limits::default()
        })
        .build()
        .unwrap();
    let e = small.check(&code, "main.lua").await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::MemoryLimit);
}

#[tokio::test]
async fn odd_chunks_never_break_the_check() {
    let sb = sandbox();
    for code in [
        "",
        "return",
        "#!/usr/bin/lua\nreturn os.execute",
        "\u{feff}return 1",
        "local a <const> = os; return a.execute",
        "local t <close> = nil",
        "goto done ::done::",
        "return ...",
        "return require",
        "return require(os)",
        "return require('a', 'b')",
        "return (require)('socket')",
        "local s = 'require' return _ENV[s]('socket')",
        "return _ENV.os.execute",
        "return _G.os.execute",
        "a.b.c.d.e.f.g.h.i.j.k = 1",
        "return function(...) local _ENV = ... return x end",
    ] {
        let found = sb.check(code, "main.lua").await;
        assert!(found.is_ok(), "{code:?}: {found:?}");
    }
    // Deep nesting of functions.
    let deep = format!(
        "{}x(){}",
        "return function() ".repeat(60),
        " end".repeat(60)
    );
    let found = check(&sb, &deep).await;
    assert_eq!(summary(&found), vec![(Finding::UndefinedGlobal, "x", 1)]);
}

#[tokio::test]
async fn a_check_runs_nothing_of_the_script_not_even_its_finalizers() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    // Finalizers that call a capability, log and print, and re-arm
    // themselves, with the heap more than half full of garbage: a check
    // must not collect, so none of them runs until the next eval.
    struct Count(Arc<AtomicUsize>);
    let sb = moonbox::SandboxBuilder::<Count>::new()
        .limits(Limits {
            max_memory_bytes: 4 << 20,
            ..Limits::default()
        })
        .capability(Capability::sync("probe.hit", |c: &Count, (): ()| {
            Ok::<_, moonbox::CapabilityError>(c.0.fetch_add(1, Ordering::SeqCst))
        }))
        .build()
        .expect("builds");
    let count = Arc::new(AtomicUsize::new(0));
    let mut s = sb.session(Count(count.clone())).await.expect("starts");
    s.eval(
        "collectgarbage('stop')
         local function arm() setmetatable({}, {__gc = function() probe.hit() log('info', 'gc') print('gc') arm() end}) end
         for i = 1, 3 do arm() end
         local ballast = {} for i = 1, 40000 do ballast[i] = {i} end ballast = nil
         return collectgarbage('count')",
    )
    .await
    .expect("sets up");
    let before = count.load(Ordering::SeqCst);
    assert_eq!(before, 0);
    for _ in 0..5 {
        let found = s.check("return 1", "probe.lua").await.expect("checks");
        assert!(found.is_empty());
    }
    assert_eq!(
        count.load(Ordering::SeqCst),
        before,
        "a finalizer ran during a check"
    );
    // The check left the collector as the script set it (stopped); the
    // next eval collects, and the finalizers run there, counted.
    let out = s
        .eval("local stopped = not collectgarbage('isrunning') collectgarbage() return stopped")
        .await
        .expect("runs");
    assert_eq!(out.values, [serde_json::json!(true)]);
    assert!(count.load(Ordering::SeqCst) > before);
    assert!(out.stats.capability_calls > 0);
}

#[tokio::test]
async fn a_chunk_with_more_references_than_the_analysis_keeps_says_so() {
    // Each line reads a global through a path of eight fields: past
    // MAX_REFERENCES the analysis keeps no more, and the last finding says
    // that the rest of the chunk was not read.
    let code = format!(
        "local function f()\n{}end\nreturn 1\n",
        "a.b.c.d.e.f.g.h()\n".repeat(12_000)
    );
    let found = check(&sandbox(), &code).await;
    assert_eq!(found.len(), 100);
    let last = &found[99].message;
    assert!(
        last.ends_with(
            "(the chunk has more than 10000 global references; check read only the first 10000)"
        ),
        "{last}"
    );
    // The same code runs: the analysis never stands in the way of eval.
    let out = sandbox().eval(&code).await.expect("runs");
    assert_eq!(out.values, [serde_json::json!(1)]);
}

/// A long local name captured through many nested functions is written
/// once per function in a full dump (80 MiB here); `check` dumps only the
/// names it reads, so it analyses what `run` runs in the same heap.
#[tokio::test]
async fn check_handles_what_run_handles_with_long_names() {
    let sb = Sandbox::builder()
        .limits(Limits {
            max_memory_bytes: 8 << 20,
            ..Limits::default()
        })
        .build()
        .unwrap();
    let name = "v".repeat(1 << 20);
    let depth = 80;
    let code = format!(
        "local {name} = 1\nlocal f = {}{name}{}\nreturn missing_global ~= f",
        "function() return ".repeat(depth),
        " end".repeat(depth)
    );
    sb.eval(&code).await.expect("run handles it");
    let found = check(&sb, &code).await;
    assert_eq!(
        summary(&found),
        [(Finding::UndefinedGlobal, "missing_global", 3)]
    );
}

/// A chunk of many field assignments: `check` looks up each table's
/// register in one step, so under fuel it needs no more than `run` does.
#[tokio::test]
async fn check_of_a_large_chunk_needs_no_more_fuel_than_running_it() {
    let sb = Sandbox::builder()
        .engine(&moonbox::Engine::shared_metered().unwrap())
        .limits(Limits {
            max_instructions: 100_000_000,
            fuel: Some(4_000_000_000),
            ..Limits::default()
        })
        .build()
        .unwrap();
    let mut code = String::from("local t = {}\n");
    for i in 0..300_000 {
        code.push_str(&format!("t.f{} = {i}\n", i % 100));
    }
    let ran = sb.eval(&code).await.expect("run handles it");
    let fuel = ran.stats.fuel_used.unwrap();
    let strict = Sandbox::builder()
        .engine(&moonbox::Engine::shared_metered().unwrap())
        .limits(Limits {
            max_instructions: 100_000_000,
            fuel: Some(fuel * 2),
            ..Limits::default()
        })
        .build()
        .unwrap();
    assert!(check(&strict, &code).await.is_empty());
}

/// A chunk whose dump would not fit beside a full heap is refused with a
/// plain error, and the session it was checked in goes on: the dump stops
/// at its cap instead of growing the linear memory until the guest traps.
#[tokio::test]
async fn a_chunk_too_large_to_analyse_is_refused_and_the_session_lives() {
    let sb = Sandbox::builder()
        .limits(Limits {
            max_memory_bytes: 16 << 20,
            ..Limits::default()
        })
        .build()
        .unwrap();
    let mut session = sb.session(()).await.unwrap();
    session.eval("kept = 41").await.expect("runs");
    let code = format!("local t = {{}}\n{}", "t.f = 1\n".repeat(700_000));
    let err = session
        .check(&code, "main.lua")
        .await
        .expect_err("too large to analyse");
    assert_eq!(err.kind, ErrorKind::MemoryLimit, "{err:#}");
    assert!(err.to_string().contains("too large to analyse"), "{err:#}");
    let out = session.eval("return kept + 1").await.expect("still live");
    assert_eq!(out.values, [serde_json::json!(42)]);
    // `run` accepts the same chunk in the same heap.
    sb.eval(&code).await.expect("runs");
}
