//! The sandbox rules: every removed name (absent, and explained when
//! called), the safe `debug` functions and the wall behind them, what
//! `allow` restores, standard input and error, and deterministic mode.

use moonbox::{Determinism, ErrorKind, Sandbox};
use serde_json::json;

use crate::support::{assert_usable, fails, sandbox, values};

/// Every name the sandbox removes, with a call that reaches it.
const REMOVED: &[(&str, &str)] = &[
    ("io.popen", "io.popen('ls')"),
    ("os.execute", "os.execute('ls')"),
    ("package.loadlib", "package.loadlib('x', 'y')"),
    ("string.dump", "string.dump(print)"),
    ("debug.debug", "debug.debug()"),
    ("debug.getlocal", "debug.getlocal(1, 1)"),
    ("debug.getregistry", "debug.getregistry()"),
    ("debug.getuservalue", "debug.getuservalue(1)"),
    ("debug.sethook", "debug.sethook()"),
    ("debug.setcstacklimit", "debug.setcstacklimit(100)"),
    ("debug.setlocal", "debug.setlocal(1, 1, 1)"),
    ("debug.setupvalue", "debug.setupvalue(print, 1, 1)"),
    ("debug.setuservalue", "debug.setuservalue(1, 1)"),
    ("debug.upvalueid", "debug.upvalueid(print, 1)"),
    ("debug.upvaluejoin", "debug.upvaluejoin(print, 1, print, 1)"),
];

#[tokio::test]
async fn every_removed_name_is_absent_and_explains_itself_when_called() {
    let sb = sandbox();
    for (name, call) in REMOVED {
        // Feature detection sees nothing there.
        assert_eq!(
            values(&sb, &format!("return {name} == nil")).await,
            [json!(true)],
            "{name}"
        );
        // A script that calls it anyway ends with an error that names it
        // and says how to get it.
        let e = fails(&sb, call, ErrorKind::Sandboxed).await;
        assert_eq!(
            e.message,
            format!(
                "main.lua:1: {name} is sandboxed: it is absent (nil) in this session; do without it, or have the host allow \"{name}\""
            ),
            "for {call}"
        );
        // Caught, it reads as Lua's own error for a name that is absent.
        let field = name.rsplit('.').next().unwrap();
        let caught = values(&sb, &format!("return pcall(function() return {call} end)")).await;
        assert_eq!(
            caught,
            [
                json!(false),
                json!(format!(
                    "main.lua:1: attempt to call a nil value (field '{field}')"
                ))
            ],
            "for {call}"
        );
    }
    assert_usable(&sb).await;
}

