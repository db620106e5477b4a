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

# Not `from typing import TYPE_CHECKING`: importing typing is a third of a
# `python -m moonbox` process's own time, and type checkers read the name
# as typing's.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from .capabilities import Capability as Capability
    from .errors import ERROR_KINDS as ERROR_KINDS
    from .errors import LIMIT_KINDS as LIMIT_KINDS
    from .errors import ComponentError as ComponentError
    from .errors import ConfigError as ConfigError
    from .errors import MoonboxError as MoonboxError
    from .limits import Limits as Limits
    from .report import REPORT_VERSION as REPORT_VERSION
    from .report import Json as Json
    from .report import LogEvent as LogEvent
    from .report import LuaError as LuaError
    from .report import Report as Report
    from .report import Stats as Stats
    from .sandbox import DEFAULT_CHUNK_NAME as DEFAULT_CHUNK_NAME
    from .sandbox import Determinism as Determinism
    from .sandbox import Sandbox as Sandbox
    from .sandbox import Session as Session

# Each name is imported from its module on first use (PEP 562), so that
# `python -m moonbox`, which needs none of them, starts in milliseconds.
_MODULES = {
    "Capability": "capabilities",
    "ERROR_KINDS": "errors",
    "LIMIT_KINDS": "errors",
    "ComponentError": "errors",
    "ConfigError": "errors",
    "MoonboxError": "errors",
    "Limits": "limits",
    "REPORT_VERSION": "report",
    "Json": "report",
    "LogEvent": "report",
    "LuaError": "report",
    "Report": "report",
    "Stats": "report",
    "DEFAULT_CHUNK_NAME": "sandbox",
    "Determinism": "sandbox",
    "Sandbox": "sandbox",
    "Session": "sandbox",
}

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


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'moonbox' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


# Capabilities and sinks run on the native module's threads; at exit, those
# still in Python finish before the interpreter goes (see the README).
atexit.register(_native.at_exit)

#: The version of the Rust crate inside, which is the package's: one
#: version for the release (the workspace's Cargo.toml; maturin writes it
#: into the wheel's metadata).
CRATE_VERSION: str = _native.CRATE_VERSION
__version__: str = CRATE_VERSION
