"""moonbox: run untrusted Lua 5.4 in a WebAssembly sandbox.

This package is the Rust crate ``moonbox``, compiled into a native module:
the reference Lua interpreter inside a wasm component (the inner wall:
instruction, call-depth, heap, string and output limits), hosted by
wasmtime (the outer wall: a wall-clock deadline, a cap on linear memory,
fuel where asked). Scripts reach the world only through the capabilities
you give them, as Python callables.

>>> import moonbox
>>> moonbox.Sandbox().eval("return 6 * 7").values
[42]
"""

import atexit

from . import _native
from .capabilities import Capability
from .errors import ERROR_KINDS, LIMIT_KINDS, ComponentError, ConfigError, MoonboxError
from .limits import Limits
from .report import REPORT_VERSION, Json, LogEvent, LuaError, Report, Stats
from .sandbox import DEFAULT_CHUNK_NAME, Determinism, Sandbox, Session

__all__ = [
    "DEFAULT_CHUNK_NAME",
    "ERROR_KINDS",
    "LIMIT_KINDS",
    "REPORT_VERSION",
    "Capability",
    "ComponentError",
    "ConfigError",
    "Determinism",
    "Json",
    "Limits",
    "LogEvent",
    "LuaError",
    "MoonboxError",
    "Report",
    "Sandbox",
    "Session",
    "Stats",
]

# Capabilities and sinks run on the native module's threads; at exit, those
# still in Python finish before the interpreter goes (see the README).
atexit.register(_native.at_exit)

__version__ = "0.4.0"
#: The version of the Rust crate inside.
CRATE_VERSION: str = _native.CRATE_VERSION
