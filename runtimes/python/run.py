#!/usr/bin/env python3
"""Runs the shared moonbox case list against the guest component from Python.

This is a small, complete host for the `moonbox:sandbox@0.1.0` component
(wit/moonbox.wit) written with the `wasmtime` package from PyPI. It shows
everything a host in another runtime has to do:

* enable wasm exception handling, which the guest is compiled with;
* link WASI 0.2 while granting nothing (no preopens, environment, arguments
  or inherited stdio);
* implement the one import, `capabilities.call`;
* create a `session` resource from a `config` record, call `eval`, read the
  `success` or `failure` record, and drop the resource.

For every case in the case list it prints one JSON line to stdout, in case
order. It does not compare results with the cases' expectations; a separate
checker does that, so every host is judged the same way.

Usage:

    python3 run.py [--cases PATH] [--component PATH]

Exit status: 0 when every case ran (whatever its result), 1 when the host
itself failed on some case (a trap, an unexpected wasmtime error), 2 when the
case list or the component cannot be loaded.
"""

from __future__ import annotations

import argparse
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
CAPABILITIES_IMPORT = "moonbox:sandbox/capabilities@0.1.0"
LUA_EXPORT = "moonbox:sandbox/lua@0.1.0"

# The host's outer wall, around the guest's own Lua limits. These stop work
# the Lua limits cannot see, such as a single long-running C call.
#
# Native stack that wasm code may use; deeper recursion traps.
MAX_WASM_STACK = 1 << 20
# Wasmtime fuel (about one unit per wasm instruction) given to each call into
# the guest: instantiation, `create`, and each `eval`.
FUEL_PER_CALL = 5_000_000_000
# Linear memory the instance may grow to: twice the Lua heap limit plus room
# for the guest's own buffers (JSON text, captured output).
WASM_MEMORY_SLACK = 16 << 20

# Guest stats reported when the guest never produced any (the session could
# not be created, or the host stopped the call).
NO_STATS = {"instructions": 0, "peak-memory-bytes": 0, "capability-calls": 0}


class HostFailure(Exception):
    """Wasmtime stopped a call into the guest: a trap or a linking error."""


# --- Capabilities ----------------------------------------------------------
#
# The guest imports `call: func(name: string, args: string) ->
# result<string, string>`. `args` is a JSON array with one element per Lua
# argument (the guest has already checked the count); an `ok` reply is one
# JSON value, which becomes the Lua function's result, and an `err` reply
# becomes an ordinary, catchable Lua error.
#
# wasmtime-py represents a `result` whose two cases have the same Python type
# (here both are `str`) as a tagged `Variant("ok" | "err", payload)`.


def ok(text: str) -> cm.Variant:
    return cm.Variant("ok", text)


def err(text: str) -> cm.Variant:
    return cm.Variant("err", text)


def to_json(value: Any) -> str:
    """Compact JSON text, keeping non-ASCII characters as they are."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class Capabilities:
    """The host functions behind `capabilities.call` for the case list.

    `records.get(id)` returns the record stored under `id`, or nil when there
    is none; `cases.fail(message)` always fails with `message`.
    """

    def __init__(self, records: dict[str, Any]) -> None:
        self.records = records
        self.handlers: dict[str, Callable[[list[Any]], cm.Variant]] = {
            "records.get": self.records_get,
            "cases.fail": self.cases_fail,
        }

    def call(self, _store: Any, name: str, args: str) -> cm.Variant:
        """The import itself; wasmtime passes the store context first.

        It must not raise: an exception here would trap the guest instead of
        becoming a Lua error.
        """
        handler = self.handlers.get(name)
        if handler is None:
            return err(f"{name}: no such capability")
        try:
            values = json.loads(args)
        except ValueError as e:
            return err(f"{name}: malformed arguments from the guest ({e})")
        if not isinstance(values, list):
            return err(f"{name}: malformed arguments from the guest (not an array)")
        return handler(values)

    def records_get(self, args: list[Any]) -> cm.Variant:
        key = args[0]
        record = self.records.get(key) if isinstance(key, str) else None
        return ok(to_json(record))  # None becomes "null", which Lua sees as nil

    def cases_fail(self, args: list[Any]) -> cm.Variant:
        message = args[0] if isinstance(args[0], str) else to_json(args[0])
        return err(f"cases.fail: {message}")


# --- Config records --------------------------------------------------------
#
# wasmtime-py lowers a WIT record from any object that has one attribute per
# field, named exactly as in WIT (kebab-case, so set with `setattr`); lists
# are Python lists, `option<T>` is the value or None, and enums are their
# case names as strings.


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
            record(name=m["name"], source=m["source"])
            for m in config.get("modules", [])
        ],
        capabilities=[
            record(
                name=c["name"],
                min_args=c["min-args"],
                max_args=c["max-args"],
                doc=c["doc"],
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
        "peak-memory-bytes": getattr(stats, "peak-memory-bytes"),
        "capability-calls": getattr(stats, "capability-calls"),
    }


# --- The guest -------------------------------------------------------------


class Guest:
    """The compiled component and its linker, shared by every session."""

    def __init__(self, component_path: Path, capabilities: Capabilities) -> None:
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
            with root.add_instance(CAPABILITIES_IMPORT) as iface:
                iface.add_func("call", capabilities.call)

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
        """`eval` returns `result<success, failure>`; both cases are records,
        so wasmtime-py returns a tagged `Variant("ok" | "err", record)`."""
        return self._call(self.eval_func, self.handle, code, chunk_name)

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


def failure_line(name: str, kind: str, message: str, chunk: str,
                 line: int | None, output: list[str], stats: dict[str, int]) -> dict[str, Any]:
    return {
        "name": name,
        "ok": False,
        "kind": kind,
        "message": message,
        "chunk": chunk,
        "line": line,
        "output": output,
        "stats": stats,
    }


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

    try:
        with Session(guest, config, limits["max-memory-bytes"]) as session:
            result = session.eval(case["script"], chunk_name)
    except SessionRefused as e:
        return failure_line(name, "create", str(e), chunk_name, None, [], NO_STATS), False
    except wasmtime.WasmtimeError as e:
        return failure_line(name, "host", host_error_message(e), chunk_name, None, [], NO_STATS), True
    except HostFailure as e:
        return failure_line(name, "host", str(e), chunk_name, None, [], NO_STATS), True

    outcome = result.payload
    output = list(getattr(outcome, "output"))
    stats = stats_json(getattr(outcome, "stats"))
    if result.tag == "ok":
        line = {
            "name": name,
            "ok": True,
            # The guest's JSON text, passed through untouched so that number
            # formatting (1 versus 1.0, -0.0) is exactly the guest's.
            "values": getattr(outcome, "values"),
            "output": output,
            "stats": stats,
        }
        return line, False
    error = getattr(outcome, "error")
    line = failure_line(
        name,
        getattr(error, "kind"),  # the enum case name, kebab-case
        getattr(error, "message"),
        getattr(error, "chunk"),
        getattr(error, "line"),  # option<u32>: an int or None
        output,
        stats,
    )
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
        guest = Guest(args.component, Capabilities(cases.get("records", {})))
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
