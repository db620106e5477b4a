#!/usr/bin/env python3
"""Runs the shared moonbox case list against the guest component from Python.

This is a small, complete host for the `moonbox:sandbox@0.3.0` component
(wit/moonbox.wit) written with the `wasmtime` package from PyPI. It shows
everything a host in another runtime has to do:

* enable wasm exception handling, which the guest is compiled with;
* link WASI 0.2 while granting nothing (no preopens, environment, arguments
  or inherited stdio);
* implement the two imports: `moonbox:sandbox/output@0.3.0` (`write`, which
  receives the bytes the script writes, and `log`) and
  `moonbox:sandbox/capabilities@0.3.0` (`call` and `call-many`);
* create a `session` resource from a `config` record, call `eval` with an
  `eval-request`, read the `success` or `failure` record, and drop the
  resource.

For every case in the case list it prints one JSON line to stdout, in case
order: the report shape of docs/wit.md plus the case's name (see
docs/other-runtimes.md). It does not compare results with the cases'
expectations; a separate checker does that, so every host is judged the same
way.

Usage:

    python3 run.py [--cases PATH] [--component PATH]

Exit status: 0 when every case ran (whatever its result), 1 when the host
itself failed on some case (a trap, an unexpected wasmtime error), 2 when the
case list or the component cannot be loaded.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path
from typing import Any, Callable

import wasmtime
from wasmtime import component as cm

HERE = Path(__file__).resolve().parent
DEFAULT_CASES = HERE.parent / "cases.json"
DEFAULT_COMPONENT = HERE.parent.parent / "host" / "component" / "moonbox.wasm"

# Names of the component's import and export interfaces.
OUTPUT_IMPORT = "moonbox:sandbox/output@0.3.0"
CAPABILITIES_IMPORT = "moonbox:sandbox/capabilities@0.3.0"
LUA_EXPORT = "moonbox:sandbox/lua@0.3.0"

# The host's outer wall, around the guest's own Lua limits. These stop work
# the Lua limits cannot see, such as a single long-running C call.
#
# Native stack that wasm code may use; deeper recursion traps.
MAX_WASM_STACK = 1 << 20
# Wasmtime fuel (about one unit per wasm instruction) given to each call into
# the guest: instantiation, `create`, and each `eval`.
FUEL_PER_CALL = 5_000_000_000
# Linear memory the instance may grow to: twice the Lua heap limit plus room
# for the guest's own buffers (source, JSON text).
WASM_MEMORY_SLACK = 16 << 20
# The most output bytes kept for one eval, whatever the limit says.
MAX_KEPT_OUTPUT = 1 << 30
# What each log event is charged beyond its message and fields bytes, as the
# guest charges it against `max-output-bytes`.
LOG_EVENT_BYTES = 32


class HostFailure(Exception):
    """Wasmtime stopped a call into the guest: a trap or a linking error."""


# --- Output ----------------------------------------------------------------
#
# The guest imports `write: func(bytes: list<u8>)`, called with the script's
# bytes in order as it runs, and `log: func(level, message, fields)` for
# structured events apart from that stream. wasmtime-py passes `list<u8>` as
# `bytes`.


class Output:
    """Collects what the script writes during one eval.

    The linker's functions are shared by every session, so `write` appends
    to the eval that is running: `start` begins one, `take` ends it and
    returns its bytes, whatever the eval's outcome, since bytes written before
    an error or a trap are part of the result.
    """

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.kept = 0
        self.limit = 0
        self.received = 0
        self.logs: list[dict[str, Any]] = []
        self.log_room = 0

    def start(self, limit: int) -> None:
        """Starts collecting, keeping at most `limit` bytes. The guest never
        writes past `max-output-bytes`, but a host should bound its own
        memory without relying on the guest."""
        self.chunks, self.kept, self.received = [], 0, 0
        self.limit = min(limit, MAX_KEPT_OUTPUT)
        self.logs, self.log_room = [], self.limit

    def take(self) -> tuple[bytes, list[dict[str, Any]]]:
        """The bytes and the log events collected since `start`."""
        data, logs = b"".join(self.chunks), self.logs
        self.start(0)
        return data, logs

    def write(self, _store: Any, data: bytes) -> None:
        """The `write` import; wasmtime passes the store context first."""
        self.received += len(data)
        room = self.limit - self.kept
        if room > 0:
            kept = data[:room]
            self.chunks.append(kept)
            self.kept += len(kept)

    def log(self, _store: Any, level: Any, message: str, fields: str) -> None:
        """The `log` import: keeps the event while its message and fields
        bytes plus `LOG_EVENT_BYTES` fit, as the guest counts them. The
        fields are a JSON object; json.loads keeps integers and floats
        apart. wasmtime-py passes the level as the enum case's name."""
        cost = len(message.encode("utf-8")) + len(fields.encode("utf-8")) + LOG_EVENT_BYTES
        if cost > self.log_room:
            return
        self.log_room -= cost
        self.logs.append({"level": str(level), "message": message, "fields": json.loads(fields)})


