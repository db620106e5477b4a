//! Error fidelity: for a corpus of erroring chunks, moonbox's message equals
//! what the reference `lua5.4` prints for the same chunk name.

use std::process::Command;

use crate::support::sandbox;

/// Chunks that fail at compile time or at run time, as the suite checks them,
/// and a failing call of every function the sandbox wraps.
const CHUNKS: &[&str] = &[
    "return nope.x",
    "local t = {} return t.a.b",
    "return #nil",
    "return -{}",
    "return {} .. 'x'",
    "return 1 + {}",
    "return 'a' + 1",
    "return 1 < 'x'",
    "return {} < {}",
    "return 1 // 0",
    "return 1 % 0",
    "return math.maxinteger + 1.5 | 0",
    "return 2^63 | 0",
    "return ('x'):bad()",
    "local s = 'x' return s.y.z",
    "error('plain')",
    "error('no position', 0)",
    "error('level two', 2)",
    "local function f() error('deep') end f()",
    "error()",
    "error(setmetatable({}, {__tostring = function() return 'custom' end}))",
    "string.rep()",
    "string.rep('x', 'y')",
    "('x'):rep({})",
    "table.concat({1, {}, 3})",
    "table.insert({}, 1, 2, 3)",
    "setmetatable(1, {})",
    "tostring()",
    "select(0)",
    "string.format('%d', 1.5)",
    "string.char(256)",
    "utf8.char(-1)",
    "math.random(2, 1)",
    "for i = 1, 10, 0 do end",
    "for i = 'a', 2 do end",
    "local t = setmetatable({}, {__index = function(t, k) error('idx ' .. k) end}) return t.foo",
    "local t = setmetatable({}, {__newindex = 'oops'}) t.x = 1",
    "coroutine.wrap(function() error('in co') end)()",
    "coroutine.yield()",
    "goto nowhere",
    "x = = 1",
    "local 1 = 2",
    "return (",
    "for i = 1 do end",
    "if true then",
    "return 'unfinished",
    "return [[unfinished",
    "break",
    "local x <const> = 1; x = 2",
    "return 0x",
    "return 1e",
    "return '\\q'",
    "return '\\300'",
    "::a:: ::a::",
    "local function f(...) return function() return ... end end",
    // Every function the sandbox wraps or replaces, failing as the script
    // would make it fail: the message must still name the function and the
    // caller's line, in both modes.
    "os.date('%Ez', 0)",
    "return os.date({})",
    "os.time({})",
    "os.time('x')",
    "os.time({year = 2024})",
    "os.setlocale('C', 'bad')",
    "os.setlocale({})",
    "os.clock(1, 2) return nil .. 1",
    "math.random('x')",
    "math.random(1, 2, 3)",
    "math.randomseed('x')",
    "print(setmetatable({}, {__tostring = function() return {} end}))",
    "require()",
    "load(1, 2, 3, 4) return nil + 1",
    "load({})",
    "load('x', 'name', 'q') return nil .. 1",
    "collectgarbage('bad')",
    "collectgarbage('step', 'x')",
    "collectgarbage('incremental', 'x')",
    "string.rep('x', 2, {})",
    "string.rep('x', 1e15)",
    "coroutine.create(1)",
    "coroutine.wrap(1)",
    "coroutine.resume(1)",
    "coroutine.close(1)",
    "coroutine.close(coroutine.running())",
    "coroutine.status(1)",
    "xpcall(1)",
    "xpcall(print, 1)",
    "pcall()",
    "select('x')",
];

/// The first line `lua5.4` prints for `code` saved as `chunk.lua`, without its
/// program-name prefix.
fn reference_message(dir: &std::path::Path, code: &str) -> String {
    let path = dir.join("chunk.lua");
    std::fs::write(&path, code).expect("a temp file");
    let out = Command::new("lua5.4")
        .arg("chunk.lua")
        .current_dir(dir)
        .output()
        .expect("lua5.4 is installed (the .ci/run script installs it from apt)");
    assert!(!out.status.success(), "lua5.4 accepted {code:?}");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let message = stderr
        .split("\nstack traceback:")
        .next()
        .unwrap_or_default();
    message
        .strip_prefix("lua5.4: ")
        .unwrap_or(message)
        .trim_end()
        .to_owned()
}

#[tokio::test]
#[ignore = "needs ../shared/lua-5.4-tests and lua5.4; run with `just compat`"]
async fn messages_match_the_reference_interpreter() {
    check_messages(sandbox(), "default").await;
}

/// Deterministic mode changes no message.
#[tokio::test]
#[ignore = "needs ../shared/lua-5.4-tests and lua5.4; run with `just compat`"]
async fn messages_match_in_deterministic_mode() {
    let sb = moonbox::Sandbox::builder()
        .deterministic(moonbox::Determinism::default())
        .build()
        .expect("the deterministic sandbox builds");
    check_messages(sb, "deterministic").await;
}

async fn check_messages(sb: moonbox::Sandbox, mode: &str) {
    let dir = std::env::temp_dir().join(format!("moonbox-fidelity-{mode}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let mut mismatches = Vec::new();
    for code in CHUNKS {
        let expected = reference_message(&dir, code);
        let mut session = sb.session(()).await.expect("a session");
        let got = match session.eval_chunk(code, "chunk.lua").await {
            Ok(out) => format!("(no error; returned {:?})", out.values),
            Err(e) => e.message,
        };
        if got != expected {
            mismatches.push(format!(
                "{code:?}\n   lua5.4:  {expected}\n  moonbox:  {got}"
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} messages differ ({mode} mode):\n{}",
        mismatches.len(),
        CHUNKS.len(),
        mismatches.join("\n")
    );
}
