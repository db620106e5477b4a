//! `moonbox run`'s arguments, files and standard input: ARGS as `arg` and
//! `...`, `--file` mounts, `--stdin`, and the files a script wrote, on
//! stderr, in `--out-dir` and in the `--json` report.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{moonbox, moonbox_with_stdin, temp_file, text};

/// A fresh, empty directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("moonbox-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    dir
}

fn report(stdout: &[u8]) -> Value {
    serde_json::from_slice(stdout).expect("one JSON object")
}

const SHOW_ARGS: &[u8] = b"print(arg[0], #arg, arg[-1]) print(...) return select('#', ...)";

#[test]
fn args_reach_the_script_as_arg_and_dots() {
    let script = temp_file("show_args.lua", SHOW_ARGS);
    let path = script.to_str().unwrap();
    let out = moonbox(&["run", path, "a", "b c", ""]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "show_args.lua\t3\tnil\na\tb c\t\n[3]\n");
    // Without ARGS, arg is still a table: the chunk name at 0, nothing after.
    let out = moonbox(&["run", path]);
    assert_eq!(text(&out.stdout), "show_args.lua\t0\tnil\n\n[0]\n");
    // The script from standard input takes ARGS too; its chunk name is stdin.
    let out = moonbox_with_stdin(&["run", "-", "x", "y"], Some(SHOW_ARGS));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "stdin\t2\tnil\nx\ty\n[2]\n");
}

