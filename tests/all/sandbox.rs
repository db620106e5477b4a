//! The sandbox rules: every removed name, what `allow` restores, and
//! deterministic mode.

use moonbox::{Determinism, ErrorKind, Sandbox};
use serde_json::json;

use crate::support::{assert_usable, fails, sandbox, values};

/// Every name the sandbox removes, with a call that reaches it.
const DENIED: &[(&str, &str)] = &[
    ("io.close", "io.close()"),
    ("io.input", "io.input()"),
    ("io.lines", "io.lines('x')"),
    ("io.open", "io.open('/etc/passwd')"),
    ("io.output", "io.output()"),
    ("io.popen", "io.popen('ls')"),
    ("io.read", "io.read()"),
    ("io.tmpfile", "io.tmpfile()"),
    ("os.execute", "os.execute('ls')"),
    ("os.exit", "os.exit(1)"),
    ("os.getenv", "os.getenv('HOME')"),
    ("os.remove", "os.remove('x')"),
    ("os.rename", "os.rename('a', 'b')"),
    ("os.tmpname", "os.tmpname()"),
    ("package.loadlib", "package.loadlib('x', 'y')"),
    ("package.searchpath", "package.searchpath('x', '?')"),
    ("dofile", "dofile('x.lua')"),
    ("loadfile", "loadfile('x.lua')"),
    ("string.dump", "string.dump(print)"),
    ("debug.debug", "debug.debug()"),
    ("debug.gethook", "debug.gethook()"),
    ("debug.getinfo", "debug.getinfo(1)"),
    ("debug.getlocal", "debug.getlocal(1, 1)"),
    ("debug.getmetatable", "debug.getmetatable('')"),
    ("debug.getregistry", "debug.getregistry()"),
    ("debug.getupvalue", "debug.getupvalue(print, 1)"),
    ("debug.getuservalue", "debug.getuservalue(1)"),
    ("debug.sethook", "debug.sethook()"),
    ("debug.setcstacklimit", "debug.setcstacklimit(100)"),
    ("debug.setlocal", "debug.setlocal(1, 1, 1)"),
    ("debug.setmetatable", "debug.setmetatable(1, {})"),
    ("debug.setupvalue", "debug.setupvalue(print, 1, 1)"),
    ("debug.setuservalue", "debug.setuservalue(1, 1)"),
    ("debug.upvalueid", "debug.upvalueid(print, 1)"),
    ("debug.upvaluejoin", "debug.upvaluejoin(print, 1, print, 1)"),
];

#[tokio::test]
async fn every_denied_name_raises_sandboxed() {
    let sb = sandbox();
    for (name, call) in DENIED {
        let e = fails(&sb, call, ErrorKind::Sandboxed).await;
        assert_eq!(
            e.message,
            format!("main.lua:1: {name} is sandboxed"),
            "for {call}"
        );
        // The same error is catchable, and reads the same way.
        let caught = values(&sb, &format!("return pcall(function() return {call} end)")).await;
        assert_eq!(
            caught,
            [
                json!(false),
                json!(format!("main.lua:1: {name} is sandboxed"))
            ],
            "for {call}"
        );
    }
    assert_usable(&sb).await;
}

#[tokio::test]
async fn removed_libraries_are_replaced_everywhere() {
    let sb = sandbox();
    let code = "return require('io') == io, require('debug') == debug, io.stderr, io.stdin, package.path, package.cpath, #package.searchers, type(debug.traceback)";
    assert_eq!(
        values(&sb, code).await,
        [
            json!(true),
            json!(true),
            json!(null),
            json!(null),
            json!(null),
            json!(null),
            json!(1),
            json!("function")
        ]
    );
}