# --- Capabilities ----------------------------------------------------------
#
# The guest imports `call: func(name: string, args: list<value>) ->
# result<value, string>` with one `value` per Lua argument (the guest has
# already checked the count): scalars are typed and a table is JSON text. An
# `ok` reply becomes the Lua function's result, and an `err` reply becomes an
# ordinary, catchable Lua error. `call-many` takes a list of `call-request`
# records and returns one such result per request, in order.
#
# wasmtime-py represents a variant whose cases share a Python type (`text`
# and `json` are both `str`) as a tagged `Variant(case, payload)`, so a
# `value` is `Variant("nil")`, `Variant("integer", 7)`, `Variant("json",
# "{...}")` and so on. A `result` whose two cases have different Python
# types (here a `Variant` and a `str`) is its payload itself: a `Variant` is
# `ok`, a `str` is `err`.


def json_value(text: str) -> cm.Variant:
    return cm.Variant("json", text)


NIL = cm.Variant("nil")


def to_json(value: Any) -> str:
    """Compact JSON text, keeping non-ASCII characters as they are."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def value_text(value: cm.Variant) -> str:
    """A `value` as JSON text, for messages."""
    if value.tag == "nil":
        return "null"
    if value.tag == "json":
        return value.payload
    return to_json(value.payload)


class Capabilities:
    """The host functions behind `capabilities.call` for the case list.

    `records.get(id)` returns the record stored under `id` as JSON, or nil
    when there is none; `cases.fail(message)` always fails with `message`.
    """

    def __init__(self, records: dict[str, Any]) -> None:
        self.records = records
        self.handlers: dict[str, Callable[[list[cm.Variant]], cm.Variant | str]] = {
            "records.get": self.records_get,
            "cases.fail": self.cases_fail,
        }

    def call(self, _store: Any, name: str, args: list[cm.Variant]) -> cm.Variant | str:
        """The `call` import; wasmtime passes the store context first.

        It must not raise: an exception here would trap the guest instead of
        becoming a Lua error.
        """
        handler = self.handlers.get(name)
        if handler is None:
            return f"{name}: no such capability"
        try:
            return handler(args)
        except Exception as e:  # any failure of a handler is the script's Lua error
            return f"{name}: {e}"

    def call_many(self, store: Any, calls: list[cm.Record]) -> list[cm.Variant | str]:
        """The `call-many` import: these handlers are synchronous, so the
        calls run one after another and the replies are in request order."""
        return [self.call(store, getattr(c, "name"), getattr(c, "args")) for c in calls]

    def records_get(self, args: list[cm.Variant]) -> cm.Variant | str:
        key = args[0]
        record = self.records.get(key.payload) if key.tag == "text" else None
        return NIL if record is None else json_value(to_json(record))

    def cases_fail(self, args: list[cm.Variant]) -> cm.Variant | str:
        message = args[0].payload if args[0].tag == "text" else value_text(args[0])
        return f"cases.fail: {message}"


# --- Config records --------------------------------------------------------
#
# wasmtime-py lowers a WIT record from any object that has one attribute per
# field, named exactly as in WIT (kebab-case, so set with `setattr`); lists
# are Python lists except `list<u8>`, which is `bytes`; `option<T>` is the
# value or None, and enums are their case names as strings.


def record(**fields: Any) -> cm.Record:
    """A WIT record value; Python keyword names use `_` for WIT's `-`."""
    value = cm.Record()
    for name, field in fields.items():
        setattr(value, name.replace("_", "-"), field)
    return value


def limits_record(limits: dict[str, int]) -> cm.Record:
    return record(
        max_instructions=limits["max-instructions"],
        max_call_depth=limits["max-call-depth"],
        max_string_bytes=limits["max-string-bytes"],
        max_memory_bytes=limits["max-memory-bytes"],
        max_output_bytes=limits["max-output-bytes"],
        max_value_depth=limits["max-value-depth"],
    )


def config_record(config: dict[str, Any], limits: dict[str, int]) -> cm.Record:
    """The WIT `config` for one session, from the case list's JSON config."""
    deterministic = config.get("deterministic")
    return record(
        limits=limits_record(limits),
        allow=list(config.get("allow", [])),
        modules=[
            # Module sources are bytes; the case list's are text.
            record(name=m["name"], source=m["source"].encode("utf-8"))
            for m in config.get("modules", [])
        ],
        capabilities=[
            record(
                name=c["name"],
                min_args=c["min-args"],
                max_args=c["max-args"],
                doc=c["doc"],
                # The case list declares no JSON Schemas.
                params_schema=None,
                result_schema=None,
            )
            for c in config.get("capabilities", [])
        ],
        deterministic=(
            None
            if deterministic is None
            else record(clock=deterministic["clock"], seed=deterministic["seed"])
        ),
    )