#[test]
fn after_the_first_arg_or_a_double_dash_everything_is_the_scripts() {
    let script = temp_file("dash_args.lua", b"return {...}");
    let path = script.to_str().unwrap();
    // Flags before FILE and right after it are moonbox's.
    let out = moonbox(&["run", "--json", path, "--max-instructions", "1000"]);
    assert_eq!(report(&out.stdout)["values"], json!([[]]));
    // After the first argument, flags are the script's.
    let out = moonbox(&["run", path, "a", "--json", "-x"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[[\"a\",\"--json\",\"-x\"]]\n");
    // `--` passes arguments that look like flags from the start.
    let out = moonbox(&["run", path, "--", "--json", "-"]);
    assert_eq!(text(&out.stdout), "[[\"--json\",\"-\"]]\n");
    // An unknown flag right after FILE is a usage error that says so.
    let out = moonbox(&["run", path, "-x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("use '-- -x'"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn mounted_files_are_read_by_io_lines_require_and_dofile() {
    let data = temp_file("rows.csv", b"a,1\nb,2\nc,3\n");
    let util = temp_file(
        "util.lua",
        b"return { double = function(n) return n * 2 end }",
    );
    let conf = temp_file("conf.lua", b"return { factor = 10 }");
    let script = temp_file(
        "use_files.lua",
        b"local sum = 0\n\
          for line in io.lines('data/rows.csv') do sum = sum + tonumber(line:match(',(%d+)')) end\n\
          local util = require('lib.util')\n\
          local conf = dofile(arg[1])\n\
          local ok, err = io.open(arg[1], 'w')\n\
          return util.double(sum) * conf.factor, ok, err",
    );
    let out = moonbox(&[
        "run",
        "--file",
        &format!("data/rows.csv={}", data.display()),
        "--file",
        &format!("lib/util.lua={}", util.display()),
        // PATH alone: mounted under the path as given, which the script
        // opens as it would under lua5.4.
        "--file",
        conf.to_str().unwrap(),
        script.to_str().unwrap(),
        conf.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Mounted files are read-only, and none is reported as written.
    assert_eq!(
        text(&out.stdout),
        format!("[120,null,\"{}: Permission denied\"]\n", conf.display())
    );
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn a_missing_or_too_large_host_file_is_refused_before_the_run() {
    let out = moonbox_with_stdin(
        &["run", "--file", "x=/nonexistent/moonbox/x.csv", "-"],
        Some(b"print('ran')"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(
            "error: --file x: cannot read the file '/nonexistent/moonbox/x.csv': No such file or directory"
        ),
        "{stderr}"
    );
    // Past --max-memory-bytes: the message names the flag and what is left.
    let big = temp_file("big.bin", &vec![b'x'; (1 << 20) + 1]);
    let out = moonbox_with_stdin(
        &[
            "run",
            "--max-memory-bytes",
            "1MiB",
            "--file",
            big.to_str().unwrap(),
            "-",
        ],
        Some(b"print('ran')"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("(--file {}) does not fit", big.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("--max-memory-bytes (1048576 bytes) together, and 1048576 are left; raise --max-memory-bytes"),
        "{stderr}"
    );
    // The same name twice, or a malformed flag, is a usage error.
    let out = moonbox_with_stdin(
        &["run", "--file", "a=README.md", "--file", "a=LICENSE", "-"],
        Some(b""),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("file 'a' is given twice with --file"));
    let out = moonbox_with_stdin(&["run", "--file", "=README.md", "-"], Some(b""));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is not NAME=PATH or PATH"));
}

#[test]
fn stdin_reaches_io_read_and_is_bounded() {
    let script = temp_file(
        "read_stdin.lua",
        b"local n = 0 for line in io.lines() do n = n + #line end return n, io.read('a')",
    );
    let out = moonbox_with_stdin(
        &["run", "--stdin", script.to_str().unwrap()],
        Some(b"ab\ncde\n"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[5,\"\"]\n");
    // Without --stdin the script's stdin is empty, whatever is piped.
    let out = moonbox_with_stdin(&["run", script.to_str().unwrap()], Some(b"ab\n"));
    assert_eq!(text(&out.stdout), "[0,\"\"]\n");
    // Past --max-memory-bytes.
    let out = moonbox_with_stdin(
        &[
            "run",
            "--stdin",
            "--max-memory-bytes",
            "1MiB",
            script.to_str().unwrap(),
        ],
        Some(&vec![b'x'; (1 << 20) + 1]),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("standard input (--stdin) does not fit"),
        "{}",
        text(&out.stderr)
    );
    // Not with `-`, which reads the script from standard input.
    let out = moonbox_with_stdin(&["run", "--stdin", "-"], Some(b"return 1"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--stdin gives the script this command's standard input"),
        "{}",
        text(&out.stderr)
    );
}

const WRITE_TWO: &[u8] = b"local f = io.open('/tmp/result.txt', 'w') f:write('42\\n') f:close()\n\
    io.open('raw.bin', 'wb'):write('\\0\\255'):close()\n\
    local t = io.open('gone.tmp', 'w') t:write('x') t:close() os.remove('gone.tmp')\n";

#[test]
fn written_files_are_named_on_stderr_without_out_dir() {
    let script = temp_file("write_two.lua", WRITE_TWO);
    let out = moonbox(&["run", script.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "wrote raw.bin (2 bytes); pass --out-dir DIR to keep it\n\
         wrote tmp/result.txt (3 bytes); pass --out-dir DIR to keep it\n"
    );
}

#[test]
fn out_dir_receives_the_written_files_on_success_and_on_error() {
    let dir = temp_dir("out-ok");
    let script = temp_file("write_two.lua", WRITE_TWO);
    let out = moonbox(&[
        "run",
        "--out-dir",
        dir.join("new").to_str().unwrap(),
        script.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let new = dir.join("new");
    assert_eq!(std::fs::read(new.join("tmp/result.txt")).unwrap(), b"42\n");
    assert_eq!(std::fs::read(new.join("raw.bin")).unwrap(), b"\0\xff");
    assert!(!new.join("gone.tmp").exists());
    assert_eq!(
        text(&out.stderr),
        format!(
            "wrote {} (2 bytes)\nwrote {} (3 bytes)\n",
            new.join("raw.bin").display(),
            new.join("tmp/result.txt").display()
        )
    );
    // A script stopped by an error or a limit still delivers what it wrote,
    // then the error; the exit status is the error's.
    let failing = temp_file(
        "write_then_fail.lua",
        b"io.open('partial.txt', 'w'):write('so far'):close() error('boom')",
    );
    let out = moonbox(&[
        "run",
        "--out-dir",
        dir.to_str().unwrap(),
        failing.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read(dir.join("partial.txt")).unwrap(), b"so far");
    assert_eq!(
        text(&out.stderr),
        format!(
            "wrote {} (6 bytes)\nerror[runtime]: write_then_fail.lua:1: boom\n",
            dir.join("partial.txt").display()
        )
    );
    let looping = temp_file(
        "write_then_loop.lua",
        b"io.open('before.txt', 'w'):write('1'):close() while true do end",
    );
    let out = moonbox(&[
        "run",
        "--max-instructions",
        "10000",
        looping.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        text(&out.stderr).starts_with(
            "wrote before.txt (1 byte); pass --out-dir DIR to keep it\nerror[instruction_limit]"
        ),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn out_dir_errors_are_reported_and_symlinks_are_not_followed() {
    // A directory that cannot be made stops the command before the run.
    let blocker = temp_file("not_a_dir", b"");
    let out = moonbox_with_stdin(
        &["run", "--out-dir", blocker.to_str().unwrap(), "-"],
        Some(b"print('ran')"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    assert!(
        text(&out.stderr).contains("cannot create the --out-dir directory"),
        "{}",
        text(&out.stderr)
    );
    // Symbolic links inside the directory, to places outside it, are
    // refused, not written through; the other files are still written.
    let dir = temp_dir("out-links");
    let outside = temp_dir("outside");
    std::fs::write(outside.join("victim.txt"), b"untouched").unwrap();
    std::os::unix::fs::symlink(outside.join("victim.txt"), dir.join("victim.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("tmp")).unwrap();
    let out = moonbox_with_stdin(
        &["run", "--out-dir", dir.to_str().unwrap(), "-"],
        Some(
            b"for _, name in ipairs{'victim.txt', '/tmp/planted.txt', 'fine.txt'} do \
              io.open(name, 'w'):write('from the script'):close() end",
        ),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        std::fs::read(outside.join("victim.txt")).unwrap(),
        b"untouched"
    );
    assert!(!outside.join("planted.txt").exists());
    assert_eq!(
        std::fs::read(dir.join("fine.txt")).unwrap(),
        b"from the script"
    );
    assert!(
        stderr.contains("cannot write the script's file 'tmp/planted.txt'"),
        "{stderr}"
    );
    assert!(
        stderr.contains("is a symbolic link, not followed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("cannot write the script's file 'victim.txt'"),
        "{stderr}"
    );
    assert!(stderr.contains("wrote "), "{stderr}");
}

#[test]
fn json_mode_carries_the_written_files_in_the_report() {
    let script = temp_file("write_two.lua", WRITE_TWO);
    let out = moonbox(&["run", "--json", script.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let got = report(&out.stdout);
    assert_eq!(
        got["files"],
        json!([
            {"name": "raw.bin", "size": 2, "base64": "AP8="},
            {"name": "tmp/result.txt", "size": 3, "text": "42\n"}
        ])
    );
    // The report says it all: nothing on stderr.
    assert_eq!(text(&out.stderr), "");
    // A failed run's report has its files too; a run that wrote none has no
    // files field.
    let out = moonbox_with_stdin(
        &["run", "--json", "-"],
        Some(b"io.open('a.txt', 'w'):write('a'):close() error('late')"),
    );
    assert_eq!(out.status.code(), Some(1));
    let got = report(&out.stdout);
    assert_eq!(got["ok"], false);
    assert_eq!(
        got["files"],
        json!([{"name": "a.txt", "size": 1, "text": "a"}])
    );
    let out = moonbox_with_stdin(&["run", "--json", "-"], Some(b"return 1"));
    assert_eq!(report(&out.stdout).get("files"), None);
}

#[test]
fn a_stalled_stdin_given_to_the_script_is_bounded_by_the_timeout() {
    let script = temp_file("stalled_stdin.lua", b"return io.read('a')");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_moonbox"))
        .args([
            "run",
            "--stdin",
            "--timeout",
            "300ms",
            script.to_str().unwrap(),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the moonbox binary starts");
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
