//! The `moonbox` binary: every example runs, and every error path exits with
//! the documented code and a message that says what to do.
//!
//! One test executable for the binary: `serve` runs `moonbox serve` as a
//! process, and `nats` the scale-out on a real `nats-server`. The NATS tests
//! are ignored unless asked for (`just nats-test`, which fails unless all of
//! them ran), because they need `nats-server`.

mod files;
mod mcp;
mod nats;
mod serve;

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

/// The binary started with `args`, its three standard streams piped.
fn moonbox_piped(args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_moonbox"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the moonbox binary starts")
}

fn moonbox_with_stdin(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = moonbox_piped(args);
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
fn orchestrate_example_fans_out_logs_and_encodes_json() {
    let out = moonbox(&[
        "run",
        "--records",
        "examples/records.json",
        "examples/orchestrate.lua",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "[{\"id\":\"123\",\"name\":\"Ada Lovelace\",\"visits\":2},\
         {\"id\":\"456\",\"name\":\"Charles Babbage\",\"visits\":0}]\n[2]\n"
    );
    assert_eq!(text(&out.stderr), "[warn] no record  id=\"789\"\n");
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
        stdout.contains(
            "sandboxed (absent):\tfalse\terrors.lua:10: attempt to call a nil value (field 'execute')"
        ),
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
            "error[sandboxed]: stdin:1: os.execute is sandboxed: it is absent (nil) in this session; do without it, or have the host allow \"os.execute\"\n"
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
    assert_eq!(report["output"], "hello from Lua 5.4\n");
    assert_eq!(report["version"], 1);
    // Fuel is metered only with --fuel or --deterministic.
    assert_eq!(report["stats"]["fuel_used"], serde_json::Value::Null);
    for flags in [&["--fuel", "100000000"][..], &["--deterministic"]] {
        let mut args = vec!["run", "--json"];
        args.extend_from_slice(flags);
        args.push("examples/hello.lua");
        let out = moonbox(&args);
        let report: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("one JSON object");
        assert!(
            report["stats"]["fuel_used"].as_u64().unwrap() > 0,
            "{flags:?}"
        );
    }
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
            &["--max-memory-bytes", "2MiB"],
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
        // An outer-wall stop names the flag that sets its limit.
        if let Some(flag) = match *expected {
            "error[timeout]" => Some("--timeout"),
            "error[fuel_exhausted]" => Some("--fuel"),
            _ => None,
        } {
            assert!(
                text(&out.stderr)
                    .lines()
                    .any(|l| l.starts_with("note: ") && l.contains(flag)),
                "{flags:?}: {}",
                text(&out.stderr)
            );
        }
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
fn check_prints_warnings_and_strict_fails_on_them() {
    let code =
        b"local f = io.popen('x')\nlocal s = require('socket')\nreturn prnit, records.fetch(1)";
    let out = moonbox_with_stdin(&["check", "-"], Some(code));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 4, "{stderr}");
    assert!(
        lines[0].starts_with("stdin:1: warning[sandboxed]: io.popen is sandboxed"),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with("stdin:2: warning[unknown_module]: require(\"socket\")"),
        "{stderr}"
    );
    assert!(
        lines[2].starts_with("stdin:3: warning[undefined_global]: prnit "),
        "{stderr}"
    );
    assert!(
        lines[3].starts_with("stdin:3: warning[undefined_global]: records "),
        "{stderr}"
    );
    let out = moonbox_with_stdin(&["check", "--strict", "-"], Some(code));
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(text(&out.stderr), stderr);
    // The sandbox flags change the findings: io allowed, a records file.
    let records = temp_file("check_records.json", br#"{"a": 1}"#);
    let out = moonbox_with_stdin(
        &[
            "check",
            "--strict",
            "--allow",
            "io",
            "--records",
            records.to_str().unwrap(),
            "-",
        ],
        Some(code),
    );
    assert_eq!(out.status.code(), Some(4));
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("io.popen"), "{stderr}");
    assert!(
        stderr.contains("stdin:3: warning[unknown_capability]: records.fetch is not a capability"),
        "{stderr}"
    );
    // Clean code passes --strict; a syntax error is still exit 1.
    let out = moonbox_with_stdin(&["check", "--strict", "-"], Some(b"local x = 1 return x"));
    assert_eq!(
        (out.status.code(), text(&out.stderr).as_str()),
        (Some(0), "")
    );
    let out = moonbox_with_stdin(&["check", "--strict", "-"], Some(b"os.execute("));
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn inputs_reach_the_script_as_globals_and_bad_ones_are_refused() {
    let script = temp_file("inputs.lua", b"return n + 1, user.name, s");
    let script = script.to_str().unwrap();
    let out = moonbox(&[
        "run",
        "--input",
        "n=41",
        "--input",
        r#"user={"name": "Ada"}"#,
        "--input",
        r#"s="') os.exit(9) --""#,
        script,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[42,\"Ada\",\"') os.exit(9) --\"]\n");
    // A name Lua cannot take is the script's error (exit 1), naming it.
    let out = moonbox(&["run", "--input", "end=1", script]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("'end'"), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("note:"));
    // A value that is not JSON is a usage error (exit 2).
    let out = moonbox(&["run", "--input", "s=plain text", script]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("is not JSON"),
        "{}",
        text(&out.stderr)
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
        description.contains("records.get(id: string) -> table?: "),
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
    assert_eq!(schema["function"]["strict"], true);
    let out = moonbox(&["tool-schema", "--format", "openai-responses"]);
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(schema["name"], "run_lua");
    assert_eq!(schema["strict"], true);
    let out = moonbox(&["tool-schema", "--format", "mcp"]);
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(schema["inputSchema"]["type"], "object");
    assert_eq!(
        schema["outputSchema"]["properties"]["ok"]["type"],
        "boolean"
    );
}

#[test]
fn bad_input_exits_2_with_a_message_and_no_backtrace() {
    let corrupt = temp_file("corrupt.json", b"{\"123\": ");
    let not_object = temp_file("list.json", b"[1, 2]");
    let corrupt = corrupt.to_str().unwrap();
    let not_object = not_object.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["run", "--no-such-flag", "x.lua"],
            "unexpected argument '--no-such-flag'",
        ),
        (
            vec!["run", "missing.lua"],
            "cannot read the script 'missing.lua'",
        ),
        (vec!["run", "examples"], "it is a directory"),
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
            "cannot read the records 'nope.json'",
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
            vec!["run", "--max-memory-bytes", "lots", "examples/hello.lua"],
            "is not a size",
        ),
        (
            vec!["run", "--timeout", "2 weeks", "examples/hello.lua"],
            "unknown duration unit",
        ),
        (
            vec!["run", "--max-instructions", "0", "examples/hello.lua"],
            "invalid value '0' for '--max-instructions <N>'",
        ),
        (
            vec![
                "run",
                "--timeout",
                "18446744073709551615s",
                "examples/hello.lua",
            ],
            "longer than the most allowed, 24h",
        ),
        (
            vec![
                "run",
                "--max-call-depth",
                "99999999999",
                "examples/hello.lua",
            ],
            "invalid value '99999999999' for '--max-call-depth <N>'",
        ),
        (
            vec!["run", "--max-memory-bytes", "5GiB", "examples/hello.lua"],
            "larger than the most allowed, 4GiB",
        ),
        (
            vec!["run", "--max-memory-bytes", "2GiB", "examples/hello.lua"],
            "limit max_memory_bytes must be at most 1073741824",
        ),
        (
            vec![
                "run",
                "--module",
                "string=examples/hello.lua",
                "examples/hello.lua",
            ],
            "module 'string' has the name of a standard library",
        ),
        (
            vec!["run", "--fuel", "1", "examples/hello.lua"],
            "limit fuel (1) is too small to start a session",
        ),
        (
            vec![
                "run",
                "--timeout",
                "1ms",
                "--fuel",
                "1",
                "examples/hello.lua",
            ],
            "too small to start a session",
        ),
        (
            vec!["run", "--max-string-bytes", "100", "examples/hello.lua"],
            "limit max_string_bytes must be at least 1024, got 100",
        ),
        (
            vec!["run", "--max-script-bytes", "10", "examples/hello.lua"],
            "is larger than 10 bytes; raise --max-script-bytes",
        ),
        (
            vec!["run", "/dev/zero"],
            "is larger than 16777216 bytes; raise --max-script-bytes",
        ),
        (
            vec!["run", "--allow", "os.everything", "examples/hello.lua"],
            "unknown sandboxed name 'os.everything'",
        ),
        (
            vec!["tool-schema", "--format", "yaml"],
            "invalid value 'yaml'",
        ),
        // The benchmark is its own binary, moonbox-bench, not a command.
        (vec!["bench"], "unrecognized subcommand 'bench'"),
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

/// Runs the binary with stdout connected to `stdout`.
fn moonbox_to(args: &[&str], stdout: Stdio) -> Output {
    Command::new(env!("CARGO_BIN_EXE_moonbox"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("the moonbox binary runs")
}

#[test]
fn source_and_output_are_bytes() {
    // Latin-1 in a string literal and a comment, as the official suite's
    // strings.lua has: the source is not UTF-8 and still runs, and what the
    // script writes reaches stdout byte for byte.
    let script = temp_file(
        "latin1.lua",
        b"-- caf\xe9\nio.write('\xe9\\0\\255', '\\n') print(#'\xe9')\n",
    );
    let out = moonbox(&["run", script.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(out.stdout, b"\xe9\x00\xff\n1\n");
    // The JSON form says what it replaced and carries the exact bytes.
    let out = moonbox(&["run", "--json", script.to_str().unwrap()]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(report["output"], "\u{fffd}\u{0}\u{fffd}\n1\n");
    assert_eq!(report["output_base64"], "6QD/CjEK");
}

#[test]
fn a_bom_and_a_shebang_line_are_accepted_as_lua_accepts_them() {
    let script = temp_file(
        "shebang.lua",
        b"\xef\xbb\xbf#!/usr/bin/env lua\nprint('ok') error('at line 3', 1)\n",
    );
    let out = moonbox(&["run", script.to_str().unwrap()]);
    assert_eq!(text(&out.stdout), "ok\n");
    assert_eq!(
        text(&out.stderr),
        "error[runtime]: shebang.lua:2: at line 3\n",
        "line numbers count the skipped first line"
    );
}

#[test]
fn a_stop_keeps_what_the_script_printed() {
    let script = temp_file(
        "slow.lua",
        b"print('step 1') io.write('step 2 ') while true do end",
    );
    let path = script.to_str().unwrap();
    for (flags, kind, code) in [
        (
            vec!["--max-instructions", "1000000"],
            "instruction_limit",
            3,
        ),
        (
            vec!["--max-instructions", "1000000000000", "--fuel", "50000000"],
            "fuel_exhausted",
            3,
        ),
        (
            vec!["--max-instructions", "1000000000000", "--timeout", "300ms"],
            "timeout",
            3,
        ),
    ] {
        let mut args = vec!["run"];
        args.extend(&flags);
        args.push(path);
        let out = moonbox(&args);
        assert_eq!(out.status.code(), Some(code), "{flags:?}");
        assert_eq!(text(&out.stdout), "step 1\nstep 2 ", "{flags:?}");
        assert!(
            text(&out.stderr).starts_with(&format!("error[{kind}]")),
            "{flags:?}"
        );

        let mut args = vec!["run", "--json"];
        args.extend(&flags);
        args.push(path);
        let out = moonbox(&args);
        let report: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("one JSON object");
        assert_eq!(report["error"]["kind"], kind);
        assert_eq!(report["output"], "step 1\nstep 2 ", "{flags:?}");
        assert_eq!(report["stats"]["output_bytes"], 14);
        assert!(report["stats"]["wall_time_us"].as_u64().unwrap() > 0);
        if kind != "instruction_limit" {
            // The guest was stopped: what only it could count is absent.
            assert_eq!(report["stats"]["instructions"], serde_json::Value::Null);
        }
    }
}

#[test]
fn an_allowed_exit_ends_cleanly_with_its_code_and_output() {
    let script = temp_file("exit.lua", b"print('bye') os.exit(7) print('never')");
    let path = script.to_str().unwrap();
    let out = moonbox(&["run", "--allow", "os.exit", path]);
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "bye\n");
    assert_eq!(text(&out.stderr), "");
    let out = moonbox(&["run", "--json", "--allow", "os.exit", path]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(report["ok"], true);
    assert_eq!(report["exit_code"], 7);
    assert_eq!(report["output"], "bye\n");
    let caught = temp_file(
        "exit_caught.lua",
        b"print(pcall(os.exit, false)) print('after')",
    );
    let out = moonbox(&["run", "--allow", "os", caught.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "pcall cannot catch an exit");
    assert_eq!(text(&out.stdout), "");
}

#[test]
fn a_closed_or_broken_stdout_is_an_error() {
    let out = moonbox_to(&["run", "examples/hello.lua"], Stdio::null());
    assert_eq!(out.status.code(), Some(0), "a null device accepts writes");
    // A pipe whose reader is gone.
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let out = moonbox_to(&["run", "examples/hello.lua"], Stdio::from(writer));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("cannot write to standard output"));
}

#[test]
fn a_stalled_stdin_is_bounded_by_the_timeout() {
    let mut child = moonbox_piped(&["run", "--timeout", "300ms", "-"]);
    // Keep stdin open and silent until the process gives up.
    let _stdin = child.stdin.take();
    let out = child.wait_with_output().expect("moonbox exits on its own");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("took longer than the 300 ms timeout"),
        "{}",
        text(&out.stderr)
    );
}

/// Standard input is read on the command's own thread, a piece at a time
/// as it arrives: a script written in parts, with pauses, is read whole.
#[test]
fn a_script_arriving_in_pieces_on_stdin_is_read_whole() {
    let mut child = moonbox_piped(&["run", "--timeout", "10s", "-"]);
    let mut stdin = child.stdin.take().expect("a pipe");
    for piece in ["local n = ", "20", "\nreturn n ", "* 2 + 2\n"] {
        stdin.write_all(piece.as_bytes()).expect("moonbox reads");
        stdin.flush().expect("moonbox reads");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(stdin);
    let out = child.wait_with_output().expect("moonbox exits on its own");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[42]\n");
}

/// A script on stdin past --max-script-bytes is refused, whatever its
/// source; and a closed descriptor reads as an empty script, as Rust's
/// `stdin()` (and `lua5.4 -` with nothing to read) treats it.
#[test]
fn stdin_is_bounded_and_a_closed_stdin_is_empty() {
    let out = moonbox_with_stdin(
        &["run", "--max-script-bytes", "10", "-"],
        Some(b"return 'more than ten bytes'"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(
            "the script standard input is larger than 10 bytes; raise --max-script-bytes"
        ),
        "{}",
        text(&out.stderr)
    );
    let out = Command::new("sh")
        .args([
            "-c",
            "exec 0<&-; exec \"$0\" run -",
            env!("CARGO_BIN_EXE_moonbox"),
        ])
        .current_dir(root())
        .output()
        .expect("sh runs moonbox");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
}

#[test]
fn check_and_run_agree() {
    let nested = temp_file(
        "nested.lua",
        format!("return {}1{}", "(".repeat(1000), ")".repeat(1000)).as_bytes(),
    );
    let mut long = b"local s = '".to_vec();
    long.extend(std::iter::repeat_n(b'x', 2 << 20));
    long.extend(b"' return #s");
    let long = temp_file("long_literal.lua", &long);
    for (path, kind) in [(&nested, "syntax"), (&long, "string_size")] {
        let path = path.to_str().unwrap();
        let flags = ["--max-string-bytes", "1MiB"];
        let run = moonbox(&["run", flags[0], flags[1], path]);
        let check = moonbox(&["check", flags[0], flags[1], path]);
        let prefix = format!("error[{kind}]");
        assert!(
            text(&run.stderr).starts_with(&prefix),
            "{}",
            text(&run.stderr)
        );
        assert_eq!(run.stderr, check.stderr, "{path}");
        assert_eq!(run.status.code(), check.status.code(), "{path}");
    }
}

#[test]
fn a_script_cannot_forge_an_error_line_on_the_terminal() {
    let out = moonbox_with_stdin(
        &["run", "-"],
        Some(b"error('boom\\r\\27[2Kerror[ok]: all fine\\u{2028}x', 0)"),
    );
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        !stderr.trim_end().chars().any(char::is_control),
        "{stderr:?}"
    );
    assert!(
        stderr.contains("boom\\r\\u{1b}[2Kerror[ok]: all fine\\u{2028}x"),
        "{stderr}"
    );
    // The JSON form keeps the exact text.
    let out = moonbox_with_stdin(&["run", "--json", "-"], Some(b"error('boom\\r\\27[2K', 0)"));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(report["error"]["message"], "boom\r\u{1b}[2K");
}

#[test]
fn json_mode_is_one_object_for_every_input() {
    let cases: Vec<&[u8]> = vec![
        b"return",
        b"return function() end",
        b"return '\xff'",
        b"print('\xff') return 1",
        b"error(setmetatable({}, {__tostring = function() return '\\0' end}))",
        b"(",
        b"while true do end",
        b"local t = {} t[1] = t return t",
        b"os.exit(2)",
    ];
    for code in cases {
        let out = moonbox_with_stdin(&["run", "--json", "-"], Some(code));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{}: {e}: {}", text(code), text(&out.stdout)));
        assert!(report.is_object());
        assert_eq!(report["version"], 1);
        assert_eq!(text(&out.stdout).lines().count(), 1);
    }
}

#[test]
fn raising_the_instruction_limit_is_enough() {
    // Fuel follows --max-instructions: this loop (about 100 million
    // instructions) used to stop with fuel_exhausted after the user had
    // raised the only limit they knew about.
    let script = temp_file(
        "long_loop.lua",
        b"local x = 0 for i = 1, 5e7 do x = x + i end return x",
    );
    let out = moonbox(&[
        "run",
        "--max-instructions",
        "1000000000",
        "--timeout",
        "2m",
        script.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[1250000025000000]\n");
}

#[test]
fn a_file_that_returns_a_function_is_told_how_to_run() {
    let module = temp_file(
        "module.lua",
        b"print('loaded') return { hello = function() end }",
    );
    let path = module.to_str().unwrap();
    let out = moonbox(&["run", path]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "loaded\n");
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("error[invalid_value]: result[1].hello is a function"),
        "{stderr}"
    );
    assert!(stderr.contains("--module m=FILE"), "{stderr}");
    // The fix the note names works.
    let out = moonbox_with_stdin(
        &["run", "--module", &format!("m={path}"), "-"],
        Some(b"require('m')"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "loaded\n");
}

/// The command caches compiled code in MOONBOX_CACHE_DIR; a directory
/// others can write is refused with a message naming the variable, and an
/// empty value turns the cache off.
#[cfg(unix)]
#[test]
fn the_cache_directory_is_private_or_refused() {
    use std::os::unix::fs::PermissionsExt;
    let run = |cache: &Path| {
        Command::new(env!("CARGO_BIN_EXE_moonbox"))
            .args(["run", "examples/hello.lua"])
            .current_dir(root())
            .env("MOONBOX_CACHE_DIR", cache)
            .output()
            .expect("the moonbox binary runs")
    };
    let base = std::env::temp_dir().join(format!("moonbox-cli-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);

    let private = base.join("private");
    let out = run(&private);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let cached = std::fs::read_dir(&private)
        .expect("the cache is created")
        .count();
    assert_eq!(cached, 1, "one compiled guest is cached");
    let mode = std::fs::metadata(&private).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);

    let shared = base.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = run(&shared);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("writable by other users"), "{err}");
    assert!(err.contains("set MOONBOX_CACHE_DIR"), "{err}");
    assert_eq!(
        std::fs::read_dir(&shared).unwrap().count(),
        0,
        "nothing was written"
    );

    let out = run(Path::new(""));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    // The default directory, under HOME, costs only a warning when it
    // cannot be used.
    let home = base.join("home");
    std::fs::create_dir_all(home.join(".cache/moonbox")).unwrap();
    std::fs::set_permissions(
        home.join(".cache/moonbox"),
        std::fs::Permissions::from_mode(0o777),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_moonbox"))
        .args(["run", "examples/hello.lua"])
        .current_dir(root())
        .env_remove("MOONBOX_CACHE_DIR")
        .env_remove("XDG_CACHE_HOME")
        .env("HOME", &home)
        .output()
        .expect("the moonbox binary runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("warning: ") && err.contains("running without the cache"),
        "{err}"
    );
    assert_eq!(
        text(&out.stdout),
        text(&moonbox(&["run", "examples/hello.lua"]).stdout)
    );
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn mcp_answers_over_stdio_until_stdin_closes() {
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cli-test","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_lua","arguments":{"code":"return n * 7","inputs":{"n":6}}}}"#,
    ];
    let stdin = lines.join("\n") + "\n";
    let out = moonbox_with_stdin(&["mcp"], Some(stdin.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let replies: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("stdout holds only JSON-RPC lines"))
        .collect();
    let result = replies
        .iter()
        .find(|r| r["id"] == 2)
        .expect("the call is answered before the server exits");
    assert_eq!(
        result["result"]["structuredContent"]["report"]["values"],
        serde_json::json!([42])
    );
    assert_eq!(result["result"]["structuredContent"]["answer"], "[42]");
    assert_eq!(result["result"]["isError"], false);
}

#[test]
fn mcp_refuses_a_public_address_without_a_token() {
    let out = Command::new(env!("CARGO_BIN_EXE_moonbox"))
        .args(["mcp", "--http", "0.0.0.0:0"])
        .current_dir(root())
        .env_remove("MOONBOX_MCP_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("the moonbox binary runs");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("without a bearer token") && err.contains("--token-file"),
        "{err}"
    );

    let short = temp_file("short-token", b"abc\n");
    let out = moonbox(&[
        "mcp",
        "--http",
        "127.0.0.1:0",
        "--token-file",
        short.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("at least 16"),
        "{}",
        text(&out.stderr)
    );

    // The HTTP flags need --http.
    let out = moonbox(&["mcp", "--allow-origin", "https://app.example"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--http"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn call_budgets_apply_and_the_json_report_carries_the_audit_trail() {
    let script = b"local r = records.get('123') local ok, err = pcall(records.get, '456') return r.name, ok, err";
    for budget in ["records.get=1", "1"] {
        let out = moonbox_with_stdin(
            &[
                "run",
                "--json",
                "--records",
                "examples/records.json",
                "--call-budget",
                budget,
                "-",
            ],
            Some(script),
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let report: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("one JSON object");
        assert_eq!(report["values"][0], "Ada Lovelace");
        assert_eq!(report["values"][1], false, "the second call is over budget");
        let err = report["values"][2].as_str().unwrap();
        assert!(err.contains("records.get: call budget exhausted"), "{err}");
        let calls = report["calls"].as_array().expect("the audit trail");
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0]["capability"], "records.get");
        assert_eq!(calls[0]["outcome"], "ok");
        assert_eq!(calls[0]["arg_bytes"], 7);
        assert!(calls[0]["reply_bytes"].as_u64().unwrap() > 50);
        assert_eq!(calls[1]["outcome"], "over_budget");
        assert!(calls[0].get("args").is_none(), "arguments only on opt-in");
    }
    // --audit-args keeps the arguments; without a budget nothing is refused.
    let out = moonbox_with_stdin(
        &[
            "run",
            "--json",
            "--audit-args",
            "--records",
            "examples/records.json",
            "-",
        ],
        Some(script),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(report["values"][1], true);
    assert_eq!(report["calls"][0]["args"], serde_json::json!(["123"]));
    assert_eq!(report["calls"][1]["args"], serde_json::json!(["456"]));
}

#[test]
fn bad_call_budgets_exit_2_with_a_message() {
    let records = ["--records", "examples/records.json"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--call-budget", "lots"], "from 0 to 1000000"),
        (vec!["--call-budget", "1000001"], "from 0 to 1000000"),
        (vec!["--call-budget", "records.get=-1"], "from 0 to 1000000"),
        (vec!["--call-budget", "=3"], "no capability name"),
        (
            vec!["--call-budget", "1", "--call-budget", "2"],
            "--call-budget N is given twice",
        ),
        (
            vec![
                "--call-budget",
                "records.get=1",
                "--call-budget",
                "records.get=2",
            ],
            "each capability may appear once",
        ),
        (
            vec!["--call-budget", "records.gte=1"],
            "no capability has that name (the capabilities are: records.get)",
        ),
    ];
    for (flags, expected) in cases {
        let mut args = vec!["run"];
        args.extend(records);
        args.extend(&flags);
        args.push("examples/hello.lua");
        let out = moonbox(&args);
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains(expected), "{flags:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{flags:?}: {stderr}");
    }
    // The MCP server takes the same flags and refuses to start on a bad one.
    let out = moonbox(&["mcp", "--call-budget", "nope=1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no capability has that name"));
}

#[test]
fn log_events_go_to_stderr_in_order_with_stdout() {
    // One file behind both streams shows the order in which they were written.
    let path = temp_file("log-order.txt", b"");
    let file = std::fs::File::create(&path).expect("a temp file");
    let script = temp_file(
        "log-order.lua",
        b"print('one') log('warn', 'disk low', {free = 12}) io.write('two\\n') \
          log('info', 'line\\nbreak') print('three')",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_moonbox"))
        .args(["run", script.to_str().unwrap()])
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(file.try_clone().expect("a second handle"))
        .stderr(file)
        .output()
        .expect("the moonbox binary runs");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "one\n[warn] disk low  free=12\ntwo\n[info] line break\nthree\n"
    );

    // Apart, stdout holds only the output and stderr only the events.
    let out = moonbox(&["run", script.to_str().unwrap()]);
    assert_eq!(text(&out.stdout), "one\ntwo\nthree\n");
    assert_eq!(
        text(&out.stderr),
        "[warn] disk low  free=12\n[info] line break\n"
    );
}

#[test]
fn log_events_made_before_an_error_are_printed_before_it() {
    let out = moonbox_with_stdin(
        &["run", "-"],
        Some(b"log('error', 'giving up') error('boom')"),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "[error] giving up\nerror[runtime]: stdin:1: boom\n"
    );
    let out = moonbox_with_stdin(&["run", "-"], Some(b"log('loud', 'x')"));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains(r#"level must be "debug", "info", "warn" or "error""#),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn json_mode_carries_log_events_in_the_report_only() {
    let code = b"log('info', 'step', {n = 1}) print('x') log('debug', 'done') error('late')";
    let out = moonbox_with_stdin(&["run", "--json", "-"], Some(code));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr), "");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(report["output"], "x\n");
    assert_eq!(
        report["logs"],
        serde_json::json!([
            {"level": "info", "message": "step", "fields": {"n": 1}},
            {"level": "debug", "message": "done", "fields": {}}
        ])
    );
    let out = moonbox(&["run", "--json", "examples/hello.lua"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(report["logs"], serde_json::json!([]));
}

#[test]
fn args_after_a_double_dash_become_arg_and_the_chunk_s_varargs() {
    let script = temp_file(
        "args.lua",
        b"print(arg[0], arg[1], arg[2], #arg) print(...)",
    );
    let path = script.to_str().unwrap();
    let out = moonbox(&["run", path, "--", "one", "--two"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "args.lua\tone\t--two\t2\none\t--two\n",
        "arg[0] is the chunk name: the script's file name"
    );
    // Without arguments, `arg` holds the script's name, as lua5.4 sets it.
    let out = moonbox_with_stdin(
        &["run", "-"],
        Some(b"print(arg[0], #arg, select('#', ...))"),
    );
    assert_eq!(text(&out.stdout), "stdin\t0\t0\n");
}

#[test]
fn files_mount_read_only_and_what_the_script_writes_is_reported() {
    let data = temp_file("data.csv", b"a,1\nb,2\n");
    let module = temp_file(
        "util.lua",
        b"return { double = function(n) return n * 2 end }",
    );
    let code =
        b"local n = 0 for l in io.lines('in/data.csv') do n = n + tonumber(l:match('%d+')) end \
                 local f = assert(io.open('in/total.txt', 'w')) f:write(n) f:close() \
                 return require('lib.util').double(n), io.open('in/data.csv', 'w')";
    let data_flag = format!("in/data.csv={}", data.display());
    let module_flag = format!("lib/util.lua={}", module.display());
    let out = moonbox_with_stdin(
        &["run", "--file", &data_flag, "--file", &module_flag, "-"],
        Some(code),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "[6,null,\"in/data.csv: Permission denied\",13]\n"
    );
    assert_eq!(
        text(&out.stderr),
        "wrote in/total.txt (1 byte); pass --out-dir DIR to keep it\n"
    );
    // The report carries the file.
    let out = moonbox_with_stdin(
        &[
            "run",
            "--json",
            "--file",
            &data_flag,
            "--file",
            &module_flag,
            "-",
        ],
        Some(code),
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["files"],
        serde_json::json!([{"name": "in/total.txt", "size": 1, "text": "3"}])
    );
}

#[test]
fn bad_file_flags_are_refused_before_anything_runs() {
    for (flag, message) in [
        ("x=", "is not NAME=PATH or PATH"),
        ("=x", "is not NAME=PATH or PATH"),
        (
            "a=/nonexistent/moonbox-file",
            "--file a: cannot read the file '/nonexistent/moonbox-file'",
        ),
    ] {
        let out = moonbox_with_stdin(&["run", "--file", flag, "-"], Some(b"print('ran')"));
        assert_eq!(out.status.code(), Some(2), "{flag}");
        assert!(
            text(&out.stderr).contains(message),
            "{flag}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout), "");
    }
    let big = temp_file("big.bin", &vec![b'x'; 2 << 20]);
    let flag = format!("big={}", big.display());
    let out = moonbox_with_stdin(
        &["run", "--max-memory-bytes", "1MiB", "--file", &flag, "-"],
        Some(b"print('ran')"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("does not fit: mounted files and --stdin take at most --max-memory-bytes (1048576 bytes) together"),
        "{}",
        text(&out.stderr)
    );
    let out = moonbox_with_stdin(
        &[
            "run",
            "--file",
            "a=Cargo.toml",
            "--file",
            "a=README.md",
            "-",
        ],
        Some(b"print('ran')"),
    );
    assert!(
        text(&out.stderr).contains("given twice"),
        "{}",
        text(&out.stderr)
    );
}