#[tokio::test]
async fn binary_chunks_are_refused() {
    let sb = sandbox();
    // `load` reports the refusal as it reports any bad chunk: fail, message.
    let v = values(&sb, "return load('\\27Lua\\x54\\0')").await;
    assert_eq!(
        v,
        [json!(null), json!("load of binary chunks is sandboxed")]
    );
    let e = fails(
        &sb,
        "return assert(load('\\27Lua\\x54\\0'))",
        ErrorKind::Sandboxed,
    )
    .await;
    assert_eq!(e.message, "main.lua:1: load of binary chunks is sandboxed");
    // Through a reader function, binary is refused by the load mode.
    let code = "local parts = {'\\27Lua'} return load(function() return table.remove(parts) end, 'b', 'b')";
    assert_eq!(
        values(&sb, code).await,
        [
            json!(null),
            json!("attempt to load a binary chunk (mode is '')")
        ]
    );
}

#[tokio::test]
async fn allow_restores_named_functions_without_granting_the_host() {
    let sb = Sandbox::builder()
        .allow("os.getenv")
        .allow("debug")
        .allow("string.dump")
        .allow("binary-chunks")
        .allow("io.open")
        .build()
        .unwrap();
    let code = r#"
        local f = load(string.dump(function() return 7 end))
        local file, err = io.open("/etc/passwd")
        return os.getenv("HOME"), debug.getinfo(1, "l").currentline, f(), file, err ~= nil
    "#;
    assert_eq!(
        values(&sb, code).await,
        [json!(null), json!(4), json!(7), json!(null), json!(true)]
    );
    // Names not allowed stay sandboxed.
    fails(&sb, "os.execute('ls')", ErrorKind::Sandboxed).await;
    fails(&sb, "io.popen('ls')", ErrorKind::Sandboxed).await;
}

#[tokio::test]
async fn unknown_allow_names_are_a_configuration_error() {
    let err = Sandbox::builder()
        .allow("os.everything")
        .build()
        .unwrap_err();
    assert!(matches!(err, moonbox::Error::Config(_)));
    let text = err.to_string();
    assert!(
        text.contains("unknown sandboxed name 'os.everything'"),
        "{text}"
    );
    assert!(
        text.contains("os.execute"),
        "the message lists the valid names: {text}"
    );
}

#[tokio::test]
async fn deterministic_mode_fixes_clock_and_random() {
    let sb = Sandbox::builder()
        .deterministic(Determinism {
            clock: 1_700_000_000,
            seed: 7,
        })
        .build()
        .unwrap();
    let code = "return os.time(), os.date('!%Y-%m-%d %H:%M:%S'), math.random(1, 1000000), math.random(), os.clock() < 1";
    let first = values(&sb, code).await;
    assert_eq!(first[0], json!(1_700_000_000));
    assert_eq!(first[1], json!("2023-11-14 22:13:20"));
    assert_eq!(first[4], json!(true));
    for _ in 0..3 {
        assert_eq!(values(&sb, code).await, first);
    }
    let other_seed = Sandbox::builder()
        .deterministic(Determinism {
            clock: 1_700_000_000,
            seed: 8,
        })
        .build()
        .unwrap();
    assert_ne!(values(&other_seed, code).await[2], first[2]);
    // os.time with a table still computes.
    assert_eq!(
        values(
            &sb,
            "return os.time({year = 2000, month = 1, day = 1, hour = 0})"
        )
        .await,
        [json!(946684800)]
    );
}

#[tokio::test]
async fn real_clock_without_deterministic_mode() {
    let sb = sandbox();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let v = values(&sb, "return os.time(), os.clock() >= 0").await;
    let t = v[0].as_i64().unwrap();
    assert!((t - now).abs() < 60, "os.time() = {t}, host says {now}");
    assert_eq!(v[1], json!(true));
}

