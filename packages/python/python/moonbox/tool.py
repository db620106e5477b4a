"""``run_lua``: the sandbox as one tool for a model. The description and
the definitions are the Rust crate's (the ``moonbox`` command's
``tool-schema`` and ``mcp`` give the same)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

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


def _arguments(arguments: Mapping[str, Any] | str) -> tuple[Any, dict[str, Any]] | Report:
    """The code and inputs of a call, or a report saying what is wrong with
    them, for the model to read."""

    def bad(message: str) -> Report:
        return error_report(message, "arguments")

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
    try:
        # The crate's rule, as the MCP server and `moonbox serve` apply it.
        inputs = _native.tool_inputs(arguments.get("inputs"))
    except ValueError as e:
        return bad(str(e))
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
        return error_report(f"input: {e}", "arguments").to_dict()


async def run_lua_async(sandbox: Sandbox, arguments: Mapping[str, Any] | str) -> dict[str, Any]:
    """:func:`run_lua` without blocking the event loop."""
    parsed = _arguments(arguments)
    if isinstance(parsed, Report):
        return parsed.to_dict()
    code, inputs = parsed
    try:
        return (await sandbox.eval_async(code, inputs=inputs)).to_dict()
    except ConfigError as e:
        return error_report(f"input: {e}", "arguments").to_dict()