def stats_json(stats: cm.Record) -> dict[str, int]:
    return {
        "instructions": getattr(stats, "instructions"),
        "peak_memory_bytes": getattr(stats, "peak-memory-bytes"),
        "capability_calls": getattr(stats, "capability-calls"),
        "output_bytes": getattr(stats, "output-bytes"),
    }


# --- The guest -------------------------------------------------------------


class Guest:
    """The compiled component and its linker, shared by every session."""

    def __init__(self, component_path: Path, capabilities: Capabilities, output: Output) -> None:
        config = wasmtime.Config()
        config.wasm_exceptions = True  # the guest uses exnref for Lua errors
        config.consume_fuel = True
        config.max_wasm_stack = MAX_WASM_STACK
        self.engine = wasmtime.Engine(config)
        self.component = cm.Component.from_file(self.engine, component_path)

        self.linker = cm.Linker(self.engine)
        self.linker.add_wasip2()
        # `root()` and `add_instance()` lock their parent until closed.
        with self.linker.root() as root:
            with root.add_instance(OUTPUT_IMPORT) as iface:
                iface.add_func("write", output.write)
                iface.add_func("log", output.log)
            with root.add_instance(CAPABILITIES_IMPORT) as iface:
                iface.add_func("call", capabilities.call)
                iface.add_func("call-many", capabilities.call_many)
        self.output = output

        # Functions of an exported interface are found through the interface's
        # export index. Resource functions carry the component model's
        # prefixes: `[static]` for static functions, `[method]` for methods.
        lua = self._export(LUA_EXPORT)
        self.create_index = self._export("[static]session.create", lua)
        self.eval_index = self._export("[method]session.eval", lua)

    def _export(self, name: str, parent: cm.ExportIndex | None = None) -> cm.ExportIndex:
        index = self.component.get_export_index(name, parent)
        if index is None:
            raise HostFailure(f"the component does not export {name}")
        return index


class SessionRefused(Exception):
    """`session.create` rejected the config; the message says why."""


class Session:
    """One Lua session in a store and instance of its own.

    A trap leaves a wasmtime instance unusable, so giving each session its own
    store keeps one session's failure from touching the next. Use it as a
    context manager so the session resource is always dropped.
    """

    def __init__(self, guest: Guest, config: cm.Record, max_memory_bytes: int) -> None:
        self.store = wasmtime.Store(guest.engine)
        # An empty WasiConfig grants nothing: no preopened directories, no
        # environment, no arguments, and stdin/stdout/stderr not inherited.
        # Deterministic mode is implemented inside the guest (os.time, os.date,
        # os.clock and math.random read the config), so the WASI clocks and
        # random sources are left as they are.
        self.store.set_wasi(wasmtime.WasiConfig())
        self.store.set_limits(memory_size=2 * max_memory_bytes + WASM_MEMORY_SLACK)
        self.handle: cm.ResourceAny | None = None

        self.store.set_fuel(FUEL_PER_CALL)
        instance = guest.linker.instantiate(self.store, guest.component)
        self.create = self._func(instance, guest.create_index)
        self.eval_func = self._func(instance, guest.eval_index)

        # `result<session, string>`: the two cases have different Python types,
        # so wasmtime-py returns the payload itself: a ResourceAny or a str.
        created = self._call(self.create, config)
        if isinstance(created, str):
            raise SessionRefused(created)
        self.handle = created

    def _func(self, instance: cm.Instance, index: cm.ExportIndex) -> cm.Func:
        func = instance.get_func(self.store, index)
        if func is None:
            raise HostFailure("an export of the component is not a function")
        return func

    def _call(self, func: cm.Func, *args: Any) -> Any:
        """Calls a guest export with a fresh fuel budget.

        The result is lifted into Python values before `post_return` lets the
        guest free its copy.
        """
        self.store.set_fuel(FUEL_PER_CALL)
        result = func(self.store, *args)
        func.post_return(self.store)
        return result

    def eval(self, code: str, chunk_name: str) -> cm.Variant:
        """Evaluates `code` (sent as UTF-8 bytes) with no inputs. `eval`
        returns `result<success, failure>`; both cases are records, so
        wasmtime-py returns a tagged `Variant("ok" | "err", record)`."""
        request = record(code=code.encode("utf-8"), chunk_name=chunk_name, inputs=[])
        return self._call(self.eval_func, self.handle, request)

    def close(self) -> None:
        """Drops the session resource, running the guest's destructor."""
        if self.handle is not None:
            handle, self.handle = self.handle, None
            handle.drop(self.store)

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, exc_type: type | None, *_rest: object) -> None:
        if exc_type is None:
            self.close()
        else:
            # After a trap the instance cannot run code again, not even the
            # destructor; the session goes away with its store.
            self.handle = None


