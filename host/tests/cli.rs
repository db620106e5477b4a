//! The `moonbox` binary: every example runs, and every error path exits with
//! the documented code and a message that says what to do.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the host crate sits in the workspace")
        .to_path_buf()
}

fn moonbox(args: &[&str]) -> Output {
    moonbox_with_stdin(args, None)
}

fn moonbox_with_stdin(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_moonbox"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the moonbox binary starts");
    let mut pipe = child.stdin.take().expect("stdin is piped");
    if let Some(bytes) = stdin {
        pipe.write_all(bytes).expect("stdin accepts the script");
    }
    drop(pipe);
    child
        .wait_with_output()
        .expect("the moonbox binary finishes")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn temp_file(name: &str, contents: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("moonbox-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("a temp file");
    path
}

#[test]
fn hello_prints_then_returns_json() {
    let out = moonbox(&["run", "examples/hello.lua"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "hello from Lua 5.4\n[42]\n");
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn records_example_uses_the_capability() {
    let out = moonbox(&[
        "run",
        "--records",
        "examples/records.json",
        "examples/records.lua",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "visits:\t2\n[{\"last_visit\":\"2024-06-11\",\"name\":\"Ada Lovelace\"}]\n"
    );
}

#[test]
fn errors_example_ends_with_a_limit() {
    let out = moonbox(&["run", "examples/errors.lua"]);
    assert_eq!(out.status.code(), Some(3));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            "nil index:\tfalse\terrors.lua:8: attempt to index a nil value (global 'nope')"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("sandboxed:\tfalse\tos.execute is sandboxed"),
        "{stdout}"
    );
    assert!(!stdout.contains("never printed"));
    assert_eq!(
        text(&out.stderr),
        "error[instruction_limit]: errors.lua:15: instruction limit exceeded (max-instructions is 10000000)\n"
    );
}

#[test]
fn modules_example_requires_a_host_module() {
    let out = moonbox(&[
        "run",
        "--module",
        "greet=examples/modules/greet.lua",
        "examples/modules/main.lua",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "hello, moon!\n[true]\n");
}

#[test]
fn runtime_errors_are_one_line_on_stderr_with_exit_1() {
    let out = moonbox_with_stdin(&["run", "-"], Some(b"print('before')\n\nreturn nope.x"));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "before\n");
    assert_eq!(
        text(&out.stderr),
        "error[runtime]: stdin:3: attempt to index a nil value (global 'nope')\n"
    );
    let out = moonbox_with_stdin(&["run", "-"], Some(b"os.execute('ls')"));
    assert_eq!(
        (out.status.code(), text(&out.stderr).as_str()),
        (
            Some(1),
            "error[sandboxed]: stdin:1: os.execute is sandboxed\n"
        )
    );
}

#[test]
fn json_mode_prints_one_object() {
    let out = moonbox(&["run", "--json", "examples/hello.lua"]);
    assert_eq!(out.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(report["ok"], true);
    assert_eq!(report["values"], serde_json::json!([42]));
    assert_eq!(report["output"], serde_json::json!(["hello from Lua 5.4"]));
    assert!(report["stats"]["fuel_used"].as_u64().unwrap() > 0);
    let out = moonbox_with_stdin(&["run", "--json", "-"], Some(b"error('boom')"));
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(report["ok"], false);
    assert_eq!(report["error"]["kind"], "runtime");
    assert_eq!(report["error"]["message"], "stdin:1: boom");
    assert_eq!(report["error"]["line"], 1);
}

#[test]
fn limit_flags_apply_and_exit_3() {
    let cases: &[(&[&str], &[u8], &str)] = &[
        (
            &["--max-instructions", "10000"],
            b"while true do end",
            "error[instruction_limit]",
        ),
        (
            &["--max-call-depth", "50"],
            b"local function f() return 1 + f() end return f()",
            "error[call_depth]",
        ),
        (
            &["--max-string-bytes", "1KiB"],
            b"return ('x'):rep(2000)",
            "error[string_size]",
        ),
        (
            &["--memory", "2MiB"],
            b"local t = {} for i = 1, 1e7 do t[i] = {} end",
            "error[memory_limit]",
        ),
        (
            &["--max-output-bytes", "100"],
            b"for i = 1, 1000 do print(i) end",
            "error[output_limit]",
        ),
        (
            &["--timeout", "200ms", "--fuel", "100000000000"],
            b"return ('a'):rep(28):match(('a?'):rep(28)..('a'):rep(28))",
            "error[timeout]",
        ),
        (
            &["--fuel", "1000000"],
            b"local x = 0 for i = 1, 1e7 do x = x + i end",
            "error[fuel_exhausted]",
        ),
    ];
    for (flags, script, expected) in cases {
        let mut args = vec!["run"];
        args.extend_from_slice(flags);
        args.push("-");
        let out = moonbox_with_stdin(&args, Some(script));
        assert_eq!(
            out.status.code(),
            Some(3),
            "{flags:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).starts_with(expected),
            "{flags:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn allow_and_deterministic_flags() {
    let out = moonbox_with_stdin(
        &["run", "--allow", "os.getenv", "-"],
        Some(b"return os.getenv('HOME')"),
    );
    assert_eq!(
        (out.status.code(), text(&out.stdout).as_str()),
        (Some(0), "[null]\n")
    );
    let script = b"return os.time(), math.random(1, 1000000)";
    let a = moonbox_with_stdin(
        &["run", "--deterministic", "--seed", "5", "-"],
        Some(script),
    );
    let b = moonbox_with_stdin(&["run", "--seed", "5", "-"], Some(script));
    assert_eq!(a.status.code(), Some(0));
    assert_eq!(text(&a.stdout), text(&b.stdout));
    assert!(
        text(&a.stdout).starts_with("[1704067200,"),
        "{}",
        text(&a.stdout)
    );
}

#[test]
fn check_reports_syntax_errors() {
    let out = moonbox(&["check", "examples/hello.lua"]);
    assert_eq!(
        (out.status.code(), text(&out.stderr).as_str()),
        (Some(0), "")
    );
    let out = moonbox_with_stdin(&["check", "-"], Some(b"local x = = 1"));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "error[syntax]: stdin:1: unexpected symbol near '='\n"
    );
}

#[test]
fn tool_schema_describes_the_sandbox_and_capabilities() {
    let out = moonbox(&["tool-schema", "--records", "examples/records.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(schema["name"], "run_lua");
    assert_eq!(
        schema["input_schema"]["required"],
        serde_json::json!(["code"])
    );
    let description = schema["description"].as_str().unwrap();
    assert!(
        description.contains("records.get (1 args)"),
        "{description}"
    );
    assert!(
        description.contains("10000000 Lua instructions"),
        "{description}"
    );
    let out = moonbox(&["tool-schema", "--format", "openai"]);
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(schema["type"], "function");
    assert_eq!(schema["function"]["name"], "run_lua");
}

#[test]
fn bad_input_exits_2_with_a_message_and_no_backtrace() {
    let not_utf8 = temp_file("binary.lua", b"return '\xff\xfe'");
    let corrupt = temp_file("corrupt.json", b"{\"123\": ");
    let not_object = temp_file("list.json", b"[1, 2]");
    let not_utf8 = not_utf8.to_str().unwrap();
    let corrupt = corrupt.to_str().unwrap();
    let not_object = not_object.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["run", "--no-such-flag", "x.lua"],
            "unexpected argument '--no-such-flag'",
        ),
        (vec!["run", "missing.lua"], "cannot read 'missing.lua'"),
        (vec!["run", not_utf8], "is not UTF-8 text"),
        (
            vec!["run", "--records", corrupt, "examples/hello.lua"],
            "records are not valid JSON",
        ),
        (
            vec!["run", "--records", not_object, "examples/hello.lua"],
            "records must be a JSON object",
        ),
        (
            vec!["run", "--records", "nope.json", "examples/hello.lua"],
            "cannot read records 'nope.json'",
        ),
        (
            vec![
                "run",
                "--module",
                "g=examples/modules/greet.lua",
                "--module",
                "g=examples/hello.lua",
                "examples/hello.lua",
            ],
            "module 'g' is given twice",
        ),
        (
            vec!["run", "--module", "broken", "examples/hello.lua"],
            "is not NAME=FILE",
        ),
        (
            vec!["run", "--memory", "lots", "examples/hello.lua"],
            "is not a size",
        ),
        (
            vec!["run", "--timeout", "2 weeks", "examples/hello.lua"],
            "unknown duration unit",
        ),
        (
            vec!["run", "--max-instructions", "0", "examples/hello.lua"],
            "max_instructions must be greater than zero",
        ),
        (
            vec!["run", "--allow", "os.everything", "examples/hello.lua"],
            "unknown sandboxed name 'os.everything'",
        ),
        (
            vec!["tool-schema", "--format", "yaml"],
            "invalid value 'yaml'",
        ),
        (
            vec!["bench", "--sessions", "1000,10"],
            "--sessions must be ascending counts above zero",
        ),
        (vec!["bench", "--samples", "lots"], "invalid value 'lots'"),
    ];
    for (args, needle) in cases {
        let out = moonbox(&args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
            "{args:?}: {stderr}"
        );
    }
}
