"""``python -m moonbox run``: the Rust CLI's ``run`` contract in Python.

What the script writes goes to stdout; the values it returns follow as one
JSON array line (none when it returns nothing); ``--json`` prints the whole
report instead. An error is one line on stderr. Exit codes: 0 success; 1 a
Lua error; 2 a usage, input or host error; 3 a limit stopped the script; an
allowed ``os.exit(n)`` exits with ``n`` (modulo 256).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from .errors import LIMIT_KINDS, MoonboxError
from .limits import Limits
from .report import LogEvent, Report, one_line
from .sandbox import Determinism, Sandbox

USAGE_ERROR = 2

_SIZE = re.compile(r"^([0-9]+)\s*([A-Za-z]*)$")
# As the Rust CLI reads them, in any case: K, KB and KiB are all 1024.
_UNITS = {"": 0, "b": 0, "k": 10, "kb": 10, "kib": 10, "m": 20, "mb": 20, "mib": 20, "g": 30, "gb": 30, "gib": 30}
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*(ms|s|m|h)$")
_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
#: The largest script or module file read, as the Rust CLI's
#: ``--max-script-bytes`` default.
MAX_SCRIPT_BYTES = 16 << 20
#: The largest ``--records`` file read, as ``--max-records-bytes``.
MAX_RECORDS_BYTES = 256 << 20


def size(text: str) -> int:
    m = _SIZE.match(text.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size; try 64MiB, 512KiB or 1048576")
    shift = _UNITS.get(m.group(2).lower())
    if shift is None:
        raise argparse.ArgumentTypeError(f"unknown size unit {m.group(2)!r}; use B, KiB, MiB or GiB")
    n = int(m.group(1)) << shift
    if n == 0:
        raise argparse.ArgumentTypeError("the size must be greater than zero")
    if n > 4 << 30:
        raise argparse.ArgumentTypeError(f"{text!r} is larger than the most allowed, 4GiB")
    return n


def duration(text: str) -> float:
    m = _DURATION.match(text.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration (accepts 2s, 500ms, 1m)")
    return float(m.group(1)) * _SECONDS[m.group(2)]


def count(text: str) -> int:
    if not re.fullmatch(r"[0-9]+", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    return int(text)


def pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=VALUE")
    return name, value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m moonbox", description="Run untrusted Lua 5.4 in a WebAssembly sandbox")
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a Lua chunk in a fresh sandbox")
    run.add_argument("file", metavar="FILE", help="the script, or - for standard input")
    run.add_argument("--json", action="store_true", help="print the report as one JSON object instead")
    run.add_argument("--input", type=pair, action="append", default=[], metavar="NAME=JSON",
                     help="set the global NAME to a JSON value before the script runs (repeatable)")
    d = Limits()
    run.add_argument("--max-instructions", type=count, default=d.max_instructions, metavar="N")
    run.add_argument("--max-call-depth", type=count, default=d.max_call_depth, metavar="N")
    run.add_argument("--max-string-bytes", type=size, default=d.max_string_bytes, metavar="SIZE")
    run.add_argument("--max-memory-bytes", "--memory", type=size, default=d.max_memory_bytes, metavar="SIZE")
    run.add_argument("--max-output-bytes", type=size, default=d.max_output_bytes, metavar="SIZE")
    run.add_argument("--timeout", type=duration, default=d.timeout, metavar="DURATION",
                     help="wall-clock time per run (accepts 2s, 500ms, 1m; default 5s)")
    run.add_argument("--fuel", type=count, default=0, metavar="N",
                     help="wasmtime fuel per run (default: 500 per instruction, at least 5 billion)")
    run.add_argument("--allow", action="append", default=[], metavar="NAME",
                     help="allow a sandboxed name back, such as os.getenv (repeatable)")
    run.add_argument("--deterministic", action="store_true", help="fix the clock and seed math.random")
    run.add_argument("--seed", type=int, metavar="N", help="the math.random seed (implies --deterministic)")
    run.add_argument("--records", type=Path, metavar="FILE.json",
                     help="offer records.get(id), backed by this JSON object of id -> record")
    run.add_argument("--module", type=pair, action="append", default=[], metavar="NAME=FILE",
                     help="make require(NAME) load FILE's text (repeatable)")
    return p


class _Usage(Exception):
    pass


def _read(path: str, limit: int = MAX_SCRIPT_BYTES) -> bytes:
    """A file's bytes (``-``: standard input), refused past ``limit``."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with open(path, "rb") as f:
                data = f.read(limit + 1)
    except OSError as e:
        raise _Usage(f"cannot read {path}: {e.strerror or e}") from None
    if len(data) > limit:
        raise _Usage(f"{path} is larger than {limit} bytes")
    return data


