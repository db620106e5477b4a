"""moonbox: run untrusted Lua 5.4 in a WebAssembly sandbox.

The reference Lua interpreter runs inside a wasm component (the inner wall:
instruction, call-depth, heap, string and output limits), hosted by
wasmtime (the outer wall: a wall-clock deadline, fuel and a cap on linear
memory). Scripts reach the world only through the capabilities you give
them, as Python callables.

>>> import moonbox
>>> moonbox.Sandbox().eval("return 6 * 7").values
[42]
"""

from .capabilities import Capability
from .errors import ERROR_KINDS, LIMIT_KINDS, ComponentError, ConfigError, MoonboxError
from .limits import Limits
from .report import LogEvent, LuaError, Report, Stats
from .sandbox import DEFAULT_CHUNK_NAME, Determinism, Sandbox, Session

__all__ = [
    "DEFAULT_CHUNK_NAME",
    "ERROR_KINDS",
    "LIMIT_KINDS",
    "Capability",
    "ComponentError",
    "ConfigError",
    "Determinism",
    "Limits",
    "LogEvent",
    "LuaError",
    "MoonboxError",
    "Report",
    "Sandbox",
    "Session",
    "Stats",
]

__version__ = "0.3.0"
