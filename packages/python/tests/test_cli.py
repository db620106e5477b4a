"""``python -m moonbox``: the Rust command, entered through the native module."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "moonbox", "run", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_output_then_values_as_one_json_line():
    done = run("-", stdin='print("hi") return 1, 2.0, {a = true}')
    assert done.returncode == 0
    assert done.stdout == 'hi\n[1,2.0,{"a":true}]\n'
    assert done.stderr == ""


def test_nothing_returned_prints_no_values_line():
    done = run("-", stdin='io.write("x")')
    assert (done.returncode, done.stdout) == (0, "x")


def test_json_prints_the_report():
    done = run("--json", "--input", "n=41", "-", stdin="return n + 1")
    report = json.loads(done.stdout)
    assert report["values"] == [42] and report["ok"] and report["version"] == 1


def test_a_lua_error_exits_1_with_its_message_on_stderr():
    done = run("-", stdin='print("before") error("boom")')
    assert done.returncode == 1
    assert done.stdout == "before\n"
    assert done.stderr == "error[runtime]: stdin:1: boom\n"


def test_a_limit_exits_3():
    done = run("--timeout", "300ms", "--max-instructions", "1000000000000", "-", stdin="while true do end")
    assert done.returncode == 3
    assert "300 ms timeout" in done.stderr
    assert run("--max-instructions", "1000", "-", stdin="while true do end").returncode == 3


def test_os_exit_sets_the_status():
    assert run("--allow", "os.exit", "-", stdin="os.exit(7)").returncode == 7


def test_records_and_modules(tmp_path):
    records = tmp_path / "records.json"
    records.write_text('{"a": {"n": 1}}')
    module = tmp_path / "m.lua"
    module.write_text("return {twice = function(x) return 2 * x end}")
    done = run("--records", str(records), "--module", f"m={module}", "-",
               stdin="return records.get('a').n, require('m').twice(4)")
    assert (done.returncode, done.stdout) == (0, "[1,8]\n")


def test_bad_flags_and_files_exit_2():
    assert run("--timeout", "soon", "-").returncode == 2
    assert run("--bogus", "-").returncode == 2
    missing = run("no-such-file.lua")
    assert missing.returncode == 2
    assert "cannot read the script 'no-such-file.lua'" in missing.stderr
    assert run("--input", "n=not json", "-", stdin="return n").returncode == 2
    assert run("--max-memory-bytes", "1KiB", "-", stdin="return 1").returncode == 2


def test_a_script_past_16_mib_is_refused_before_it_runs(tmp_path):
    big = tmp_path / "big.lua"
    big.write_bytes(b"-" * ((16 << 20) + 1))
    done = run(str(big))
    assert done.returncode == 2
    assert "larger than 16777216 bytes" in done.stderr


def test_log_events_go_to_stderr_on_one_line_each():
    done = run("-", stdin='log("warn", "disk\\nlow\\27[31m", {free = 12}) print("x")')
    assert done.returncode == 0
    assert done.stdout == "x\n"
    assert done.stderr == "[warn] disk low\\u{1b}[31m  free=12\n"


def test_the_moonbox_script_and_every_subcommand_are_the_rust_command():
    # The console script the wheel installs enters the same command.
    script = Path(sys.executable).with_name("moonbox")
    done = subprocess.run([str(script), "run", "-"], input="return 1 + 1", capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "[2]\n")
    check = subprocess.run(
        [sys.executable, "-m", "moonbox", "check", "--strict", "-"],
        input="os.execute('ls')",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode == 4
    assert "warning[sandboxed]" in check.stderr
    schema = subprocess.run(
        [sys.executable, "-m", "moonbox", "tool-schema", "--format", "mcp"], capture_output=True, text=True, timeout=60
    )
    assert json.loads(schema.stdout)["name"] == "run_lua"
    for command in ("mcp", "serve"):
        help_text = subprocess.run(
            [sys.executable, "-m", "moonbox", command, "--help"], capture_output=True, text=True, timeout=60
        )
        assert help_text.returncode == 0 and "Usage: moonbox " + command in help_text.stdout