#[tokio::test]
async fn only_lua_s_own_call_error_is_explained() {
    let sb = sandbox();
    // The same text raised by the script is its own runtime error.
    let e = fails(
        &sb,
        "error(\"attempt to call a nil value (field 'execute')\")",
        ErrorKind::Runtime,
    )
    .await;
    assert_eq!(
        e.message,
        "main.lua:1: attempt to call a nil value (field 'execute')"
    );
    // A field of the script's own that happens to be nil is not explained
    // unless its name is a removed one.
    let e = fails(&sb, "local t = {} t.run()", ErrorKind::Runtime).await;
    assert_eq!(
        e.message,
        "main.lua:1: attempt to call a nil value (field 'run')"
    );
    // A local that holds a removed name, called, is explained.
    let e = fails(
        &sb,
        "local popen = io.popen\npopen('ls')",
        ErrorKind::Sandboxed,
    )
    .await;
    assert!(
        e.message.starts_with("main.lua:2: io.popen is sandboxed"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn feature_detection_idioms_of_real_libraries_work() {
    let sb = sandbox();
    let code = r#"
        local getmetatable = debug and debug.getmetatable or getmetatable
        local mt = getmetatable(setmetatable({}, {__metatable = "locked"}))
        local where = (debug or {}).getinfo and debug.getinfo(1, "Sl").currentline
        package.path = "./?.lua;" .. package.path
        local has_popen = io.popen ~= nil
        local shell = os.execute ~= nil
        local dump = string.dump ~= nil
        return type(mt), where, package.path, has_popen, shell, dump, debug.gethook()
    "#;
    assert_eq!(
        values(&sb, code).await,
        [
            json!("table"),
            json!(4),
            json!("./?.lua;./?.lua;./?/init.lua"),
            json!(false),
            json!(false),
            json!(false),
            json!(null)
        ]
    );
}

#[tokio::test]
async fn the_safe_debug_functions_reach_only_the_script_s_own_values() {
    let sb = sandbox();
    // getupvalue: a Lua function's upvalues are the script's; a C function's
    // are the sandbox's (the original `load` behind the guarded one), and
    // none is handed out.
    let code = r#"
        local secret = 42
        local function f() return secret end
        local name, value = debug.getupvalue(f, 1)
        local c = {}
        for _, g in ipairs({load, loadfile, dofile, xpcall, require, collectgarbage, string.rep, print, debug.getinfo}) do
            c[#c + 1] = select('#', debug.getupvalue(g, 1))
        end
        return name, value, c
    "#;
    assert_eq!(
        values(&sb, code).await,
        [
            json!("secret"),
            json!(42),
            json!([0, 0, 0, 0, 0, 0, 0, 0, 0])
        ]
    );
    // getinfo: levels count as the script counts them; a C frame's function
    // is left out, a Lua frame's and a function passed in are given.
    let code = r#"
        local function here() return debug.getinfo(1, "nSl"), debug.getinfo(2, "l") end
        local me, caller = here()
        local c_funcs = 0
        load(function()
            for level = 1, 12 do
                local info = debug.getinfo(level, "Sf")
                if info and info.what == "C" and info.func ~= nil then c_funcs = c_funcs + 1 end
            end
            return nil
        end)
        local lua_func = debug.getinfo(1, "f").func ~= nil
        return me.currentline, me.name, me.what, caller.currentline, c_funcs, lua_func,
            debug.getinfo(print, "f").func == print, debug.getinfo(100) == nil
    "#;
    assert_eq!(
        values(&sb, code).await,
        [
            json!(2),
            json!("here"),
            json!("Lua"),
            json!(3),
            json!(0),
            json!(true),
            json!(true),
            json!(true)
        ]
    );
    // getmetatable is the reference's (the sandbox protects nothing with
    // __metatable); setmetatable works on tables only.
    let code = r#"
        local t = setmetatable({}, {__metatable = "locked", tag = 1})
        local mt = debug.getmetatable(t)
        debug.setmetatable(t, {tag = 2})
        return mt.tag, getmetatable(t).tag, debug.getmetatable("").__index == string
    "#;
    assert_eq!(values(&sb, code).await, [json!(1), json!(2), json!(true)]);
    for (code, kind) in [
        ("debug.setmetatable('', {})", "string"),
        ("debug.setmetatable(io.stdout, nil)", "userdata"),
        ("debug.setmetatable(nil, {__index = {}})", "nil"),
        ("debug.setmetatable(print, {})", "function"),
    ] {
        let e = fails(&sb, code, ErrorKind::Sandboxed).await;
        assert_eq!(
            e.message,
            format!(
                "main.lua:1: debug.setmetatable of a {kind} value is sandboxed (tables only); have the host allow \"debug.setmetatable\" for the original"
            )
        );
    }
    assert_usable(&sb).await;
}

#[tokio::test]
async fn the_standard_library_is_the_same_through_require() {
    let sb = sandbox();
    let code = "return require('io') == io, require('debug') == debug, require('os') == os, io.type(io.stderr), io.type(io.stdin), package.path, package.cpath, #package.searchers, type(package.searchpath), package.config";
    assert_eq!(
        values(&sb, code).await,
        [
            json!(true),
            json!(true),
            json!(true),
            json!("file"),
            json!("file"),
            json!("./?.lua;./?/init.lua"),
            json!(""),
            json!(3),
            json!("function"),
            json!("/\n;\n?\n!\n-\n")
        ]
    );
}

#[tokio::test]
async fn standard_input_is_empty_and_standard_error_joins_the_output() {
    let sb = sandbox();
    let code = r##"
        io.write("a\n")
        io.stderr:write("to stderr\n")
        print(io.read(), io.read("a") == "", io.stdin:read("n"), io.lines()())
        print(io.input() == io.stdin, io.stderr:close())
        local chunk = loadfile()
        print(type(chunk), chunk(), select("#", dofile()))
    "##;
    let out = crate::support::ok(&sb, code).await;
    assert_eq!(
        out.output.to_str_lossy(),
        "a\nto stderr\nnil\ttrue\tnil\ntrue\tnil\tcannot close standard file\nfunction\tnil\t0\n"
    );
}

#[tokio::test]
async fn os_exit_ends_the_eval_with_its_code_and_the_session_goes_on() {
    let sb = sandbox();
    let mut session = sb.session(()).await.unwrap();
    let out = session
        .eval("print('before') pcall(os.exit, 3) print('after')")
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.output.to_str_lossy(), "before\n");
    assert_eq!(session.eval("return 1").await.unwrap().values, [json!(1)]);
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
        .allow("os.execute")
        .allow("debug")
        .allow("string.dump")
        .allow("binary-chunks")
        .allow("io.open")
        .build()
        .unwrap();
    let code = r#"
        local f = load(string.dump(function() return 7 end))
        local file, err = io.open("/etc/passwd")
        local ok = pcall(debug.setmetatable, 1, nil)
        return type(os.execute), debug.getinfo(1, "l").currentline, f(), file, err ~= nil, ok
    "#;
    assert_eq!(
        values(&sb, code).await,
        [
            json!("function"),
            json!(5),
            json!(7),
            json!(null),
            json!(true),
            json!(true)
        ]
    );
    // Names not allowed stay sandboxed.
    fails(&sb, "io.popen('ls')", ErrorKind::Sandboxed).await;
    fails(&sb, "debug.sethook()", ErrorKind::Sandboxed).await;
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
async fn the_guest_sees_no_environment_host_files_or_arguments() {
    for sb in [
        sandbox(),
        Sandbox::builder()
            .allow("io")
            .allow("os")
            .allow("package")
            .build()
            .unwrap(),
    ] {
        let code = r#"
            local results = {}
            for _, name in ipairs({"HOME", "PATH", "USER", "AWS_SECRET_ACCESS_KEY"}) do
                results[#results + 1] = os.getenv(name) or false
            end
            results[#results + 1] = io.open("/etc/hostname") == nil
            results[#results + 1] = io.open("../../etc/passwd") == nil
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
    assert_eq!(
        values(&sb, "return debug.sethook == nil").await,
        [json!(true)]
    );
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
