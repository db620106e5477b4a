//! Basic evaluation: values, output, errors and their positions, and the
//! parts of Lua 5.4 scripts lean on.

use moonbox::ErrorKind;
use serde_json::json;

use crate::support::{fails, ok, sandbox, values};

#[tokio::test]
async fn returns_values_and_captures_print() {
    let sb = sandbox();
    let out = ok(
        &sb,
        "print('a', 1, nil, true, 2.5) print() return 1, 'two', nil",
    )
    .await;
    assert_eq!(out.output, "a\t1\tnil\ttrue\t2.5\n\n");
    assert_eq!(out.values, [json!(1), json!("two"), json!(null)]);
    assert!(ok(&sb, "local x = 1").await.values.is_empty());
}

#[tokio::test]
async fn error_comes_back_as_an_error_and_pcall_catches_it() {
    let sb = sandbox();
    let e = fails(&sb, "error('x')", ErrorKind::Runtime).await;
    assert_eq!(e.message, "main.lua:1: x");
    assert_eq!((e.chunk.as_str(), e.line), ("main.lua", Some(1)));
    assert!(
        e.traceback
            .as_deref()
            .is_some_and(|t| t.starts_with("stack traceback:"))
    );
    assert_eq!(
        values(&sb, "return pcall(error, 'x')").await,
        [json!(false), json!("x")]
    );
    assert_eq!(
        values(&sb, "return pcall(error, 'x', 0)").await,
        [json!(false), json!("x")]
    );
}

#[tokio::test]
async fn messages_carry_chunk_and_line() {
    let sb = sandbox();
    let e = fails(&sb, "local a = 1\n\nreturn nope.x", ErrorKind::Runtime).await;
    assert_eq!(
        e.message,
        "main.lua:3: attempt to index a nil value (global 'nope')"
    );
    assert_eq!(e.line, Some(3));
    let e = fails(&sb, "x = = 1", ErrorKind::Syntax).await;
    assert_eq!(e.message, "main.lua:1: unexpected symbol near '='");
    assert_eq!(e.traceback, None);
    let mut session = sb.session(()).await.unwrap();
    let e = session
        .eval_chunk("\nerror('boom')", "tool.lua")
        .await
        .unwrap_err();
    assert_eq!(
        (e.message.as_str(), e.chunk.as_str(), e.line),
        ("tool.lua:2: boom", "tool.lua", Some(2))
    );
}

#[tokio::test]
async fn non_string_error_values_are_rendered_like_lua_c() {
    let sb = sandbox();
    let e = fails(&sb, "error({code = 1})", ErrorKind::Runtime).await;
    assert_eq!(e.message, "(error object is a table value)");
    let e = fails(
        &sb,
        "error(setmetatable({}, {__tostring = function() return 'custom' end}))",
        ErrorKind::Runtime,
    )
    .await;
    assert_eq!(e.message, "custom");
    let e = fails(&sb, "error(42)", ErrorKind::Runtime).await;
    assert_eq!(e.message, "42");
    let e = fails(&sb, "error()", ErrorKind::Runtime).await;
    assert_eq!(e.message, "(error object is a nil value)");
}

#[tokio::test]
async fn check_reports_syntax_errors_as_errors() {
    let sb = sandbox();
    assert_eq!(sb.check("while true do end", "x.lua").await, Ok(vec![]));
    let e = sb.check("for i = 1 do end", "x.lua").await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Syntax);
    assert_eq!(e.message, "x.lua:1: ',' expected near 'do'");
    assert_eq!(e.line, Some(1));
}

#[tokio::test]
async fn coroutines_work() {
    let sb = sandbox();
    let code = r#"
        local gen = coroutine.wrap(function(n)
            for i = 1, n do coroutine.yield(i * i) end
            return "done"
        end)
        local out = { gen(3), gen(), gen(), gen() }
        local co = coroutine.create(function() error("inside") end)
        local ok, err = coroutine.resume(co)
        return out, ok, err, coroutine.status(co), coroutine.isyieldable()
    "#;
    assert_eq!(
        values(&sb, code).await,
        [
            json!([1, 4, 9, "done"]),
            json!(false),
            json!("main.lua:7: inside"),
            json!("dead"),
            json!(false)
        ]
    );
    let code = "local co = coroutine.create(function() coroutine.yield() end) coroutine.resume(co) return coroutine.close(co), coroutine.running() ~= nil";
    assert_eq!(values(&sb, code).await, [json!(true), json!(true)]);
}

