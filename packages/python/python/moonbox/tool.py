"""``run_lua``: the sandbox as one tool for a model. The description and
the definitions are the Rust crate's (the ``moonbox`` command's
``tool-schema`` and ``mcp`` give the same)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from . import _native
from .errors import ConfigError
from .report import Report, error_report
from .sandbox import Sandbox

#: The tool's name.
NAME = "run_lua"

#: The definition formats :func:`definition` knows.
FORMATS = ("anthropic", "openai", "openai-responses", "mcp")


def description(sandbox: Sandbox) -> str:
    """What the model reads: how to use the tool, the limits, every
    capability with its ``doc``, the modules and the allowed names."""
    return sandbox._native.tool_description()


def definition(sandbox: Sandbox, format: str = "anthropic") -> dict[str, Any]:
    """The ``run_lua`` tool definition in one of :data:`FORMATS`."""
    try:
        definition: dict[str, Any] = sandbox._native.tool_definition(format)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    return definition


class _Call(NamedTuple):
    """A ``run_lua`` call's arguments, checked by the crate's rules."""

    code: str
    inputs: dict[str, Any]
    args: list[str] | None
    files: dict[str, bytes]
    stdin: bytes | None


def _arguments(arguments: Mapping[str, Any] | str) -> _Call | Report:
    """The call's arguments, or a report saying what is wrong with them,
    for the model to read."""

    def bad(message: str) -> Report:
        return error_report(message, "arguments")

    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as e:
            return bad(f"the tool's arguments are not JSON: {e}")
    if not isinstance(arguments, Mapping):
        return bad("the tool's arguments must be an object with `code`")
    try:
        _native.tool_check_arguments([str(key) for key in arguments])
    except ValueError as e:
        return bad(str(e))
    code = arguments.get("code")
    if not isinstance(code, str):
        return bad("`code` must be a string holding the Lua chunk")
    try:
        # The crate's rules, as the MCP server and `moonbox serve` apply them.
        inputs = _native.tool_inputs(arguments.get("inputs"))
        args, files, stdin = _native.tool_extras(
            arguments.get("args"), arguments.get("files"), arguments.get("stdin")
        )
    except ValueError as e:
        return bad(str(e))
    return _Call(code, inputs, args, files, stdin)



def run_lua(sandbox: Sandbox, arguments: Mapping[str, Any] | str) -> dict[str, Any]:
    """Runs one ``run_lua`` call (its arguments as a mapping or as JSON
    text) and returns the result to hand back to the model: the report, with
    ``error.summary`` the line to read first."""
    call = _arguments(arguments)
    if isinstance(call, Report):
        return call.to_dict()
    try:
        return sandbox.eval(
            call.code, inputs=call.inputs, args=call.args, files=call.files, stdin=call.stdin
        ).to_dict()
    except ConfigError as e:
        return error_report(f"input: {e}", "arguments").to_dict()


async def run_lua_async(sandbox: Sandbox, arguments: Mapping[str, Any] | str) -> dict[str, Any]:
    """:func:`run_lua` without blocking the event loop."""
    call = _arguments(arguments)
    if isinstance(call, Report):
        return call.to_dict()
    try:
        report = await sandbox.eval_async(
            call.code, inputs=call.inputs, args=call.args, files=call.files, stdin=call.stdin
        )
        return report.to_dict()
    except ConfigError as e:
        return error_report(f"input: {e}", "arguments").to_dict()