# --- Running the case list -------------------------------------------------


def output_fields(data: bytes) -> dict[str, str]:
    """The output as text, each invalid UTF-8 sequence replaced by U+FFFD, and
    the exact bytes in base64 when the text cannot hold them."""
    try:
        return {"output": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {
            "output": data.decode("utf-8", errors="replace"),
            "output_base64": base64.b64encode(data).decode("ascii"),
        }


def result_line(name: str, ok: bool, values: list[Any], collected: tuple[bytes, list[Any]],
                exit_code: int | None, error: dict[str, Any] | None,
                stats: dict[str, int | None]) -> dict[str, Any]:
    output, logs = collected
    return {
        "name": name,
        "ok": ok,
        "values": values,
        "logs": logs,
        **output_fields(output),
        "exit_code": exit_code,
        "error": error,
        "stats": stats,
    }


def create_failed(name: str, message: str) -> dict[str, Any]:
    """The line for a case whose session could not be created."""
    return {"name": name, "ok": False, "error": {"kind": "create", "message": message}}


def host_stopped(name: str, message: str, chunk_name: str, output: Output) -> dict[str, Any]:
    """The line for an eval the host stopped (a trap, fuel): the output
    written so far, and no guest stats, which only the guest can report."""
    stats = {"instructions": None, "peak_memory_bytes": None, "capability_calls": None,
             "output_bytes": output.received}
    error = {"kind": "host", "message": message, "chunk": chunk_name, "line": None,
             "traceback": None}
    return result_line(name, False, [], output.take(), None, error, stats)


def host_error_message(e: wasmtime.WasmtimeError) -> str:
    """The cause of a wasmtime error without its wasm backtrace, such as
    `wasm trap: all fuel consumed by WebAssembly`."""
    text = str(e)
    _, caused, cause = text.partition("Caused by:")
    lines = [line.strip() for line in (cause if caused else text).splitlines()]
    return next((line for line in lines if line), text)


def run_case(guest: Guest, cases: dict[str, Any], case: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Runs one case in a new session. Returns its result line and whether
    the host failed (as opposed to the script)."""
    name = case["name"]
    chunk_name = cases["chunk-name"]
    limits = {**cases["config"]["limits"], **case.get("limits", {})}
    config = config_record(cases["config"], limits)

    guest.output.start(limits["max-output-bytes"])
    try:
        with Session(guest, config, limits["max-memory-bytes"]) as session:
            result = session.eval(case["script"], chunk_name)
    except SessionRefused as e:
        guest.output.take()
        return create_failed(name, str(e)), False
    except wasmtime.WasmtimeError as e:
        return host_stopped(name, host_error_message(e), chunk_name, guest.output), True
    except HostFailure as e:
        return host_stopped(name, str(e), chunk_name, guest.output), True

    output = guest.output.take()
    outcome = result.payload
    stats = stats_json(getattr(outcome, "stats"))
    if result.tag == "ok":
        # json.loads keeps integers and floats apart (1 versus 1.0) and
        # integers whole, and json.dumps writes them back the same way.
        values = json.loads(getattr(outcome, "values"))
        exit_code = getattr(outcome, "exit-code")  # option<s32>: an int or None
        return result_line(name, True, values, output, exit_code, None, stats), False
    error = getattr(outcome, "error")
    line = result_line(name, False, [], output, None, {
        # The enum case name is kebab-case; the line uses snake_case.
        "kind": getattr(error, "kind").replace("-", "_"),
        "message": getattr(error, "message"),
        "chunk": getattr(error, "chunk"),
        "line": getattr(error, "line"),  # option<u32>: an int or None
        "traceback": getattr(error, "traceback"),
    }, stats)
    return line, False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES,
                        help="the case list (default: %(default)s)")
    parser.add_argument("--component", type=Path, default=DEFAULT_COMPONENT,
                        help="the guest component (default: %(default)s)")
    args = parser.parse_args(argv)

    try:
        cases = json.loads(args.cases.read_text(encoding="utf-8"))
        guest = Guest(args.component, Capabilities(cases.get("records", {})), Output())
    except (OSError, ValueError, wasmtime.WasmtimeError, HostFailure) as e:
        print(f"run.py: cannot start: {e}", file=sys.stderr)
        return 2

    host_failed = False
    for case in cases["cases"]:
        line, failed = run_case(guest, cases, case)
        host_failed |= failed
        print(to_json(line), flush=True)
    return 1 if host_failed else 0


if __name__ == "__main__":
    sys.exit(main())