#[tokio::test]
async fn patterns_and_format() {
    let sb = sandbox();
    let code = r#"
        local words = {}
        for w in ("the quick  brown fox"):gmatch("%a+") do words[#words + 1] = w end
        return words,
            ("hello world"):gsub("o", "0"),
            ("key = value"):match("^(%w+)%s*=%s*(%w+)$"),
            string.format("%5.2f|%-4d|%x|%q|%s", 3.14159, 7, 255, "a\nb", {} ~= nil),
            ("%d items"):format(3)
    "#;
    assert_eq!(
        values(&sb, code).await,
        [
            json!(["the", "quick", "brown", "fox"]),
            json!("hell0 w0rld"),
            json!("key"),
            json!(" 3.14|7   |ff|\"a\\\nb\"|true"),
            json!("3 items")
        ]
    );
}

#[tokio::test]
async fn goto_integers_floats_and_utf8() {
    let sb = sandbox();
    let code = r#"
        local n = 0
        ::again:: n = n + 1
        if n < 3 then goto again end
        return n, math.type(1), math.type(1.0), 7 // 2, 7.0 // 2, 2^53, math.maxinteger + 1 == math.mininteger,
            utf8.char(72, 228, 8364), utf8.len("häll€"), 1e100, 0.1 + 0.2
    "#;
    assert_eq!(
        values(&sb, code).await,
        [
            json!(3),
            json!("integer"),
            json!("float"),
            json!(3),
            json!(3.0),
            json!(9007199254740992.0),
            json!(true),
            json!("Hä€"),
            json!(5),
            json!(1e100),
            json!(0.30000000000000004)
        ]
    );
}

#[tokio::test]
async fn require_loads_host_modules_with_caching() {
    let sb = moonbox::Sandbox::builder()
        .module(
            "counter",
            "local M = { n = 0 } function M.bump() M.n = M.n + 1 return M.n end return M",
        )
        .module("broken_at_runtime", "error('module failed')")
        .build()
        .unwrap();
    let code = "local a = require('counter') local b = require('counter') a.bump() return a == b, b.n, package.loaded.counter == a";
    assert_eq!(
        values(&sb, code).await,
        [json!(true), json!(1), json!(true)]
    );
    let e = fails(&sb, "require('nothere')", ErrorKind::Runtime).await;
    assert_eq!(
        e.message,
        "main.lua:1: module 'nothere' not found:\n\tno field package.preload['nothere']\n\tno file './nothere.lua'\n\tno file './nothere/init.lua'"
    );
    let e = fails(&sb, "require('broken_at_runtime')", ErrorKind::Runtime).await;
    assert_eq!(e.message, "broken_at_runtime:1: module failed");
    assert_eq!((e.chunk.as_str(), e.line), ("broken_at_runtime", Some(1)));
}

#[tokio::test]
async fn modules_that_do_not_compile_are_a_configuration_error() {
    let err = moonbox::Sandbox::builder()
        .module("bad", "return (")
        .build()
        .unwrap_err();
    assert!(matches!(err, moonbox::Error::Config(_)), "{err}");
    assert_eq!(
        err.to_string(),
        "invalid sandbox configuration: module 'bad' does not compile: bad:1: unexpected symbol near <eof>"
    );
    let err = moonbox::Sandbox::builder()
        .module("m", "return 1")
        .module("m", "return 2")
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid sandbox configuration: module 'm' is registered twice"
    );
}

#[tokio::test]
async fn load_of_text_keeps_its_env_argument() {
    let sb = sandbox();
    let code = "local env = { x = 5 } local f = load('return x', 'c', 't', env) return f(), load('return (', '=c')";
    assert_eq!(
        values(&sb, code).await,
        [
            json!(5),
            json!(null),
            json!("c:1: unexpected symbol near <eof>")
        ]
    );
    assert_eq!(
        values(&sb, "return load(function() return nil end) ~= nil").await,
        [json!(true)]
    );
}

#[tokio::test]
async fn xpcall_keeps_reference_behaviour() {
    let sb = sandbox();
    let code = r#"
        local co = coroutine.wrap(function()
            return xpcall(function() coroutine.yield("paused") return "resumed" end, debug.traceback)
        end)
        local first = co()
        local ok, value = co()
        local caught, msg = xpcall(function() error("bad") end, function(m) return "handled: " .. m end)
        return first, ok, value, caught, msg, xpcall(function(a, b) return a + b end, print, 2, 3)
    "#;
    assert_eq!(
        values(&sb, code).await,
        [
            json!("paused"),
            json!(true),
            json!("resumed"),
            json!(false),
            json!("handled: main.lua:7: bad"),
            json!(true),
            json!(5)
        ]
    );
    let e = fails(&sb, "xpcall(print)", ErrorKind::Runtime).await;
    assert_eq!(
        e.message,
        "main.lua:1: bad argument #2 to 'xpcall' (function expected, got no value)"
    );
}

/// The description a model reads states limits in units that keep their
/// value, and tells the truth about `io`.
#[tokio::test]
async fn the_tool_description_states_limits_and_io_truthfully() {
    let sb = moonbox::Sandbox::builder()
        .limits(moonbox::Limits {
            max_string_bytes: 1024,
            max_output_bytes: 1536,
            ..moonbox::Limits::default()
        })
        .build()
        .unwrap();
    let d = moonbox::tool::description(&sb);
    assert!(d.contains("strings up to 1 KiB"), "{d}");
    assert!(d.contains("1.5 KiB of output"), "{d}");
    assert!(d.contains("64 MiB of memory"), "{d}");
    assert!(
        d.contains("io.open, io.lines, loadfile, dofile, require, os.remove, os.rename and os.tmpname work on the session's own files"),
        "{d}"
    );
    assert!(d.contains("no host file is reachable"), "{d}");
    assert!(d.contains("(io.popen, os.execute, string.dump"), "{d}");
    let sb = moonbox::Sandbox::builder().allow("io").build().unwrap();
    let d = moonbox::tool::description(&sb);
    assert!(d.contains("Also allowed: io."), "{d}");
    // The result is the report.
    let result = moonbox::tool::result(&sb.eval("print('x') error('boom')").await);
    assert_eq!(result["ok"], false);
    assert_eq!(result["output"], "x\n");
    assert_eq!(
        result["error"]["summary"],
        "error[runtime]: main.lua:1: boom"
    );
}
