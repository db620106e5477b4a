"""``run_lua``: one tool for a model, in the shapes the common agent
frameworks take, and the function that runs a call to it.

>>> from moonbox import Sandbox, tool
>>> sandbox = Sandbox(capabilities={"records.get": lambda id: {"id": id}})
>>> definition = tool.definition(sandbox, "anthropic")
>>> definition["name"], sorted(definition["input_schema"]["properties"])
('run_lua', ['code', 'inputs'])
>>> tool.run_lua(sandbox, {"code": "return records.get('a').id"})["values"]
['a']

The formats, as the Rust crate's ``moonbox::tool`` writes them:

- ``"anthropic"``: Anthropic's Messages API (``name``, ``description``,
  ``input_schema``);
- ``"openai"``: OpenAI's Chat Completions (``{"type": "function",
  "function": {...}, "strict": true}``);
- ``"openai-responses"``: OpenAI's Responses API (flat, strict);
- ``"mcp"``: a Model Context Protocol tool (``inputSchema``).

With the strict OpenAI forms, ``inputs`` is the JSON text of an object (or
null); :func:`run_lua` takes both forms.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .errors import ConfigError
from .report import LuaError, Report
from .sandbox import Sandbox

#: The tool's name.
NAME = "run_lua"

FORMATS = ("anthropic", "openai", "openai-responses", "mcp")


def _size(n: int) -> str:
    for unit, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if n >= unit:
            whole, tenths = n // unit, (n % unit) * 10 // unit
            return f"{whole} {name}" if tenths == 0 else f"{whole}.{tenths} {name}"
    return "1 byte" if n == 1 else f"{n} bytes"


def description(sandbox: Sandbox) -> str:
    """What the model reads: the sandbox, its limits, and every capability
    and module on offer."""
    lim = sandbox.limits
    io = (
        "io (the whole library, though there are no files to open)"
        if "io" in sandbox.allow
        else "io.write, io.stdout:write and print (they write to the same output)"
    )
    d = (
        "Run a Lua 5.4 chunk in a sandbox and get back what it wrote and the JSON form of the values it "
        "returns. The full language and standard library are available (strings, patterns, tables, math, "
        f"utf8, coroutines, goto, integers and floats), including {io}. Names removed by the sandbox "
        "(such as io.open, os.execute, os.getenv, dofile, loadfile, string.dump, binary chunks and most of "
        "debug) raise '<name> is sandboxed' unless listed under 'Also allowed' below. There is no "
        "filesystem or network. Use print for progress notes and `return` for results; tables with string "
        "keys become JSON objects and sequences become arrays (an empty table is []).\n"
        f"Limits per call: {lim.max_instructions} Lua instructions, call depth {lim.max_call_depth}, "
        f"{_size(lim.max_memory_bytes)} of memory, strings up to {_size(lim.max_string_bytes)}, "
        f"{_size(lim.max_output_bytes)} of output, {round(lim.timeout * 1000)} ms of wall time. A script that "
        "hits a limit is stopped; pcall cannot catch it.\n"
        "Also available: json.encode(value) and json.decode(text) (the same JSON rules as results; "
        'JSON null is nil), and log(level, message, fields?) with level "debug", "info", '
        '"warn" or "error" and an optional table of fields: a structured event the host '
        "receives apart from printed output (it counts against the output limit).\n"
    )
    if not sandbox.capabilities:
        d += "No host functions are available.\n"
    else:
        d += (
            "Host functions (errors they raise can be caught with pcall):\n"
        )
        for cap in sandbox.capabilities:
            args = f"{cap.min_args}" if cap.min_args == cap.max_args else f"{cap.min_args}-{cap.max_args}"
            d += f"- {cap.name} ({args} args): {cap.doc or '(no description)'}\n"
        d += (
            "To call host functions concurrently, use parallel(items, fn): it runs fn(item) for each "
            "item in its own coroutine, their host calls are in flight at the same time, and it returns "
            "a table of each call's first result in item order, e.g. "
            f"`local results = parallel(ids, {sandbox.capabilities[0].name})`. The first error in any item "
            "ends it; use pcall inside fn to keep going past a failing item.\n"
        )
    if sandbox.modules:
        d += f"Modules for require: {', '.join(sandbox.modules)}.\n"
    if sandbox.allow:
        d += f"Also allowed: {', '.join(sandbox.allow)}.\n"
    d += "Pass data through `inputs` (name -> JSON value; each becomes a global) instead of writing it into the code.\n"
    return d


def input_schema(strict: bool = False) -> dict[str, Any]:
    """The tool's input schema; ``strict`` is OpenAI's strict form."""
    code = {"type": "string", "description": "The Lua 5.4 chunk to run."}
    if strict:
        inputs: dict[str, Any] = {
            "type": ["string", "null"],
            "description": "Globals to set before the chunk runs, as the JSON text of an object of name to value (null for none).",
        }
        required = ["code", "inputs"]
    else:
        inputs = {
            "type": "object",
            "description": "Globals to set before the chunk runs: name (a Lua identifier) to JSON value.",
            "additionalProperties": True,
        }
        required = ["code"]
    return {
        "type": "object",
        "properties": {"code": code, "inputs": inputs},
        "required": required,
        "additionalProperties": False,
    }


def definition(sandbox: Sandbox, format: str = "anthropic") -> dict[str, Any]:
    """The ``run_lua`` tool definition in one of :data:`FORMATS`."""
    desc = description(sandbox)
    if format == "anthropic":
        return {"name": NAME, "description": desc, "input_schema": input_schema(False)}
    if format == "openai":
        return {
            "type": "function",
            "function": {"name": NAME, "description": desc, "parameters": input_schema(True), "strict": True},
        }
    if format == "openai-responses":
        return {"type": "function", "name": NAME, "description": desc, "parameters": input_schema(True), "strict": True}
    if format == "mcp":
        return {"name": NAME, "description": desc, "inputSchema": input_schema(False)}
    raise ConfigError(f"unknown tool format {format!r}; the formats are {', '.join(FORMATS)}")


def _arguments(arguments: Mapping[str, Any] | str) -> tuple[Any, dict[str, Any]] | Report:
    """The code and inputs of a call, or a report saying what is wrong with
    them, for the model to read."""

    def bad(message: str) -> Report:
        return Report(ok=False, error=LuaError(kind="runtime", message=message, chunk="arguments"))

    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as e:
            return bad(f"the tool's arguments are not JSON: {e}")
    if not isinstance(arguments, Mapping):
        return bad("the tool's arguments must be an object with `code`")
    code = arguments.get("code")
    if not isinstance(code, str):
        return bad("`code` must be a string holding the Lua chunk")
    inputs = arguments.get("inputs")
    if isinstance(inputs, str):
        try:
            inputs = json.loads(inputs)
        except ValueError as e:
            return bad(f"`inputs` is not the JSON text of an object: {e}")
    if inputs is None:
        inputs = {}
    if not isinstance(inputs, dict):
        return bad("`inputs` must be an object of name to JSON value")
    return code, inputs


def run_lua(sandbox: Sandbox, arguments: Mapping[str, Any] | str) -> dict[str, Any]:
    """Runs one ``run_lua`` call (its arguments as a mapping or as JSON
    text) and returns the result to hand back to the model: the report, with
    ``error.summary`` the line to read first."""
    parsed = _arguments(arguments)
    if isinstance(parsed, Report):
        return parsed.to_dict()
    code, inputs = parsed
    try:
        return sandbox.eval(code, inputs=inputs).to_dict()
    except ConfigError as e:
        return Report(ok=False, error=LuaError(kind="runtime", message=f"input: {e}", chunk="arguments")).to_dict()


async def run_lua_async(sandbox: Sandbox, arguments: Mapping[str, Any] | str) -> dict[str, Any]:
    """:func:`run_lua` without blocking the event loop."""
    parsed = _arguments(arguments)
    if isinstance(parsed, Report):
        return parsed.to_dict()
    code, inputs = parsed
    try:
        return (await sandbox.eval_async(code, inputs=inputs)).to_dict()
    except ConfigError as e:
        return Report(ok=False, error=LuaError(kind="runtime", message=f"input: {e}", chunk="arguments")).to_dict()