def _sandbox(args: argparse.Namespace) -> Sandbox:
    limits = Limits(
        max_instructions=args.max_instructions,
        max_call_depth=args.max_call_depth,
        max_string_bytes=args.max_string_bytes,
        max_memory_bytes=args.max_memory_bytes,
        max_output_bytes=args.max_output_bytes,
        timeout=args.timeout,
        fuel=args.fuel,
    )
    capabilities: dict[str, Any] = {}
    if args.records is not None:
        try:
            records = json.loads(_read(str(args.records), MAX_RECORDS_BYTES))
        except ValueError as e:
            raise _Usage(f"{args.records}: not JSON ({e})") from None
        if not isinstance(records, dict):
            raise _Usage(f"{args.records}: must hold a JSON object of id -> record")

        def get(id: Any) -> Any:
            return records.get(id) if isinstance(id, str) else None

        capabilities["records.get"] = get
    modules = {name: _read(path) for name, path in args.module}
    deterministic: Determinism | None = None
    if args.seed is not None:
        deterministic = Determinism(seed=args.seed)
    elif args.deterministic:
        deterministic = Determinism()
    return Sandbox(limits=limits, capabilities=capabilities, allow=args.allow, modules=modules,
                   deterministic=deterministic)


def _log_line(event: LogEvent) -> None:
    """A log event as the Rust CLI prints it: ``[warn] disk low  free=12``,
    on one line whatever the script put in it."""
    fields = " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in event.fields.items())
    line = f"[{event.level}] {event.message}" + (f"  {fields}" if fields else "")
    print(one_line(line), file=sys.stderr, flush=True)


def exit_code(report: Report) -> int:
    if report.ok:
        return 0 if report.exit_code is None else report.exit_code & 0xFF
    assert report.error is not None
    if report.error.kind in LIMIT_KINDS:
        return 3
    if report.error.kind in ("internal", "session_poisoned", "cancelled"):
        return 2
    return 1


def run(args: argparse.Namespace) -> int:
    code = _read(args.file)
    inputs: dict[str, Any] = {}
    for name, text in args.input:
        try:
            inputs[name] = json.loads(text)
        except ValueError as e:
            raise _Usage(f"--input {name}: not JSON ({e})") from None
    sandbox = _sandbox(args)
    chunk = "stdin" if args.file == "-" else Path(args.file).name
    out = sys.stdout.buffer
    if args.json:
        report = sandbox.eval(code, inputs=inputs, chunk_name=chunk)
        out.write(report.to_json().encode("utf-8") + b"\n")
    else:
        # Output streams to stdout as the script writes it, log events to
        # stderr, one line each, as they happen.
        def write(data: bytes) -> None:
            out.write(data)
            out.flush()

        report = sandbox.eval(code, inputs=inputs, chunk_name=chunk, on_output=write, on_log=_log_line)
        if report.ok and report.exit_code is None and report.values:
            out.write(json.dumps(report.values, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n")
        if report.error is not None:
            out.flush()
            print(report.error.summary, file=sys.stderr)
    out.flush()
    return exit_code(report)


def main(argv: list[str] | None = None) -> int:
    p = parser()
    try:
        args = p.parse_args(argv)
    except SystemExit as e:  # argparse exits 2 on a bad flag, 0 on --help
        return int(e.code or 0)
    try:
        return run(args)
    except _Usage as e:
        print(f"error: {e}", file=sys.stderr)
        return USAGE_ERROR
    except MoonboxError as e:
        print(f"error: {e}", file=sys.stderr)
        return USAGE_ERROR
    except BrokenPipeError:
        return USAGE_ERROR