#[tokio::test]
async fn the_guest_sees_no_environment_files_or_arguments() {
    let sb = Sandbox::builder()
        .allow("os.getenv")
        .allow("io")
        .allow("dofile")
        .allow("package")
        .build()
        .unwrap();
    let code = r#"
        local results = {}
        for _, name in ipairs({"HOME", "PATH", "USER", "AWS_SECRET_ACCESS_KEY"}) do
            results[#results + 1] = os.getenv(name) or false
        end
        results[#results + 1] = io.open("/etc/hostname") == nil
        results[#results + 1] = io.open(".") == nil
        results[#results + 1] = (pcall(dofile, "/etc/passwd")) == false
        results[#results + 1] = io.popen == nil or (pcall(io.popen, "ls")) == false
        results[#results + 1] = arg == nil
        return results
    "#;
    assert_eq!(
        values(&sb, code).await,
        [json!([
            false, false, false, false, true, true, true, true, true
        ])]
    );
}

#[tokio::test]
async fn only_the_c_locale_exists() {
    let sb = sandbox();
    let v = values(
        &sb,
        "return os.setlocale('pt_BR'), os.setlocale('C'), os.setlocale(), tonumber('3,4')",
    )
    .await;
    assert_eq!(v, [json!(null), json!("C"), json!("C"), json!(null)]);
}

#[tokio::test]
async fn allowing_debug_needs_sethook_named_and_a_script_hook_cannot_lift_the_limit() {
    let sb = Sandbox::builder().allow("debug").build().unwrap();
    assert_eq!(values(&sb, "return debug.gethook()").await, [json!(null)]);
    fails(&sb, "debug.sethook()", ErrorKind::Sandboxed).await;
    let hooked = Sandbox::builder()
        .allow("debug")
        .allow("debug.sethook")
        .limits(moonbox::Limits {
            max_instructions: 100_000,
            ..moonbox::Limits::default()
        })
        .build()
        .unwrap();
    // A script's line and count hooks run as in the reference interpreter.
    let v = values(&hooked, "local n, c = 0, 0\ndebug.sethook(function(e) if e == 'count' then c = c + 1 else n = n + 1 end end, 'l', 10)\nfor i = 1, 100 do end\nlocal x = 1\ndebug.sethook()\nreturn n > 0, c >= 20, debug.gethook()").await;
    assert_eq!(v, [json!(true), json!(true), json!(null)]);
    // Neither replacing nor clearing the hooks turns the limit off: it is
    // not a hook.
    for code in [
        "debug.sethook() while true do end",
        "debug.sethook(function() end, '', 1000000) while true do end",
        "debug.sethook(function() end, 'l') while true do end",
    ] {
        fails(&hooked, code, ErrorKind::InstructionLimit).await;
    }
}

#[tokio::test]
async fn io_write_and_stdout_write_to_the_output_by_default() {
    let sb = sandbox();
    let code = r#"
        io.write('a', 1, 2.5, '\n')
        local f = io.stdout:write('b'):write('c', '\n')
        print(f == io.stdout, io.type(io.stdout), io.type(42), io.write() == io.stdout)
        print(io.stdout:flush(), io.flush(), io.stdout:setvbuf('no'))
        print(io.stdout:close())
        print(pcall(io.stdout.seek, io.stdout, 'set'))
    "#;
    let out = crate::support::ok(&sb, code).await;
    let text = out.output.to_str_lossy().into_owned();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("a12.5"));
    assert_eq!(lines.next(), Some("bc"));
    assert_eq!(lines.next(), Some("true\tfile\tnil\ttrue"));
    assert_eq!(lines.next(), Some("true\ttrue\ttrue"));
    assert_eq!(lines.next(), Some("nil\tcannot close standard file"));
    // The stream cannot seek; the file object says so, as for a pipe.
    assert!(lines.next().is_some_and(|l| l.starts_with("true\tnil\t")));
    // Reading and opening stay sandboxed.
    for code in ["io.read()", "io.open('x')", "io.lines()", "io.output('x')"] {
        fails(&sb, code, ErrorKind::Sandboxed).await;
    }
}

#[tokio::test]
async fn print_and_io_write_interleave_as_in_lua() {
    let sb = sandbox();
    let out = crate::support::ok(
        &sb,
        r"io.write('1') print('2', '3') io.stdout:write('4') print() io.write('\0\255')",
    )
    .await;
    assert_eq!(out.output.as_bytes(), b"12\t3\n4\n\0\xff");
}
